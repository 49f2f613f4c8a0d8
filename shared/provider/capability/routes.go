package capability

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/genvideo/gen/shared/catalog"
	"github.com/genvideo/gen/shared/params"
)

// RouteLimits are one provider route's limits for one of our models: a model
// with several routes (settings.Routes) is offered what at least one
// of them honours.
type RouteLimits struct {
	// Name is the route's (settings.RouteSpec.Name); Backend names it in
	// messages ("Vertex AI").
	Name, Backend string
	Limits        Limits
}

// Routed is the table of a stack whose models have routes: each model
// is offered what one of its routes honours (Apply), and shows the
// union of its routes' limits (Models, for GET /api/gen/models).
func Routed(routes map[string][]RouteLimits) Table {
	t := Table{Models: map[string]Limits{}, Routes: map[string][]RouteLimits{}}
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
func (t Table) applyRouted(r *params.Request, routes []RouteLimits) error {
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
		seedless := slices.ContainsFunc(routes, func(r RouteLimits) bool { return !r.Limits.Seed })
		if seedless && !(r.Sent == nil || r.Sent["seed"]) {
			c.Params.Seed = nil
		}
		*r = c
		return nil
	}
	return first
}

// Honours reports whether the route takes a job of mode (params.ModeOf)
// with these parameters as they are (a task's, which start filled):
// what a router asks before it submits a task to a route.
func (r RouteLimits) Honours(model, mode string, p params.Parameters) bool {
	req := params.Request{Model: model, Type: mode, Params: p}
	return (Table{Backend: r.Backend, Models: map[string]Limits{model: r.Limits}}).Apply(&req) == nil
}

// RouteOf is the route of model named name: one of its routes, or, in
// a table of one backend, that backend when it is so named.
func (t Table) RouteOf(model, name string) (RouteLimits, bool) {
	if routes := t.Routes[model]; len(routes) > 0 {
		i := slices.IndexFunc(routes, func(r RouteLimits) bool { return r.Name == name })
		if i < 0 {
			return RouteLimits{}, false
		}
		return routes[i], true
	}
	l, ok := t.Models[model]
	if !ok || name == "" || name != t.Name {
		return RouteLimits{}, false
	}
	return RouteLimits{Name: t.Name, Backend: t.Backend, Limits: l}, true
}

// applyExtension is Apply for an extension. Only the route that made a
// video can extend it (the Gemini API extends only videos it made,
// shared/provider/veo/veomodels): the start is checked against that
// route alone, which the task keeps, never failing over to another.
func (t Table) applyExtension(r *params.Request) error {
	src := r.Extends
	refuse := func(format string, a ...any) error {
		return &params.Error{Code: params.CodeValidation, Field: "taskId", Value: src.TaskID, Message: fmt.Sprintf(format, a...)}
	}
	route, ok := t.RouteOf(r.Model, src.Route)
	if !ok {
		return refuse("task %s's video was made on route %q, which does not serve %s here now: only the route that made a video can extend it",
			src.TaskID, src.Route, r.Model)
	}
	l := route.Limits
	if !slices.Contains(l.Modes, catalog.VideoExtension) {
		return refuse("%s does not extend videos of %s; task %s's video was made there", route.Backend, r.Model, src.TaskID)
	}
	if src.Seconds > l.MaxExtendSeconds {
		return refuse("task %s's video is %d seconds long; %s extends videos of at most %d seconds", src.TaskID, src.Seconds, route.Backend, l.MaxExtendSeconds)
	}
	if l.ExtendWithin > 0 && src.Age > l.ExtendWithin {
		return refuse("task %s's video was made %s ago; %s extends videos for %s after they were made", src.TaskID,
			src.Age.Round(time.Minute), route.Backend, l.ExtendWithin)
	}
	if !slices.Contains(l.ExtendResolutions, src.Resolution) {
		return refuse("task %s's video is %s; %s extends videos at %s only", src.TaskID, src.Resolution, route.Backend, strings.Join(l.ExtendResolutions, ", "))
	}
	c := *r
	c.Extends = nil
	if err := (Table{Backend: route.Backend, Models: map[string]Limits{r.Model: l}}).Apply(&c); err != nil {
		return err
	}
	c.Extends = src
	*r = c
	return nil
}

// backends names the routes' backends in messages.
func backends(routes []RouteLimits) string {
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
	u.ModeResolutions = unionNarrowed(u.Modes, a, b, func(l Limits) map[string][]string { return l.ModeResolutions })
	u.ModeAspectRatios = unionNarrowed(u.Modes, a, b, func(l Limits) map[string][]string { return l.ModeAspectRatios })
	u.MaxExtendSeconds = max(a.MaxExtendSeconds, b.MaxExtendSeconds)
	u.ExtendResolutions = merge(a.ExtendResolutions, b.ExtendResolutions)
	if a.ExtendWithin == 0 || b.ExtendWithin == 0 {
		u.ExtendWithin = 0
	} else {
		u.ExtendWithin = max(a.ExtendWithin, b.ExtendWithin)
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

// unionNarrowed is the union of a and b's narrowing of modes (of)
// where every route that makes a mode narrows it, nil where none does.
func unionNarrowed(modes []string, a, b Limits, of func(Limits) map[string][]string) map[string][]string {
	var out map[string][]string
	for _, m := range modes {
		va, na := of(a)[m]
		vb, nb := of(b)[m]
		if (slices.Contains(a.Modes, m) && !na) || (slices.Contains(b.Modes, m) && !nb) {
			continue
		}
		if out == nil {
			out = map[string][]string{}
		}
		out[m] = merge(va, vb)
	}
	return out
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
