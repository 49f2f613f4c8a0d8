package store

import (
	"context"
	"slices"
	"time"
)

// RouteCheck is a provider route's last look at the provider models it
// maps our models to (shared/availability): which of them its provider
// said it does not serve. One per route, replaced by each check; every
// process reads the same ones, so that a model none of whose routes
// serves it is refused alike by all.
type RouteCheck struct {
	// Route names the route (settings.RouteSpec.Name).
	Route     string
	CheckedAt time.Time
	// Models are our model ids and the provider model id each was asked
	// as: a reader whose settings map a model otherwise (a remap since)
	// does not hold the check against it.
	Models map[string]string
	// Missing are the provider model ids the provider said it does not
	// serve; empty when it served them all, or when the check failed for
	// another reason (down, credentials refused), which says nothing of
	// the models.
	Missing []string
}

// Lacks reports whether c found model (one of ours) not served: it was
// asked as providerModel, and the provider did not serve that.
func (c RouteCheck) Lacks(model, providerModel string) bool {
	asked, ok := c.Models[model]
	return ok && asked == providerModel && slices.Contains(c.Missing, asked)
}

// RouteChecks is what a backend keeps of provider routes' checks.
type RouteChecks interface {
	// PutRouteCheck stores c as its route's check, unless the store
	// holds a later one (two checkers running at once: the later check
	// stands).
	PutRouteCheck(ctx context.Context, c RouteCheck) error
	// RouteChecks returns the checks of the routes named that the store
	// holds, in no particular order; a route never checked has none.
	RouteChecks(ctx context.Context, routes []string) ([]RouteCheck, error)
}
