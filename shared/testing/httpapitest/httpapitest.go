// Package httpapitest holds test doubles and a ready test server for the
// HTTP API: recording workflow executions, a settable clock, and Start,
// which serves an httpapi.API backed by a real SQLite store in a
// temporary directory and an in-memory blob store (shared/blob/memblob).
package httpapitest

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/genvideo/gen/shared/apikey"
	"github.com/genvideo/gen/shared/blob/memblob"
	"github.com/genvideo/gen/shared/domain"
	"github.com/genvideo/gen/shared/httpapi"
	"github.com/genvideo/gen/shared/intake"
	"github.com/genvideo/gen/shared/service"
	"github.com/genvideo/gen/shared/store"
	"github.com/genvideo/gen/shared/store/sqlitestore"
	"github.com/genvideo/gen/shared/task"
	"github.com/genvideo/gen/shared/testing/openapitest"
)

var _ service.Executions = (*Executions)(nil)

// Executions is a service.Executions that records the tasks it is asked to
// start; SetErr makes it fail.
type Executions struct {
	mu      sync.Mutex
	started []task.Task
	stopped []string
	err     error
}

// Stop records that t's workflow was stopped.
func (s *Executions) Stop(ctx context.Context, t task.Task) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopped = append(s.stopped, t.ID)
	return nil
}

// Stopped returns the ids of the tasks stopped so far, in order.
func (s *Executions) Stopped() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.stopped)
}

// Start records t, or fails with the error SetErr gave.
func (s *Executions) Start(ctx context.Context, t task.Task) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s.err
	}
	s.started = append(s.started, t)
	return nil
}

// SetErr makes every later Start fail with err (nil: succeed).
func (s *Executions) SetErr(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.err = err
}

// Started returns the tasks started so far, in order.
func (s *Executions) Started() []task.Task {
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

// Config is what Start builds the API from: the service's configuration
// and the HTTP layer's.
type Config struct {
	service.Config
	HTTP httpapi.Config
	// MaxImageSide bounds the images of the default intake (shared/intake).
	MaxImageSide int
}

// Env is a running test server and what it is made of.
type Env struct {
	Service    *service.Service
	API        *httpapi.API
	Server     *httptest.Server
	Store      store.Store
	Blobs      *memblob.Store
	Executions *Executions
	Clock      *Clock
}

// Epoch is where an Env's clock starts: the first second of a UTC minute,
// so that rate-limit windows are predictable.
var Epoch = time.Date(2030, 1, 2, 3, 4, 0, 0, time.UTC)

// Start serves an httpapi.API over a service.Service built from cfg. Every dependency cfg leaves
// nil is filled in: a SQLite store in tb.TempDir(), a memblob.Store, a
// Executions and a Clock at Epoch (cfg.Now, when set, replaces the Clock's
// use). Everything is closed when the test ends.
//
// Every response that Server.Client() receives is checked against the
// OpenAPI document (openapitest.Transport): one that does not match it, or
// whose status the document does not list, fails the test.
func Start(tb testing.TB, cfg Config) *Env {
	tb.Helper()
	env := &Env{Blobs: memblob.New(), Executions: &Executions{}, Clock: NewClock(Epoch)}
	if cfg.Store == nil {
		st, err := sqlitestore.Open(filepath.Join(tb.TempDir(), "gen.db"))
		if err != nil {
			tb.Fatalf("open store: %v", err)
		}
		tb.Cleanup(func() { st.Close() })
		cfg.Store = st
	}
	if full, ok := cfg.Store.(store.Store); ok {
		env.Store = full
	}
	if cfg.Blobs == nil {
		cfg.Blobs = env.Blobs
	}
	if cfg.Executions == nil {
		cfg.Executions = env.Executions
	}
	if cfg.Images == nil {
		cfg.Images = intake.New(cfg.Blobs, cfg.MaxImageSide)
	}
	if cfg.Now == nil {
		cfg.Now = env.Clock.Now
	}
	env.Service = service.New(cfg.Config)
	env.API = httpapi.New(env.Service, cfg.HTTP)
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
func NewCaller(tb testing.TB, st store.Store, credits int64, tier string, limits store.KeyLimits) Caller {
	tb.Helper()
	ctx := context.Background()
	c := Caller{
		AccountID: "acct_" + apikey.NewID()[len("key_"):],
		KeyID:     apikey.NewID(),
		KeyName:   "test key",
		Key:       apikey.New(),
	}
	if err := st.CreateAccount(ctx, domain.Account{ID: c.AccountID, Credits: credits, CreatedAt: Epoch}); err != nil {
		tb.Fatalf("create account: %v", err)
	}
	k := store.Key{ID: c.KeyID, Hash: apikey.Hash(c.Key), AccountID: c.AccountID, Name: c.KeyName,
		Tier: tier, Limits: limits, CreatedAt: Epoch}
	if err := st.CreateKey(ctx, k); err != nil {
		tb.Fatalf("create key: %v", err)
	}
	return c
}
