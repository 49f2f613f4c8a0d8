package storetest

import (
	"context"
	"fmt"
	"testing"

	"github.com/genvideo/gen/shared/store"
	"github.com/genvideo/gen/shared/task"
)

// CheckInvariants fails the test if the account's books do not balance
// (see Audit for what that means). Call it when no change to the account
// is under way.
func CheckInvariants(t *testing.T, s store.Store, accountID string) {
	t.Helper()
	problems, err := Audit(t.Context(), s, accountID)
	if err != nil {
		t.Fatalf("CheckInvariants: %v", err)
	}
	for _, p := range problems {
		t.Error(p)
	}
}

// Audit lists how the account's books fail to balance, or nothing when
// they do:
//   - its balance is the sum of its ledger, and neither the balance nor any
//     entry's balance-after is negative;
//   - each entry's Balance is the previous one's plus its Amount;
//   - InFlight is the number of its tasks pending or processing;
//   - each task has exactly one charge, of its CreditsCost, and at most one
//     refund, which is its CreditsRefunded; a failed task was refunded all
//     it was charged, a task not yet terminal nothing;
//   - every charge and refund belongs to one of its tasks, every grant to
//     none.
//
// The error reports a store that could not be read. Tools outside tests
// (the soak run) use Audit; tests call CheckInvariants.
func Audit(ctx context.Context, s store.Store, accountID string) ([]string, error) {
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
	tasks, err := listTasks(ctx, s, accountID)
	if err != nil {
		return nil, err
	}
	if acct.Credits < 0 {
		errorf("account %s: balance %d, want >= 0", accountID, acct.Credits)
	}
	var sum int64
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
		case store.EntryGrant:
			if e.TaskID != "" || e.Amount <= 0 {
				errorf("account %s: grant entry %d: task %q, amount %d; want no task, amount > 0",
					accountID, i, e.TaskID, e.Amount)
			}
		case store.EntryCharge:
			if e.Amount > 0 {
				errorf("account %s: charge entry %d amount %d, want <= 0", accountID, i, e.Amount)
			}
		case store.EntryRefund:
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
		charges := taskEntries(entries, tk.ID, store.EntryCharge)
		if len(charges) != 1 || charges[0].Amount != -int64(tk.CreditsCost) {
			errorf("task %s: charge entries %+v, want one of %d", tk.ID, charges, -tk.CreditsCost)
		}
		refunds := taskEntries(entries, tk.ID, store.EntryRefund)
		var refunded int64
		for _, e := range refunds {
			refunded += e.Amount
		}
		if len(refunds) > 1 {
			errorf("task %s: %d refund entries, want at most one", tk.ID, len(refunds))
		}
		if refunded != int64(tk.CreditsRefunded) {
			errorf("task %s: refund entries sum to %d, CreditsRefunded is %d", tk.ID, refunded, tk.CreditsRefunded)
		}
		switch tk.Status {
		case task.Failed:
			if tk.CreditsRefunded != tk.CreditsCost {
				errorf("failed task %s: refunded %d, want its cost %d", tk.ID, tk.CreditsRefunded, tk.CreditsCost)
			}
			if tk.CreditsCost > 0 && len(refunds) != 1 {
				errorf("failed task %s: %d refund entries, want exactly one", tk.ID, len(refunds))
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
		if e.Kind == store.EntryGrant {
			continue
		}
		if _, ok := byID[e.TaskID]; !ok {
			errorf("account %s: %s entry %d names task %q, not one of the account's", accountID, e.Kind, i, e.TaskID)
		}
	}
	return problems, nil
}

// allTasks pages through every task of the account.
func allTasks(t *testing.T, s store.Store, accountID string) []task.Task {
	t.Helper()
	all, err := listTasks(t.Context(), s, accountID)
	if err != nil {
		t.Fatalf("CheckInvariants: %v", err)
	}
	return all
}

// listTasks pages through every task of the account.
func listTasks(ctx context.Context, s store.Store, accountID string) ([]task.Task, error) {
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
