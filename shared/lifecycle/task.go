package lifecycle

import (
	"fmt"
	"time"

	"github.com/genvideo/gen/shared/catalog"
	"github.com/genvideo/gen/shared/domain"
	"github.com/genvideo/gen/shared/task"
)

// Transition is a task's move as a rule decides it.
type Transition struct {
	// Task is the task after the move; the task as given when nothing
	// changes.
	Task task.Task
	// Changed is false when the task stays as it is: the store writes
	// nothing.
	Changed bool
	// Refund is the ledger entry of the credits the move returns, nil
	// when it returns none. Its Balance is left for the store to fill
	// in, from the account's balance when it writes the entry.
	Refund *domain.LedgerEntry
	// InFlight is the change the move makes to the account's tasks in
	// flight: -1 when the task finishes (its slot is released), else 0.
	InFlight int
}

// MarkProcessing moves a pending task to processing, started at at. A
// task in any other status stays as it is, so that the step may be
// retried.
func MarkProcessing(t task.Task, at time.Time) Transition {
	if t.Status != task.Pending {
		return Transition{Task: t}
	}
	t.Status = task.Processing
	t.StartedAt = at
	return Transition{Task: t, Changed: true}
}

// SetOperation replaces from, the task's Operation, with to on a
// processing task: "" with a task.SubmittingMarker before a submit, the
// marker with the provider's handle once accepted, or with "" when the
// provider refused the job. Anything else leaves the task as it is:
// Operation is not from (another execution moved first), or from is a
// handle already: a second handle would be a second job, paid for
// twice, so the first one submitted is the one polled. A task in any
// other status stays as it is too.
func SetOperation(t task.Task, from, to string) Transition {
	_, marker := task.SubmittingSince(from)
	if t.Status != task.Processing || t.Operation != from || from == to || (from != "" && !marker) {
		return Transition{Task: t}
	}
	t.Operation = to
	return Transition{Task: t, Changed: true}
}

// Complete moves a pending or processing task to completed at at with
// the videos of c, refunding c.Refund. A completed task stays as it is;
// a failed one is domain.ErrTerminal (a terminal task never changes
// again). c.Refund must be between 0 and what is left of the task's
// charge: anything else is an error, and nothing changes.
func Complete(t task.Task, c domain.Completion, at time.Time) (Transition, error) {
	op := "complete task " + t.ID
	switch t.Status {
	case task.Completed:
		return Transition{Task: t}, nil
	case task.Failed:
		return Transition{Task: t}, fmt.Errorf("%s: %w", op, domain.ErrTerminal)
	}
	if c.Refund < 0 || c.Refund > t.CreditsCost-t.CreditsRefunded {
		return Transition{Task: t}, fmt.Errorf("%s: refund %d out of range: charged %d, refunded %d",
			op, c.Refund, t.CreditsCost, t.CreditsRefunded)
	}
	t.Status = task.Completed
	t.Videos = nil
	if len(c.Videos) > 0 {
		t.Videos = c.Videos
	}
	t.CompletedAt = at
	t.CreditsRefunded += c.Refund
	t.Billing = c.Billing
	return Transition{Task: t, Changed: true, Refund: refund(t, c.Refund, "partial result"), InFlight: -1}, nil
}

// Fail moves a pending or processing task to failed at at with failure
// f, refunding what is left of its charge: over Complete and Fail, a task
// is refunded its cost at most once. A failed task stays as it is; a
// completed one is domain.ErrTerminal.
func Fail(t task.Task, f task.Failure, at time.Time) (Transition, error) {
	switch t.Status {
	case task.Failed:
		return Transition{Task: t}, nil
	case task.Completed:
		return Transition{Task: t}, fmt.Errorf("fail task %s: %w", t.ID, domain.ErrTerminal)
	}
	left := t.CreditsCost - t.CreditsRefunded
	t.Status = task.Failed
	t.Failure = &f
	t.CompletedAt = at
	t.CreditsRefunded = t.CreditsCost
	return Transition{Task: t, Changed: true, Refund: refund(t, left, f.Code), InFlight: -1}, nil
}

// refund is the ledger entry returning amount credits to t's account
// when t finishes, or nil for none.
func refund(t task.Task, amount int, note string) *domain.LedgerEntry {
	if amount == 0 {
		return nil
	}
	return &domain.LedgerEntry{AccountID: t.AccountID, TaskID: t.ID, Kind: domain.EntryRefund,
		Amount: int64(amount), At: t.CompletedAt, Note: note}
}

// PartialRefund is what a task that produced only some of its samples
// gets back: the catalog price, for its model, resolution and audio setting, of each
// sample it did not produce. It is an error for the task to have
// produced more videos than samples, or fewer than none, or a model the
// catalog does not know.
func PartialRefund(t task.Task, produced int) (int, error) {
	if produced < 0 || produced > t.Params.SampleCount {
		return 0, fmt.Errorf("%d videos for %d samples", produced, t.Params.SampleCount)
	}
	model, ok := catalog.Lookup(t.Model)
	if !ok {
		return 0, fmt.Errorf("task %s has unknown model %q", t.ID, t.Model)
	}
	return (t.Params.SampleCount - produced) * model.PriceAt(t.Params.Resolution, t.Params.GenerateAudio), nil
}

// PastDeadline reports whether t's deadline has passed at at. A task
// without a deadline never passes it.
func PastDeadline(t task.Task, at time.Time) bool { return PastGrace(t, at, 0) }

// PastGrace reports whether at is more than grace past t's deadline: the
// time after which a task its own workflow did not finish is failed by
// someone else.
func PastGrace(t task.Task, at time.Time, grace time.Duration) bool {
	return !t.Deadline.IsZero() && at.After(t.Deadline.Add(grace))
}

// Delete decides whether t may be deleted: only a terminal task may,
// since one pending or processing still holds credits and a workflow
// that would write to it. Anything else is domain.ErrNotFinished.
func Delete(t task.Task) error {
	if !t.Status.Terminal() {
		return fmt.Errorf("delete task %s: it is %s: %w", t.ID, t.Status, domain.ErrNotFinished)
	}
	return nil
}
