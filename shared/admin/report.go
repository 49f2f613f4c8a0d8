package admin

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/genvideo/gen/shared/domain"
	"github.com/genvideo/gen/shared/store"
	"github.com/genvideo/gen/shared/task"
)

// ReportStore is the part of store.Store the margin report reads: every
// key (for the accounts), each account's ledger, and the tasks its
// entries name.
type ReportStore interface {
	Keys(ctx context.Context, accountID string) ([]store.Key, error)
	LedgerPage(ctx context.Context, accountID string, q store.LedgerQuery) ([]domain.LedgerEntry, error)
	Task(ctx context.Context, id string) (task.Task, error)
}

// Report is what the service charged over a period and what its
// providers cost, per model and route, with the totals.
type Report struct {
	Since, Until time.Time
	// CreditUSD is what a credit sells for (settings.CreditUSD).
	CreditUSD float64
	Rows      []ReportRow
	Total     ReportRow
}

// ReportRow is one model on one route over the report's period.
//
// The money comes from the ledger: Charged is the credits the charge
// entries dated in the period took (their amounts, negated), Refunded
// what the refund entries gave back
// (either kind counts in the row of the task it names), so that the
// totals are the ledger's exactly. Tasks counts the tasks charged in
// the period, and ProviderCostUSD is what those of them that completed
// recorded (task.Billing): a task's cost goes with its start, its
// refunds with the day they were made.
type ReportRow struct {
	// Model is the contract's model id; Route the route that made the
	// videos, "" for a task that made none (failed, or still running),
	// whose provider cost is 0. A task deleted since is Model "deleted":
	// its entries stay in the ledger, its recorded cost went with it.
	Model, Route      string
	Tasks             int
	Charged, Refunded int64
	ProviderCostUSD   float64
}

// Net is the credits kept: charged less refunded.
func (r ReportRow) Net() int64 { return r.Charged - r.Refunded }

// RevenueUSD is the credits kept at creditUSD a credit.
func (r ReportRow) RevenueUSD(creditUSD float64) float64 { return float64(r.Net()) * creditUSD }

// MarginUSD is the revenue less the provider cost.
func (r ReportRow) MarginUSD(creditUSD float64) float64 {
	return r.RevenueUSD(creditUSD) - r.ProviderCostUSD
}

// DeletedModel is the model of the rows of tasks deleted since their
// entries were written (the ledger keeps them; the task is gone).
const DeletedModel = "deleted"

// MarginReport reads the ledger of every account that has a key (every
// account genctl or the stack's bootstrap creates) from since to until
// (until excluded), and the task each entry names, into a Report.
func MarginReport(ctx context.Context, s ReportStore, since, until time.Time, creditUSD float64) (Report, error) {
	if !since.Before(until) {
		return Report{}, fmt.Errorf("%w: the period from %s to %s is empty", ErrInvalid,
			since.Format(time.RFC3339), until.Format(time.RFC3339))
	}
	keys, err := s.Keys(ctx, "")
	if err != nil {
		return Report{}, fmt.Errorf("list keys: %w", err)
	}
	var accounts []string
	for _, k := range keys {
		if !slices.Contains(accounts, k.AccountID) {
			accounts = append(accounts, k.AccountID)
		}
	}
	slices.Sort(accounts)

	type group struct{ model, route string }
	rows := map[group]*ReportRow{}
	tasks := map[string]task.Task{}
	row := func(ctx context.Context, taskID string) (*ReportRow, task.Task, error) {
		t, ok := tasks[taskID]
		if !ok {
			var err error
			t, err = s.Task(ctx, taskID)
			switch {
			case errors.Is(err, domain.ErrNotFound):
				t = task.Task{ID: taskID, Model: DeletedModel}
			case err != nil:
				return nil, task.Task{}, fmt.Errorf("task %s: %w", taskID, err)
			}
			tasks[taskID] = t
		}
		g := group{t.Model, t.Billing.Route}
		if rows[g] == nil {
			rows[g] = &ReportRow{Model: g.model, Route: g.route}
		}
		return rows[g], t, nil
	}
	for _, acct := range accounts {
		entries, err := ledger(ctx, s, acct, since)
		if err != nil {
			return Report{}, err
		}
		for _, e := range entries {
			if e.At.Before(since) || !e.At.Before(until) || e.TaskID == "" {
				continue
			}
			switch e.Kind {
			case domain.EntryCharge:
				r, t, err := row(ctx, e.TaskID)
				if err != nil {
					return Report{}, err
				}
				r.Tasks++
				r.Charged -= e.Amount // a charge takes credits: its amount is negative
				if t.Status == task.Completed {
					r.ProviderCostUSD += t.Billing.CostUSD
				}
			case domain.EntryRefund:
				r, _, err := row(ctx, e.TaskID)
				if err != nil {
					return Report{}, err
				}
				r.Refunded += e.Amount
			}
		}
	}
	rep := Report{Since: since, Until: until, CreditUSD: creditUSD}
	for _, r := range rows {
		rep.Rows = append(rep.Rows, *r)
		rep.Total.Tasks += r.Tasks
		rep.Total.Charged += r.Charged
		rep.Total.Refunded += r.Refunded
		rep.Total.ProviderCostUSD += r.ProviderCostUSD
	}
	slices.SortFunc(rep.Rows, func(a, b ReportRow) int {
		return cmp.Or(cmp.Compare(a.Model, b.Model), cmp.Compare(a.Route, b.Route))
	})
	return rep, nil
}

// ledgerPage is how many entries one read of a ledger takes.
const ledgerPage = 500

// ledger is the account's entries from the newest back to a page dated
// wholly before since (entries the caller skips), read a page at a time:
// one page of slack, so that an entry written a little out of date order
// is not missed.
func ledger(ctx context.Context, s ReportStore, accountID string, since time.Time) ([]domain.LedgerEntry, error) {
	var out []domain.LedgerEntry
	q := store.LedgerQuery{Limit: ledgerPage}
	for {
		page, err := s.LedgerPage(ctx, accountID, q)
		if err != nil {
			return nil, fmt.Errorf("ledger of %s: %w", accountID, err)
		}
		out = append(out, page...)
		if len(page) < ledgerPage || !slices.ContainsFunc(page, func(e domain.LedgerEntry) bool { return !e.At.Before(since) }) {
			return out, nil
		}
		q.Before = page[len(page)-1].Seq
	}
}
