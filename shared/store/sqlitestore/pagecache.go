package sqlitestore

import (
	"time"

	"github.com/genvideo/gen/shared/store"
	"github.com/genvideo/gen/shared/task"
)

// PageCacheTTL is how long Tasks answers a history page it has read
// from memory. Every write this Store makes to an account's tasks (a
// start, a move, a delete, an import) forgets the account's pages at
// once, and on the local stack every such write is made by the server's
// Store; one made by another process on the same file is seen within
// PageCacheTTL, as TaskCacheTTL bounds a task's.
const PageCacheTTL = time.Second

// pageCacheMax bounds the pages kept; past it the least recently used
// goes, which costs one read when it is asked for again. A page holds
// its tasks' structs (472 bytes each, their slices shared with the task
// cache): a default page of 21 is about 10 KB, so 512 pages are 5 MB,
// and 24 MB if every one were the longest (pageCacheEntries).
const pageCacheMax = 512

// pageCacheEntries is the longest page kept: a history page is at most
// 101 tasks (the endpoint's limit and one more), and a listing of a
// whole account (an audit's) is read each time rather than held. With
// pageCacheMax, it bounds the memory pages hold.
const pageCacheEntries = 101

// pageCache holds what a history page read: its tasks, as the task
// cache holds them (their slices shared, never changed), and the total,
// so that a page asked again is answered as it is, looking nothing up
// and copying nothing (issue 38's profiles: twenty task cache lookups
// were a tenth of a page's work, and then copying the twenty tasks
// out another tenth). Every write to a task touches its account, so a
// current page holds its tasks as they are. Invalidation:
// every write to an account's tasks makes all its pages stale (the scope
// is the account, and a page is answered only while current); a page
// lives PageCacheTTL.
type pageCache = guardedCache[pageKey, string, cachedPage]

func newPageCache() *pageCache {
	return newGuardedCache[pageKey, string, cachedPage](pageCacheMax, func(k pageKey) string { return k.account })
}

type pageKey struct {
	account  string
	status   task.Status
	order    store.Order
	afterMS  int64
	afterID  string
	skip     int
	limit    int
	hasAfter bool
}

func keyOf(account string, q store.TaskQuery) pageKey {
	k := pageKey{account: account, status: q.Status, order: q.Order, skip: max(q.Skip, 0), limit: q.Limit, hasAfter: !q.After.IsZero()}
	if k.hasAfter {
		k.afterMS, k.afterID = ms(q.After.CreatedAt), q.After.ID
	}
	if k.limit <= 0 {
		k.limit = -1
	}
	return k
}

// cachedPage is a page as Tasks answers it. Nobody changes its tasks:
// Tasks answers them to callers that only read (store.Store.Tasks).
type cachedPage struct {
	tasks []task.Task
	total int
}

// answer is Tasks' answer of p: its tasks themselves, with the capacity
// cut so that a caller's append copies rather than writes into p.
func (p cachedPage) answer() ([]task.Task, int, error) {
	return p.tasks[:len(p.tasks):len(p.tasks)], p.total, nil
}

// pageEntry is a task of a history page as the index has it.
type pageEntry struct{ id, status string }

// keepPage caches p, read after generation(account) returned gen. The
// tasks are the cache's from then on: the caller does not change them.
// A listing longer than pageCacheEntries is not kept.
func keepPage(c *pageCache, k pageKey, p cachedPage, gen uint64, now time.Time) {
	if len(p.tasks) > pageCacheEntries {
		return
	}
	c.put(k, p, gen, now.Add(PageCacheTTL))
}
