package devstack

import (
	"net/http"
	"time"

	"github.com/genvideo/gen/shared/blob"
	"github.com/genvideo/gen/shared/provider"
	"github.com/genvideo/gen/shared/store"
)

// Hooks let a test, the soak run or the bench put decorators around the
// stack's dependencies, for instance shared/faults' fault-injecting ones,
// or the bench's provider. Each is optional. What a hook returns is what
// the API and the workflow use, the sweep included; Stack.Store and
// Stack.Blobs stay the bare ones, for the caller's own checks and
// set-up. The service never sets them.
type Hooks struct {
	WrapStore     func(store.Store) store.Store
	WrapBlobs     func(blob.Store) blob.Store
	WrapGenerator func(provider.Generator) provider.Generator
	// WrapProvider wraps the provider the routes build, nil when every
	// model has the one built-in route (the workflow's Generator then
	// renders); what it returns generates instead, polled as a remote
	// provider is (the bench's provider). Starts are still checked
	// against the routes' capabilities.
	WrapProvider func(provider.Provider) provider.Provider
	// WrapHandler wraps the whole served handler, for a test that records
	// or checks every exchange (the playground's browser test checks each
	// against the OpenAPI document).
	WrapHandler func(http.Handler) http.Handler
	// RouteClock is the clock of the routes' health memory
	// (shared/provider/routing), for a test that lets a cool-down pass.
	RouteClock func() time.Time
}

func (h Hooks) handler(next http.Handler) http.Handler {
	if h.WrapHandler != nil {
		return h.WrapHandler(next)
	}
	return next
}

func (h Hooks) store(s store.Store) store.Store {
	if h.WrapStore != nil {
		return h.WrapStore(s)
	}
	return s
}

func (h Hooks) blobs(b blob.Store) blob.Store {
	if h.WrapBlobs != nil {
		return h.WrapBlobs(b)
	}
	return b
}

func (h Hooks) generator(g provider.Generator) provider.Generator {
	if h.WrapGenerator != nil {
		return h.WrapGenerator(g)
	}
	return g
}

func (h Hooks) provider(p provider.Provider) provider.Provider {
	if h.WrapProvider != nil {
		return h.WrapProvider(p)
	}
	return p
}
