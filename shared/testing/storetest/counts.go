package storetest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/genvideo/gen/shared/domain"
	"github.com/genvideo/gen/shared/store"
	"github.com/genvideo/gen/shared/task"
)

// WithExpire gives the suite the backend's own way of letting a task go
// by retention (on DynamoDB: TTL deletes the item and the stream's
// handler calls ForgetExpiredTask). expire removes finished task tk as
// that path does; it is called from several goroutines at once. Without
// it, the suite expires nothing: a backend without retention has no such
// path.
func WithExpire(expire func(ctx context.Context, s store.Store, tk task.Task) error) Option {
	return func(c *config) { c.expire = expire }
}

// wantTotals fails the test unless the total Tasks reports, for the
// account and for each status, is the number of tasks it lists: a
// total kept as a counter must be the count it stands for.
func wantTotals(t *testing.T, s store.Store, account, what string) {
	t.Helper()
	for _, st := range append([]task.Status{""}, task.Statuses...) {
		all, _, err := s.Tasks(t.Context(), account, store.TaskQuery{Status: st})
		if err != nil {
			t.Fatalf("after %s: Tasks(%s, status %q): %v", what, account, st, err)
		}
		// A page of one, and a page past the end: the total does not
		// depend on the page.
		for _, q := range []store.TaskQuery{{Status: st, Limit: 1}, {Status: st, Skip: len(all) + 5, Limit: 3}} {
			_, total, err := s.Tasks(t.Context(), account, q)
			if err != nil {
				t.Fatalf("after %s: Tasks(%s, %+v): %v", what, account, q, err)
			}
			if total != len(all) {
				t.Errorf("after %s: Tasks(%s, %+v) total %d; %d tasks listed", what, account, q, total, len(all))
			}
		}
	}
}

