// Package audit checks that an account's books balance: its balance, its
// ledger, its in-flight count and its tasks' charges and refunds agree.
// The store tests check it after every scenario (storetest.CheckInvariants)
// and the soak run after its load, which is why it is a package of its own
// rather than part of the test support: a program can use it without
// linking the testing package.
package audit

import (
	"context"
	"fmt"

	"github.com/genvideo/gen/shared/domain"
	"github.com/genvideo/gen/shared/store"
	"github.com/genvideo/gen/shared/task"
)

// Books is what an audit reads of a store; every store.Store has it.
type Books interface {
	Account(ctx context.Context, id string) (domain.Account, error)
	Ledger(ctx context.Context, accountID string) ([]domain.LedgerEntry, error)
	Tasks(ctx context.Context, accountID string, q store.TaskQuery) ([]task.Task, int, error)
}

// Account lists how the account's books fail to balance, or nothing when
// they do:
//   - its balance is the sum of its ledger, and neither the balance nor any
//     entry's balance-after is negative;
//   - each entry's Balance is the previous one's plus its Amount;
//   - InFlight is the number of its tasks pending or processing;
//   - each task has exactly one charge, of its CreditsCost, and at most one
//     refund, which is its CreditsRefunded; a failed task was refunded all
//     it was charged, a task not yet terminal nothing;
//   - every grant belongs to no task, every charge and refund to one of
//     its tasks or to a task it deleted (store.DeleteTask keeps a deleted
//     task's entries): such a task, necessarily finished, has exactly one
//     charge and at most one refund, no larger than the charge.
//
// Call it when no change to the account is under way. The error reports a
// store that could not be read.
func Account(ctx context.Context, s Books, accountID string) ([]string, error) {
	var problems []string
	errorf := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	acct, err := s.Account(ctx, accountID)
	if err != nil {
		return nil, fmt.Errorf("Account(%s): %w", accountID, err)
	}
	entries, err := s.Ledger(ctx, accountID)
	if err != nil {
		return nil, fmt.Errorf("Ledger(%s): %w", accountID, err)
	}
	tasks, err := Tasks(ctx, s, accountID)
	if err != nil {
		return nil, err
	}
	if acct.Credits < 0 {
		errorf("account %s: balance %d, want >= 0", accountID, acct.Credits)
	}
	var sum int64
	// charges and refunds are the entries of each task, by task id.
	charges := map[string][]domain.LedgerEntry{}
	refunds := map[string][]domain.LedgerEntry{}
	for i, e := range entries {
		sum += e.Amount
		if e.AccountID != accountID {
			errorf("account %s: ledger entry %d belongs to %q", accountID, i, e.AccountID)
		}
		if e.Balance != sum {
			errorf("account %s: ledger entry %d (%s %+d) has balance-after %d, want %d",
				accountID, i, e.Kind, e.Amount, e.Balance, sum)
		}
		if e.Balance < 0 {
			errorf("account %s: ledger entry %d has balance-after %d, want >= 0", accountID, i, e.Balance)
		}
		switch e.Kind {
		case domain.EntryGrant:
			if e.TaskID != "" || e.Amount <= 0 {
				errorf("account %s: grant entry %d: task %q, amount %d; want no task, amount > 0",
					accountID, i, e.TaskID, e.Amount)
			}
		case domain.EntryCharge:
			charges[e.TaskID] = append(charges[e.TaskID], e)
			if e.Amount > 0 {
				errorf("account %s: charge entry %d amount %d, want <= 0", accountID, i, e.Amount)
			}
		case domain.EntryRefund:
			refunds[e.TaskID] = append(refunds[e.TaskID], e)
			if e.Amount <= 0 {
				errorf("account %s: refund entry %d amount %d, want > 0", accountID, i, e.Amount)
			}
		default:
			errorf("account %s: ledger entry %d has kind %q", accountID, i, e.Kind)
		}
	}
	if sum != acct.Credits {
		errorf("account %s: ledger sums to %d, balance is %d", accountID, sum, acct.Credits)
	}

	inFlight := 0
	byID := make(map[string]task.Task, len(tasks))
	for _, tk := range tasks {
		byID[tk.ID] = tk
		if !tk.Status.Terminal() {
			inFlight++
		}
		if c := charges[tk.ID]; len(c) != 1 || c[0].Amount != -int64(tk.CreditsCost) {
			errorf("task %s: charge entries %+v, want one of %d", tk.ID, c, -tk.CreditsCost)
		}
		r := refunds[tk.ID]
		var refunded int64
		for _, e := range r {
			refunded += e.Amount
		}
		if len(r) > 1 {
			errorf("task %s: %d refund entries, want at most one", tk.ID, len(r))
		}
		if refunded != int64(tk.CreditsRefunded) {
			errorf("task %s: refund entries sum to %d, CreditsRefunded is %d", tk.ID, refunded, tk.CreditsRefunded)
		}
		switch tk.Status {
		case task.Failed:
			if tk.CreditsRefunded != tk.CreditsCost {
				errorf("failed task %s: refunded %d, want its cost %d", tk.ID, tk.CreditsRefunded, tk.CreditsCost)
			}
			if tk.CreditsCost > 0 && len(r) != 1 {
				errorf("failed task %s: %d refund entries, want exactly one", tk.ID, len(r))
			}
		case task.Completed:
			if tk.CreditsRefunded > tk.CreditsCost {
				errorf("completed task %s: refunded %d, more than its cost %d", tk.ID, tk.CreditsRefunded, tk.CreditsCost)
			}
		default:
			if tk.CreditsRefunded != 0 {
				errorf("%s task %s: refunded %d, want 0", tk.Status, tk.ID, tk.CreditsRefunded)
			}
		}
	}
	if acct.InFlight != inFlight {
		errorf("account %s: InFlight %d, but %d tasks are pending or processing", accountID, acct.InFlight, inFlight)
	}
	for i, e := range entries {
		if e.Kind == domain.EntryGrant {
			continue
		}
		if _, ok := byID[e.TaskID]; ok {
			continue
		}
		// A deleted task: its entries must still balance on their own.
		if e.Kind == domain.EntryCharge && len(charges[e.TaskID]) == 1 {
			c, r := charges[e.TaskID][0], refunds[e.TaskID]
			switch {
			case len(r) > 1:
				errorf("deleted task %s: %d refund entries, want at most one", e.TaskID, len(r))
			case len(r) == 1 && r[0].Amount > -c.Amount:
				errorf("deleted task %s: refunded %d, more than its charge %d", e.TaskID, r[0].Amount, -c.Amount)
			}
			continue
		}
		if len(charges[e.TaskID]) != 1 {
			errorf("account %s: %s entry %d names task %q, neither one of the account's nor a deleted one charged once",
				accountID, e.Kind, i, e.TaskID)
		}
	}
	return problems, nil
}

// Tasks pages through every task of the account, and fails if the pages
// and the total they report disagree.
func Tasks(ctx context.Context, s Books, accountID string) ([]task.Task, error) {
	const page = 100
	var all []task.Task
	for {
		tasks, total, err := s.Tasks(ctx, accountID, store.TaskQuery{Skip: len(all), Limit: page})
		if err != nil {
			return nil, fmt.Errorf("Tasks(%s, skip %d): %w", accountID, len(all), err)
		}
		all = append(all, tasks...)
		if len(tasks) == 0 || len(all) >= total {
			if len(all) != total {
				return nil, fmt.Errorf("Tasks(%s) paged %d tasks, total says %d", accountID, len(all), total)
			}
			return all, nil
		}
	}
}
