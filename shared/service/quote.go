package service

import (
	"context"
	"fmt"

	"github.com/genvideo/gen/shared/lifecycle"
	"github.com/genvideo/gen/shared/task"
)

// Quote is what a start would do now, decided without doing it.
type Quote struct {
	// Task is the task the start would create, with the capability
	// table's defaults filled in; CreditsCost is what it would charge.
	Task task.Task
	// Balance is the account's balance now; After what the start would
	// leave (Balance less the cost; negative when it cannot pay).
	Balance int64
	After   int64
	// Refusal is the error the start would be refused with now (the
	// store's typed refusals: *domain.InsufficientCreditsError,
	// *domain.InFlightLimitError, *domain.LimitError of the starts
	// window, *domain.SpendingCapError), nil when it would be let through. It is a snapshot:
	// another request may change the answer before the start is made.
	Refusal error
}

// Quote answers what a start of req by c would charge and whether it
// would be let through now, without charging, taking from a window or
// creating a task: it runs the start's own validation (newTask), then
// the store's own decision (lifecycle.Create) on what the store holds
// now, read without a write. req.Idempotency is ignored: a quote makes
// no record. req.Inputs stay the caller's.
//
// Unlike Start it needs no Executions: the AWS quote function starts
// nothing.
func (s *Service) Quote(ctx context.Context, c Caller, req StartRequest) (Quote, error) {
	t, g, err := s.newTask(ctx, c, req)
	if err != nil {
		return Quote{}, err
	}
	t, err = lifecycle.Prepare(t, g)
	if err != nil {
		return Quote{}, fmt.Errorf("quote: %w", err)
	}
	acct, err := s.cfg.Store.Account(ctx, t.AccountID)
	if err != nil {
		return Quote{}, fmt.Errorf("quote: account %s: %w", t.AccountID, err)
	}
	found := lifecycle.Found{Account: &acct}
	if g.Starts != nil {
		n, err := s.cfg.Store.Count(ctx, *g.Starts, c.Now)
		if err != nil {
			return Quote{}, fmt.Errorf("quote: starts window: %w", err)
		}
		if n > 0 {
			found.Starts = lifecycle.Tally{Count: n, Ends: g.Starts.ExpiresAt}
		}
	}
	for _, w := range g.Spend {
		n, err := s.cfg.Store.Count(ctx, w, t.CreatedAt)
		if err != nil {
			return Quote{}, fmt.Errorf("quote: spend window: %w", err)
		}
		found.Spend = append(found.Spend, lifecycle.Tally{Count: n, Ends: w.ExpiresAt})
	}
	q := Quote{Task: t, Balance: acct.Credits, After: acct.Credits - int64(t.CreditsCost)}
	if _, err := lifecycle.Create(t, g, found); err != nil {
		if !refused(err) {
			return Quote{}, fmt.Errorf("quote: %w", err)
		}
		q.Refusal = err
	}
	return q, nil
}
