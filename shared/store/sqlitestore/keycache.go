package sqlitestore

import (
	"sync"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/genvideo/gen/shared/store"
)

// KeyCacheTTL is how long KeyByHash answers a key it has read from memory.
// A revocation through this Store forgets the key at once; one made by
// another process on the same file (genctl keys revoke) is seen within
// KeyCacheTTL, because no cached answer outlives it.
const KeyCacheTTL = time.Second

// keyCacheMax bounds the entries kept; past it the least recently used
// goes.
const keyCacheMax = 4096

// keyCache holds the keys KeyByHash found, by hash. Misses are never
// cached, so that a key created by another process works at once.
// Invalidation: an entry lives KeyCacheTTL; a revocation through this
// Store (forget) drops the key and every read in progress.
type keyCache struct {
	byHash *lru.Cache[string, cachedKey]
	// mu orders put against forget.
	mu sync.Mutex
	// gen counts invalidations: a read that began before one must not
	// put what it read into the cache, or a revocation racing with it
	// would be forgotten for a whole TTL.
	gen uint64
}

type cachedKey struct {
	key   store.Key
	until time.Time
}

func newKeyCache() *keyCache {
	c, _ := lru.New[string, cachedKey](keyCacheMax) // a positive size: New cannot fail
	return &keyCache{byHash: c}
}

func (c *keyCache) get(hash string, now time.Time) (store.Key, bool) {
	e, ok := c.byHash.Get(hash)
	if !ok || !now.Before(e.until) {
		return store.Key{}, false
	}
	return e.key, true
}

// generation is read before a database read whose result put may cache.
func (c *keyCache) generation() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gen
}

func (c *keyCache) put(k store.Key, gen uint64, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen {
		return
	}
	c.byHash.Add(k.Hash, cachedKey{key: k, until: now.Add(KeyCacheTTL)})
}

// forget drops key id and stops reads in progress from caching it.
func (c *keyCache) forget(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	for _, h := range c.byHash.Keys() {
		if e, ok := c.byHash.Peek(h); ok && e.key.ID == id {
			c.byHash.Remove(h)
		}
	}
}
