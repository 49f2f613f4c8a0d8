package sqlitestore

import (
	"hash/maphash"
	"maps"
	"slices"
	"time"

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
// caching it: the scope is a stripe of task ids, so that a write to one
// task rarely stops another's read from being cached); a task not
// finished lives TaskCacheTTL, a finished one until the LRU evicts it.
//
// Each task is held by pointer, never changed once put: a history page
// read looks up twenty (peek, the LRU's shared lock) and copies each
// struct into the page it keeps, their slices shared.
type taskCache struct {
	*guardedCache[string, int, *task.Task]
	seed maphash.Seed
}

func newTaskCache() *taskCache {
	c := &taskCache{seed: maphash.MakeSeed()}
	c.guardedCache = newGuardedCache[string, int, *task.Task](taskCacheMax, c.stripe)
	return c
}

func (c *taskCache) stripe(id string) int {
	return int(maphash.String(c.seed, id) % taskStripes)
}

// task answers id's task, a copy of the cache's.
func (c *taskCache) task(id string, now time.Time) (task.Task, bool) {
	t, ok := c.get(id, now, false)
	if !ok {
		return task.Task{}, false
	}
	return cloneTask(*t), true
}

// keep caches t, read after generation(stripe) returned gen, and
// returns the copy it holds (or would have held), which nobody changes.
func (c *taskCache) keep(t task.Task, gen uint64, now time.Time) *task.Task {
	var until time.Time
	if !t.Status.Terminal() {
		until = now.Add(TaskCacheTTL)
	}
	t = cloneTask(t)
	c.put(t.ID, &t, gen, until)
	return &t
}

// generations is every stripe's generation, read before a database read
// of tasks not known yet (a history page) whose results keep may cache.
func (c *taskCache) generations() map[int]uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.gens)
}

// forgetTask drops task id and stops reads in progress from caching it.
func (c *taskCache) forgetTask(id string) {
	c.forget(c.stripe(id), nil)
	c.remove(id)
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
