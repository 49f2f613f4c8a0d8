package routing

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/genvideo/gen/shared/catalog"
	"github.com/genvideo/gen/shared/params"
	"github.com/genvideo/gen/shared/provider"
	"github.com/genvideo/gen/shared/provider/capability"
	"github.com/genvideo/gen/shared/provider/providerhttp"
	"github.com/genvideo/gen/shared/task"
)

const model = "gen-3.1-fast-generate-001"

// stub is a route's provider at the boundary: it answers each
// submit with the next of its errors (nil: accepted), and counts.
type stub struct {
	mu      sync.Mutex
	errs    []error
	submits int
	polls   []string
}

func (p *stub) Submit(context.Context, provider.Job) (provider.Operation, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.submits++
	if len(p.errs) > 0 {
		err := p.errs[0]
		if len(p.errs) > 1 {
			p.errs = p.errs[1:]
		}
		if err != nil {
			return provider.Operation{}, err
		}
	}
	return provider.Operation{Name: "projects/p/operations/1"}, nil
}

func (p *stub) Poll(_ context.Context, name string, _ provider.Job) (provider.Operation, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.polls = append(p.polls, name)
	return provider.Operation{Name: name, Done: true, Billing: provider.Billing{ProviderModel: "veo", CostUSD: 0.4}}, nil
}

type coded string

func (c coded) Error() string { return "refused: " + string(c) }
func (c coded) Classify() provider.Answer {
	switch string(c) {
	case task.FailModelUnavailable:
		return provider.Answer{Class: provider.ModelRetired}
	case task.FailContentPolicy:
		return provider.Answer{Class: provider.Refused}
	}
	return provider.Answer{Class: provider.Invalid}
}

func limits() capability.Limits { return capability.Builtin().Models[model] }

func route(name string, p provider.Provider, l capability.Limits) *Route {
	return &Route{Name: name, Provider: p, Limits: map[string]capability.RouteLimits{model: {Name: name, Backend: name, Limits: l}}}
}

func job() provider.Job {
	p := params.Parameters{SampleCount: 1, DurationSeconds: 8, AspectRatio: "16:9", Resolution: "720p",
		GenerateAudio: true, EnhancePrompt: true, PersonGeneration: "allow_adult"}
	return provider.Job{TaskID: "t1", Type: catalog.TextToVideo, Model: model, Params: p}
}

// clock is the health memory's fake clock.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func newRouter(c *clock, routes ...*Route) *Router {
	return New(Config{Models: map[string][]*Route{model: routes}, Unprefixed: "vertex", Now: c.now})
}

// A refusal of the route's own moves the job to the next route, whose
// name the operation carries, so that its polls go there; a refusal
// that may have started a job, or that is the customer's, does not.
func TestSubmitFailover(t *testing.T) {
	busy := &providerhttp.BusyError{Err: errors.New("503 UNAVAILABLE"), After: time.Second}
	tests := []struct {
		name string
		err  error
		// moves: the second route gets the job; else the error is
		// answered and the second route sees nothing.
		moves bool
	}{
		{"503 or 429 past its retries", busy, true},
		{"retired model", coded(task.FailModelUnavailable), true},
		{"ambiguous submit", &providerhttp.OutcomeUnknownError{Err: errors.New("connection reset")}, false},
		{"content policy", coded(task.FailContentPolicy), false},
		{"bad request", coded(task.FailGeneration), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			first, second := &stub{errs: []error{tt.err}}, &stub{}
			r := newRouter(&clock{time.Unix(0, 0)}, route("vertex", first, limits()), route("gemini", second, limits()))
			op, err := r.Submit(context.Background(), job())
			if !tt.moves {
				if err != tt.err || second.submits != 0 {
					t.Fatalf("Submit = %v with %d submits on the second route, want %v and none", err, second.submits, tt.err)
				}
				return
			}
			if err != nil || first.submits != 1 || second.submits != 1 {
				t.Fatalf("Submit = %v, submits %d and %d, want the job on the second route", err, first.submits, second.submits)
			}
			if op.Name != "route:gemini:projects/p/operations/1" {
				t.Errorf("operation %q, want the second route's name in it", op.Name)
			}
			done, err := r.Poll(context.Background(), op.Name, job())
			if err != nil || len(second.polls) != 1 || second.polls[0] != "projects/p/operations/1" || len(first.polls) != 0 {
				t.Fatalf("Poll = %v, polls %v and %v, want the provider's name polled on the second route", err, first.polls, second.polls)
			}
			if done.Billing != (provider.Billing{Route: "gemini", ProviderModel: "veo", CostUSD: 0.4}) {
				t.Errorf("billing %+v, want the route named and the provider's billing kept", done.Billing)
			}
		})
	}
}

// An operation name without a prefix (from before routes) polls on the
// generator variables' route; a route that cannot honour the job is not
// asked.
func TestPollUnprefixedAndHonours(t *testing.T) {
	narrow := limits()
	narrow.MaxSampleCount = 0
	first, second := &stub{}, &stub{}
	r := newRouter(&clock{time.Unix(0, 0)}, route("gemini", first, narrow), route("vertex", second, limits()))
	if _, err := r.Poll(context.Background(), "projects/p/operations/old", job()); err != nil || len(second.polls) != 1 {
		t.Fatalf("Poll = %v, polls %v, want the old operation on the vertex route", err, second.polls)
	}
	op, err := r.Submit(context.Background(), job())
	if err != nil || first.submits != 0 || op.Name != "projects/p/operations/1" {
		t.Fatalf("Submit = %+v, %v with %d submits on the narrow route, want the vertex route's operation, unprefixed", op, err, first.submits)
	}
}

