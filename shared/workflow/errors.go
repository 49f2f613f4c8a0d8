package workflow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/genvideo/gen/shared/domain"
	"github.com/genvideo/gen/shared/provider"
	"github.com/genvideo/gen/shared/task"
)

// The errors the steps return. Each is returned as a pointer, unwrapped,
// so that its type name is the ASL error name that generation.asl.json
// retries or catches (asl.ErrorName: "DeadlineExceeded", and so on).

// DeadlineExceeded: the task passed its deadline before it could finish.
// It fails with TIMEOUT.
type DeadlineExceeded struct {
	TaskID   string
	Deadline time.Time
}

func (e *DeadlineExceeded) Error() string {
	return fmt.Sprintf("task %s passed its deadline %s", e.TaskID, e.Deadline.UTC().Format(time.RFC3339))
}

// TransientGenerationError: the generator failed in a way that may not
// happen again. The workflow retries it, then fails the task with
// GENERATION_FAILED.
type TransientGenerationError struct {
	TaskID string
	Err    error
}

func (e *TransientGenerationError) Error() string {
	return fmt.Sprintf("generate %s: temporary failure: %v", e.TaskID, e.Err)
}

func (e *TransientGenerationError) Unwrap() error { return e.Err }

// ContentPolicyViolation: the generator refused the prompt or inputs. It
// fails with CONTENT_POLICY_VIOLATION.
type ContentPolicyViolation struct {
	TaskID string
	// Category is the client-safe category of the refusal
	// (provider.Answer's), "" when the generator gave none.
	Category string
	Err      error
}

func (e *ContentPolicyViolation) Error() string {
	if e.Category != "" {
		return fmt.Sprintf("generate %s: refused by the content policy (category: %s): %v", e.TaskID, e.Category, e.Err)
	}
	return fmt.Sprintf("generate %s: refused by the content policy: %v", e.TaskID, e.Err)
}

func (e *ContentPolicyViolation) Unwrap() error { return e.Err }

// GenerationFailed: the generation failed for good. It fails with
// GENERATION_FAILED.
type GenerationFailed struct {
	TaskID string
	Err    error
}

func (e *GenerationFailed) Error() string {
	return fmt.Sprintf("generate %s: %v", e.TaskID, e.Err)
}

func (e *GenerationFailed) Unwrap() error { return e.Err }

// ProviderOutcomeUnknown: a submit went out and no readable answer came
// back (the connection dropped, a timeout, an answer that does not
// decode), or a re-run found the marker of such a submit. The provider
// may be running, and billing, the job; submitting again could make it
// two, so the task fails with PROVIDER_OUTCOME_UNKNOWN, refunded.
type ProviderOutcomeUnknown struct {
	TaskID string
	Err    error
}

func (e *ProviderOutcomeUnknown) Error() string {
	return fmt.Sprintf("generate %s: the provider may have accepted the job, and it is never submitted twice: %v", e.TaskID, e.Err)
}

func (e *ProviderOutcomeUnknown) Unwrap() error { return e.Err }

// ModelUnavailable: the provider no longer serves the model the task's
// model is mapped to. It fails with MODEL_UNAVAILABLE; the operator
// remaps the model.
type ModelUnavailable struct {
	TaskID string
	Model  string
	Err    error
}

func (e *ModelUnavailable) Error() string {
	return fmt.Sprintf("generate %s: the provider's model for %s is unavailable: %v", e.TaskID, e.Model, e.Err)
}

func (e *ModelUnavailable) Unwrap() error { return e.Err }

// StoreUnavailable: the task store failed. The workflow retries it.
type StoreUnavailable struct {
	Op     string
	TaskID string
	Err    error
}

func (e *StoreUnavailable) Error() string {
	return fmt.Sprintf("%s %s: %v", e.Op, e.TaskID, e.Err)
}

func (e *StoreUnavailable) Unwrap() error { return e.Err }

// BlobsUnavailable: reading an input or storing a video failed. The
// workflow retries it.
type BlobsUnavailable struct {
	Op  string
	Key string
	Err error
}

func (e *BlobsUnavailable) Error() string {
	return fmt.Sprintf("%s %s: %v", e.Op, e.Key, e.Err)
}

func (e *BlobsUnavailable) Unwrap() error { return e.Err }

// TaskNotFound: the store has no such task. Nothing can be recorded for
// it, so the execution fails.
type TaskNotFound struct {
	TaskID string
}

func (e *TaskNotFound) Error() string { return fmt.Sprintf("task %q not found", e.TaskID) }

// InvalidInput: a step was called with input it cannot use (a bug in the
// definition or the caller). It fails with INTERNAL_ERROR.
type InvalidInput struct {
	Step   string
	Reason string
}

func (e *InvalidInput) Error() string { return e.Step + ": invalid input: " + e.Reason }

// storeError turns a store failure into the step's named error.
func storeError(op, taskID string, err error) error {
	if errors.Is(err, domain.ErrNotFound) {
		return &TaskNotFound{TaskID: taskID}
	}
	return &StoreUnavailable{Op: op, TaskID: taskID, Err: err}
}

