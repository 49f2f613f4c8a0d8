// Package availability says which of our models no provider route
// serves right now, so that a start of one is refused before it is
// charged (issue 33): a model is unavailable when every one of its
// routes was last checked (Checker) and found the provider model it
// maps the model to not served. A route never checked, or whose check
// failed for another reason (down, credentials refused), counts as
// serving: outages are the routes' health memory's
// (shared/provider/routing), not this.
//
// The checks are kept in the store (store.RouteChecks), one per route,
// so that every process agrees: on AWS the API's functions, which run
// no provider, read what the route check function wrote; the local
// stack checks and reads in one process. Readers (Reader) cache what
// they read for a short while (ReaderTTL).
package availability

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/genvideo/gen/shared/store"
)

// Mapping is what one route of one of our models maps it to: the
// route's name and the provider model id ("" when the provider's request
// names none: a self-hosted host's own model).
type Mapping struct {
	Route, ProviderModel string
}

// Routes are each of our models' routes (by our model id), as the
// settings say now (shared/provider/tables.Availability).
type Routes map[string][]Mapping

// names are the routes' names, each once, sorted.
func (r Routes) names() []string {
	var out []string
	for _, rs := range r {
		for _, m := range rs {
			if !slices.Contains(out, m.Route) {
				out = append(out, m.Route)
			}
		}
	}
	slices.Sort(out)
	return out
}

// Unavailable is the set of our models of routes none of whose routes
// serves them, by checks: each route of the model has a check that
// asked for the provider model the route maps it to now, and found it
// not served. A check of another mapping (the operator remapped the
// model since) says nothing of the model.
func Unavailable(routes Routes, checks []store.RouteCheck) map[string]bool {
	byRoute := map[string]store.RouteCheck{}
	for _, c := range checks {
		byRoute[c.Route] = c
	}
	out := map[string]bool{}
	for model, rs := range routes {
		if len(rs) == 0 {
			continue
		}
		lacking := true
		for _, m := range rs {
			c, ok := byRoute[m.Route]
			if !ok || !c.Lacks(model, m.ProviderModel) {
				lacking = false
				break
			}
		}
		if lacking {
			out[model] = true
		}
	}
	return out
}

// ReaderTTL is how long a Reader answers from what it last read: a
// route that lists a model again sells it in every process within the
// check's interval plus this.
const ReaderTTL = time.Minute

// Store is what a Reader reads: store.RouteChecks'.
type Store interface {
	RouteChecks(ctx context.Context, routes []string) ([]store.RouteCheck, error)
}

// Reader answers which of our models are unavailable (Unavailable),
// reading the routes' checks from the store at most once per TTL.
type Reader struct {
	store  Store
	routes Routes
	names  []string
	ttl    time.Duration
	now    func() time.Time
	logger *slog.Logger

	mu     sync.Mutex
	read   time.Time // when cached was read; zero: never
	cached map[string]bool
}

// ReaderConfig configures a Reader; only Store and Routes are required.
type ReaderConfig struct {
	Store  Store
	Routes Routes
	// TTL is how long a read stands (default ReaderTTL; negative: every
	// call reads, as a test wants).
	TTL    time.Duration
	Now    func() time.Time
	Logger *slog.Logger
}

// NewReader returns the Reader of cfg.
func NewReader(cfg ReaderConfig) *Reader {
	r := &Reader{store: cfg.Store, routes: cfg.Routes, names: cfg.Routes.names(), ttl: cfg.TTL, now: cfg.Now, logger: cfg.Logger}
	if r.ttl == 0 {
		r.ttl = ReaderTTL
	}
	if r.now == nil {
		r.now = time.Now
	}
	if r.logger == nil {
		r.logger = slog.Default()
	}
	return r
}

// Forget drops what was read: the next call reads again. The local
// stack, which checks in the same process, calls it after each check.
func (r *Reader) Forget() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.read, r.cached = time.Time{}, nil
}

// Unavailable is the set of our models no route serves, as last read.
// A store that cannot be read leaves what was read before (nothing, at
// first: every model sells), logged, and is asked again at the next
// call: availability never stops a start the store would take.
func (r *Reader) Unavailable(ctx context.Context) map[string]bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.now()
	if !r.read.IsZero() && r.ttl > 0 && now.Sub(r.read) < r.ttl {
		return r.cached
	}
	checks, err := r.store.RouteChecks(ctx, r.names)
	if err != nil {
		r.logger.Warn("cannot read the provider routes' checks: every model sells as before", "error", err)
		return r.cached
	}
	r.cached, r.read = Unavailable(r.routes, checks), now
	return r.cached
}
