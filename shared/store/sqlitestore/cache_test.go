package sqlitestore

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/genvideo/gen/shared/domain"
	"github.com/genvideo/gen/shared/store"
	"github.com/genvideo/gen/shared/task"
)

// fakeClock is a settable clock for the key cache.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// twoProcesses opens one database file twice, as the server and genctl
// do, the first Store on a settable clock, with account acct-a.
func twoProcesses(t *testing.T) (s, other *Store, clock *fakeClock) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "gen.db")
	s, other = openAt(t, path), openAt(t, path)
	clock = &fakeClock{now: t0}
	s.now = clock.Now
	if err := s.CreateAccount(context.Background(), domain.Account{ID: "acct-a", Credits: 100, CreatedAt: t0}); err != nil {
		t.Fatal(err)
	}
	return s, other, clock
}

// TestKeyCacheRevocation: a revocation through the Store is seen by the
// next KeyByHash; one made by another process on the same file (a second
// Store, as genctl opens) is seen once KeyCacheTTL has passed, and not
// answered from a stale cache after that.
func TestKeyCacheRevocation(t *testing.T) {
	ctx := context.Background()
	s, other, clock := twoProcesses(t)
	for _, id := range []string{"key-1", "key-2"} {
		if err := s.CreateKey(ctx, store.Key{ID: id, Hash: "h-" + id, AccountID: "acct-a", Tier: "pro", CreatedAt: t0}); err != nil {
			t.Fatal(err)
		}
	}
	revoked := func(hash string) bool {
		t.Helper()
		k, err := s.KeyByHash(ctx, hash)
		if err != nil {
			t.Fatalf("KeyByHash(%s): %v", hash, err)
		}
		return k.Revoked()
	}
	if revoked("h-key-1") || revoked("h-key-2") {
		t.Fatal("fresh keys are revoked")
	}

	if err := s.RevokeKey(ctx, "key-1", t0); err != nil {
		t.Fatal(err)
	}
	if !revoked("h-key-1") {
		t.Error("key revoked through this Store: KeyByHash still answers it active")
	}

	if err := other.RevokeKey(ctx, "key-2", t0); err != nil {
		t.Fatal(err)
	}
	if revoked("h-key-2") {
		t.Log("key-2 read afresh: the cache did not hold it") // allowed, and not what this test is after
	}
	clock.Advance(KeyCacheTTL)
	if !revoked("h-key-2") {
		t.Errorf("key revoked by another process: still answered active %v later", KeyCacheTTL)
	}
}

// TestKeyCacheMissesAreNotCached: a key created by another process works
// at once, even right after a look-up that did not find it.
func TestKeyCacheMissesAreNotCached(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "gen.db")
	s := openAt(t, path)
	other := openAt(t, path)
	if _, err := s.KeyByHash(ctx, "h-new"); err == nil {
		t.Fatal("KeyByHash of an unknown hash: no error")
	}
	if err := other.CreateAccount(ctx, domain.Account{ID: "acct-a", CreatedAt: t0}); err != nil {
		t.Fatal(err)
	}
	if err := other.CreateKey(ctx, store.Key{ID: "key-new", Hash: "h-new", AccountID: "acct-a", Tier: "pro", CreatedAt: t0}); err != nil {
		t.Fatal(err)
	}
	if k, err := s.KeyByHash(ctx, "h-new"); err != nil || k.ID != "key-new" {
		t.Errorf("KeyByHash after another process created the key = %+v, %v; want key-new", k, err)
	}
}

// TestAddCounts: counts added in a batch land on the window Count reads,
// start a fresh window where the stored one ended, and skip a counter
// whose window is over.
func TestAddCounts(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	day := domain.Window{Key: "rl:d:k:1", Limit: 10, ExpiresAt: t0.Add(24 * time.Hour)}
	old := domain.Window{Key: "rl:d:k:0", Limit: 10, ExpiresAt: t0}
	if _, err := s.Take(ctx, []domain.Window{day}, t0); err != nil {
		t.Fatal(err)
	}
	if err := s.AddCounts(ctx, []domain.Window{day, old}, []int{4, 7}, t0.Add(time.Minute)); err != nil {
		t.Fatalf("AddCounts: %v", err)
	}
	for _, tt := range []struct {
		c    domain.Window
		at   time.Time
		want int
	}{
		{day, t0.Add(time.Hour), 5},
		{old, t0.Add(-time.Hour), 0}, // never written: its window was over
		{day, day.ExpiresAt, 0},      // ended
	} {
		if n, err := s.Count(ctx, tt.c, tt.at); err != nil || n != tt.want {
			t.Errorf("Count(%s, %v) = %d, %v; want %d", tt.c.Key, tt.at, n, err, tt.want)
		}
	}
	// A stored window that has ended is replaced, not added to.
	later := day.ExpiresAt.Add(time.Hour)
	next := domain.Window{Key: day.Key, Limit: 10, ExpiresAt: later.Add(time.Hour)}
	if err := s.AddCounts(ctx, []domain.Window{next}, []int{2}, later); err != nil {
		t.Fatal(err)
	}
	if n, err := s.Count(ctx, next, later); err != nil || n != 2 {
		t.Errorf("Count after a fresh window = %d, %v; want 2", n, err)
	}
}

