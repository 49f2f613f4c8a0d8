package service

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"

	"github.com/genvideo/gen/shared/blob"
	"github.com/genvideo/gen/shared/domain"
	"github.com/genvideo/gen/shared/ratelimit"
	"github.com/genvideo/gen/shared/store"
	"github.com/genvideo/gen/shared/task"
)

// cancelMessage is what a cancelled task's error.message says.
const cancelMessage = "The generation was cancelled; its credits were refunded."

// Cancel ends the caller's task id, pending or processing, as failed
// with error code CANCELLED, through the store's Fail: in one write it
// refunds the task in full, exactly once, and releases its in-flight
// slot; racing a completion, the store's condition lets exactly one of
// the two happen. It then stops the task's workflow (Executions.Stop).
//
// A task the caller already cancelled is answered as it is, so that a
// client may repeat a cancel whose answer it lost: nothing is refunded
// twice. Any other finished task is a *NotCancellableError, whoever
// finished it, and a completion that wins a race with the cancel too.
func (s *Service) Cancel(ctx context.Context, c Caller, id string) (task.Task, error) {
	t, err := s.Task(ctx, c, id)
	if err != nil {
		return task.Task{}, err
	}
	if !t.Status.Terminal() {
		t, err = s.cfg.Store.Fail(ctx, t.ID, task.Failure{Code: task.FailCancelled, Message: cancelMessage}, s.cfg.Now())
		if errors.Is(err, domain.ErrTerminal) {
			// A completion came first.
			return task.Task{}, &NotCancellableError{TaskID: id, Status: task.Completed}
		}
		if err != nil {
			return task.Task{}, fmt.Errorf("cancel task %s: %w", id, err)
		}
	}
	if !t.Cancelled() {
		return task.Task{}, &NotCancellableError{TaskID: id, Status: t.Status}
	}
	s.stop(ctx, t)
	return t, nil
}

// stop stops the workflow of t, cancelled. A failure is logged, not
// answered: the task is already failed and refunded, and a workflow left
// running finds it terminal at its next step and ends without a change.
func (s *Service) stop(ctx context.Context, t task.Task) {
	if s.cfg.Executions == nil {
		return
	}
	if err := s.cfg.Executions.Stop(context.WithoutCancel(ctx), t); err != nil {
		s.log.LogAttrs(ctx, slog.LevelWarn, "cancelled a task but could not stop its workflow; it ends at its next step",
			slog.String("task", t.ID), slog.String("error", err.Error()))
	}
}

// Delete removes the caller's task id, which must be finished: first its
// objects in blob storage (its videos and their posters, those a generation stored after
// the task was cancelled included, and its uploaded images, the direct
// uploads they were copied from included), so that
// every download link handed out stops working, then its record, which
// leaves the status and the history. Its ledger entries stay. A task
// pending or processing is a *NotDeletableError: cancel it first. A
// failure halfway leaves the record, so that a retry finishes the job.
func (s *Service) Delete(ctx context.Context, c Caller, id string) error {
	t, err := s.Task(ctx, c, id)
	if err != nil {
		return err
	}
	if !t.Status.Terminal() {
		return &NotDeletableError{TaskID: id, Status: t.Status}
	}
	for _, key := range blobKeys(t) {
		// An object never stored (a sample not produced) is already gone.
		if err := s.cfg.Blobs.Delete(ctx, key); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return &BlobError{fmt.Errorf("delete %s of task %s: %w", key, t.ID, err)}
		}
	}
	_, err = s.cfg.Store.DeleteTask(ctx, t.ID)
	switch {
	case errors.Is(err, domain.ErrNotFound):
		return nil // a concurrent delete finished first
	case errors.Is(err, domain.ErrNotFinished): // a terminal task never changes: a bug
		return &NotDeletableError{TaskID: id, Status: t.Status}
	case err != nil:
		return fmt.Errorf("delete task %s: %w", id, err)
	}
	return nil
}

// blobKeys are the keys of every object task t may have in blob storage.
func blobKeys(t task.Task) []string {
	seen := map[string]bool{}
	var keys []string
	add := func(k string) {
		if k != "" && !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
	}
	for _, v := range t.Videos {
		add(v.Key)
		add(v.Poster)
	}
	for n := range max(t.Params.SampleCount, len(t.Videos)) {
		add(task.VideoKey(t.ID, n))
		// Its poster, made beside it (workflow), recorded or not.
		add(blob.PosterKey(task.VideoKey(t.ID, n)))
	}
	for _, in := range t.Inputs {
		add(in.Key)
		// The direct upload it was copied from: the contract's delete
		// (infra/docs/contract.md, "Cancel, delete and credits")
		// removes the task's uploaded images, and a new start naming the
		// upload must find it gone (issue 20).
		add(in.Upload)
	}
	return keys
}

