package sqlitestore

import (
	"time"

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
// Store (forget) drops the key's entries and stops every read in progress
// from caching (one scope for all keys: revocations are rare).
type keyCache = guardedCache[string, struct{}, store.Key]

func newKeyCache() *keyCache {
	return newGuardedCache[string, struct{}, store.Key](keyCacheMax, func(string) struct{} { return struct{}{} })
}

// forgetKey drops key id and stops reads in progress from caching it.
func forgetKey(c *keyCache, id string) {
	c.forget(struct{}{}, func(_ string, k store.Key) bool { return k.ID == id })
}
