package devstack

import (
	"github.com/genvideo/gen/shared/catalog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/genvideo/gen/shared/settings"
	"github.com/genvideo/gen/shared/store"
	"github.com/genvideo/gen/shared/testing/omnitest"
	"github.com/genvideo/gen/shared/testing/openaitest"
	"github.com/genvideo/gen/shared/testing/storetest"
	"github.com/genvideo/gen/shared/testing/veotest"
)

// retirable is what the test asks of a strict fake: stop serving a
// model while the stack runs, and count the jobs it accepted.
type retirable interface {
	SetRetired(models ...string)
	Accepted(text string) int
}

// TestModelAvailability (issue 33): once every route of a model stops
// listing the provider model it maps the model to, and the routes are
// checked again, GET models shows it unavailable and its starts (the
// contract's and the OpenAI facade's) are refused 400 before any charge:
// balance unchanged, no task, no job at a provider. While one route
// still lists it, it sells. Once a route lists it again and the check
// reruns, it sells again and completes.
func TestModelAvailability(t *testing.T) {
	localOnly(t, "the test retires models at the stack's fakes and reruns its check")
	const fast = "gen-3.1-fast-generate-001"
	type backend struct {
		fakes  []retirable
		models []string // the provider model each fake serves fast as, in route order
		p      settings.ProviderConfig
		// gone are the models unavailable once the last route lacks
		// fast's: those it maps to the same provider model too.
		gone []string
	}
	veoFake := func(t *testing.T) (*veotest.Server, string) {
		return fakeAt(t, veotest.Config{Delay: time.Second})
	}
	serve := func(t *testing.T, h http.Handler) string {
		srv := httptest.NewServer(h)
		t.Cleanup(srv.Close)
		return srv.URL
	}
	for _, tt := range []struct {
		name  string
		build func(t *testing.T) backend
	}{
		{"gemini", func(t *testing.T) backend {
			f, url := veoFake(t)
			return backend{[]retirable{f}, []string{"veo-3.1-fast-generate-001"}, providerSettings(settings.GeneratorGemini, url), []string{fast}}
		}},
		{"openai", func(t *testing.T) backend {
			f := openaitest.New(openaitest.Config{Key: fakeKey, Polls: 1})
			// Lite is sora-2 too.
			return backend{[]retirable{f}, []string{"sora-2"}, providerSettings(settings.GeneratorOpenAI, serve(t, f)),
				[]string{fast, "gen-3.1-lite-generate-001"}}
		}},
		{"omni", func(t *testing.T) backend {
			f := omnitest.New(omnitest.Config{Key: fakeKey, Polls: 1})
			p := readRoutes(t, `{"routes": [{"name": "omni", "kind": "omni", "apiKey": "`+fakeKey+`", "endpoint": "`+serve(t, f)+`"}],
				"models": {"`+fast+`": ["omni"]}}`)
			// Our Omni model is on the same provider model.
			return backend{[]retirable{f}, []string{"gemini-omni-1.2-flash"}, p, []string{fast, catalog.OmniFlashID}}
		}},
		{"two routes", func(t *testing.T) backend {
			// Two Gemini API keys: the same defaults on both routes, so
			// that the second honours what the first would have.
			first, firstURL := veoFake(t)
			second, secondURL := veoFake(t)
			p := routedSettings(t, geminiRoute("gemini-a", firstURL)+","+geminiRoute("gemini-b", secondURL), "gemini-a", "gemini-b")
			return backend{[]retirable{first, second}, []string{"veo-3.1-fast-generate-001", "veo-3.1-fast-generate-001"}, p, []string{fast}}
		}},
	} {
		// Not parallel: the omni route's stack offers our Omni model,
		// and the catalog is the process's.
		t.Run(tt.name, func(t *testing.T) {
			b := tt.build(t)
			e := startEnv(t, "", func(c *Config) { c.Provider = b.p })
			k := e.key(10000, store.KeyLimits{})
			check := func() {
				t.Helper()
				if err := e.stack.CheckModels(t.Context()); err != nil {
					t.Fatalf("CheckModels: %v", err)
				}
			}
			available := func() map[string]any {
				t.Helper()
				r := e.do(http.MethodGet, "/api/gen/models", k.APIKey, "", nil)
				out := map[string]any{}
				for _, m := range r.body["models"].([]any) {
					m := m.(map[string]any)
					out[str(m["modelId"])] = m["available"]
				}
				return out
			}
			start := func(prompt string) response {
				t.Helper()
				return e.postJSON("/api/gen/text-to-video", k.APIKey, `{"prompt":"`+prompt+`","model":"`+fast+`","durationSeconds":8}`)
			}

			// Every route but the last stops listing the model: the last
			// one still serves it, and it sells.
			for i, f := range b.fakes[:len(b.fakes)-1] {
				f.SetRetired(b.models[i])
			}
			check()
			if got := available(); got[fast] != true {
				t.Fatalf("with a route still serving %s: available %v, want true", fast, got[fast])
			}

			// The last one too: unavailable, and refused before any charge.
			last := b.fakes[len(b.fakes)-1]
			last.SetRetired(b.models[len(b.models)-1])
			check()
			got := available()
			for model, a := range got {
				if want := !slices.Contains(b.gone, model); a != want {
					t.Errorf("GET models: %s available %v, want %v", model, a, want)
				}
			}
			before := e.balance(k.AccountID)
			r := start("refused while gone")
			if r.status != http.StatusBadRequest || str(r.body["error"]) != "MODEL_UNAVAILABLE" || str(r.body["field"]) != "model" ||
				!strings.Contains(str(r.body["message"]), fast) {
				t.Errorf("start of an unavailable model = %d %s, want 400 MODEL_UNAVAILABLE naming the model", r.status, r.raw)
			}
			oa := e.doWith(http.MethodPost, "/openai/v1/videos", "", "application/json",
				strings.NewReader(`{"prompt":"refused while gone","model":"`+fast+`"}`), http.Header{"Authorization": {"Bearer " + k.APIKey}})
			if code, _ := oa.body["error"].(map[string]any)["code"].(string); oa.status != http.StatusBadRequest || code != "model_unavailable" {
				t.Errorf("OpenAI create of an unavailable model = %d %s, want 400 model_unavailable", oa.status, oa.raw)
			}
			if got := e.balance(k.AccountID); got != before {
				t.Errorf("balance after refused starts = %d, want %d", got, before)
			}
			if _, n, err := e.store.Tasks(t.Context(), k.AccountID, store.TaskQuery{Limit: 10}); err != nil || n != 0 {
				t.Errorf("tasks after refused starts: %d (%v), want none", n, err)
			}
			for i, f := range b.fakes {
				if n := f.Accepted("refused while gone"); n != 0 {
					t.Errorf("route %d accepted %d jobs of a refused start", i, n)
				}
			}

			// The last route lists it again: once checked, it sells, and
			// the start completes there, charged once.
			last.SetRetired()
			check()
			if got := available(); got[fast] != true {
				t.Fatalf("once a route serves %s again: available %v, want true", fast, got[fast])
			}
			r = start("sold again")
			if r.status != http.StatusAccepted {
				t.Fatalf("start once served again = %d %s, want 202", r.status, r.raw)
			}
			done := waitTask(t, e, str(r.body["taskId"]), time.Minute)
			if done.Status != "completed" {
				t.Fatalf("task ended %s: %+v", done.Status, done.Failure)
			}
			if n := last.Accepted("sold again"); n != 1 {
				t.Errorf("the route serving it again accepted %d jobs, want 1", n)
			}
			if got, want := e.balance(k.AccountID), before-int64(done.CreditsCost); got != want {
				t.Errorf("balance after the completed start = %d, want %d", got, want)
			}
			storetest.CheckInvariants(t, e.stack.Store, k.AccountID)
		})
	}
}