// generatorError classifies what the generator returned. ctx is the
// step's context, gctx the generator's, which also ends at the deadline.
func generatorError(ctx, gctx context.Context, t task.Task, err error) error {
	if ctx.Err() != nil {
		return ctx.Err() // the execution is being aborted; nothing to classify
	}
	if errors.Is(gctx.Err(), context.DeadlineExceeded) {
		return &DeadlineExceeded{TaskID: t.ID, Deadline: t.Deadline}
	}
	switch a := provider.Classify(err); a.Class {
	case provider.Transient:
		return &TransientGenerationError{TaskID: t.ID, Err: err}
	case provider.Refused:
		return &ContentPolicyViolation{TaskID: t.ID, Category: a.Category, Err: err}
	case provider.ModelRetired:
		return &ModelUnavailable{TaskID: t.ID, Model: t.Model, Err: err}
	}
	return &GenerationFailed{TaskID: t.ID, Err: err}
}

// Client-safe failure messages, one per failure code. A failed task shows
// one of these, never the error that caused it.
const (
	MessageTimeout       = "The video was not generated within the time limit. Your credits have been refunded."
	MessageContentPolicy = "The request was rejected by the content policy. Change the prompt or image and try again; your credits have been refunded."
	MessageGeneration    = "The video could not be generated. Please try again; your credits have been refunded."
	MessageInternal      = "An internal error stopped the generation. Your credits have been refunded."
	// MessageOutcomeUnknown does not invite a retry of the same task: a
	// new start is a new task, charged anew.
	MessageOutcomeUnknown   = "The video provider did not confirm the generation, so it was stopped rather than risk a second one. Your credits have been refunded."
	MessageModelUnavailable = "This model is not available at the moment. Your credits have been refunded."
)

// ErrorNotStarted names, for Fail, the end of a task that never got an
// execution (the sweeper's): it records task.NotStartedFailure, so that a
// retry under the start's Idempotency-Key starts afresh.
const ErrorNotStarted = "NotStarted"

// FailureFor maps the name of the error that stopped a workflow (what a
// Catch caught) to the failure the task records.
func FailureFor(errorName string) task.Failure {
	switch errorName {
	case "States.Timeout", "DeadlineExceeded", "Sandbox.Timedout":
		// Sandbox.Timedout: the Lambda itself ran out of time.
		return task.Failure{Code: task.FailTimeout, Message: MessageTimeout}
	case "ContentPolicyViolation":
		return task.Failure{Code: task.FailContentPolicy, Message: MessageContentPolicy}
	case "GenerationFailed", "TransientGenerationError":
		return task.Failure{Code: task.FailGeneration, Message: MessageGeneration}
	case "ProviderOutcomeUnknown":
		return task.Failure{Code: task.FailProviderOutcomeUnknown, Message: MessageOutcomeUnknown}
	case "ModelUnavailable":
		return task.Failure{Code: task.FailModelUnavailable, Message: MessageModelUnavailable}
	case ErrorNotStarted:
		return task.NotStartedFailure
	default:
		return task.Failure{Code: task.FailInternal, Message: MessageInternal}
	}
}

// FailureOf is the failure the task records for a caught error: that of
// FailureFor, reading the cause where the name alone does not say what
// happened. Lambda.Unknown is a step's Lambda that died without an error
// of its own, out of time (its cause says it timed out) or out of memory,
// which are the contract's TIMEOUT and GENERATION_FAILED, not an internal
// error; so are the runtime's own Sandbox.Timedout and
// Runtime.OutOfMemory/ExitError. A content-policy refusal carries its
// category.
func FailureOf(errorName, cause string) task.Failure {
	switch errorName {
	case "Lambda.Unknown":
		if strings.Contains(strings.ToLower(cause), "timed out") {
			return FailureFor("Sandbox.Timedout")
		}
		return FailureFor("GenerationFailed")
	case "Runtime.OutOfMemory", "Runtime.ExitError":
		return FailureFor("GenerationFailed")
	}
	f := FailureFor(errorName)
	if f.Code == task.FailContentPolicy {
		if m := policyCategory.FindStringSubmatch(causeMessage(cause)); m != nil {
			f.Message = "The request was rejected by the content policy (category: " + m[1] + ")." +
				strings.TrimPrefix(MessageContentPolicy, "The request was rejected by the content policy.")
		}
	}
	return f
}

// policyCategory is the category in the cause of a
// ContentPolicyViolation: lower-case words only, so that nothing but a
// category name from the error's own format reaches the client.
var policyCategory = regexp.MustCompile(`refused by the content policy \(category: ([a-z][a-z ]{0,30})\)`)

// causeMessage extracts the message from a Catch's Cause for the logs. On
// AWS, a Lambda error's Cause is the JSON of the Lambda error payload
// ({"errorMessage": ..., "errorType": ...}); locally, and for States.*
// errors, it is plain text.
func causeMessage(cause string) string {
	var payload struct {
		ErrorMessage string `json:"errorMessage"`
	}
	if json.Unmarshal([]byte(cause), &payload) == nil && payload.ErrorMessage != "" {
		return payload.ErrorMessage
	}
	return cause
}
