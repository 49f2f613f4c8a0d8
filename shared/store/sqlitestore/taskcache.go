package sqlitestore

import (
	"slices"
	"sync"

	"github.com/genvideo/gen/shared/task"
)

// taskCacheMax bounds the finished tasks kept in memory; past it the
// cache starts again empty, which costs a read per task once.
const taskCacheMax = 10000

// taskCache keeps the tasks Task read in a terminal state. A terminal task
// never changes again (store.Store's contract: Complete and Fail refuse
// the other terminal state and change nothing on their own), so a copy
// is never stale, whichever process reads or writes the file: polling a
// finished task reads no database.
type taskCache struct {
	mu   sync.Mutex
	byID map[string]task.Task
}

func (c *taskCache) get(id string) (task.Task, bool) {
	c.mu.Lock()
	t, ok := c.byID[id]
	c.mu.Unlock()
	return cloneTask(t), ok
}

func (c *taskCache) put(t task.Task) {
	if !t.Status.Terminal() {
		return
	}
	t = cloneTask(t)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byID == nil || len(c.byID) >= taskCacheMax {
		c.byID = map[string]task.Task{}
	}
	c.byID[t.ID] = t
}

// cloneTask copies t's slices, so that no caller shares the cache's.
func cloneTask(t task.Task) task.Task {
	t.Inputs = slices.Clone(t.Inputs)
	t.Videos = slices.Clone(t.Videos)
	if t.Failure != nil {
		f := *t.Failure
		t.Failure = &f
	}
	return t
}
