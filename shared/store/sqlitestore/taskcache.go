package sqlitestore

import (
	"hash/maphash"
	"slices"
	"sync"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/genvideo/gen/shared/task"
)

// TaskCacheTTL is how long Task answers a pending or processing task it
// has read from memory. Every change this Store makes to a task forgets it
// at once, and on the local stack every change is made by the server's
// Store (the workflow and the sweeper run in it); a change made by another
// process on the same file is seen within TaskCacheTTL. A finished task
// never changes (store.Store's contract: Complete and Fail refuse the
// other terminal state and change nothing on their own), so it is kept
// until the cache is full.
const TaskCacheTTL = time.Second

// taskCacheMax bounds the tasks kept in memory; past it the least
// recently used goes, which costs one read when it is polled again.
const taskCacheMax = 10000

// taskStripes spread the invalidation counters, so that a write to one
// task rarely stops another's read from being cached.
const taskStripes = 256

// taskCache holds the tasks Task read, so that status polling reads no
// database. Misses are never cached. Invalidation: every change this
// Store makes to a task forgets it (and stops reads in progress from
// caching it); a task not finished lives TaskCacheTTL.
type taskCache struct {
	// byID holds each task by pointer, never changed once added: a
	// history page looks up twenty under the cache's one lock, which
	// then copies a pointer each, not a task.
	byID *lru.Cache[string, *cachedTask]
	// mu orders put against forget.
	mu sync.Mutex
	// gens counts the changes to the tasks of each stripe: a read that
	// began before one must not cache what it read.
	gens [taskStripes]uint64
	seed maphash.Seed
	once sync.Once
}

type cachedTask struct {
	t     task.Task
	until time.Time // zero: a finished task, kept for good
}

func (c *taskCache) stripe(id string) int {
	c.once.Do(func() { c.seed = maphash.MakeSeed() })
	return int(maphash.String(c.seed, id) % taskStripes)
}

func newTaskCache() *taskCache {
	c, _ := lru.New[string, *cachedTask](taskCacheMax) // a positive size: New cannot fail
	return &taskCache{byID: c}
}

func (c *taskCache) get(id string, now time.Time) (task.Task, bool) {
	e, ok := c.byID.Get(id)
	if !ok || (!e.until.IsZero() && !now.Before(e.until)) {
		return task.Task{}, false
	}
	return cloneTask(e.t), true
}

// all returns the tasks of a cached page, each as the page has its
// status; ok is false unless the cache holds every one so.
func (c *taskCache) all(entries []pageEntry, now time.Time) ([]task.Task, bool) {
	tasks := make([]task.Task, 0, len(entries))
	for _, e := range entries {
		ct, ok := c.byID.Get(e.id)
		if !ok || (!ct.until.IsZero() && !now.Before(ct.until)) || string(ct.t.Status) != e.status {
			return nil, false
		}
		tasks = append(tasks, cloneTask(ct.t))
	}
	return tasks, true
}

// generation is read before a database read whose result put may cache.
func (c *taskCache) generation(id string) uint64 {
	i := c.stripe(id)
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gens[i]
}

// generations is every stripe's generation, read before a database read
// of tasks not known yet (a history page) whose results put may cache.
func (c *taskCache) generations() [taskStripes]uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gens
}

func (c *taskCache) put(t task.Task, gen uint64, now time.Time) {
	e := &cachedTask{t: cloneTask(t)}
	if !t.Status.Terminal() {
		e.until = now.Add(TaskCacheTTL)
	}
	i := c.stripe(t.ID)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gens[i] != gen {
		return
	}
	c.byID.Add(t.ID, e)
}

// forget drops task id and stops reads in progress from caching it.
func (c *taskCache) forget(id string) {
	i := c.stripe(id)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gens[i]++
	c.byID.Remove(id)
}

// cloneTask copies t's slices and pointers, so that no caller shares the
// cache's.
func cloneTask(t task.Task) task.Task {
	t.Inputs = slices.Clone(t.Inputs)
	t.Videos = slices.Clone(t.Videos)
	if t.Failure != nil {
		f := *t.Failure
		t.Failure = &f
	}
	return t
}