// Credits is an account's credits and a key's limits, as the credits
// endpoint shows them.
type Credits struct {
	Balance int64
	// Held is what the generations in flight were charged: refunded if
	// they fail, spent if they complete.
	Held     int64
	InFlight int
	Tier     string
	// Requests and Day are the key's request windows as this request
	// left them; Starts is its generation starts window (Limit 0 when
	// it could not be read); InFlightLimit its concurrent generations.
	Requests      LimitWindow
	Day           LimitWindow
	Starts        LimitWindow
	InFlightLimit int
	// Ledger is the page asked for, newest first; Next, when positive,
	// is the LedgerQuery.Before of the next page.
	Ledger []domain.LedgerEntry
	Next   int64
}

// Credits reads the caller's balance, held credits and limits, and a
// page of its ledger.
func (s *Service) Credits(ctx context.Context, c Caller, q store.LedgerQuery) (Credits, error) {
	acct := c.Key.AccountID
	a, err := s.cfg.Store.Account(ctx, acct)
	if err != nil {
		return Credits{}, fmt.Errorf("credits of account %s: %w", acct, err)
	}
	held, err := s.cfg.Store.Held(ctx, acct)
	if err != nil {
		return Credits{}, fmt.Errorf("credits of account %s: %w", acct, err)
	}
	limit := q.Limit
	q.Limit++ // one more tells whether another page follows
	entries, err := s.cfg.Store.LedgerPage(ctx, acct, q)
	if err != nil {
		return Credits{}, fmt.Errorf("ledger of account %s: %w", acct, err)
	}
	out := Credits{
		Balance: a.Credits, Held: held, InFlight: a.InFlight, Tier: c.Key.Tier,
		Requests:      c.Requests.Minute,
		Day:           c.Requests.Day,
		InFlightLimit: c.Limits.MaxInFlight,
	}
	if out.Tier == "" {
		out.Tier = ratelimit.Standard
	}
	if limit > 0 && len(entries) > limit {
		entries = entries[:limit]
		out.Next = entries[limit-1].Seq
	}
	out.Ledger = entries
	out.Starts = s.startsWindow(ctx, c)
	return out, nil
}

// startsWindow reads the key's starts window without taking from it; a
// failure to read it is logged and leaves it out (Limit 0), as it is only
// a hint.
func (s *Service) startsWindow(ctx context.Context, c Caller) LimitWindow {
	g := ratelimit.StartLimits(c.Key.ID, c.Limits, c.Now)
	if g.Starts == nil {
		return LimitWindow{}
	}
	used, err := s.cfg.Store.Count(ctx, *g.Starts, c.Now)
	if err != nil {
		s.log.LogAttrs(ctx, slog.LevelWarn, "cannot read the starts window for credits",
			slog.String("key", c.Key.ID), slog.String("error", err.Error()))
		return LimitWindow{}
	}
	return LimitWindow{Limit: g.Starts.Limit, Remaining: max(g.Starts.Limit-used, 0), Reset: g.Starts.ExpiresAt}
}

// NotCancellableError: the task is finished (completed, or failed other
// than by a cancel); there is nothing left to cancel.
type NotCancellableError struct {
	TaskID string
	Status task.Status
}

func (e *NotCancellableError) Error() string {
	return fmt.Sprintf("task %s is %s: it cannot be cancelled", e.TaskID, e.Status)
}

// NotDeletableError: the task is pending or processing; it can be
// deleted once finished (cancel it first).
type NotDeletableError struct {
	TaskID string
	Status task.Status
}

func (e *NotDeletableError) Error() string {
	return fmt.Sprintf("task %s is %s: it cannot be deleted before it finishes", e.TaskID, e.Status)
}

// TaskDeletedError: an Idempotency-Key replays the start of a task the
// caller has since deleted. The start is not made again (nor charged).
type TaskDeletedError struct{ TaskID string }

func (e *TaskDeletedError) Error() string {
	return fmt.Sprintf("the task %s this Idempotency-Key started was deleted", e.TaskID)
}
