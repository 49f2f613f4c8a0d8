// Package routing sends each of our models' jobs to its provider routes
// (settings.Routes) with failover: a Router is the provider.Provider of
// a stack whose models have routes. A submit tries the model's routes in
// order, skipping those that cannot honour the job's parameters and
// those its health memory says are failing; a route that refuses the
// job before accepting it, for a reason of its own (busy past its
// retries, down, its model retired, its credentials refused), hands it
// to the next. A job once accepted stays with its route: the route's
// name is in the operation name, so that any process polls it there.
// Nothing that may have accepted the job (an ambiguous submit) and
// nothing that is the customer's (a content-policy or a bad-request
// refusal) moves on: a task never costs two provider jobs.
package routing

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/genvideo/gen/shared/provider"
	"github.com/genvideo/gen/shared/provider/capability"
)

// Route is one provider route: its name, its provider, and what it
// accepts for each model it serves.
type Route struct {
	Name     string
	Provider provider.Provider
	// Limits are its capability.RouteLimits for each model it serves.
	Limits map[string]capability.RouteLimits
}

// Router is a provider.Provider over the routes of each model.
type Router struct {
	routes map[string][]*Route // by our model id, in order
	byName map[string]*Route
	// unprefixed is the route of an operation name without a route
	// prefix: the generator variables' route, whose operations were
	// named so before routes existed, and still are.
	unprefixed string
	health     *health
	logger     *slog.Logger
}

var _ provider.Provider = (*Router)(nil)

// Config configures a Router.
type Config struct {
	// Models are each model's routes, in the order they are tried.
	Models map[string][]*Route
	// Unprefixed names the route whose operation names carry no prefix
	// (settings.ProviderConfig.DefaultRoute).
	Unprefixed string
	// Now is the health memory's clock; nil means time.Now.
	Now    func() time.Time
	Logger *slog.Logger
}

// New returns the router of cfg.
func New(cfg Config) *Router {
	r := &Router{routes: cfg.Models, byName: map[string]*Route{}, unprefixed: cfg.Unprefixed,
		health: newHealth(cfg.Now), logger: cfg.Logger}
	if r.logger == nil {
		r.logger = slog.Default()
	}
	for _, rs := range cfg.Models {
		for _, route := range rs {
			r.byName[route.Name] = route
		}
	}
	return r
}

// Routes are model's routes, in the order they are tried.
func (r *Router) Routes(model string) []*Route { return r.routes[model] }

// prefix begins the operation name of a route other than the unprefixed
// one: "route:<name>:<the provider's name>". No provider's name begins
// so (Vertex AI's begin "projects/", the Gemini API's "models/",
// OpenAI's "video_"), nor does a task's submit marker ("submitting:").
const prefix = "route:"

// opName is the operation name of route's operation name.
func (r *Router) opName(route, name string) string {
	if route == r.unprefixed || name == "" {
		return name
	}
	return prefix + route + ":" + name
}

// split is the route and the provider's name of an operation name.
func (r *Router) split(name string) (string, string) {
	rest, ok := strings.CutPrefix(name, prefix)
	if !ok {
		return r.unprefixed, name
	}
	route, op, ok := strings.Cut(rest, ":")
	if !ok {
		return "", name
	}
	return route, op
}

// done names the route on a done operation; the provider's own billing
// (its model and cost) stays.
func done(op provider.Operation, route string) provider.Operation {
	if op.Done {
		op.Billing.Route = route
	}
	return op
}

