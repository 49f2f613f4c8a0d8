package devstack

import (
	"net/http"
	"time"

	"github.com/genvideo/gen/shared/blob"
	"github.com/genvideo/gen/shared/store"
	"github.com/genvideo/gen/shared/workflow"
)

// Hooks let a test or the soak run put decorators around the stack's
// dependencies, for instance shared/faults' fault-injecting ones. Each is
// optional. What a hook returns is what the API and the workflow use, the
// sweep included; Stack.Store and Stack.Blobs stay the bare ones, for the
// caller's own checks and set-up. The service never sets them.
type Hooks struct {
	WrapStore     func(store.Store) store.Store
	WrapBlobs     func(blob.Store) blob.Store
	WrapGenerator func(workflow.Generator) workflow.Generator
	// WrapHandler wraps the whole served handler, for a test that records
	// or checks every exchange (the playground's browser test checks each
	// against the OpenAPI document).
	WrapHandler func(http.Handler) http.Handler
	// RouteClock is the clock of the routes' health memory
	// (shared/routing), for a test that lets a cool-down pass.
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

func (h Hooks) generator(g workflow.Generator) workflow.Generator {
	if h.WrapGenerator != nil {
		return h.WrapGenerator(g)
	}
	return g
}
