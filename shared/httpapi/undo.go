package httpapi

import (
	"context"
	"errors"
	"log/slog"

	"github.com/genvideo/gen/shared/store"
	"github.com/genvideo/gen/shared/task"
)

// undoCreate is called when the store's CreateTask for t failed with err.
// Unless err is a refusal (which changed nothing), the store may have
// written the task before failing, its reply lost in an outage; the
// client is about to be told that nothing was charged, so t is failed
// and refunded, as a start whose workflow never ran. A task that was
// never written is store.ErrNotFound: nothing to undo. If the store
// cannot be reached either, a task written all the same stays pending
// and its workflow runs when the sweep finds it: that is logged.
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
	_, ferr := a.cfg.Store.Fail(ctx, t.ID, startFailure, a.cfg.Now())
	switch {
	case ferr == nil:
		a.log.LogAttrs(ctx, slog.LevelWarn, "failed and refunded a task whose creation reported an error",
			slog.String("task", t.ID), slog.String("error", err.Error()))
	case errors.Is(ferr, store.ErrNotFound):
	default:
		a.log.LogAttrs(ctx, slog.LevelError, "cannot tell whether a task whose creation reported an error exists; if it does, it stays charged",
			slog.String("task", t.ID), slog.String("error", ferr.Error()))
	}
}