// A route that failed is skipped by later starts for the cool-down, one
// start probes it once it is over (the others still skip it), and an
// accepted probe makes it healthy; each failure in a row doubles the
// wait. With every route cooling the router answers busy.
func TestHealthMemory(t *testing.T) {
	c := &clock{time.Unix(0, 0)}
	down := &providerhttp.BusyError{Err: errors.New("503"), After: time.Second}
	first, second := &stub{errs: []error{down, down, nil}}, &stub{}
	r := newRouter(c, route("vertex", first, limits()), route("gemini", second, limits()))
	submit := func() {
		t.Helper()
		if _, err := r.Submit(context.Background(), job()); err != nil {
			t.Fatal(err)
		}
	}
	submit() // fails over
	for range 20 {
		c.t = c.t.Add(time.Second)
		submit()
	}
	if first.submits != 1 || second.submits != 21 {
		t.Fatalf("submits %d and %d, want the failing route tried once in its cool-down", first.submits, second.submits)
	}
	c.t = time.Unix(0, 0).Add(Cooldown)
	submit() // the probe, refused again: now a minute
	submit()
	if first.submits != 2 {
		t.Fatalf("%d submits on the failing route after its cool-down, want one probe", first.submits)
	}
	c.t = c.t.Add(Cooldown)
	submit()
	if first.submits != 2 {
		t.Fatalf("the route was tried within its second, doubled, cool-down")
	}
	c.t = c.t.Add(Cooldown)
	submit() // the probe, accepted
	submit()
	if first.submits != 4 || second.submits != 24 {
		t.Fatalf("submits %d and %d, want the route healthy again after an accepted probe", first.submits, second.submits)
	}

	// A probe refused for the customer's sake (a content-policy or a
	// bad request) shows the route up: healthy again.
	first.errs = []error{down, coded(task.FailContentPolicy), nil}
	c.t = c.t.Add(time.Hour)
	submit() // refused: cooling down
	c.t = c.t.Add(Cooldown)
	if _, err := r.Submit(context.Background(), job()); err == nil {
		t.Fatal("the probe's content-policy refusal was not answered")
	}
	submit()
	if first.submits != 7 {
		t.Fatalf("%d submits on the route, want it healthy after it answered a refusal of the customer's", first.submits)
	}

	// Every route cooling: busy, with the soonest wait.
	a, b := &stub{errs: []error{down}}, &stub{errs: []error{down}}
	r = newRouter(c, route("vertex", a, limits()), route("gemini", b, limits()))
	_, err := r.Submit(context.Background(), job())
	if got := provider.Classify(err); got.Class != provider.Busy || got.After != time.Second {
		t.Fatalf("Submit = %v, want busy after the providers' hint", err)
	}
	_, err = r.Submit(context.Background(), job())
	if got := provider.Classify(err); got.Class != provider.Busy || got.After != Cooldown || a.submits != 1 || b.submits != 1 {
		t.Fatalf("Submit = %v (submits %d, %d), want busy for the cool-down without a submit", err, a.submits, b.submits)
	}
	if !strings.Contains(err.Error(), "vertex, gemini") {
		t.Errorf("busy error %q does not name the routes", err)
	}
}

// TestExtensionStaysOnItsRoute: an extension goes to the route that made
// its video, though an earlier route would take it, and is never handed
// to another when that route refuses it for a reason of its own; a
// video whose route is gone fails the job without asking any.
func TestExtensionStaysOnItsRoute(t *testing.T) {
	extension := func(route string) provider.Job {
		j := job()
		j.Type = catalog.VideoExtension
		j.Video = &provider.SourceVideo{Path: "/tmp/v.mp4", URI: "files/x", Route: route}
		return j
	}
	first, second := &stub{}, &stub{}
	r := newRouter(&clock{time.Unix(0, 0)}, route("vertex", first, limits()), route("gemini", second, limits()))
	op, err := r.Submit(context.Background(), extension("gemini"))
	if err != nil || first.submits != 0 || second.submits != 1 || op.Name != "route:gemini:projects/p/operations/1" {
		t.Fatalf("Submit = %q, %v; submits %d and %d, want the job on its route alone", op.Name, err, first.submits, second.submits)
	}

	busy := &stub{errs: []error{coded(task.FailModelUnavailable)}}
	other := &stub{}
	r = newRouter(&clock{time.Unix(0, 0)}, route("vertex", busy, limits()), route("gemini", other, limits()))
	if _, err := r.Submit(context.Background(), extension("vertex")); err == nil || other.submits != 0 {
		t.Fatalf("Submit = %v with %d submits elsewhere, want its route's refusal and no other route asked", err, other.submits)
	}

	var none *NoRouteError
	if _, err := r.Submit(context.Background(), extension("gone")); !errors.As(err, &none) {
		t.Errorf("Submit of a video whose route is gone = %v, want a *NoRouteError", err)
	}
}
