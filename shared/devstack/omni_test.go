package devstack

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/genvideo/gen/shared/catalog"
	"github.com/genvideo/gen/shared/provider/render"
	"github.com/genvideo/gen/shared/settings"
	"github.com/genvideo/gen/shared/store"
	"github.com/genvideo/gen/shared/testing/omnitest"
)

// TestOmniRoute: one of our models routed to Gemini Omni with
// GEN_ROUTES (issue 33), on the Gemini API or on Vertex AI, completes
// against the strict fake with the parameters Google documents reaching
// that API, charged our price; a start Omni cannot honour is a 400
// before any charge, and reaches nothing.
func TestOmniRoute(t *testing.T) {
	const fast = "gen-3.1-fast-generate-001"
	for _, tt := range []struct {
		name string
		// route is the route's kind and credentials.
		route string
		// api is the fake's name of the API the start must reach;
		// delivery what it must ask.
		api, delivery string
	}{
		{"Gemini API", `"kind": "omni", "apiKey": "` + fakeKey + `"`, omnitest.Gemini, ""},
		{"Vertex AI", `"kind": "omni-vertex", "project": "proj-1", "location": "us-central1", "accessToken": "` + fakeToken + `"`,
			omnitest.Vertex, "inline"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fake := omnitest.New(omnitest.Config{Key: fakeKey, Token: fakeToken, Project: "proj-1", Polls: 1})
			srv := httptest.NewServer(fake)
			t.Cleanup(srv.Close)
			e := startEnv(t, "", func(c *Config) {
				r := settings.NewReader(settings.Vars{settings.ProviderPollInterval: "1s",
					settings.Routes: `{"routes": [{"name": "omni", ` + tt.route + `, "endpoint": "` + srv.URL + `",
						"models": {"` + fast + `": "gemini-omni-1.2-flash"}}], "models": {"` + fast + `": ["omni"]}}`}.Lookup)
				c.Provider = r.ProviderConfig()
				if err := r.Err(); err != nil {
					t.Fatal(err)
				}
			})
			k := e.key(1000, store.KeyLimits{})

			refused := e.postJSON("/api/gen/text-to-video", k.APIKey, `{"prompt":"two at once","model":"`+fast+`","sampleCount":2}`)
			if refused.status != http.StatusBadRequest {
				t.Errorf("two samples on Omni = %d %s, want 400", refused.status, refused.raw)
			}
			if got := e.accountState(k); got.balance != 1000 || got.tasks != 0 {
				t.Errorf("after a refused start: balance %d, %d tasks; want 1000 and none", got.balance, got.tasks)
			}

			r := e.postJSON("/api/gen/text-to-video", k.APIKey,
				`{"prompt":"a lighthouse at dusk","model":"`+fast+`","durationSeconds":6,"aspectRatio":"9:16","resolution":"1080p","seed":42}`)
			if r.status != http.StatusAccepted {
				t.Fatalf("start = %d: %s", r.status, r.raw)
			}
			done := e.wait(k.APIKey, str(r.body["taskId"]))
			if str(done.body["status"]) != "completed" || str(done.body["route"]) != "omni" || str(done.body["providerModel"]) != "gemini-omni-1.2-flash" {
				t.Errorf("status %s, want completed on route omni, model gemini-omni-1.2-flash", done.raw)
			}
			if got := e.balance(k.AccountID); got != 1000-190 {
				t.Errorf("balance = %d, want %d (Fast with audio)", got, 1000-190)
			}
			subs := fake.Submits()
			if len(subs) != 1 {
				t.Fatalf("the fake received %d submits, want 1 (the refused start reaches nothing)", len(subs))
			}
			s := subs[0]
			want := omnitest.Format{Type: "video", AspectRatio: "9:16", Resolution: "1080p", Duration: "6s", Delivery: tt.delivery}
			if s.API != tt.api || s.Format != want || !s.Background || s.Task != "text_to_video" || s.Seed == nil || *s.Seed != 42 ||
				s.Prompt != "a lighthouse at dusk" {
				t.Errorf("the fake received %+v (format %+v), want on %s %+v, background, text_to_video, seed 42", s, s.Format, tt.api, want)
			}

			// Our own Omni model is offered where a route serves Omni,
			// goes to that route without being listed, and is charged
			// its price, audio always.
			models := e.do(http.MethodGet, "/api/gen/models", k.APIKey, "", nil)
			if !strings.Contains(string(models.raw), `"modelId":"`+catalog.OmniFlashID+`"`) {
				t.Fatalf("/models lacks %s: %s", catalog.OmniFlashID, models.raw)
			}
			r = e.postJSON("/api/gen/text-to-video", k.APIKey, `{"prompt":"a lighthouse, ours","model":"`+catalog.OmniFlashID+`"}`)
			if r.status != http.StatusAccepted || num(r.body["creditsUsed"]) != 60 {
				t.Fatalf("start of %s = %d %s, want 202 charged 60", catalog.OmniFlashID, r.status, r.raw)
			}
			done = e.wait(k.APIKey, str(r.body["taskId"]))
			if str(done.body["status"]) != "completed" || str(done.body["route"]) != "omni" || str(done.body["providerModel"]) != "gemini-omni-1.2-flash" {
				t.Errorf("status %s, want completed on route omni, model gemini-omni-1.2-flash", done.raw)
			}
			if got := e.balance(k.AccountID); got != 1000-190-60 {
				t.Errorf("balance = %d, want %d", got, 1000-190-60)
			}
		})
	}
}

// TestOmniREADMEWalkThrough runs the README's walk-through, as a reader
// pastes it, with GEN_GENERATOR=omni and omni-vertex against the strict
// fake (rendering with the built-in generator, so that its probes of the
// video hold): every start completes or is refused at start, uncharged,
// naming the field Omni cannot honour; Google's API refuses nothing.
func TestOmniREADMEWalkThrough(t *testing.T) {
	r, err := render.New(render.Config{})
	if err != nil {
		t.Fatal(err)
	}
	for _, api := range []string{settings.GeneratorOmni, settings.GeneratorOmniVertex} {
		t.Run(api, func(t *testing.T) {
			fake := omnitest.New(omnitest.Config{Key: fakeKey, Token: fakeToken, Project: "demo-project", Polls: 1, Renderer: r})
			srv := httptest.NewServer(fake)
			t.Cleanup(srv.Close)
			e := startEnv(t, "", func(c *Config) { c.Provider = providerSettings(api, srv.URL) })
			checkProviderWalkThrough(t, e, []string{"sampleCount", "url"})
			for _, s := range fake.Submits() {
				if s.Status != http.StatusOK {
					t.Errorf("the API refused a submit (%d): %+v", s.Status, s)
				}
			}
		})
	}
}