// TestTaskCache: a change this Store makes to a task is seen by the next
// Task; one another process makes (a second Store) within TaskCacheTTL; a
// finished task is answered from memory for good; what a caller does to
// an answer does not reach the cache.
func TestTaskCache(t *testing.T) {
	ctx := context.Background()
	s, other, clock := twoProcesses(t)
	newTask := func(suffix string) task.Task {
		tk := task.Task{ID: task.NewID(t0) + suffix, AccountID: "acct-a", Type: "text-to-video", Model: "m", Prompt: "p",
			CreditsCost: 10, CreatedAt: t0, Deadline: t0.Add(time.Hour)}
		if _, err := s.CreateTask(ctx, tk, domain.StartGuard{}); err != nil {
			t.Fatal(err)
		}
		return tk
	}
	status := func(id string) task.Status {
		t.Helper()
		got, err := s.Task(ctx, id)
		if err != nil {
			t.Fatalf("Task(%s): %v", id, err)
		}
		return got.Status
	}
	video := domain.Completion{Videos: []task.Video{{Key: "v", MimeType: "video/mp4", Size: 1}}}

	mine := newTask("a")
	if got := status(mine.ID); got != task.Pending {
		t.Fatalf("fresh task %s, want pending", got)
	}
	if _, err := s.MarkProcessing(ctx, mine.ID, t0); err != nil {
		t.Fatal(err)
	}
	if got := status(mine.ID); got != task.Processing {
		t.Errorf("after this Store's MarkProcessing: %s, want processing at once", got)
	}
	if _, err := s.Complete(ctx, mine.ID, video, t0); err != nil {
		t.Fatal(err)
	}
	if got := status(mine.ID); got != task.Completed {
		t.Errorf("after this Store's Complete: %s, want completed at once", got)
	}

	theirs := newTask("b")
	status(theirs.ID)
	if _, err := other.Fail(ctx, theirs.ID, task.Failure{Code: task.FailTimeout, Message: "x"}, t0); err != nil {
		t.Fatal(err)
	}
	clock.Advance(TaskCacheTTL)
	if got := status(theirs.ID); got != task.Failed {
		t.Errorf("%v after another process failed it: %s, want failed", TaskCacheTTL, got)
	}

	clock.Advance(time.Hour)
	got, _ := s.Task(ctx, mine.ID)
	got.Videos[0].Key = "changed by a caller"
	if again, _ := s.Task(ctx, mine.ID); again.Videos[0].Key != "v" {
		t.Errorf("a caller's change reached the cache: video key %q", again.Videos[0].Key)
	}
}

