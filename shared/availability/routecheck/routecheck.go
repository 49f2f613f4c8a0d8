// Package routecheck asks each provider route which of the models it is
// mapped to it serves, and writes what each found (store.RouteCheck),
// which shared/availability reads. It is apart from availability so that
// the API's functions, which only read the checks, do not link the
// providers' contract.
package routecheck

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/genvideo/gen/shared/provider"
	"github.com/genvideo/gen/shared/settings"
	"github.com/genvideo/gen/shared/store"
)

// Probe is one route to check: its name, the provider models it maps
// our models to (those it serves and the others alike), and its
// provider's check, which asks for each of those models
// (provider.Checker: Check answers *provider.UnavailableModelsError for
// those not found).
type Probe struct {
	Route   string
	Models  map[string]string
	Checker provider.Checker
}

// Writer keeps the checks: store.RouteChecks' PutRouteCheck.
type Writer interface {
	PutRouteCheck(ctx context.Context, c store.RouteCheck) error
}

// Defaults of Checker.
const (
	// DefaultInterval is how often a route is checked after start-up.
	DefaultInterval = time.Hour
	// DefaultTimeout bounds one route's check, so that a provider that
	// does not answer never stalls what runs the checks.
	DefaultTimeout = 30 * time.Second
)

// Checker checks routes and writes what each found (store.RouteCheck).
type Checker struct {
	Store  Writer
	Probes []Probe
	// Timeout bounds each route's check (default DefaultTimeout).
	Timeout time.Duration
	Now     func() time.Time
	Logger  *slog.Logger
}

// Check checks every route once, one after the other, each within the
// timeout, and writes each one's check. A model not found is logged as
// the operator's alarm (provider.AlarmModelUnavailable), as the
// start-up check logs it; a check that failed otherwise is written as
// finding nothing missing (it says nothing of the models) and logged.
// The error is the writes' that failed.
func (c *Checker) Check(ctx context.Context) error {
	logger := c.Logger
	if logger == nil {
		logger = slog.Default()
	}
	now := c.Now
	if now == nil {
		now = time.Now
	}
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	var errs []error
	for _, p := range c.Probes {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		pctx, cancel := context.WithTimeout(ctx, timeout)
		err := p.Checker.Check(pctx)
		cancel()
		rec := store.RouteCheck{Route: p.Route, CheckedAt: now(), Models: p.Models}
		var unavailable *provider.UnavailableModelsError
		switch {
		case errors.As(err, &unavailable):
			rec.Missing = unavailable.Models
			logger.Error(provider.AlarmModelUnavailable, "route", p.Route, "api", unavailable.API, "models", unavailable.Models,
				"remedy", "remap them with "+settings.ProviderModels+" or "+settings.Routes+
					"; starts of a model none of whose routes serves it are refused until one does")
		case err != nil && ctx.Err() != nil:
			return ctx.Err()
		case err != nil:
			logger.Warn("route's check of its models failed: its models count as served", "route", p.Route, "error", err)
		}
		if err := c.Store.PutRouteCheck(ctx, rec); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
