// Package cursor seals the positions the API's paged lists hand out as
// cursors (history, the credits ledger, a webhook's deliveries): each is
// encrypted and authenticated (AES-256-GCM) under a server key, bound to
// the list and the account it was issued for. A client can neither read
// a position (the ledger's is a sequence shared by every account, whose
// gaps would count other accounts' activity) nor make one: anything the
// endpoint did not issue, to this account, for this list, fails to open.
//
// The key is derived from a secret the deployment already keeps (Keys):
// the local stack's signing key in its data directory, the URL signer's
// secret on AWS. Several keys open cursors, the first seals: a secret
// being rotated still opens what its predecessor sealed.
package cursor

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"sync"

	lru "github.com/hashicorp/golang-lru/v2"
)

// ErrInvalid is a cursor that this server did not issue for this list
// and account.
var ErrInvalid = errors.New("not a cursor this endpoint issued")

// Keys gives the secrets cursors are sealed with: the first seals, each
// opens. Each must be at least 16 bytes.
type Keys interface {
	CursorKeys(ctx context.Context) ([][]byte, error)
}

// Static is a fixed list of secrets.
type Static [][]byte

// CursorKeys implements Keys.
func (s Static) CursorKeys(context.Context) ([][]byte, error) { return s, nil }

// Random is one secret made at random: cursors then open only in this
// process (tests, and an API built without Keys).
func Random() Static {
	k := make([]byte, 32)
	rand.Read(k)
	return Static{k}
}

// Sealer seals and opens cursors. Use it by pointer: it keeps each
// secret's cipher, derived once (a derivation was more than half of a
// cursor's cost, and history seals one on every page), and the cursors
// it sealed last, so that a page asked again (a client polling page 1)
// seals nothing: the same position, list and account under the same
// secret is the same cursor until it ages out. That tells a client only
// that two of its cursors hold one position, which it knows already.
type Sealer struct {
	Keys Keys

	mu    sync.Mutex
	aeads map[string]cipher.AEAD // by secret

	sealedOnce sync.Once
	sealed     *lru.Cache[sealedKey, string]
}

// maxSealed bounds the cursors kept; past it the least recently sealed
// goes, and is sealed anew (with a nonce of its own) when asked again.
const maxSealed = 4096

type sealedKey struct {
	aead                    cipher.AEAD
	list, account, position string
}

// maxAEADs bounds the ciphers kept: the secrets of a rotation or two.
const maxAEADs = 8

// aead returns secret's cipher, derived on first use. A GCM cipher has
// no state of its own: one serves every request at once.
func (s *Sealer) aead(secret []byte) (cipher.AEAD, error) {
	s.mu.Lock()
	a, ok := s.aeads[string(secret)]
	s.mu.Unlock()
	if ok {
		return a, nil
	}
	a, err := aead(secret)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	if s.aeads == nil || len(s.aeads) >= maxAEADs {
		s.aeads = map[string]cipher.AEAD{}
	}
	s.aeads[string(secret)] = a
	s.mu.Unlock()
	return a, nil
}

// nonceSize is GCM's standard nonce; random per cursor.
const nonceSize = 12

// MaxLen bounds a cursor a client sends: the longest position sealed
// (a webhook attempt's sort key, about 250 bytes) with room to spare.
const MaxLen = 1024

// label separates the cursor key from every other use of the secret it
// is derived from.
const label = "gen cursor key v1"

func aead(secret []byte) (cipher.AEAD, error) {
	if len(secret) < 16 {
		return nil, fmt.Errorf("cursor secret is %d bytes, want at least 16", len(secret))
	}
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(label))
	block, err := aes.NewCipher(m.Sum(nil))
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}

// bound is the associated data: the list (with its own scope, e.g. the
// webhook's id) and the account.
func bound(list, account string) []byte {
	b := make([]byte, 0, 8+len(list)+len(account))
	b = strconv.AppendInt(b, int64(len(list)), 10)
	b = append(b, ':')
	b = append(b, list...)
	b = append(b, '|')
	return append(b, account...)
}

// Seal returns the cursor of position in list for account.
func (s *Sealer) Seal(ctx context.Context, list, account string, position []byte) (string, error) {
	keys, err := s.Keys.CursorKeys(ctx)
	if err != nil {
		return "", fmt.Errorf("cursor keys: %w", err)
	}
	if len(keys) == 0 {
		return "", errors.New("cursor keys: none")
	}
	a, err := s.aead(keys[0])
	if err != nil {
		return "", err
	}
	s.sealedOnce.Do(func() { s.sealed, _ = lru.New[sealedKey, string](maxSealed) }) // a positive size: New cannot fail
	k := sealedKey{a, list, account, string(position)}
	if c, ok := s.sealed.Peek(k); ok {
		return c, nil
	}
	nonce := make([]byte, nonceSize, nonceSize+len(position)+a.Overhead())
	rand.Read(nonce)
	c := base64.RawURLEncoding.EncodeToString(a.Seal(nonce, nonce, position, bound(list, account)))
	s.sealed.Add(k, c)
	return c, nil
}

// Open returns the position a cursor of list for account holds, or
// ErrInvalid. An error of the keys is returned as it is (a 503, not the
// client's fault).
func (s *Sealer) Open(ctx context.Context, list, account, cursor string) ([]byte, error) {
	if len(cursor) > MaxLen {
		return nil, ErrInvalid
	}
	raw, err := base64.RawURLEncoding.Strict().DecodeString(cursor)
	if err != nil || len(raw) < nonceSize {
		return nil, ErrInvalid
	}
	keys, err := s.Keys.CursorKeys(ctx)
	if err != nil {
		return nil, fmt.Errorf("cursor keys: %w", err)
	}
	for _, k := range keys {
		a, err := s.aead(k)
		if err != nil {
			return nil, err
		}
		if p, err := a.Open(nil, raw[:nonceSize], raw[nonceSize:], bound(list, account)); err == nil {
			return p, nil
		}
	}
	return nil, ErrInvalid
}
