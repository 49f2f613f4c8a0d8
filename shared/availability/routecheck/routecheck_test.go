package routecheck_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/genvideo/gen/shared/availability/routecheck"
	"github.com/genvideo/gen/shared/provider"
	"github.com/genvideo/gen/shared/store"
)

const (
	fast = "gen-3.1-fast-generate-001"
	lite = "gen-3.1-lite-generate-001"
)

var (
	vertexAsked = map[string]string{fast: "veo-3.1-fast-generate-001"}
	geminiAsked = map[string]string{fast: "veo-3.1-fast-generate-preview", lite: "veo-3.1-lite-generate-preview"}
)

// writer keeps the checks written, or refuses them with fail.
type writer struct {
	checks map[string]store.RouteCheck
	fail   error
}

func (w *writer) PutRouteCheck(_ context.Context, c store.RouteCheck) error {
	if w.fail != nil {
		return w.fail
	}
	w.checks[c.Route] = c
	return nil
}

// checkerFunc is a provider.Checker.
type checkerFunc func(ctx context.Context) error

func (f checkerFunc) Check(ctx context.Context) error { return f(ctx) }

// TestChecker: each route's check is written with what it found; a
// route that does not answer (or answers late) is written as lacking
// nothing, and does not hold up the others.
func TestChecker(t *testing.T) {
	st := &writer{checks: map[string]store.RouteCheck{
		// What an earlier check found: a failed check now clears it.
		"down": {Route: "down", CheckedAt: time.Unix(0, 0), Models: geminiAsked, Missing: []string{"veo-3.1-lite-generate-preview"}},
	}}
	at := time.Unix(2000, 0)
	slow := checkerFunc(func(ctx context.Context) error { <-ctx.Done(); return ctx.Err() })
	c := &routecheck.Checker{Store: st, Timeout: 50 * time.Millisecond, Now: func() time.Time { return at },
		Logger: slog.New(slog.DiscardHandler), Probes: []routecheck.Probe{
			{Route: "gemini", Models: geminiAsked, Checker: checkerFunc(func(context.Context) error {
				return fmt.Errorf("gemini: %w", &provider.UnavailableModelsError{API: "gemini", Models: []string{"veo-3.1-lite-generate-preview"}})
			})},
			{Route: "slow", Models: vertexAsked, Checker: slow},
			{Route: "down", Models: geminiAsked, Checker: checkerFunc(func(context.Context) error { return errors.New("connection refused") })},
			{Route: "vertex", Models: vertexAsked, Checker: checkerFunc(func(context.Context) error { return nil })},
		}}
	start := time.Now()
	if err := c.Check(t.Context()); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Check took %v: the slow route's check was not bounded", d)
	}
	for _, tt := range []struct {
		route   string
		missing []string
	}{{"gemini", []string{"veo-3.1-lite-generate-preview"}}, {"slow", nil}, {"down", nil}, {"vertex", nil}} {
		got, ok := st.checks[tt.route]
		if !ok || !got.CheckedAt.Equal(at) || !slices.Equal(got.Missing, tt.missing) || len(got.Models) == 0 {
			t.Errorf("route %s: stored %+v (ok %v), want checked at %v, missing %v, with its models", tt.route, got, ok, at, tt.missing)
		}
	}
	st.fail = errors.New("table gone")
	if err := c.Check(t.Context()); err == nil {
		t.Error("Check with a store that refuses its writes = nil, want the error")
	}
}
