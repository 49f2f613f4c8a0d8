// Package tables is what the configured providers accept and what they
// charge, read from the settings: the capability table a start is
// checked against (Capabilities), for a stack's one backend or for each
// model's routes. It reads each kind's own table (its adapter's models
// package) and links no provider's client, so that the API's functions,
// which refuse a start before charging for it, stay small; the clients
// are shared/provider/factory's.
package tables

import (
	"fmt"
	"slices"

	"github.com/genvideo/gen/shared/availability"
	"github.com/genvideo/gen/shared/catalog"
	"github.com/genvideo/gen/shared/provider/capability"
	"github.com/genvideo/gen/shared/provider/omni/omnimodels"
	"github.com/genvideo/gen/shared/provider/openai/openaimodels"
	"github.com/genvideo/gen/shared/provider/veo/veomodels"
	"github.com/genvideo/gen/shared/settings"
)

// kind is one provider kind's table: as a stack's one backend
// (GEN_GENERATOR), and as a route serving some of our models
// (GEN_ROUTES).
type kind struct {
	capabilities func(settings.ProviderConfig) (capability.Table, error)
	route        func(p settings.ProviderConfig, served []string) (backend string, _ map[string]capability.Limits, _ error)
	// models maps our model ids to the provider's, the kind's defaults
	// with p's overrides, as its adapter does; nil for a kind that asks
	// for no model (the built-in generator).
	models func(p settings.ProviderConfig) map[string]string
}

// kinds are the provider kinds, one line each (settings.Generator*);
// shared/provider/factory has the matching line that builds the client.
var kinds = map[string]kind{
	settings.GeneratorBuiltin: {builtin, builtinRoute, nil},
	settings.GeneratorVertex:  {veomodels.Capabilities, veomodels.RouteLimits, veoModels},
	settings.GeneratorGemini:  {veomodels.Capabilities, veomodels.RouteLimits, veoModels},
	settings.GeneratorOpenAI:  {openaimodels.Capabilities, openaimodels.RouteLimits, openaiModels},
	settings.GeneratorOmni:    {omnimodels.Capabilities, omnimodels.RouteLimits, omniModels},
	// One table for Omni on both APIs; its name says which (omnimodels).
	settings.GeneratorOmniVertex: {omnimodels.Capabilities, omnimodels.RouteLimits, omniModels},
}

func veoModels(p settings.ProviderConfig) map[string]string {
	return veomodels.WithDefaults(p.Generator, p.ModelMap())
}

func openaiModels(p settings.ProviderConfig) map[string]string {
	return openaimodels.WithDefaults(openaimodels.Profile(p), p.ModelMap())
}

func omniModels(p settings.ProviderConfig) map[string]string {
	return omnimodels.WithDefaults(p.ModelMap())
}

// ProviderModels is what the backend of p (one route, settings.RouteConfig)
// maps each of our models to, as its adapter maps them: nil for the
// built-in generator, which asks for none.
func ProviderModels(p settings.ProviderConfig) map[string]string {
	k, err := lookup(p)
	if err != nil || k.models == nil {
		return nil
	}
	return k.models(p)
}

// Availability is each of our models' routes with the provider model
// each maps it to, as the settings say now: what a check of a route
// (shared/availability) is read against.
func Availability(p settings.ProviderConfig) availability.Routes {
	out := availability.Routes{}
	for model, rs := range p.ModelRoutes() {
		for _, r := range rs {
			out[model] = append(out[model], availability.Mapping{Route: r.Name, ProviderModel: ProviderModels(r.Provider)[model]})
		}
	}
	return out
}

// lookup is the kind of p, the built-in generator when none is set.
func lookup(p settings.ProviderConfig) (kind, error) {
	g := p.Generator
	if g == "" {
		g = settings.GeneratorBuiltin
	}
	k, ok := kinds[g]
	if !ok {
		return kind{}, fmt.Errorf("unknown generator %q", p.Generator)
	}
	return k, nil
}

// Capabilities is what the configured providers accept for each of our
// models: the one backend of the generator settings, or with GEN_ROUTES
// (p.Routes) each model's routes' limits (capability.Routed), each
// route checked as RouteLimits checks it. A mapping to a model a table
// does not know, or one that sells a video below its cost at p.Credit(),
// is an error, so that the stack stops at start-up rather than charge
// for starts it cannot honour, or honour at a loss.
func Capabilities(p settings.ProviderConfig) (capability.Table, error) {
	if p.Routes != "" {
		return routed(p)
	}
	k, err := lookup(p)
	if err != nil {
		return capability.Table{}, err
	}
	t, err := k.capabilities(p)
	if err != nil {
		return capability.Table{}, err
	}
	// The route name its done jobs record (task.Billing.Route).
	if t.Name == "" {
		t.Name = p.Generator
	}
	return t, nil
}

// RouteLimits is what the backend of p (one provider route,
// settings.RouteConfig) accepts for each of the models it serves, and the
// name messages give it.
func RouteLimits(p settings.ProviderConfig, served []string) (string, map[string]capability.Limits, error) {
	k, err := lookup(p)
	if err != nil {
		return "", nil, err
	}
	return k.route(p, served)
}

// builtin is the built-in generator's table: the contract's whole range.
func builtin(settings.ProviderConfig) (capability.Table, error) { return capability.Builtin(), nil }

// builtinRoute is a built-in route's limits; it costs nothing.
func builtinRoute(_ settings.ProviderConfig, served []string) (string, map[string]capability.Limits, error) {
	t := capability.Builtin()
	out := map[string]capability.Limits{}
	for _, ours := range served {
		out[ours] = t.Models[ours]
	}
	return t.Backend, out, nil
}

// routed is the table of p's routes.
func routed(p settings.ProviderConfig) (capability.Table, error) {
	byModel := p.ModelRoutes()
	tables := map[string][]capability.RouteLimits{}
	for _, r := range p.AllRoutes() {
		var served []string
		for _, id := range catalog.IDs() {
			if slices.ContainsFunc(byModel[id], func(m settings.RouteConfig) bool { return m.Name == r.Name }) {
				served = append(served, id)
			}
		}
		backend, limits, err := RouteLimits(r.Provider, served)
		if err != nil {
			return capability.Table{}, fmt.Errorf("%s: route %q: %w", settings.Routes, r.Name, err)
		}
		for _, id := range served {
			l := limits[id]
			if len(r.Modes) > 0 {
				l.Modes = slices.DeleteFunc(slices.Clone(l.Modes), func(m string) bool { return !slices.Contains(r.Modes, m) })
				if len(l.Modes) == 0 {
					return capability.Table{}, fmt.Errorf("%s: route %q makes none of its modes for %s", settings.Routes, r.Name, id)
				}
			}
			limits[id] = l
			i := slices.IndexFunc(byModel[id], func(m settings.RouteConfig) bool { return m.Name == r.Name })
			if tables[id] == nil {
				tables[id] = make([]capability.RouteLimits, len(byModel[id]))
			}
			tables[id][i] = capability.RouteLimits{Name: r.Name, Backend: backend, Limits: limits[id]}
		}
	}
	return capability.Routed(tables), nil
}
