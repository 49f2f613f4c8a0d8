package httpapi

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/genvideo/gen/shared/store"
	"github.com/genvideo/gen/shared/task"
)

// undoCreate is called when the store's CreateTask for t failed with err.
// Unless err is a refusal (which changed nothing), the store may have
// written the task before failing, its reply lost in an outage; the
// client is about to be told that nothing was charged, so t is failed
// and refunded, as a start whose workflow never ran. A task that was
// never written is store.ErrNotFound: nothing to undo.
func (a *API) undoCreate(ctx context.Context, t task.Task, err error) {
	var (
		credits  *store.InsufficientCreditsError
		inFlight *store.InFlightLimitError
		limit    *store.LimitError
		used     *store.IdempotencyError
	)
	if errors.As(err, &credits) || errors.As(err, &inFlight) || errors.As(err, &limit) ||
		errors.As(err, &used) || errors.Is(err, store.ErrExists) || errors.Is(err, store.ErrNotFound) {
		return
	}
	ctx = context.WithoutCancel(ctx)
	switch ferr := a.refundUnstarted(ctx, t); {
	case ferr == nil:
		a.log.LogAttrs(ctx, slog.LevelWarn, "failed and refunded a task whose creation reported an error",
			slog.String("task", t.ID), slog.String("error", err.Error()))
	case errors.Is(ferr, store.ErrNotFound):
	default:
		a.log.LogAttrs(ctx, slog.LevelError, "cannot tell whether a task whose creation reported an error exists; if it does, it stays charged",
			slog.String("task", t.ID), slog.String("error", ferr.Error()))
	}
}

// refundRetries are the pauses before each attempt of refundUnstarted.
var refundRetries = []time.Duration{0, 50 * time.Millisecond, 200 * time.Millisecond, 800 * time.Millisecond}

// refundUnstarted fails and refunds t, a task the client is about to be
// told was not started. A task left charged and pending here would be run
// by the next sweep, making "nothing was charged" untrue; so the write is
// tried again a few times within about a second, which rides out a brief
// outage or a lost reply (Fail is idempotent). store.ErrNotFound means the
// task was never written.
func (a *API) refundUnstarted(ctx context.Context, t task.Task) error {
	var err error
	for _, pause := range refundRetries {
		if pause > 0 {
			timer := time.NewTimer(pause)
			select {
			case <-ctx.Done():
				timer.Stop()
				return errors.Join(err, ctx.Err())
			case <-timer.C:
			}
		}
		_, err = a.cfg.Store.Fail(ctx, t.ID, startFailure, a.cfg.Now())
		if err == nil || errors.Is(err, store.ErrNotFound) {
			return err
		}
	}
	return err
}
