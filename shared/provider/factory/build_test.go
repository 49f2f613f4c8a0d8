package factory

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/genvideo/gen/shared/availability/routecheck"
	"github.com/genvideo/gen/shared/catalog"
	"github.com/genvideo/gen/shared/provider"
	"github.com/genvideo/gen/shared/provider/routing"
	"github.com/genvideo/gen/shared/settings"
	"github.com/genvideo/gen/shared/testing/logtest"
)

// builtinGen stands in for the renderer: building a route needs one, and
// nothing here generates.
type builtinGen struct{}

func (builtinGen) Generate(context.Context, provider.Job) (provider.Result, error) {
	return provider.Result{}, nil
}

// Issue 31, defect 1 and its class: every route a model can reach is
// built with a provider at start-up, the generator variables' own
// included, whether GEN_GENERATOR names it or leaves it to its default;
// every model GEN_ROUTES does not list reaches that route too.
func TestEveryRouteIsBuilt(t *testing.T) {
	const openai = `{"name": "wan", "kind": "openai", "profile": "vllm-omni", "endpoint": "http://127.0.0.1:9",
		"usdPerSecond": 0.02, "modes": ["text-to-video"], "models": {"gen-3.1-lite-generate-001": "Wan-AI/Wan2.2-T2V-A14B-Diffusers"}}`
	for _, tt := range []struct {
		name string
		vars settings.Vars
	}{
		{"GEN_GENERATOR unset, the default listed", settings.Vars{
			settings.Routes: `{"routes": [` + openai + `], "models": {"gen-3.1-lite-generate-001": ["wan", "builtin"]}}`}},
		{"GEN_GENERATOR=builtin, the default listed", settings.Vars{settings.Generator: "builtin",
			settings.Routes: `{"routes": [` + openai + `], "models": {"gen-3.1-lite-generate-001": ["wan", "builtin"]}}`}},
		{"GEN_GENERATOR unset, the default only implied", settings.Vars{
			settings.Routes: `{"routes": [` + openai + `], "models": {"gen-3.1-lite-generate-001": ["wan"]}}`}},
		{"Omni on Vertex AI", settings.Vars{settings.Routes: `{"routes": [{"name": "ov", "kind": "omni-vertex", "project": "p",
			"accessToken": "ya29.t", "endpoint": "http://127.0.0.1:9"}], "models": {"gen-3.1-fast-generate-001": ["ov"]}}`}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := settings.NewReader(tt.vars.Lookup)
			p := r.ProviderConfig()
			if err := r.Err(); err != nil {
				t.Fatal(err)
			}
			st, err := FromSettings(t.Context(), p, Options{Builtin: builtinGen{},
				Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
			if err != nil {
				t.Fatalf("FromSettings: %v", err)
			}
			router, ok := st.Provider.(*routing.Router)
			if !ok {
				t.Fatalf("FromSettings built %T, want a *Router", st.Provider)
			}
			for _, id := range catalog.IDs() {
				if len(router.Routes(id)) == 0 {
					t.Errorf("%s reaches no route", id)
				}
				for _, rt := range router.Routes(id) {
					if rt.Provider == nil {
						t.Errorf("%s: route %q was built without a provider", id, rt.Name)
					}
				}
			}
			if err := st.Verify(t.Context()); err != nil {
				t.Errorf("Verify: %v", err)
			}
		})
	}
}

// A route whose kind builds no provider stops the start-up, naming the
// route, rather than failing each of its jobs.
func TestRouteWithoutProviderStopsStartUp(t *testing.T) {
	_, err := build(t.Context(), settings.RouteConfig{Name: "nothing", Provider: settings.ProviderConfig{}}, Options{Builtin: builtinGen{}})
	if err == nil || !strings.Contains(err.Error(), "builds no provider") {
		t.Fatalf("build of a route of no kind = %v, want a start-up error", err)
	}
}

// Issue 33: the openai profile is OpenAI's Sora limits, kept for hosts of
// the same shape; OpenAI's own API was shut down, and a stack built on
// the profile says so as it starts. vllm-omni says nothing of it.
func TestSoraProfileSaysTheAPIShutDown(t *testing.T) {
	for _, tt := range []struct {
		profile string
		warns   bool
	}{{settings.ProfileOpenAI, true}, {settings.ProfileVLLMOmni, false}} {
		var logs logtest.Buffer
		p := settings.ProviderConfig{Generator: settings.GeneratorOpenAI, OpenAIProfile: tt.profile,
			OpenAIEndpoint: "http://127.0.0.1:9", OpenAIUSDPerSecond: 0.01}
		if _, err := FromSettings(t.Context(), p, Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))}); err != nil {
			t.Fatalf("%s: FromSettings: %v", tt.profile, err)
		}
		said := strings.Contains(logs.String(), "shut its Sora video API down on "+settings.SoraShutDown)
		if said != tt.warns {
			t.Errorf("profile %s: the start-up log %q says the shut-down: %v, want %v", tt.profile, logs.String(), said, tt.warns)
		}
	}
}

// TestProbes: every route whose provider checks its models is probed
// once, with the provider models it maps our models to; the built-in
// generator's is not (it asks for none), and Probes builds it not at
// all (the route check function has no renderer).
func TestProbes(t *testing.T) {
	r := settings.NewReader(settings.Vars{settings.Routes: `{"routes": [
		{"name": "gemini", "kind": "gemini", "apiKey": "k", "endpoint": "http://127.0.0.1:9"},
		{"name": "omni", "kind": "omni", "apiKey": "k", "endpoint": "http://127.0.0.1:9"}],
		"models": {"gen-3.1-fast-generate-001": ["gemini", "omni"], "gen-3.1-lite-generate-001": ["gemini", "builtin"]}}`}.Lookup)
	p := r.ProviderConfig()
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	st, err := FromSettings(t.Context(), p, Options{Builtin: builtinGen{}, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	alone, err := Probes(t.Context(), p, Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatalf("Probes without a built-in generator: %v", err)
	}
	for name, probes := range map[string][]routecheck.Probe{"Stack.Probes": st.Probes, "Probes": alone} {
		got := map[string]string{}
		for _, pr := range probes {
			if pr.Checker == nil {
				t.Errorf("%s: route %s without a checker", name, pr.Route)
			}
			got[pr.Route] = pr.Models["gen-3.1-lite-generate-001"]
		}
		want := map[string]string{"gemini": "veo-3.1-lite-generate-001", "omni": "gemini-omni-1.2-flash"}
		if len(got) != len(want) || got["gemini"] != want["gemini"] || got["omni"] != want["omni"] {
			t.Errorf("%s: routes and their lite model %v, want %v", name, got, want)
		}
	}
}
