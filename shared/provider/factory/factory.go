// Package factory builds the providers a stack runs with from its
// settings: one line per provider kind (builders), each an adapter
// under shared/provider with its credentials, wrapped in a
// routing.Router over each model's routes, and the capability table a
// start is checked against (shared/provider/tables). It links every
// adapter's client, so only what runs providers imports it (the
// generate and poll steps, the local stack).
package factory

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/genvideo/gen/shared/availability/routecheck"
	"github.com/genvideo/gen/shared/catalog"
	"github.com/genvideo/gen/shared/provider"
	"github.com/genvideo/gen/shared/provider/capability"
	"github.com/genvideo/gen/shared/provider/omni"
	"github.com/genvideo/gen/shared/provider/openai"
	"github.com/genvideo/gen/shared/provider/routing"
	"github.com/genvideo/gen/shared/provider/tables"
	"github.com/genvideo/gen/shared/provider/veo"
	"github.com/genvideo/gen/shared/settings"
)

// Options are what a stack adds to the settings: the built-in
// generator, for builtin routes; veo's options (ffmpeg, AWS's workload
// identity); the key of a route that names a secret (AWS); the health
// memory's clock.
type Options struct {
	Builtin provider.Generator
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
	Provider     provider.Provider
	Capabilities capability.Table
	// Routed: GEN_ROUTES is set.
	Routed bool
	// Probes are the routes whose providers check the models they serve
	// (shared/availability): every route but the built-in generator's.
	Probes []routecheck.Probe
}

// probe is the availability probe of the route name, of settings p and
// provider prov; false for a provider without a check.
func probe(name string, p settings.ProviderConfig, prov provider.Provider) (routecheck.Probe, bool) {
	c, ok := prov.(provider.Checker)
	if !ok {
		return routecheck.Probe{}, false
	}
	return routecheck.Probe{Route: name, Models: tables.ProviderModels(p), Checker: c}, true
}

// Probes builds the routes of p whose providers check their models, and
// only those (no built-in generator, so no renderer): what the AWS
// stack's route check function runs. A route that cannot be built is
// an error, as at FromSettings.
func Probes(ctx context.Context, p settings.ProviderConfig, o Options) ([]routecheck.Probe, error) {
	var out []routecheck.Probe
	for _, rs := range p.AllRoutes() {
		if rs.Provider.Generator == settings.GeneratorBuiltin || rs.Provider.Generator == "" {
			continue
		}
		route, err := build(ctx, rs, o)
		if err != nil {
			return nil, fmt.Errorf("%s: route %q: %w", settings.Routes, rs.Name, err)
		}
		if pr, ok := probe(rs.Name, rs.Provider, route.Provider); ok {
			out = append(out, pr)
		}
	}
	return out, nil
}

// builder builds the provider of one backend of a kind, with its
// credentials; it checks no capability table (FromSettings checks it).
type builder func(ctx context.Context, p settings.ProviderConfig, o Options) (provider.Provider, error)

// builders are the provider kinds, one line each (settings.Generator*);
// shared/provider/tables has the matching line of each kind's table.
var builders = map[string]builder{
	settings.GeneratorBuiltin: builtin,
	settings.GeneratorVertex:  buildVeo,
	settings.GeneratorGemini:  buildVeo,
	settings.GeneratorOpenAI:  buildOpenAI,
	settings.GeneratorOmni:    buildOmni,
	// Omni on Vertex AI: the same adapter, Vertex's credentials.
	settings.GeneratorOmniVertex: buildOmni,
}

func buildVeo(ctx context.Context, p settings.ProviderConfig, o Options) (provider.Provider, error) {
	return veo.Build(ctx, p, o.Veo)
}

func buildOpenAI(_ context.Context, p settings.ProviderConfig, o Options) (provider.Provider, error) {
	if p.OpenAIProfile == settings.ProfileOpenAI {
		// Kept for hosts of the same shape and limits; OpenAI's own is
		// gone, and an operator who still points at it must hear so.
		cmp.Or(o.Logger, slog.Default()).Warn("OpenAI shut its Sora video API down on "+settings.SoraShutDown+
			": the openai profile serves only a host of the same shape and limits",
			"endpoint", cmp.Or(p.OpenAIEndpoint, openai.DefaultEndpoint))
	}
	return openai.FromSettings(p)
}

func buildOmni(ctx context.Context, p settings.ProviderConfig, o Options) (provider.Provider, error) {
	// AWS's workload identity federation config is Vertex AI's, whichever
	// model runs there.
	return omni.FromSettings(ctx, p, o.Veo.VertexWIFConfig)
}

