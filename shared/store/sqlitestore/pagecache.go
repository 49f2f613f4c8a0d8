package sqlitestore

import (
	"sync"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"

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
// goes, which costs one read when it is asked for again.
const pageCacheMax = 4096

// pageCacheEntries is the longest page kept: a history page is at most
// 101 tasks (the endpoint's limit and one more), and a listing of a
// whole account (an audit's) is read each time rather than held.
const pageCacheEntries = 1000

// pageCache holds what a history page read from the index: its tasks'
// ids and statuses, and the total. The tasks themselves come from the
// task cache, which checks them against these statuses. Invalidation:
// every write to an account's tasks makes all its pages stale (forget);
// a page lives PageCacheTTL.
type pageCache struct {
	pages *lru.Cache[pageKey, cachedPage]
	// mu guards gens and orders put against forget.
	mu sync.Mutex
	// gens counts the writes to each account's tasks: a page read before
	// one is neither cached nor answered. One number per account written
	// since the process started.
	gens map[string]uint64
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

type cachedPage struct {
	entries []pageEntry
	total   int
	gen     uint64
	until   time.Time
}

// pageEntry is a task of a history page as the index has it.
type pageEntry struct{ id, status string }

func newPageCache() *pageCache {
	c, _ := lru.New[pageKey, cachedPage](pageCacheMax) // a positive size: New cannot fail
	return &pageCache{pages: c}
}

func (c *pageCache) get(k pageKey, now time.Time) (cachedPage, bool) {
	p, ok := c.pages.Get(k)
	if !ok || p.gen != c.generation(k.account) || !now.Before(p.until) {
		return cachedPage{}, false
	}
	return p, true
}

// generation is read before a database read whose page put may cache.
func (c *pageCache) generation(account string) uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gens[account]
}

// put keeps p, read after generation returned gen. The entries are the
// cache's from then on: the caller does not change them.
func (c *pageCache) put(k pageKey, p cachedPage, gen uint64, now time.Time) {
	if len(p.entries) > pageCacheEntries {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gens[k.account] != gen {
		return
	}
	p.gen, p.until = gen, now.Add(PageCacheTTL)
	c.pages.Add(k, p)
}

// forget makes every page of account read so far stale: called after
// each write to its tasks has committed (or failed), so that a page read
// in a snapshot before the write is never answered after it.
func (c *pageCache) forget(account string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gens == nil {
		c.gens = map[string]uint64{}
	}
	c.gens[account]++
}
