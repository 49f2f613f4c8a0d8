package settings_test

import (
	"strings"
	"testing"

	"github.com/genvideo/gen/shared/settings"
)

func TestRoutes(t *testing.T) {
	const fast, lite = "gen-3.1-fast-generate-001", "gen-3.1-lite-generate-001"
	tests := []struct {
		name string
		vars settings.Vars
		// want is each model's route names, for a valid value.
		want map[string][]string
		// errs is text the error must hold; none for a valid value.
		errs []string
	}{
		{"unset: the generator's route for every model", settings.Vars{settings.Generator: "gemini", settings.GeminiAPIKey: "k"},
			map[string][]string{fast: {"gemini"}, lite: {"gemini"}}, nil},
		{"two vertex projects and the Gemini API", settings.Vars{settings.Routes: `{"routes": [
			{"name": "vertex-a", "kind": "vertex", "project": "p1"},
			{"name": "vertex-b", "kind": "vertex", "project": "p2", "location": "europe-west4"},
			{"name": "gemini", "kind": "gemini", "apiKeySecretArn": "arn:aws:secretsmanager:x"}],
			"models": {"gen-3.1-fast-generate-001": ["vertex-a", "vertex-b", "gemini"]}}`},
			map[string][]string{fast: {"vertex-a", "vertex-b", "gemini"}, lite: {"builtin"}}, nil},
		{"self-hosted first, the default after", settings.Vars{settings.Generator: "vertex", settings.VertexProject: "p",
			settings.Routes: `{"routes": [{"name": "wan", "kind": "openai", "profile": "vllm-omni", "endpoint": "http://gpu:8000",
				"usdPerSecond": 0.02, "models": {"gen-3.1-lite-generate-001": "Wan-AI/Wan2.2-T2V-A14B-Diffusers"}}],
				"models": {"gen-3.1-lite-generate-001": ["wan", "vertex"]}}`},
			map[string][]string{lite: {"wan", "vertex"}, fast: {"vertex"}}, nil},
		{"Gemini Omni for one model (issue 33)", settings.Vars{settings.Routes: `{"routes": [{"name": "omni", "kind": "omni", "apiKey": "AIza-k",
				"models": {"gen-3.1-fast-generate-001": "gemini-omni-1.2-flash"}}],
				"models": {"gen-3.1-fast-generate-001": ["omni"]}}`},
			map[string][]string{fast: {"omni"}, lite: {"builtin"}, "gen-omni-flash-001": {"omni"}}, nil},
		{"our Omni model on every Omni route, in order", settings.Vars{settings.Generator: "gemini", settings.GeminiAPIKey: "k",
			settings.Routes: `{"routes": [{"name": "o1", "kind": "omni-vertex", "project": "p1"}, {"name": "g2", "kind": "gemini", "apiKey": "k"},
				{"name": "o2", "kind": "omni", "apiKey": "AIza-k"}]}`},
			map[string][]string{fast: {"gemini"}, "gen-omni-flash-001": {"o1", "o2"}}, nil},
		{"our Omni model on the omni generator", settings.Vars{settings.Generator: "omni", settings.GeminiAPIKey: "k"},
			map[string][]string{fast: {"omni"}, "gen-omni-flash-001": {"omni"}}, nil},
		{"an omni route without its key", settings.Vars{settings.Routes: `{"routes": [{"name": "omni", "kind": "omni", "profile": "vllm-omni"}]}`},
			nil, []string{`route "omni": apiKey: an omni route needs`, `route "omni": profile: only a openai route`}},
		{"Gemini Omni on Vertex AI", settings.Vars{settings.Routes: `{"routes": [{"name": "omni-v", "kind": "omni-vertex", "project": "p",
				"location": "global", "accessToken": "ya29.k"}], "models": {"gen-3.1-fast-generate-001": ["omni-v"]}}`},
			map[string][]string{fast: {"omni-v"}, lite: {"builtin"}}, nil},
		// Which API a key and a project mean together is not guessed:
		// the kind says it, and the field it does not take is named.
		{"a key and a project on one Omni route", settings.Vars{settings.Routes: `{"routes": [
			{"name": "o", "kind": "omni", "apiKey": "AIza-secret", "project": "p", "location": "global"},
			{"name": "ov", "kind": "omni-vertex", "apiKeySecretArn": "arn:aws:secretsmanager:secret", "project": "p"},
			{"name": "nop", "kind": "omni-vertex", "storageUri": "gs://b"}]}`},
			nil, []string{`route "o": project: only a vertex or omni-vertex route takes it`, `route "o": location: only a vertex or omni-vertex route`,
				`route "ov": apiKey: only a gemini, omni or openai route takes it`,
				`route "nop": project: an omni-vertex route needs the Google Cloud project`, `route "nop": storageUri: only a vertex route`}},
		{"not JSON", settings.Vars{settings.Routes: `routes=a`}, nil, []string{settings.Routes, "want JSON"}},
		{"a key in broken JSON", settings.Vars{settings.Routes: `{"routes": [{"apiKey": secret}]}`}, nil, []string{settings.Routes, "not JSON at byte"}},
		{"unknown field", settings.Vars{settings.Routes: `{"routes": [{"name": "a", "kind": "builtin", "key": "sk-secret"}]}`},
			nil, []string{settings.Routes, "unknown field"}},
		{"bad routes", settings.Vars{settings.Routes: `{"routes": [
			{"name": "A b", "kind": "gemini"},
			{"name": "v", "kind": "vertex", "apiKey": "sk-secret"},
			{"name": "v", "kind": "sora"},
			{"name": "o", "kind": "openai", "profile": "vllm-omni", "usdPerSecond": 1},
			{"name": "sora", "kind": "openai", "apiKey": "sk-secret"},
			{"name": "g", "kind": "gemini", "apiKey": "AIza-secret", "usdPerSecond": 1},
			{"name": "builtin", "kind": "builtin"}],
			"models": {"gen-9": ["v"], "gen-3.1-fast-generate-001": ["v", "nope", "v"], "gen-3.1-lite-generate-001": []}}`},
			nil, []string{"route 1: want a name", "route 1: apiKey: a gemini route needs", `route "v": project: a vertex route needs`,
				`route "v": apiKey: only a gemini, omni or openai route`, `route "v": the name is used twice`, `route "v": kind: want builtin`,
				`route "o": endpoint: a vllm-omni host needs its URL`, `route "sora": profile: an openai route needs its profile`, `route "g": usdPerSecond: only a self-hosted host`,
				`route "builtin": the name is the generator variables'`, `"gen-9" is not one of ours`, `lists "nope", which is no route`,
				`lists "v" twice`, "gen-3.1-lite-generate-001 lists no route"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := settings.NewReader(tt.vars.Lookup)
			p := r.ProviderConfig()
			err := r.Err()
			if len(tt.errs) > 0 {
				if err == nil {
					t.Fatalf("no error, want one naming %v", tt.errs)
				}
				for _, want := range tt.errs {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("error %q does not say %q", err, want)
					}
				}
				if strings.Contains(err.Error(), "secret") {
					t.Errorf("error %q repeats a secret", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			routes := p.ModelRoutes()
			for model, names := range tt.want {
				var got []string
				for _, r := range routes[model] {
					got = append(got, r.Name)
				}
				if strings.Join(got, ",") != strings.Join(names, ",") {
					t.Errorf("routes of %s = %v, want %v", model, got, names)
				}
			}
		})
	}
}

// A route is its backend as the generator variables would say it alone:
// its own project and key, the stack's poll interval and credit price.
func TestRouteProvider(t *testing.T) {
	r := settings.NewReader(settings.Vars{settings.CreditUSD: "0.02", settings.ProviderPollInterval: "5s",
		settings.Routes: `{"routes": [{"name": "wan", "kind": "openai", "profile": "vllm-omni", "endpoint": "http://gpu:8000",
			"apiKey": "k", "usdPerSecond": 0.02, "models": {"gen-3.1-lite-generate-001": "Wan"}}],
			"models": {"gen-3.1-lite-generate-001": ["wan"]}}`}.Lookup)
	p := r.ProviderConfig()
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	got := p.ModelRoutes()["gen-3.1-lite-generate-001"][0]
	want := settings.ProviderConfig{Generator: "openai", OpenAIEndpoint: "http://gpu:8000", OpenAIAPIKey: "k", OpenAIProfile: "vllm-omni",
		OpenAIUSDPerSecond: 0.02, Models: "gen-3.1-lite-generate-001=Wan", PollInterval: p.PollInterval, CreditUSD: 0.02}
	if got.Name != "wan" || got.Provider != want {
		t.Errorf("route = %+v, want wan with %+v", got, want)
	}
	if all := p.AllRoutes(); len(all) != 2 || all[0].Name != "builtin" && all[1].Name != "builtin" {
		t.Errorf("AllRoutes() = %+v, want builtin and wan", all)
	}
}
