package service

import (
	"errors"
	"fmt"

	"github.com/genvideo/gen/shared/task"
)

// The kinds of error the use cases return, besides the store's refusals
// (the domain's *domain.InsufficientCreditsError, *domain.InFlightLimitError,
// *domain.LimitError, whose counter names its kind), its outages
// (store.ErrUnavailable) and the validator's *params.Error, which pass
// through wrapped. shared/httpapi maps every kind to the contract's
// response in one table; anything else is an internal error, with its
// chain intact for the log. In particular domain.ErrNotFound is not
// TASK_NOT_FOUND: only ErrTaskNotFound is.
var (
	// ErrKeyMissing: the request carries no API key.
	ErrKeyMissing = errors.New("API key missing")
	// ErrKeyInvalid: the key is malformed, unknown or revoked; the three
	// are one error, so that an answer never tells which.
	ErrKeyInvalid = errors.New("API key invalid")
	// ErrTaskNotFound: the caller's account has no task of that id; a
	// malformed id, an unknown one and another account's are alike.
	ErrTaskNotFound = errors.New("task not found")
)

// NotReadyError: the task has no videos to download, yet (pending,
// processing) or ever (failed).
type NotReadyError struct {
	TaskID string
	Status task.Status
}

func (e *NotReadyError) Error() string {
	return fmt.Sprintf("task %s is %s: no videos to download", e.TaskID, e.Status)
}

// IdempotencyConflictError: the account used the Idempotency-Key of a
// start with another request, for TaskID, within the key's lifetime.
type IdempotencyConflictError struct {
	TaskID string
}

func (e *IdempotencyConflictError) Error() string {
	return fmt.Sprintf("idempotency key already used with another request, for task %s", e.TaskID)
}

// NotStartedError: the start could not hand its task to the workflow.
// The task was failed and refunded at once (task.Failure.NotStarted), so
// the client is told that nothing was charged, and a retry under the same
// Idempotency-Key starts afresh.
type NotStartedError struct {
	TaskID string
	Err    error
}

func (e *NotStartedError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("task %s could not be started", e.TaskID)
	}
	return fmt.Sprintf("task %s could not be started: %v", e.TaskID, e.Err)
}

func (e *NotStartedError) Unwrap() error { return e.Err }

// ChargeUnknownError: the store could not say whether the start's charge
// was written (its reply was lost, asking again did not tell, and the
// undo could not prove it away). The client is not told that nothing was
// charged; a task that was written never gets an execution, and the
// sweeper fails and refunds it. It deliberately does not unwrap to
// store.ErrUnavailable, whose answer says nothing was charged.
type ChargeUnknownError struct {
	TaskID string
	Err    error
}

func (e *ChargeUnknownError) Error() string {
	return fmt.Sprintf("task %s: whether it was charged is unknown: %v", e.TaskID, e.Err)
}

// BlobError: blob storage failed, a dependency outage like
// store.ErrUnavailable.
type BlobError struct{ Err error }

func (e *BlobError) Error() string { return "blob storage: " + e.Err.Error() }
func (e *BlobError) Unwrap() error { return e.Err }

// MaxCreditsError: the start costs more than the maxCredits it was sent
// with; nothing was charged.
type MaxCreditsError struct {
	Cost, Max int
}

func (e *MaxCreditsError) Error() string {
	return fmt.Sprintf("the generation costs %d credits, more than maxCredits %d", e.Cost, e.Max)
}

// ModelUnavailableError: none of the model's provider routes serves it
// right now (their last checks found it gone, shared/availability); the
// start is refused before it is charged, until one lists it again.
type ModelUnavailableError struct{ Model string }

func (e *ModelUnavailableError) Error() string {
	return fmt.Sprintf("model %s is not served by any of its provider routes right now", e.Model)
}
