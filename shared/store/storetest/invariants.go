package storetest

import (
	"testing"

	"github.com/genvideo/gen/shared/store"
	"github.com/genvideo/gen/shared/task"
)

// CheckInvariants fails the test if the account's books do not balance:
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
// Call it when no change to the account is under way.
func CheckInvariants(t *testing.T, s store.Store, accountID string) {
	t.Helper()
	ctx := t.Context()
	acct, err := s.Account(ctx, accountID)
	if err != nil {
		t.Fatalf("CheckInvariants: Account(%s): %v", accountID, err)
	}
	entries, err := s.Ledger(ctx, accountID)
	if err != nil {
		t.Fatalf("CheckInvariants: Ledger(%s): %v", accountID, err)
	}
	tasks := allTasks(t, s, accountID)

	if acct.Credits < 0 {
		t.Errorf("account %s: balance %d, want >= 0", accountID, acct.Credits)
	}
	var sum int64
	for i, e := range entries {
		sum += e.Amount
		if e.AccountID != accountID {
			t.Errorf("account %s: ledger entry %d belongs to %q", accountID, i, e.AccountID)
		}
		if e.Balance != sum {
			t.Errorf("account %s: ledger entry %d (%s %+d) has balance-after %d, want %d",
				accountID, i, e.Kind, e.Amount, e.Balance, sum)
		}
		if e.Balance < 0 {
			t.Errorf("account %s: ledger entry %d has balance-after %d, want >= 0", accountID, i, e.Balance)
		}
		switch e.Kind {
		case store.EntryGrant:
			if e.TaskID != "" || e.Amount <= 0 {
				t.Errorf("account %s: grant entry %d: task %q, amount %d; want no task, amount > 0",
					accountID, i, e.TaskID, e.Amount)
			}
		case store.EntryCharge:
			if e.Amount > 0 {
				t.Errorf("account %s: charge entry %d amount %d, want <= 0", accountID, i, e.Amount)
			}
		case store.EntryRefund:
			if e.Amount <= 0 {
				t.Errorf("account %s: refund entry %d amount %d, want > 0", accountID, i, e.Amount)
			}
		default:
			t.Errorf("account %s: ledger entry %d has kind %q", accountID, i, e.Kind)
		}
	}
	if sum != acct.Credits {
		t.Errorf("account %s: ledger sums to %d, balance is %d", accountID, sum, acct.Credits)
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
			t.Errorf("task %s: charge entries %+v, want one of %d", tk.ID, charges, -tk.CreditsCost)
		}
		refunds := taskEntries(entries, tk.ID, store.EntryRefund)
		var refunded int64
		for _, e := range refunds {
			refunded += e.Amount
		}
		if len(refunds) > 1 {
			t.Errorf("task %s: %d refund entries, want at most one", tk.ID, len(refunds))
		}
		if refunded != int64(tk.CreditsRefunded) {
			t.Errorf("task %s: refund entries sum to %d, CreditsRefunded is %d", tk.ID, refunded, tk.CreditsRefunded)
		}
		switch tk.Status {
		case task.Failed:
			if tk.CreditsRefunded != tk.CreditsCost {
				t.Errorf("failed task %s: refunded %d, want its cost %d", tk.ID, tk.CreditsRefunded, tk.CreditsCost)
			}
			if tk.CreditsCost > 0 && len(refunds) != 1 {
				t.Errorf("failed task %s: %d refund entries, want exactly one", tk.ID, len(refunds))
			}
		case task.Completed:
			if tk.CreditsRefunded > tk.CreditsCost {
				t.Errorf("completed task %s: refunded %d, more than its cost %d", tk.ID, tk.CreditsRefunded, tk.CreditsCost)
			}
		default:
			if tk.CreditsRefunded != 0 {
				t.Errorf("%s task %s: refunded %d, want 0", tk.Status, tk.ID, tk.CreditsRefunded)
			}
		}
	}
	if acct.InFlight != inFlight {
		t.Errorf("account %s: InFlight %d, but %d tasks are pending or processing", accountID, acct.InFlight, inFlight)
	}
	for i, e := range entries {
		if e.Kind == store.EntryGrant {
			continue
		}
		if _, ok := byID[e.TaskID]; !ok {
			t.Errorf("account %s: %s entry %d names task %q, not one of the account's", accountID, e.Kind, i, e.TaskID)
		}
	}
}

// allTasks pages through every task of the account.
func allTasks(t *testing.T, s store.Store, accountID string) []task.Task {
	t.Helper()
	const page = 100
	var all []task.Task
	for {
		tasks, total, err := s.Tasks(t.Context(), accountID, store.TaskQuery{Skip: len(all), Limit: page})
		if err != nil {
			t.Fatalf("CheckInvariants: Tasks(%s, skip %d): %v", accountID, len(all), err)
		}
		all = append(all, tasks...)
		if len(tasks) == 0 || len(all) >= total {
			if len(all) != total {
				t.Fatalf("CheckInvariants: Tasks(%s) paged %d tasks, total says %d", accountID, len(all), total)
			}
			return all
		}
	}
}
