package capability

import (
	"maps"
	"slices"
	"strings"

	"github.com/genvideo/gen/shared/params"
)

// A Route is one provider route's limits for one of our models: a model
// with several routes (settings.Routes) is offered what at least one
// of them honours.
type Route struct {
	// Name is the route's (settings.RouteSpec.Name); Backend names it in
	// messages ("Vertex AI").
	Name, Backend string
	Limits        Limits
}

// Routed is the table of a stack whose models have routes: each model
// is offered what one of its routes honours (Apply), and shows the
// union of its routes' limits (Models, for GET /api/gen/models).
func Routed(routes map[string][]Route) Table {
	t := Table{Models: map[string]Limits{}, Routes: map[string][]Route{}}
	var names []string
	for model, rs := range routes {
		if len(rs) == 0 {
			continue
		}
		t.Routes[model] = rs
		u := rs[0].Limits
		for _, r := range rs[1:] {
			u = union(u, r.Limits)
		}
		t.Models[model] = u
		for _, r := range rs {
			if !slices.Contains(names, r.Backend) {
				names = append(names, r.Backend)
			}
		}
	}
	slices.Sort(names)
	t.Backend = strings.Join(names, " or ")
	return t
}

// applyRouted is Apply for a model of several routes: the union of
// their limits refuses what none could honour, naming everything some
// route accepts; then the first route, in order, that honours the start
// fills the defaults the client left out. A start the union accepts and
// no one route does (a combination of two routes' values) gets the
// first route's refusal. A seed the client did not send is left out
// when some route takes none, so that the task may fail over to it and
// still echo only a seed its videos were made with.
func (t Table) applyRouted(r *params.Request, routes []Route) error {
	union := *r
	if err := (Table{Backend: backends(routes), Models: map[string]Limits{r.Model: t.Models[r.Model]}}).Apply(&union); err != nil {
		return err
	}
	var first error
	for _, route := range routes {
		c := *r
		err := (Table{Backend: route.Backend, Models: map[string]Limits{r.Model: route.Limits}}).Apply(&c)
		if err != nil {
			if first == nil {
				first = err
			}
			continue
		}
		seedless := slices.ContainsFunc(routes, func(r Route) bool { return !r.Limits.Seed })
		if seedless && !(r.Sent == nil || r.Sent["seed"]) {
			c.Params.Seed = nil
		}
		*r = c
		return nil
	}
	return first
}

// Honours reports whether the route takes a job with these parameters
// as they are (a task's, which start filled): what a router asks before
// it submits a task to a route.
func (r Route) Honours(model, typ string, p params.Parameters) bool {
	req := params.Request{Model: model, Type: typ, Params: p}
	return (Table{Backend: r.Backend, Models: map[string]Limits{model: r.Limits}}).Apply(&req) == nil
}

// backends names the routes' backends in messages.
func backends(routes []Route) string {
	var names []string
	for _, r := range routes {
		if !slices.Contains(names, r.Backend) {
			names = append(names, r.Backend)
		}
	}
	return strings.Join(names, " or ")
}

// union is what a or b accepts.
func union(a, b Limits) Limits {
	u := a
	u.Modes = merge(a.Modes, b.Modes)
	u.Durations = merge(a.Durations, b.Durations)
	slices.Sort(u.Durations)
	u.Resolutions = map[int][]string{}
	for _, d := range u.Durations {
		u.Resolutions[d] = merge(a.Resolutions[d], b.Resolutions[d])
	}
	// A mode is narrowed in the union only where every route that
	// makes it narrows it.
	u.ModeDurations = nil
	for _, m := range u.Modes {
		da, na := a.ModeDurations[m]
		db, nb := b.ModeDurations[m]
		inA, inB := slices.Contains(a.Modes, m), slices.Contains(b.Modes, m)
		if (inA && !na) || (inB && !nb) {
			continue
		}
		if u.ModeDurations == nil {
			u.ModeDurations = map[string][]int{}
		}
		u.ModeDurations[m] = merge(da, db)
		slices.Sort(u.ModeDurations[m])
	}
	u.AspectRatios = merge(a.AspectRatios, b.AspectRatios)
	u.MaxSampleCount = max(a.MaxSampleCount, b.MaxSampleCount)
	u.PersonGeneration = map[string][]string{}
	for _, m := range merge(slices.Collect(maps.Keys(a.PersonGeneration)), slices.Collect(maps.Keys(b.PersonGeneration))) {
		u.PersonGeneration[m] = merge(a.PersonGeneration[m], b.PersonGeneration[m])
	}
	u.Seed = a.Seed || b.Seed
	u.EnhancePromptOff = a.EnhancePromptOff || b.EnhancePromptOff
	u.NegativePrompt = a.NegativePrompt || b.NegativePrompt
	if a.Audio != b.Audio {
		u.Audio = AudioOptional
	}
	return u
}

// merge is a then what of b a lacks, a's order (and so its default)
// first.
func merge[T comparable](a, b []T) []T {
	out := slices.Clone(a)
	for _, v := range b {
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}
