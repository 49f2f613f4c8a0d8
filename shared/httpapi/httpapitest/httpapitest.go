// Package httpapitest holds test doubles and a ready test server for the
// HTTP API: an in-memory blob store, a recording workflow starter, a
// settable clock, and Start, which serves an httpapi.API backed by a real
// SQLite store in a temporary directory.
package httpapitest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/genvideo/gen/shared/apikey"
	"github.com/genvideo/gen/shared/httpapi"
	"github.com/genvideo/gen/shared/openapi/openapitest"
	"github.com/genvideo/gen/shared/store"
	"github.com/genvideo/gen/shared/store/sqlitestore"
	"github.com/genvideo/gen/shared/task"
)

var (
	_ httpapi.Blobs   = (*Blobs)(nil)
	_ httpapi.Starter = (*Starter)(nil)
)

// ErrNoBlob is what Blobs.Delete returns for a key it does not hold.
var ErrNoBlob = errors.New("no such blob")

// Blobs is an in-memory httpapi.Blobs. SetPutErr and SetSignErr make its
// calls fail as an unreachable storage would.
type Blobs struct {
	mu      sync.Mutex
	objects map[string]blob
	putErr  error
	signErr error
}

type blob struct {
	data        []byte
	contentType string
}

// NewBlobs returns an empty Blobs.
func NewBlobs() *Blobs { return &Blobs{objects: map[string]blob{}} }

// Put stores what r yields. When r fails it keeps what it had read, as a
// naive backend would, so that tests see whether the caller deletes it.
func (b *Blobs) Put(ctx context.Context, key string, r io.Reader, contentType string) (int64, error) {
	b.mu.Lock()
	putErr := b.putErr
	b.mu.Unlock()
	if putErr != nil {
		return 0, putErr
	}
	var buf bytes.Buffer
	_, err := io.Copy(&buf, r)
	b.mu.Lock()
	defer b.mu.Unlock()
	b.objects[key] = blob{data: buf.Bytes(), contentType: contentType}
	if err != nil {
		return int64(buf.Len()), fmt.Errorf("put %s: %w", key, err)
	}
	return int64(buf.Len()), nil
}

// Delete removes key.
func (b *Blobs) Delete(ctx context.Context, key string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.objects[key]; !ok {
		return fmt.Errorf("delete %s: %w", key, ErrNoBlob)
	}
	delete(b.objects, key)
	return nil
}

// SignURL returns https://storage.test/<key>?expires=<unix seconds>.
func (b *Blobs) SignURL(ctx context.Context, key string, expires time.Time) (string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.signErr != nil {
		return "", b.signErr
	}
	return "https://storage.test/" + key + "?expires=" + url.QueryEscape(fmt.Sprint(expires.Unix())), nil
}

// SetPutErr makes every later Put fail with err (nil: succeed).
func (b *Blobs) SetPutErr(err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.putErr = err
}

// SetSignErr makes every later SignURL fail with err (nil: succeed).
func (b *Blobs) SetSignErr(err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.signErr = err
}

// Keys lists the stored keys, sorted.
func (b *Blobs) Keys() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	keys := make([]string, 0, len(b.objects))
	for k := range b.objects {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// Get returns the bytes and content type stored under key.
func (b *Blobs) Get(key string) (data []byte, contentType string, ok bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	o, ok := b.objects[key]
	return o.data, o.contentType, ok
}

// Starter is an httpapi.Starter that records the tasks it is asked to
// start; SetErr makes it fail.
type Starter struct {
	mu      sync.Mutex
	started []task.Task
	err     error
}

// Start records t, or fails with the error SetErr gave.
func (s *Starter) Start(ctx context.Context, t task.Task) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s.err
	}
	s.started = append(s.started, t)
	return nil
}

// SetErr makes every later Start fail with err (nil: succeed).
func (s *Starter) SetErr(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.err = err
}

// Started returns the tasks started so far, in order.
func (s *Starter) Started() []task.Task {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.started)
}

// Clock is a settable clock for Config.Now.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock returns a clock standing at t.
func NewClock(t time.Time) *Clock { return &Clock{now: t} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// Env is a running test server and what it is made of.
type Env struct {
	API     *httpapi.API
	Server  *httptest.Server
	Store   store.Store
	Blobs   *Blobs
	Starter *Starter
	Clock   *Clock
}

// Epoch is where an Env's clock starts: the first second of a UTC minute,
// so that rate-limit windows are predictable.
var Epoch = time.Date(2030, 1, 2, 3, 4, 0, 0, time.UTC)

// Start serves an httpapi.API built from cfg. Every dependency cfg leaves
// nil is filled in: a SQLite store in tb.TempDir(), Blobs, Starter and a
// Clock at Epoch (cfg.Now, when set, replaces the Clock's use). Everything
// is closed when the test ends.
//
// Every response that Server.Client() receives is checked against the
// OpenAPI document (openapitest.Transport): one that does not match it, or
// whose status the document does not list, fails the test.
func Start(tb testing.TB, cfg httpapi.Config) *Env {
	tb.Helper()
	env := &Env{Blobs: NewBlobs(), Starter: &Starter{}, Clock: NewClock(Epoch)}
	if cfg.Store == nil {
		st, err := sqlitestore.Open(filepath.Join(tb.TempDir(), "gen.db"))
		if err != nil {
			tb.Fatalf("open store: %v", err)
		}
		tb.Cleanup(func() { st.Close() })
		cfg.Store = st
	}
	if cfg.Blobs == nil {
		cfg.Blobs = env.Blobs
	}
	if cfg.Starter == nil {
		cfg.Starter = env.Starter
	}
	if cfg.Now == nil {
		cfg.Now = env.Clock.Now
	}
	env.Store = cfg.Store
	env.API = httpapi.New(cfg)
	env.Server = httptest.NewServer(env.API.Handler())
	c := env.Server.Client()
	c.Transport = &openapitest.Transport{TB: tb, Base: c.Transport}
	tb.Cleanup(env.Server.Close)
	return env
}

// Caller is an account with one API key.
type Caller struct {
	AccountID string
	KeyID     string
	KeyName   string
	// Key is the full key, for the X-API-Key header.
	Key string
}

// NewCaller creates an account holding credits and a key of the given
// tier (limits apply to Enterprise keys only; zero figures default).
func NewCaller(tb testing.TB, st store.Store, credits int64, tier string, limits store.Limits) Caller {
	tb.Helper()
	ctx := context.Background()
	c := Caller{
		AccountID: "acct_" + apikey.NewID()[len("key_"):],
		KeyID:     apikey.NewID(),
		KeyName:   "test key",
		Key:       apikey.New(),
	}
	if err := st.CreateAccount(ctx, store.Account{ID: c.AccountID, Credits: credits, CreatedAt: Epoch}); err != nil {
		tb.Fatalf("create account: %v", err)
	}
	k := store.Key{ID: c.KeyID, Hash: apikey.Hash(c.Key), AccountID: c.AccountID, Name: c.KeyName,
		Tier: tier, Limits: limits, CreatedAt: Epoch}
	if err := st.CreateKey(ctx, k); err != nil {
		tb.Fatalf("create key: %v", err)
	}
	return c
}
