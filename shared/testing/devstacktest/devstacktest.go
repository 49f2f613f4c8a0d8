// Package devstacktest runs the whole local service (devstack: the SQLite
// store, the ffmpeg generator, the local executions and the HTTP API) behind a
// real loopback listener, for tests of the service's clients.
package devstacktest

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/genvideo/gen/shared/admin"
	"github.com/genvideo/gen/shared/devstack"
	"github.com/genvideo/gen/shared/settings"
	"github.com/genvideo/gen/shared/store"
	"github.com/genvideo/gen/shared/testing/veotest"
)

// Env is a running local stack.
type Env struct {
	Stack  *devstack.Stack
	Server *httptest.Server
	// URL is the server's base URL, e.g. http://127.0.0.1:41234.
	URL string

	dir     string
	ownsDir bool
}

// Roomy are request limits that no test reaches unless it means to.
var Roomy = store.KeyLimits{RequestsPerMinute: 100000, RequestsPerDay: 1000000, StartsPerMinute: 10000, MaxInFlight: 100}

// FaultInjection is an edit for Start and New that turns fault injection
// on: the prompt directives ("[fail]", "[slow:60]", ...) of
// faults.Directives work. It is off by default, as in the service, so a
// test whose prompts rely on them says so.
func FaultInjection(c *devstack.Config) { c.FaultInjection = true }

// Start runs the stack on a fresh temporary directory; edit, when not
// nil, adjusts its Config. The stack stops when the test ends.
func Start(tb testing.TB, edit func(*devstack.Config)) *Env {
	tb.Helper()
	dir := tb.TempDir()
	e, err := run(dir, false, edit)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(e.Close)
	return e
}

// New runs the stack on a fresh temporary directory, for a TestMain; edit,
// when not nil, adjusts its Config. Close stops it and removes the
// directory.
func New(edit func(*devstack.Config)) (*Env, error) {
	dir, err := os.MkdirTemp("", "devstacktest-")
	if err != nil {
		return nil, err
	}
	e, err := run(dir, true, edit)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return e, nil
}

func run(dir string, ownsDir bool, edit func(*devstack.Config)) (*Env, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	cfg := devstack.Config{
		Addr:          ln.Addr().String(),
		DataDir:       dir,
		SweepInterval: time.Hour,
		Logger:        slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	if edit != nil {
		edit(&cfg)
	}
	stack, err := devstack.New(context.Background(), cfg)
	if err != nil {
		ln.Close()
		return nil, fmt.Errorf("devstack.New: %w", err)
	}
	srv := &httptest.Server{Listener: ln, Config: &http.Server{Handler: stack.Handler()}}
	srv.Start()
	return &Env{Stack: stack, Server: srv, URL: srv.URL, dir: dir, ownsDir: ownsDir}, nil
}

// StartVeo runs the strict Veo fake (veotest) with fake and the stack
// with its generations routed to it through api
// (settings.GeneratorVertex or settings.GeneratorGemini), polling it
// every second, for tests that need what only Veo makes (a video to
// extend, reference images); edit, when not nil, further adjusts the
// stack's Config. Both stop when the test ends. (shared/devstack's own
// tests, which this package cannot serve, have startVeo.)
func StartVeo(tb testing.TB, api string, fake veotest.Config, edit func(*devstack.Config)) (*Env, *veotest.Server) {
	tb.Helper()
	f := veotest.New(veotest.Credentials(fake))
	srv := httptest.NewServer(f)
	tb.Cleanup(srv.Close)
	r := settings.NewReader(veotest.Vars(api, srv.URL).Lookup)
	p := r.ProviderConfig()
	if err := r.Err(); err != nil {
		tb.Fatalf("the Veo fake's settings: %v", err)
	}
	e := Start(tb, func(c *devstack.Config) {
		c.Provider = p
		if edit != nil {
			edit(c)
		}
	})
	return e, f
}

// Close stops the server and the stack (generations under way stop).
func (e *Env) Close() {
	e.Server.Close()
	e.Stack.Close()
	if e.ownsDir {
		os.RemoveAll(e.dir)
	}
}

// NewKey creates an account holding credits and an Enterprise key with
// the given limits (the zero Limits: Roomy).
func (e *Env) NewKey(credits int64, limits store.KeyLimits) (admin.CreatedKey, error) {
	if limits == (store.KeyLimits{}) {
		limits = Roomy
	}
	k, err := admin.New(e.Stack.Store).CreateKey(context.Background(),
		admin.KeyRequest{Name: "test", Credits: credits, Tier: "enterprise", Limits: limits})
	if err != nil {
		return admin.CreatedKey{}, fmt.Errorf("create key: %w", err)
	}
	return k, nil
}

// Key is NewKey for a test: a failure ends it.
func (e *Env) Key(tb testing.TB, credits int64, limits store.KeyLimits) admin.CreatedKey {
	tb.Helper()
	k, err := e.NewKey(credits, limits)
	if err != nil {
		tb.Fatal(err)
	}
	return k
}

// Balance returns an account's credits.
func (e *Env) Balance(tb testing.TB, accountID string) int64 {
	tb.Helper()
	a, err := e.Stack.Store.Account(context.Background(), accountID)
	if err != nil {
		tb.Fatalf("account %s: %v", accountID, err)
	}
	return a.Credits
}

// Fetch GETs url (a signed link) and fails the test unless it answers
// 200, returning the body.
func Fetch(tb testing.TB, url string) []byte {
	tb.Helper()
	res, err := http.Get(url)
	if err != nil {
		tb.Fatalf("GET %s: %v", url, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != http.StatusOK {
		tb.Fatalf("GET %s: %d (%v)", url, res.StatusCode, err)
	}
	return b
}