// testTotalCounts checks that the history's total stays exact across
// every path by which a task row appears, moves or goes: create, the
// moves to processing, completed and failed, delete, expiry (WithExpire),
// and all of them at once from many goroutines on two accounts.
func testTotalCounts(t *testing.T, s store.Store, cfg config) {
	mustAccount(t, s, "acct-a", 1_000_000)
	mustAccount(t, s, "acct-b", 1_000_000)
	wantTotals(t, s, "acct-a", "nothing")

	var tasks []task.Task
	for i := range 6 {
		tk := newTask("acct-a", taskID(at(time.Duration(i)*time.Second), fmt.Sprintf("count%05d", i)), 10, at(time.Duration(i)*time.Second))
		mustCreate(t, s, tk)
		tasks = append(tasks, tk)
	}
	wantTotals(t, s, "acct-a", "6 creates")
	wantTotals(t, s, "acct-b", "6 creates on another account")
	if _, err := s.CreateTask(t.Context(), tasks[0], domain.StartGuard{}); err == nil {
		t.Errorf("CreateTask of an existing id succeeded")
	}
	wantTotals(t, s, "acct-a", "a refused create")

	for _, tk := range tasks[:4] {
		if _, err := s.MarkProcessing(t.Context(), tk.ID, at(time.Minute)); err != nil {
			t.Fatalf("MarkProcessing(%s): %v", tk.ID, err)
		}
	}
	// Again: a move that changes nothing counts nothing.
	if _, err := s.MarkProcessing(t.Context(), tasks[0].ID, at(time.Minute)); err != nil {
		t.Fatalf("MarkProcessing(%s) again: %v", tasks[0].ID, err)
	}
	wantTotals(t, s, "acct-a", "MarkProcessing")
	mustComplete(t, s, tasks[0].ID, domain.Completion{Videos: []task.Video{{Key: "v", MimeType: "video/mp4"}}}, at(2*time.Minute))
	mustComplete(t, s, tasks[1].ID, domain.Completion{Videos: []task.Video{{Key: "v", MimeType: "video/mp4"}}}, at(2*time.Minute))
	mustFail(t, s, tasks[2].ID, cancelled, at(2*time.Minute))
	mustFail(t, s, tasks[4].ID, cancelled, at(2*time.Minute)) // pending to failed
	// Refused moves: a completed task does not fail, a failed one does
	// not complete.
	s.Fail(t.Context(), tasks[0].ID, cancelled, at(3*time.Minute))
	s.Complete(t.Context(), tasks[2].ID, domain.Completion{}, at(3*time.Minute))
	wantTotals(t, s, "acct-a", "Complete and Fail")

	if _, err := s.DeleteTask(t.Context(), tasks[0].ID); err != nil {
		t.Fatalf("DeleteTask(%s): %v", tasks[0].ID, err)
	}
	s.DeleteTask(t.Context(), tasks[0].ID) // gone already
	s.DeleteTask(t.Context(), tasks[3].ID) // processing: refused
	wantTotals(t, s, "acct-a", "DeleteTask")
	if cfg.expire != nil {
		for _, tk := range []task.Task{tasks[1], tasks[4]} {
			if err := cfg.expire(t.Context(), s, mustTask(t, s, tk.ID)); err != nil {
				t.Fatalf("expire %s: %v", tk.ID, err)
			}
		}
		wantTotals(t, s, "acct-a", "expiry")
	}

	// Everything at once: each worker creates its tasks, moves them
	// along, and deletes or expires some, on two accounts.
	const workers, each = 6, 8
	var wg sync.WaitGroup
	for w := range workers {
		account := []string{"acct-a", "acct-b"}[w%2]
		wg.Go(func() {
			ctx := t.Context()
			for i := range each {
				created := at(time.Hour + time.Duration(w*each+i)*time.Millisecond)
				tk := newTask(account, taskID(created, fmt.Sprintf("race%02d%03d", w, i)), 1, created)
				if _, err := s.CreateTask(ctx, tk, domain.StartGuard{}); err != nil {
					t.Errorf("CreateTask(%s): %v", tk.ID, err)
					return
				}
				if i%4 == 0 {
					continue // stays pending
				}
				if _, err := s.MarkProcessing(ctx, tk.ID, created.Add(time.Second)); err != nil {
					t.Errorf("MarkProcessing(%s): %v", tk.ID, err)
					return
				}
				if i%4 == 1 {
					continue // stays processing
				}
				var err error
				if i%2 == 0 {
					_, err = s.Complete(ctx, tk.ID, domain.Completion{Videos: []task.Video{{Key: "v", MimeType: "video/mp4"}}}, created.Add(time.Minute))
				} else {
					_, err = s.Fail(ctx, tk.ID, cancelled, created.Add(time.Minute))
				}
				if err != nil {
					t.Errorf("finish %s: %v", tk.ID, err)
					return
				}
				switch {
				case i%8 == 2:
					if _, err := s.DeleteTask(ctx, tk.ID); err != nil {
						t.Errorf("DeleteTask(%s): %v", tk.ID, err)
						return
					}
				case i%8 == 3 && cfg.expire != nil:
					done, err := s.Task(ctx, tk.ID)
					if err != nil {
						t.Errorf("Task(%s): %v", tk.ID, err)
						return
					}
					if err := cfg.expire(ctx, s, done); err != nil {
						t.Errorf("expire %s: %v", tk.ID, err)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	wantTotals(t, s, "acct-a", "concurrent creates, moves, deletes and expiries")
	wantTotals(t, s, "acct-b", "concurrent creates, moves, deletes and expiries")
}

// Importer is a backend's bulk seeding of tasks, for the bench
// (ImportTasks of sqlitestore and dynamostore).
type Importer interface {
	store.Store
	ImportTasks(ctx context.Context, n int, next func(i int) task.Task) error
}

// CheckImport checks that n tasks seeded through ImportTasks are listed,
// in order, and counted as any other tasks, by status too.
func CheckImport(t *testing.T, s Importer, n int) {
	ctx := t.Context()
	mustAccount(t, s, "acct-a", 0)
	mk := func(i int) task.Task {
		created := at(time.Duration(i) * time.Millisecond)
		tk := newTask("acct-a", taskID(created, fmt.Sprintf("import%05d", i)), 10, created)
		tk.Status, tk.StartedAt, tk.CompletedAt = task.Completed, created, created.Add(time.Second)
		tk.Videos = []task.Video{{Key: "videos/" + tk.ID + "/0.mp4", MimeType: "video/mp4"}}
		if i%2 == 1 {
			tk.Status, tk.Videos, tk.CreditsRefunded, tk.Failure = task.Failed, nil, 10, &cancelled
		}
		return tk
	}
	if err := s.ImportTasks(ctx, n, mk); err != nil {
		t.Fatalf("ImportTasks(%d): %v", n, err)
	}
	page, total, err := s.Tasks(ctx, "acct-a", store.TaskQuery{Limit: 2})
	if err != nil || total != n || len(page) != 2 {
		t.Fatalf("Tasks after importing %d = %d tasks, total %d, %v", n, len(page), total, err)
	}
	for i, got := range page {
		if d := diffTask(got, mk(n-1-i)); len(d) > 0 {
			t.Errorf("Tasks after import, task %d: %v", i, d)
		}
	}
	if _, failed, err := s.Tasks(ctx, "acct-a", store.TaskQuery{Status: task.Failed, Limit: 1}); err != nil || failed != n/2 {
		t.Errorf("failed total %d, %v; want %d", failed, err, n/2)
	}
	wantTotals(t, s, "acct-a", "import")
}
