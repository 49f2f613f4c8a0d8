package routing

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/genvideo/gen/shared/capability"
	"github.com/genvideo/gen/shared/catalog"
	"github.com/genvideo/gen/shared/settings"
	"github.com/genvideo/gen/shared/veo"
	"github.com/genvideo/gen/shared/veomodels"
	"github.com/genvideo/gen/shared/workflow"
)

// Options are what a stack adds to the settings: the built-in
// generator, for builtin routes; veo's options (ffmpeg, AWS's workload
// identity); the key of a route that names a secret (AWS); the health
// memory's clock.
type Options struct {
	Builtin workflow.Generator
	Veo     veo.Options
	// Secret reads a route's apiKeySecretArn; nil refuses such a route
	// (the local stack takes apiKey).
	Secret func(ctx context.Context, arn string) (string, error)
	Now    func() time.Time
	Logger *slog.Logger
}

// Stack is what a stack runs with: the provider (nil when every model
// has the one built-in route: the workflow's Generator then renders)
// and the capability table a start is checked against.
type Stack struct {
	Provider     workflow.Provider
	Capabilities capability.Table
	// Routed: GEN_ROUTES is set.
	Routed bool
}

// FromSettings builds the routes of p. Without GEN_ROUTES it is the
// generator variables' one backend as before (veo.FromSettings,
// veomodels.Capabilities), wrapped in a Router that names its route on
// done operations. With it, each route is built with its own
// credentials and checked against the capability and price tables for
// the models it serves: a route that is wrong (an unknown model, a
// price below cost, a missing key) fails the start-up, whichever route
// it is. Whether a route answers is Verify's.
func FromSettings(ctx context.Context, p settings.Provider, o Options) (Stack, error) {
	if p.Routes == "" {
		caps, err := veomodels.Capabilities(p)
		if err != nil {
			return Stack{}, err
		}
		prov, err := veo.Build(ctx, p, o.Veo)
		if err != nil || prov == nil {
			return Stack{Capabilities: caps}, err
		}
		name := p.DefaultRoute()
		lim := map[string]capability.Route{}
		for id, l := range caps.Models {
			lim[id] = capability.Route{Name: name, Backend: caps.Backend, Limits: l}
		}
		route := &Route{Name: name, Provider: prov, Limits: lim}
		models := map[string][]*Route{}
		for _, id := range catalog.IDs() {
			models[id] = []*Route{route}
		}
		return Stack{Provider: New(Config{Models: models, Unprefixed: name, Now: o.Now, Logger: o.Logger}), Capabilities: caps}, nil
	}
	caps, err := veomodels.Capabilities(p)
	if err != nil {
		return Stack{}, err
	}
	built := map[string]*Route{}
	models := map[string][]*Route{}
	byModel := p.ModelRoutes()
	for _, id := range catalog.IDs() {
		for i, rs := range byModel[id] {
			route, ok := built[rs.Name]
			if !ok {
				if route, err = build(ctx, rs, o); err != nil {
					return Stack{}, fmt.Errorf("%s: route %q: %w", settings.Routes, rs.Name, err)
				}
				built[rs.Name] = route
			}
			route.Limits[id] = caps.Routes[id][i]
			models[id] = append(models[id], route)
		}
	}
	router := New(Config{Models: models, Unprefixed: p.DefaultRoute(), Now: o.Now, Logger: o.Logger})
	return Stack{Provider: router, Capabilities: caps, Routed: true}, nil
}

// build is the provider of one route of GEN_ROUTES; its limits are the
// capability table's.
func build(ctx context.Context, rs settings.Route, o Options) (*Route, error) {
	p := rs.Provider
	if rs.APIKeySecretARN != "" {
		if o.Secret == nil {
			return nil, errors.New("apiKeySecretArn is read on AWS only; give apiKey")
		}
		key, err := o.Secret(ctx, rs.APIKeySecretARN)
		if err != nil {
			return nil, err
		}
		p.GeminiAPIKey, p.OpenAIAPIKey = key, key
	}
	route := &Route{Name: rs.Name, Limits: map[string]capability.Route{}}
	if p.Generator == settings.GeneratorBuiltin {
		if o.Builtin == nil {
			return nil, errors.New("no built-in generator on this stack")
		}
		route.Provider = rendered{o.Builtin}
		return route, nil
	}
	var err error
	if route.Provider, err = veo.Build(ctx, p, o.Veo); err != nil {
		return nil, err
	}
	if route.Provider == nil {
		// A route a model can reach with nothing to send its jobs to
		// would fail each of them at its first step: it stops the
		// start-up instead.
		return nil, fmt.Errorf("kind %q builds no provider", p.Generator)
	}
	return route, nil
}

// rendered is the built-in generator as a route: its operations are
// done at submit.
type rendered struct{ g workflow.Generator }

func (r rendered) Submit(ctx context.Context, job workflow.Job) (workflow.Operation, error) {
	res, err := r.g.Generate(ctx, job)
	if err != nil {
		return workflow.Operation{}, err
	}
	return workflow.Operation{Done: true, Result: res}, nil
}

func (r rendered) Poll(context.Context, string, workflow.Job) (workflow.Operation, error) {
	return workflow.Operation{}, errors.New("the built-in generator has no operation to poll")
}

// Verify runs each route's start-up check (veo.Verify). Without
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
			err := veo.Verify(ctx, route.Provider, r.logger)
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

// Verify runs the start-up checks of the stack's routes (Router.Verify).
func (s Stack) Verify(ctx context.Context) error {
	if r, ok := s.Provider.(*Router); ok {
		return r.Verify(ctx, s.Routed)
	}
	return nil
}