// Submit submits the job to the first of its model's routes that
// honours it and accepts it; see the package comment. With routes
// busy or cooling down and none refusing for good, it answers a busy
// error (a *Busy) whose wait is the soonest a route may be tried,
// and the workflow waits and submits again.
func (r *Router) Submit(ctx context.Context, job provider.Job) (provider.Operation, error) {
	routes := r.routes[job.Model]
	if len(routes) == 0 {
		return provider.Operation{}, fmt.Errorf("model %s has no route", job.Model)
	}
	if job.Video != nil {
		// An extension goes to the route that made its video, or
		// nowhere: the Gemini API extends only videos it made.
		routes = slices.DeleteFunc(slices.Clone(routes), func(rt *Route) bool { return rt.Name != job.Video.Route })
		if len(routes) == 0 {
			return provider.Operation{}, &NoRouteError{Model: job.Model}
		}
	}
	var (
		busy    *Busy
		refused error
		tried   int
	)
	for _, route := range routes {
		// A model's one route gets every job, as before routes: its
		// provider refuses what it cannot honour.
		if l, ok := route.Limits[job.Model]; len(routes) > 1 && (!ok || !l.Honours(job.Model, job.Mode(), job.Params)) {
			continue
		}
		tried++
		if len(routes) > 1 {
			if ok, wait := r.health.take(route.Name); !ok {
				busy = busy.add(route.Name, wait, nil)
				continue
			}
		}
		op, err := route.Provider.Submit(ctx, job)
		if err == nil {
			r.health.ok(route.Name)
			op.Name = r.opName(route.Name, op.Name)
			return done(op, route.Name), nil
		}
		wait, why, next := moveOn(err)
		if !next && ctx.Err() == nil && !ambiguous(err) {
			// It answered, and refused the customer's job: it is up.
			r.health.ok(route.Name)
		}
		if !next || ctx.Err() != nil || len(routes) == 1 {
			return provider.Operation{}, err
		}
		cool := r.health.failed(route.Name)
		r.logger.Warn("route refused a submit before accepting it: the next route may take it", "route", route.Name,
			"model", job.Model, "task", job.TaskID, "reason", why, "skippedFor", cool.String(), "error", err)
		if wait >= 0 {
			busy = busy.add(route.Name, wait, err)
		} else if refused == nil {
			refused = err
		}
	}
	switch {
	case tried == 0:
		return provider.Operation{}, &NoRouteError{Model: job.Model}
	case busy != nil:
		return provider.Operation{}, busy
	}
	return provider.Operation{}, refused
}

// moveOn classifies a submit's error: whether the next route may have
// the job (the route refused it before accepting it, for a reason of
// its own), why, and the wait a busy route asked for (-1 when it is not
// busy but refuses for good: a retired model, credentials refused).
//
// An ambiguous submit may be running, and billing: never a second job;
// a content-policy or a bad-request refusal is the customer's, refused
// anywhere.
func moveOn(err error) (wait time.Duration, why string, next bool) {
	a := provider.Classify(err)
	switch a.Class {
	case provider.ModelRetired:
		return -1, "model unavailable", true
	case provider.Busy:
		return a.After, "busy", true
	case provider.CredentialsRefused:
		return -1, "credentials refused", true
	}
	return 0, "", false
}

// ambiguous reports whether a submit's error says the job may have
// been accepted.
func ambiguous(err error) bool { return provider.Classify(err).Class == provider.OutcomeUnknown }

// Poll polls the operation on the route its name says, whatever the
// route's health: the job is paid for there.
func (r *Router) Poll(ctx context.Context, name string, job provider.Job) (provider.Operation, error) {
	routeName, op := r.split(name)
	route, ok := r.byName[routeName]
	if !ok {
		if routeName == r.unprefixed {
			// No route carries the generator variables' name any more:
			// an old operation goes to the model's first route.
			if rs := r.routes[job.Model]; len(rs) > 0 {
				route, ok = rs[0], true
			}
		}
		if !ok {
			return provider.Operation{}, fmt.Errorf("operation %s is on route %q, which is no longer configured (%s)", name, routeName, "GEN_ROUTES")
		}
	}
	got, err := route.Provider.Poll(ctx, op, job)
	if err != nil {
		return got, err
	}
	got.Name = r.opName(route.Name, got.Name)
	return done(got, route.Name), nil
}

// Busy is a submit no route took because each was busy or cooling
// down: the workflow waits RetryAfter and submits again.
type Busy struct {
	After time.Duration
	// Routes are the routes tried or skipped, Err the last refusal.
	Routes []string
	Err    error
}

func (b *Busy) add(route string, wait time.Duration, err error) *Busy {
	if b == nil {
		return &Busy{After: wait, Routes: []string{route}, Err: err}
	}
	b.After = min(b.After, wait)
	b.Routes = append(b.Routes, route)
	if err != nil {
		b.Err = err
	}
	return b
}

func (b *Busy) Error() string {
	msg := fmt.Sprintf("every route is busy or cooling down (%s)", strings.Join(b.Routes, ", "))
	if b.Err != nil {
		msg += ": " + b.Err.Error()
	}
	return msg
}

func (b *Busy) Unwrap() error { return b.Err }

// Classify: wait until the soonest a route may be tried again.
func (b *Busy) Classify() provider.Answer {
	return provider.Answer{Class: provider.Busy, After: b.After}
}

// NoRouteError is a job none of its model's routes can honour: the
// routes changed since it was started. It fails, refunded.
type NoRouteError struct{ Model string }

func (e *NoRouteError) Error() string {
	return fmt.Sprintf("no route of %s honours the task's parameters (the routes changed since it started)", e.Model)
}

// Classify: the task fails GENERATION_FAILED, refunded.
func (e *NoRouteError) Classify() provider.Answer { return provider.Answer{Class: provider.Failed} }
