package sqlitestore

import (
	"sync"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
)

// guardedCache is the one shape of the store's caches (keys, tasks,
// history pages): a bounded LRU (golang-lru) of entries that may expire,
// into which a read puts what it read only if no change to the entry's
// scope was made since the read began. A write forgets its scope before
// and after it commits, so that a read racing with it never caches what
// it overwrote. Each cache states its scope, bound and lifetime where it
// is made (keycache.go, taskcache.go, pagecache.go).
type guardedCache[K, S comparable, V any] struct {
	entries *lru.Cache[K, guarded[V]]
	scope   func(K) S
	// mu orders put against forget.
	mu sync.Mutex
	// gens counts the changes to each scope since the process started.
	gens map[S]uint64
}

type guarded[V any] struct {
	v     V
	gen   uint64
	until time.Time // zero: kept until the LRU evicts it
}

func newGuardedCache[K, S comparable, V any](size int, scope func(K) S) *guardedCache[K, S, V] {
	entries, _ := lru.New[K, guarded[V]](size) // a positive size: New cannot fail
	return &guardedCache[K, S, V]{entries: entries, scope: scope, gens: map[S]uint64{}}
}

// generation is read before a database read whose result put may cache.
func (c *guardedCache[K, S, V]) generation(s S) uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gens[s]
}

// get answers k's value unless it has expired at now. With current, an
// entry put before a later change to its scope is not answered either
// (for a cache whose forget cannot name every entry it makes stale).
func (c *guardedCache[K, S, V]) get(k K, now time.Time, current bool) (V, bool) {
	e, ok := c.entries.Get(k)
	if !ok || (!e.until.IsZero() && !now.Before(e.until)) || (current && e.gen != c.generation(c.scope(k))) {
		var zero V
		return zero, false
	}
	return e.v, true
}

// peek is get, without current, that leaves k's place in the LRU as it
// was: it takes the LRU's shared lock, not its exclusive one, so that
// the twenty lookups of a history page on many connections run side by
// side instead of queueing (issue 38's trace). What only pages read
// ages out first.
func (c *guardedCache[K, S, V]) peek(k K, now time.Time) (V, bool) {
	e, ok := c.entries.Peek(k)
	if !ok || (!e.until.IsZero() && !now.Before(e.until)) {
		var zero V
		return zero, false
	}
	return e.v, true
}

// put keeps v under k until until (zero: for good), unless k's scope
// changed since generation returned gen.
func (c *guardedCache[K, S, V]) put(k K, v V, gen uint64, until time.Time) {
	s := c.scope(k)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gens[s] != gen {
		return
	}
	c.entries.Add(k, guarded[V]{v: v, gen: gen, until: until})
}

// forget stops the reads of scope s in progress from caching what they
// read, and drops the entries drop selects (nil: none).
func (c *guardedCache[K, S, V]) forget(s S, drop func(K, V) bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gens[s]++
	if drop == nil {
		return
	}
	for _, k := range c.entries.Keys() {
		if e, ok := c.entries.Peek(k); ok && drop(k, e.v) {
			c.entries.Remove(k)
		}
	}
}

// remove drops k's entry, if any.
func (c *guardedCache[K, S, V]) remove(k K) { c.entries.Remove(k) }