// TestPageCache: a history page this Store answered from memory follows
// its own writes at once, and another process's within PageCacheTTL.
func TestPageCache(t *testing.T) {
	ctx := context.Background()
	s, other, clock := twoProcesses(t)
	n := 0
	start := func(st *Store) task.Task {
		t.Helper()
		n++
		created := t0.Add(time.Duration(n) * time.Second)
		tk := task.Task{ID: task.NewID(created), AccountID: "acct-a", Type: "text-to-video", Model: "m", Prompt: "p",
			CreditsCost: 1, CreatedAt: created, Deadline: created.Add(time.Hour)}
		if _, err := st.CreateTask(ctx, tk, domain.StartGuard{}); err != nil {
			t.Fatal(err)
		}
		return tk
	}
	page := func(status task.Status) (ids []string, total int) {
		t.Helper()
		tasks, total, err := s.Tasks(ctx, "acct-a", store.TaskQuery{Status: status, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		for _, tk := range tasks {
			ids = append(ids, tk.ID+":"+string(tk.Status))
		}
		return ids, total
	}
	want := func(what string, status task.Status, total int, ids ...string) {
		t.Helper()
		got, n := page(status)
		if n != total || !slices.Equal(got, ids) {
			t.Errorf("%s: page %v, total %d; want %v, total %d", what, got, n, ids, total)
		}
	}

	a := start(s)
	want("a start", "", 1, a.ID+":pending")
	page("") // cached
	b := start(s)
	want("this Store's start", "", 2, b.ID+":pending", a.ID+":pending")
	if _, err := s.MarkProcessing(ctx, a.ID, t0); err != nil {
		t.Fatal(err)
	}
	want("this Store's move", task.Pending, 1, b.ID+":pending")
	want("this Store's move", "", 2, b.ID+":pending", a.ID+":processing")
	if _, err := s.Fail(ctx, b.ID, task.Failure{Code: task.FailTimeout, Message: "x"}, t0); err != nil {
		t.Fatal(err)
	}
	if _, err := s.DeleteTask(ctx, b.ID); err != nil {
		t.Fatal(err)
	}
	want("this Store's delete", "", 1, a.ID+":processing")

	c := start(other)
	clock.Advance(PageCacheTTL)
	want(fmt.Sprintf("%v after another process's start", PageCacheTTL), "", 2, c.ID+":pending", a.ID+":processing")
}

// A page answered from the caches is the cached page itself, copied no
// more (store.Store.Tasks: callers only read it), yet appending to it
// cannot reach the cache, and a task read alone is still a copy: a
// change to it reaches neither the task cache nor the page.
func TestPageFromCacheIsShared(t *testing.T) {
	ctx := context.Background()
	s, _, _ := twoProcesses(t)
	created := t0.Add(time.Second)
	err := s.ImportTasks(ctx, 2, func(i int) task.Task {
		c := created.Add(time.Duration(i) * time.Millisecond)
		return task.Task{ID: task.NewID(c), AccountID: "acct-a", Type: "text-to-video", Model: "m", Prompt: "p",
			Status: task.Completed, CreatedAt: c, CompletedAt: c.Add(time.Second), Videos: []task.Video{{Key: "v", MimeType: "video/mp4"}}}
	})
	if err != nil {
		t.Fatal(err)
	}
	page := func() []task.Task {
		t.Helper()
		tasks, _, err := s.Tasks(ctx, "acct-a", store.TaskQuery{Limit: 10})
		if err != nil || len(tasks) != 2 {
			t.Fatalf("Tasks = %d tasks, %v; want 2", len(tasks), err)
		}
		return tasks
	}
	first := page() // read, and cached
	if got := page(); &got[0] != &first[0] {
		t.Error("a page asked again was copied, not answered from the cache as it is")
	}
	if allocs := testing.AllocsPerRun(100, func() { page() }); allocs != 0 {
		t.Errorf("a cached page took %v allocations, want 0", allocs)
	}

	grown := append(page(), task.Task{ID: "appended by a caller"})
	grown[0].Prompt = "changed in the caller's copy"
	if again := page(); len(again) != 2 || again[0].Prompt != "p" {
		t.Fatalf("appending to a page reached the cache: %d tasks, prompt %q", len(again), again[0].Prompt)
	}

	one, err := s.Task(ctx, first[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	one.Videos[0].Key = "changed by a caller"
	if again := page(); again[0].Videos[0].Key != "v" {
		t.Fatalf("a change to a task read alone reached the cached page: video key %q", again[0].Videos[0].Key)
	}
	if again, err := s.Task(ctx, first[0].ID); err != nil || again.Videos[0].Key != "v" {
		t.Fatalf("a change to a task read alone reached the task cache: %+v, %v", again.Videos, err)
	}
}

// A cached page holds its tasks, so every write to a task must make its
// account's pages stale: the progress and operation, which change no
// status, included.
func TestPageCacheSeesProgressAndOperation(t *testing.T) {
	ctx := context.Background()
	s, _, _ := twoProcesses(t)
	tk := task.Task{ID: task.NewID(t0), AccountID: "acct-a", Type: "text-to-video", Model: "m", Prompt: "p",
		CreditsCost: 1, CreatedAt: t0, Deadline: t0.Add(time.Hour)}
	if _, err := s.CreateTask(ctx, tk, domain.StartGuard{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.MarkProcessing(ctx, tk.ID, t0); err != nil {
		t.Fatal(err)
	}
	page := func() task.Task {
		t.Helper()
		tasks, _, err := s.Tasks(ctx, "acct-a", store.TaskQuery{Limit: 10})
		if err != nil || len(tasks) != 1 {
			t.Fatalf("Tasks = %d tasks, %v; want 1", len(tasks), err)
		}
		return tasks[0]
	}
	page() // read, and cached
	if err := s.SetProgress(ctx, tk.ID, 40); err != nil {
		t.Fatal(err)
	}
	if got := page(); got.Progress != 40 {
		t.Errorf("after SetProgress(40) the page says progress %d", got.Progress)
	}
	if _, err := s.SetOperation(ctx, tk.ID, "", "operations/1"); err != nil {
		t.Fatal(err)
	}
	if got := page(); got.Operation != "operations/1" {
		t.Errorf("after SetOperation the page says operation %q", got.Operation)
	}
}
