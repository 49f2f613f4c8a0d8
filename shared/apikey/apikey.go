// Package apikey makes API keys and recognises their shape. A key is
// "gen_" followed by 40 base62 characters drawn from a CSPRNG (238 bits);
// the service stores only its SHA-256 hash.
package apikey

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/big"
	"strings"
)

const (
	// Prefix starts every key.
	Prefix    = "gen_"
	secretLen = 40
	base62    = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
)

// New returns a fresh key. It is shown once and never stored.
func New() string { return Prefix + random(secretLen) }

// NewID returns a public key identifier, safe to log and to show in lists.
func NewID() string { return "key_" + strings.ToLower(random(12)) }

// WellFormed reports whether s has a key's shape. A value that does not is
// rejected without a store look-up.
func WellFormed(s string) bool {
	if len(s) != len(Prefix)+secretLen || !strings.HasPrefix(s, Prefix) {
		return false
	}
	for i := len(Prefix); i < len(s); i++ {
		if !isBase62[s[i]] {
			return false
		}
	}
	return true
}

// isBase62 answers per byte, as every poll checks its key's 40.
var isBase62 = func() (t [256]bool) {
	for i := range len(base62) {
		t[base62[i]] = true
	}
	return t
}()

// Hash is the stored form of a key: hex SHA-256. A 238-bit random secret
// needs no salt or slow hash; a plain digest keeps the look-up one read.
func Hash(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

func random(n int) string {
	max := big.NewInt(int64(len(base62)))
	b := make([]byte, n)
	for i := range b {
		v, err := rand.Int(rand.Reader, max)
		if err != nil {
			panic(fmt.Sprintf("crypto/rand: %v", err))
		}
		b[i] = base62[v.Int64()]
	}
	return string(b)
}
