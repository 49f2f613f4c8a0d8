package routing

import (
	"context"

	"github.com/genvideo/gen/shared/provider"
)

// Verify runs each route's start-up check (provider.Verify). Without
// GEN_ROUTES, a failure stops the start-up, as before. With routes, a
// route that does not answer or refuses its credentials is logged as a
// warning and starts out cooling down (health), and the stack starts:
// failover is the point, and a route down at start-up, even the first,
// is one the others stand in for.
func (r *Router) Verify(ctx context.Context, routed bool) error {
	checked := map[string]bool{}
	for _, rs := range r.routes {
		for _, route := range rs {
			if checked[route.Name] {
				continue
			}
			checked[route.Name] = true
			err := provider.Verify(ctx, route.Provider, r.logger)
			if err == nil {
				continue
			}
			if !routed {
				return err
			}
			r.health.failed(route.Name)
			r.logger.Warn("route failed its start-up check: starts skip it until it answers", "route", route.Name, "error", err)
		}
	}
	return nil
}