// builtin is the built-in generator as a route: its operations are
// done at submit.
func builtin(_ context.Context, _ settings.ProviderConfig, o Options) (provider.Provider, error) {
	if o.Builtin == nil {
		return nil, errors.New("no built-in generator on this stack")
	}
	return provider.Rendered(o.Builtin), nil
}

// newProvider is the provider of p's kind. A route a model can reach
// with nothing to send its jobs to would fail each of them at its first
// step: a kind that builds no provider stops the start-up instead
// (issue 31, defect 1: the generator variables' route, its kind unset,
// was built with none).
func newProvider(ctx context.Context, p settings.ProviderConfig, o Options) (provider.Provider, error) {
	b, ok := builders[p.Generator]
	if !ok {
		return nil, fmt.Errorf("kind %q builds no provider", p.Generator)
	}
	prov, err := b(ctx, p, o)
	if err == nil && prov == nil {
		err = fmt.Errorf("kind %q builds no provider", p.Generator)
	}
	return prov, err
}

// FromSettings builds the routes of p. Without GEN_ROUTES it is the
// generator variables' one backend as before (nil for the built-in
// generator: the workflow's Generator renders), wrapped in a Router
// that names its route on
// done operations. With it, each route is built with its own
// credentials and checked against the capability and price tables for
// the models it serves: a route that is wrong (an unknown model, a
// price below cost, a missing key) fails the start-up, whichever route
// it is. Whether a route answers is Verify's.
func FromSettings(ctx context.Context, p settings.ProviderConfig, o Options) (Stack, error) {
	if p.Routes == "" {
		caps, err := tables.Capabilities(p)
		if err != nil {
			return Stack{}, err
		}
		if p.Generator == settings.GeneratorBuiltin || p.Generator == "" {
			return Stack{Capabilities: caps}, nil
		}
		prov, err := newProvider(ctx, p, o)
		if err != nil {
			return Stack{Capabilities: caps}, err
		}
		name := p.DefaultRoute()
		lim := map[string]capability.RouteLimits{}
		for id, l := range caps.Models {
			lim[id] = capability.RouteLimits{Name: name, Backend: caps.Backend, Limits: l}
		}
		route := &routing.Route{Name: name, Provider: prov, Limits: lim}
		models := map[string][]*routing.Route{}
		for _, id := range catalog.IDs() {
			models[id] = []*routing.Route{route}
		}
		st := Stack{Provider: routing.New(routing.Config{Models: models, Unprefixed: name, Now: o.Now, Logger: o.Logger}), Capabilities: caps}
		if pr, ok := probe(name, p, prov); ok {
			st.Probes = []routecheck.Probe{pr}
		}
		return st, nil
	}
	caps, err := tables.Capabilities(p)
	if err != nil {
		return Stack{}, err
	}
	built := map[string]*routing.Route{}
	models := map[string][]*routing.Route{}
	byModel := p.ModelRoutes()
	var probes []routecheck.Probe
	for _, id := range catalog.IDs() {
		for i, rs := range byModel[id] {
			route, ok := built[rs.Name]
			if !ok {
				if route, err = build(ctx, rs, o); err != nil {
					return Stack{}, fmt.Errorf("%s: route %q: %w", settings.Routes, rs.Name, err)
				}
				built[rs.Name] = route
				if pr, ok := probe(rs.Name, rs.Provider, route.Provider); ok {
					probes = append(probes, pr)
				}
			}
			route.Limits[id] = caps.Routes[id][i]
			models[id] = append(models[id], route)
		}
	}
	router := routing.New(routing.Config{Models: models, Unprefixed: p.DefaultRoute(), Now: o.Now, Logger: o.Logger})
	return Stack{Provider: router, Capabilities: caps, Routed: true, Probes: probes}, nil
}

// build is the provider of one route of GEN_ROUTES; its limits are the
// capability table's.
func build(ctx context.Context, rs settings.RouteConfig, o Options) (*routing.Route, error) {
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
	route := &routing.Route{Name: rs.Name, Limits: map[string]capability.RouteLimits{}}
	var err error
	if route.Provider, err = newProvider(ctx, p, o); err != nil {
		return nil, err
	}
	return route, nil
}

// Verify runs the start-up checks of the stack's routes (Router.Verify).
func (s Stack) Verify(ctx context.Context) error {
	if r, ok := s.Provider.(*routing.Router); ok {
		return r.Verify(ctx, s.Routed)
	}
	return nil
}
