package storetest

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/genvideo/gen/shared/domain"
	"github.com/genvideo/gen/shared/store"
	"github.com/genvideo/gen/shared/task"
)

// cancelled is the failure a cancel records (service.Cancel's).
var cancelled = task.Failure{Code: "CANCELLED", Message: "cancelled by the client"}

// LedgerPage pages the ledger newest first, by Seq, to the oldest entry,
// with every entry once and as Ledger has it.
func testLedgerPage(t *testing.T, s store.Store) {
	mustAccount(t, s, "acct-a", 100)
	mustAccount(t, s, "acct-b", 7) // its entries never show in acct-a's pages
	for i := range 6 {
		if _, err := s.Grant(t.Context(), "acct-a", int64(i+1), fmt.Sprint("grant ", i), at(time.Duration(i)*time.Second)); err != nil {
			t.Fatalf("Grant: %v", err)
		}
	}
	tk := newTask("acct-a", taskID(at(time.Minute), "ledgerpage"), 10, at(time.Minute))
	mustCreate(t, s, tk)
	all := mustLedger(t, s, "acct-a") // oldest first
	if len(all) != 8 {
		t.Fatalf("Ledger has %d entries, want 8", len(all))
	}
	for _, limit := range []int{1, 3, 8, 0} {
		var got []domain.LedgerEntry
		var before int64
		for pages := 0; ; pages++ {
			page, err := s.LedgerPage(t.Context(), "acct-a", store.LedgerQuery{Before: before, Limit: limit})
			if err != nil {
				t.Fatalf("LedgerPage(limit %d, before %d): %v", limit, before, err)
			}
			if limit > 0 && len(page) > limit {
				t.Fatalf("LedgerPage(limit %d) returned %d entries", limit, len(page))
			}
			if len(page) == 0 || pages > 20 {
				break
			}
			got = append(got, page...)
			before = page[len(page)-1].Seq
		}
		if len(got) != len(all) {
			t.Fatalf("limit %d: paged %d entries, want %d", limit, len(got), len(all))
		}
		for i, e := range got {
			w := all[len(all)-1-i]
			if e.Seq != w.Seq || e.Kind != w.Kind || e.Amount != w.Amount || e.Balance != w.Balance ||
				e.TaskID != w.TaskID || e.Note != w.Note || e.AccountID != "acct-a" || !sameTime(e.At, w.At) {
				t.Errorf("limit %d: entry %d is %+v, want %+v", limit, i, e, w)
			}
			if i > 0 && e.Seq >= got[i-1].Seq {
				t.Errorf("limit %d: entry %d has Seq %d after %d: want newest first", limit, i, e.Seq, got[i-1].Seq)
			}
		}
	}
	if _, err := s.LedgerPage(t.Context(), "acct-none", store.LedgerQuery{Limit: 5}); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("LedgerPage of an unknown account: %v, want ErrNotFound", err)
	}
}

// Held is the credits of the tasks pending and processing, less what a
// task already refunded, and nothing of finished ones.
func testHeld(t *testing.T, s store.Store) {
	mustAccount(t, s, "acct-a", 1000)
	held := func(want int64, when string) {
		t.Helper()
		got, err := s.Held(t.Context(), "acct-a")
		if err != nil {
			t.Fatalf("Held %s: %v", when, err)
		}
		if got != want {
			t.Errorf("Held %s = %d, want %d", when, got, want)
		}
	}
	held(0, "with no tasks")
	a := newTask("acct-a", taskID(at(0), "heldaaaaaa"), 30, at(0))
	b := newTask("acct-a", taskID(at(time.Second), "heldbbbbbb"), 50, at(time.Second))
	c := newTask("acct-a", taskID(at(2*time.Second), "heldcccccc"), 70, at(2*time.Second))
	for _, tk := range []task.Task{a, b, c} {
		mustCreate(t, s, tk)
	}
	mustMarkProcessing(t, s, b.ID, at(time.Minute))
	held(150, "with one pending, one processing and one more pending")
	mustComplete(t, s, a.ID, domain.Completion{Videos: []task.Video{{Key: "v", MimeType: "video/mp4"}}}, at(2*time.Minute))
	mustFail(t, s, c.ID, cancelled, at(2*time.Minute))
	held(50, "after one completed and one cancelled")
	if got, err := s.Held(t.Context(), "acct-none"); err != nil || got != 0 {
		t.Errorf("Held of an unknown account = %d, %v; want 0, nil", got, err)
	}
	CheckInvariants(t, s, "acct-a")
}

