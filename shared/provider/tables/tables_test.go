package tables_test

import (
	"strings"
	"testing"

	"github.com/genvideo/gen/shared/catalog"
	"github.com/genvideo/gen/shared/params"
	"github.com/genvideo/gen/shared/provider/omni/omnimodels"
	"github.com/genvideo/gen/shared/provider/tables"
	"github.com/genvideo/gen/shared/settings"
)

func routed(t *testing.T, routes string) (settings.ProviderConfig, error) {
	t.Helper()
	r := settings.NewReader(settings.Vars{settings.Routes: routes}.Lookup)
	p := r.ProviderConfig()
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	_, err := tables.Capabilities(p)
	return p, err
}

// A self-hosted text-only model first, Vertex AI after: an image start
// is the second route's; each route's prices hold for the models it
// serves, a self-hosted one at the operator's price.
func TestRoutedCapabilities(t *testing.T) {
	const lite = "gen-3.1-lite-generate-001"
	wan := func(usd string) string {
		return `{"routes": [{"name": "wan", "kind": "openai", "profile": "vllm-omni", "endpoint": "http://gpu:8000",
			"usdPerSecond": ` + usd + `, "modes": ["text-to-video"], "models": {"` + lite + `": "Wan-AI/Wan2.2-T2V-A14B-Diffusers"}},
			{"name": "vertex", "kind": "vertex", "project": "p"}],
			"models": {"` + lite + `": ["wan", "vertex"]}}`
	}
	p, err := routed(t, wan("0.02"))
	if err != nil {
		t.Fatal(err)
	}
	caps, _ := tables.Capabilities(p)
	for _, tt := range []struct {
		kind string
		want string // the routes that honour a default start
	}{{catalog.TextToVideo, "wan,vertex"}, {catalog.ImageToVideo, "vertex"}} {
		r, err := params.ParseJSON(tt.kind, []byte(`{"prompt":"x","model":"`+lite+`","generateAudio":false}`))
		if err != nil {
			t.Fatal(err)
		}
		if err := caps.Apply(&r); err != nil {
			t.Fatalf("%s: Apply = %v", tt.kind, err)
		}
		var got []string
		for _, route := range caps.Routes[lite] {
			if route.Honours(lite, r.Type, r.Params) {
				got = append(got, route.Name)
			}
		}
		if strings.Join(got, ",") != tt.want {
			t.Errorf("%s: routes honouring it %v, want %s", tt.kind, got, tt.want)
		}
	}
	// 8 s of Lite sells for 35 credits = $0.525 silent: $0.10 a second
	// on the GPU loses.
	if _, err := routed(t, wan("0.1")); err == nil || !strings.Contains(err.Error(), `route "wan"`) || !strings.Contains(err.Error(), "below cost") {
		t.Errorf("a self-hosted route priced above the credits = %v, want the route named, below cost", err)
	}
}

// An Omni route for one of our models (issue 33): what Omni cannot
// honour is refused at start, naming the field, before any charge; a
// mapping that sells below cost at GEN_CREDIT_USD stops the start-up.
func TestOmniRoute(t *testing.T) {
	const fast = "gen-3.1-fast-generate-001"
	// Omni on either API: one table, named for its API.
	for _, api := range []struct{ route, backend string }{
		{`"kind": "omni", "apiKey": "AIza-k"`, omnimodels.Backend},
		{`"kind": "omni-vertex", "project": "p", "location": "global"`, omnimodels.VertexBackend},
	} {
		omni := func(model string) string {
			return `{"routes": [{"name": "omni", ` + api.route + `, "models": {"` + fast + `": "` + model + `"}}],
				"models": {"` + fast + `": ["omni"]}}`
		}
		p, err := routed(t, omni("gemini-omni-1.2-flash"))
		if err != nil {
			t.Fatal(err)
		}
		caps, _ := tables.Capabilities(p)
		if got := caps.Routes[fast][0].Backend; got != api.backend {
			t.Errorf("%s: backend %q, want %q", api.route, got, api.backend)
		}
		for _, tt := range []struct {
			kind, body, field string // field "" when taken
		}{
			{catalog.TextToVideo, `{"prompt":"x","model":"` + fast + `","resolution":"1080p","aspectRatio":"9:16","seed":7}`, ""},
			{catalog.TextToVideo, `{"prompt":"x","model":"` + fast + `","sampleCount":2}`, "sampleCount"},
			{catalog.TextToVideo, `{"prompt":"x","model":"` + fast + `","generateAudio":false}`, "generateAudio"},
			{catalog.TextToVideo, `{"prompt":"x","model":"` + fast + `","negativePrompt":"blur"}`, "negativePrompt"},
		} {
			r, err := params.ParseJSON(tt.kind, []byte(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			err = caps.Apply(&r)
			var field string
			if e, ok := err.(*params.Error); ok {
				field = e.Field
			}
			if field != tt.field || (tt.field == "") != (err == nil) {
				t.Errorf("%s: %s: Apply = %v, want field %q refused", api.route, tt.body, err, tt.field)
			}
		}
		if _, err := routed(t, omni("gemini-omni-0.9")); err == nil || !strings.Contains(err.Error(), `route "omni"`) {
			t.Errorf("%s: an unknown Omni model = %v, want the route named", api.route, err)
		}
		r := settings.NewReader(settings.Vars{settings.Routes: omni("gemini-omni-1.2-flash"), settings.CreditUSD: "0.001"}.Lookup)
		cheap := r.ProviderConfig()
		if _, err := tables.Capabilities(cheap); err == nil || !strings.Contains(err.Error(), "below cost") {
			t.Errorf("%s: credits at $0.001 = %v, want below cost", api.route, err)
		}
	}
}

// TestAvailability: each model's routes, in order, with the provider
// model each maps it to (the kind's default, or the route's own
// mapping); the generator variables' route for a model GEN_ROUTES does
// not list; none for the built-in generator.
func TestAvailability(t *testing.T) {
	r := settings.NewReader(settings.Vars{settings.Generator: settings.GeneratorBuiltin, settings.Routes: `{"routes": [
		{"name": "gemini", "kind": "gemini", "apiKey": "k", "models": {"gen-3.1-lite-generate-001": "veo-3.1-lite-generate-preview"}},
		{"name": "vertex", "kind": "vertex", "project": "p"}],
		"models": {"gen-3.1-fast-generate-001": ["vertex", "gemini"], "gen-3.1-lite-generate-001": ["gemini"]}}`}.Lookup)
	p := r.ProviderConfig()
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	got := tables.Availability(p)
	want := map[string]string{
		"gen-3.1-fast-generate-001": "vertex=veo-3.1-fast-generate-001 gemini=veo-3.1-fast-generate-001",
		"gen-3.1-lite-generate-001": "gemini=veo-3.1-lite-generate-preview",
		"gen-3.1-generate-001":      "builtin=",
	}
	for model, w := range want {
		var parts []string
		for _, m := range got[model] {
			parts = append(parts, m.Route+"="+m.ProviderModel)
		}
		if s := strings.Join(parts, " "); s != w {
			t.Errorf("%s: routes %q, want %q", model, s, w)
		}
	}
}
