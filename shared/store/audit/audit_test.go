package audit_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/genvideo/gen/shared/domain"
	"github.com/genvideo/gen/shared/store"
	"github.com/genvideo/gen/shared/store/audit"
	"github.com/genvideo/gen/shared/task"
)

// books is a store's view of one account, as the audit reads it.
type books struct {
	account domain.Account
	ledger  []domain.LedgerEntry
	tasks   []task.Task
	// total, when set, is the total Tasks reports instead of len(tasks).
	total int
	err   error
}

func (b *books) Account(context.Context, string) (domain.Account, error) { return b.account, b.err }

func (b *books) Ledger(context.Context, string) ([]domain.LedgerEntry, error) { return b.ledger, nil }

func (b *books) Tasks(_ context.Context, _ string, q store.TaskQuery) ([]task.Task, int, error) {
	total := len(b.tasks)
	if b.total != 0 {
		total = b.total
	}
	lo := min(q.Skip, len(b.tasks))
	hi := min(lo+q.Limit, len(b.tasks))
	return b.tasks[lo:hi], total, nil
}

const acct = "acct-a"

func entry(kind, taskID string, amount, balance int64) domain.LedgerEntry {
	return domain.LedgerEntry{AccountID: acct, TaskID: taskID, Kind: kind, Amount: amount, Balance: balance}
}

// balanced is an account granted 100 credits with a completed task (cost
// 30, 10 refunded for a filtered sample), a failed one (cost 20, refunded)
// and one in flight (cost 5): 100 - 30 + 10 - 20 + 20 - 5 = 75.
func balanced() *books {
	return &books{
		account: domain.Account{ID: acct, Credits: 75, InFlight: 1},
		ledger: []domain.LedgerEntry{
			entry(domain.EntryGrant, "", 100, 100),
			entry(domain.EntryCharge, "t1", -30, 70),
			entry(domain.EntryRefund, "t1", 10, 80),
			entry(domain.EntryCharge, "t2", -20, 60),
			entry(domain.EntryRefund, "t2", 20, 80),
			entry(domain.EntryCharge, "t3", -5, 75),
		},
		tasks: []task.Task{
			{ID: "t1", AccountID: acct, Status: task.Completed, CreditsCost: 30, CreditsRefunded: 10},
			{ID: "t2", AccountID: acct, Status: task.Failed, CreditsCost: 20, CreditsRefunded: 20},
			{ID: "t3", AccountID: acct, Status: task.Processing, CreditsCost: 5},
		},
	}
}

func TestAccount(t *testing.T) {
	tests := []struct {
		name  string
		spoil func(b *books)
		want  string // in one of the problems; "" for none
	}{
		{"balanced", func(*books) {}, ""},
		{"balance is not the ledger's sum", func(b *books) { b.account.Credits = 80 }, "ledger sums to 75, balance is 80"},
		{"negative balance", func(b *books) {
			b.account.Credits = -5
			b.ledger = append(b.ledger, entry(domain.EntryCharge, "t3", -80, -5))
		}, "balance -5, want >= 0"},
		{"balance-after off", func(b *books) { b.ledger[1].Balance = 71 }, "has balance-after 71, want 70"},
		{"failed task not refunded", func(b *books) {
			b.tasks[1].CreditsRefunded = 0
			b.ledger = b.ledger[:4]
			b.account.Credits = 55
			b.ledger = append(b.ledger, entry(domain.EntryCharge, "t3", -5, 55))
		}, "failed task t2: refunded 0, want its cost 20"},
		{"refunded twice", func(b *books) {
			b.ledger = append(b.ledger, entry(domain.EntryRefund, "t2", 20, 95))
			b.account.Credits = 95
		}, "task t2: 2 refund entries, want at most one"},
		{"charged twice", func(b *books) {
			b.ledger = append(b.ledger, entry(domain.EntryCharge, "t3", -5, 70))
			b.account.Credits = 70
		}, "task t3: charge entries"},
		{"in-flight task refunded", func(b *books) {
			b.ledger = append(b.ledger, entry(domain.EntryRefund, "t3", 5, 80))
			b.tasks[2].CreditsRefunded = 5
			b.account.Credits = 80
		}, "processing task t3: refunded 5, want 0"},
		{"in flight miscounted", func(b *books) { b.account.InFlight = 2 }, "InFlight 2, but 1 tasks"},
		{"entry of an unknown task", func(b *books) {
			b.ledger = append(b.ledger, entry(domain.EntryRefund, "t9", 5, 80))
			b.account.Credits = 80
		}, `names task "t9"`},
		{"grant naming a task", func(b *books) { b.ledger[0].TaskID = "t1" }, "grant entry 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := balanced()
			tt.spoil(b)
			problems, err := audit.Account(context.Background(), b, acct)
			if err != nil {
				t.Fatal(err)
			}
			if tt.want == "" {
				if len(problems) != 0 {
					t.Errorf("problems %q, want none", problems)
				}
				return
			}
			found := false
			for _, p := range problems {
				found = found || strings.Contains(p, tt.want)
			}
			if !found {
				t.Errorf("problems %q, want one saying %q", problems, tt.want)
			}
		})
	}
}

func TestAccountReportsAStoreItCannotRead(t *testing.T) {
	b := balanced()
	b.err = errors.New("table gone")
	if _, err := audit.Account(context.Background(), b, acct); err == nil || !strings.Contains(err.Error(), "table gone") {
		t.Errorf("Account of an unreadable store = %v, want its error", err)
	}
	b = balanced()
	b.total = 4
	if _, err := audit.Tasks(context.Background(), b, acct); err == nil || !strings.Contains(err.Error(), "total says 4") {
		t.Errorf("Tasks whose pages miss one = %v, want an error", err)
	}
}

// Many tasks take many pages: all of them are audited.
func TestAccountReadsEveryPage(t *testing.T) {
	b := &books{account: domain.Account{ID: acct, Credits: 1000}, ledger: []domain.LedgerEntry{entry(domain.EntryGrant, "", 1000, 1000)}}
	for i := range 250 {
		id := "t" + string(rune('a'+i/26)) + string(rune('a'+i%26))
		b.tasks = append(b.tasks, task.Task{ID: id, AccountID: acct, Status: task.Failed, CreditsCost: 1, CreditsRefunded: 1})
		bal := b.ledger[len(b.ledger)-1].Balance
		b.ledger = append(b.ledger, entry(domain.EntryCharge, id, -1, bal-1), entry(domain.EntryRefund, id, 1, bal))
	}
	tasks, err := audit.Tasks(context.Background(), b, acct)
	if err != nil || len(tasks) != 250 {
		t.Fatalf("Tasks = %d tasks, %v; want 250", len(tasks), err)
	}
	b.tasks[249].CreditsRefunded = 0
	problems, err := audit.Account(context.Background(), b, acct)
	if err != nil || len(problems) == 0 {
		t.Errorf("Account with a bad task on the third page = %q, %v; want a problem", problems, err)
	}
}