// DeleteTask removes a finished task from Task and Tasks, keeps its
// ledger entries, and refuses a task in flight, changing nothing.
func testDeleteTask(t *testing.T, s store.Store) {
	mustAccount(t, s, "acct-a", 1000)
	done := newTask("acct-a", taskID(at(0), "deletedone"), 30, at(0))
	failed := newTask("acct-a", taskID(at(time.Second), "deletefail"), 40, at(time.Second))
	busy := newTask("acct-a", taskID(at(2*time.Second), "deletebusy"), 50, at(2*time.Second))
	for _, tk := range []task.Task{done, failed, busy} {
		mustCreate(t, s, tk)
	}
	mustComplete(t, s, done.ID, domain.Completion{Videos: []task.Video{{Key: "v", MimeType: "video/mp4"}}, Refund: 10}, at(time.Minute))
	mustFail(t, s, failed.ID, cancelled, at(time.Minute))
	entries := len(mustLedger(t, s, "acct-a"))

	before := takeSnapshot(t, s, "acct-a")
	if _, err := s.DeleteTask(t.Context(), busy.ID); !errors.Is(err, domain.ErrNotFinished) {
		t.Errorf("DeleteTask of a pending task: %v, want ErrNotFinished", err)
	}
	unchanged(t, s, "acct-a", before, "DeleteTask of a pending task")
	if _, err := s.DeleteTask(t.Context(), taskID(at(0), "nosuchtask")); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("DeleteTask of an unknown task: %v, want ErrNotFound", err)
	}

	for _, tk := range []task.Task{done, failed} {
		got, err := s.DeleteTask(t.Context(), tk.ID)
		if err != nil {
			t.Fatalf("DeleteTask(%s): %v", tk.ID, err)
		}
		if got.ID != tk.ID || !got.Status.Terminal() || len(got.Inputs) != len(tk.Inputs) {
			t.Errorf("DeleteTask returned %+v, want the task as it was", got)
		}
		if _, err := s.Task(t.Context(), tk.ID); !errors.Is(err, domain.ErrNotFound) {
			t.Errorf("Task(%s) after DeleteTask: %v, want ErrNotFound", tk.ID, err)
		}
		if _, err := s.DeleteTask(t.Context(), tk.ID); !errors.Is(err, domain.ErrNotFound) {
			t.Errorf("DeleteTask(%s) again: %v, want ErrNotFound", tk.ID, err)
		}
	}
	tasks, total, err := s.Tasks(t.Context(), "acct-a", store.TaskQuery{Limit: 10})
	if err != nil || total != 1 || len(tasks) != 1 || tasks[0].ID != busy.ID {
		t.Errorf("Tasks after deleting two of three = %d tasks, total %d, %v; want only %s", len(tasks), total, err, busy.ID)
	}
	for _, st := range task.Statuses {
		_, n, err := s.Tasks(t.Context(), "acct-a", store.TaskQuery{Status: st, Limit: 10})
		want := 0
		if st == task.Pending {
			want = 1
		}
		if err != nil || n != want {
			t.Errorf("Tasks(status %s) total %d, %v; want %d", st, n, err, want)
		}
	}
	if n := len(mustLedger(t, s, "acct-a")); n != entries {
		t.Errorf("the ledger has %d entries after DeleteTask, want the %d it had", n, entries)
	}
	if a := mustAccountState(t, s, "acct-a"); a.Credits != 1000-50-20 || a.InFlight != 1 {
		t.Errorf("after the deletes: %d credits, %d in flight; want %d, 1", a.Credits, a.InFlight, 1000-50-20)
	}
	CheckInvariants(t, s, "acct-a")
}

// DeleteTask keeps the idempotency record of the task's start: a start
// under the same key is told about the deleted task, and charges nothing.
func testDeleteKeepsIdempotency(t *testing.T, s store.Store) {
	mustAccount(t, s, "acct-a", 100)
	tk := newTask("acct-a", taskID(at(0), "deleteidem"), 30, at(0))
	mustStart(t, s, tk, domain.StartGuard{Idempotency: idem("k1", "h1", tk.CreatedAt)})
	mustFail(t, s, tk.ID, cancelled, at(time.Second))
	if _, err := s.DeleteTask(t.Context(), tk.ID); err != nil {
		t.Fatalf("DeleteTask: %v", err)
	}
	before := takeSnapshot(t, s, "acct-a")
	again := newTask("acct-a", taskID(at(time.Minute), "deleteidm2"), 30, at(time.Minute))
	_, err := s.CreateTask(t.Context(), again, domain.StartGuard{Idempotency: idem("k1", "h1", again.CreatedAt)})
	wantIdempotencyError(t, "a start under the key of a deleted task", err, tk.ID, "h1")
	unchanged(t, s, "acct-a", before, "a start under the key of a deleted task")
	CheckInvariants(t, s, "acct-a")
}

// 100 cancels (Fail with CANCELLED) race 100 completions, one of each
// per task: each task ends either completed and charged (less its
// partial refund) or cancelled and refunded in full, once.
func testRaceCancelComplete(t *testing.T, s store.Store) {
	const n, cost, partial = 100, 20, 5
	mustAccount(t, s, "acct-a", n*cost)
	tasks := raceTasks("acct-a", n, cost)
	for i, tk := range tasks {
		mustCreate(t, s, tk)
		if i%2 == 0 {
			mustMarkProcessing(t, s, tk.ID, at(time.Second))
		}
	}
	errs := make([]error, 2*n)
	race(2*n, func(i int) {
		id := tasks[i/2].ID
		if i%2 == 0 {
			_, errs[i] = s.Fail(t.Context(), id, cancelled, at(time.Minute))
		} else {
			_, errs[i] = s.Complete(t.Context(), id, domain.Completion{
				Videos: []task.Video{{Key: "v0", MimeType: "video/mp4", Size: 10}}, Refund: partial}, at(time.Minute))
		}
	})
	var wantCredits int64
	ledger := mustLedger(t, s, "acct-a")
	for i, tk := range tasks {
		final := mustTask(t, s, tk.ID)
		cancelErr, completeErr := errs[2*i], errs[2*i+1]
		refunds := taskEntries(ledger, tk.ID, domain.EntryRefund)
		switch final.Status {
		case task.Failed:
			if cancelErr != nil || !errors.Is(completeErr, domain.ErrTerminal) || final.Failure == nil || final.Failure.Code != cancelled.Code {
				t.Errorf("task %d cancelled: cancel %v, complete %v, failure %+v", i, cancelErr, completeErr, final.Failure)
			}
			if len(refunds) != 1 || refunds[0].Amount != cost {
				t.Errorf("cancelled task %d: refunds %+v, want one of %d", i, refunds, cost)
			}
			wantCredits += cost
		case task.Completed:
			if completeErr != nil || !errors.Is(cancelErr, domain.ErrTerminal) {
				t.Errorf("task %d completed: cancel %v, complete %v", i, cancelErr, completeErr)
			}
			if len(refunds) != 1 || refunds[0].Amount != partial {
				t.Errorf("completed task %d: refunds %+v, want one of %d", i, refunds, partial)
			}
			wantCredits += partial
		default:
			t.Errorf("task %d is %s after the race, want terminal", i, final.Status)
		}
	}
	if a := mustAccountState(t, s, "acct-a"); a.Credits != wantCredits || a.InFlight != 0 {
		t.Errorf("after the race: %d credits, %d in flight; want %d, 0", a.Credits, a.InFlight, wantCredits)
	}
	CheckInvariants(t, s, "acct-a")
}
