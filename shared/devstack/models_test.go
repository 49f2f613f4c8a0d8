package devstack

import (
	"context"
	"encoding/json"
	"fmt"
	"image/color"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/genvideo/gen/shared/settings"
	"github.com/genvideo/gen/shared/store"
	"github.com/genvideo/gen/shared/testing/openaitest"
	"github.com/genvideo/gen/shared/testing/storetest"
)

// declaredWan is GEN_MODELS and GEN_ROUTES as an operator offering a
// Wan on their own GPU writes them: a model of their own, priced in
// credits, routed to a vLLM-Omni host at usdPerSecond.
func declaredWan(t *testing.T, hostURL string, usdPerSecond float64) (settings.ProviderConfig, error) {
	t.Helper()
	r := settings.NewReader(settings.Vars{
		settings.ProviderPollInterval: "1s",
		settings.DeclaredModels: `{"models": [{"modelId": "wan-2.2-720p", "name": "Wan 2.2 (720p)",
			"description": "Open model on our own GPU.", "capabilities": ["text-to-video"], "resolutions": ["720p"],
			"pricing": {"creditsPerVideo": 40, "creditsPerVideoNoAudio": 30}}]}`,
		settings.Routes: fmt.Sprintf(`{"routes": [{"name": "gpu", "kind": "openai", "profile": "vllm-omni", "endpoint": %q,
			"usdPerSecond": %g, "models": {"wan-2.2-720p": "Wan-AI/Wan2.2-T2V-A14B-Diffusers"}}],
			"models": {"wan-2.2-720p": ["gpu"]}}`, hostURL, usdPerSecond),
	}.Lookup)
	p := r.ProviderConfig()
	return p, r.Err()
}

// TestDeclaredModel (issue 33): a model the operator declares in
// GEN_MODELS, routed to an OpenAI-shaped host, is listed with its price
// and limits, quoted, started (on the contract's API and the OpenAI
// facade), completed on the host with the host's model id, and charged
// as declared; the contract's three stay listed; the playground offers
// it. Not parallel: the catalog is the process's.
func TestDeclaredModel(t *testing.T) {
	gpu := openaitest.New(openaitest.Config{Profile: settings.ProfileVLLMOmni, Polls: 1})
	srv := httptest.NewServer(gpu)
	t.Cleanup(srv.Close)
	p, err := declaredWan(t, srv.URL, 0.02)
	if err != nil {
		t.Fatal(err)
	}
	e := startEnv(t, "", func(c *Config) { c.Provider = p })
	k := e.key(1000, store.KeyLimits{})

	models := e.do(http.MethodGet, "/api/gen/models", k.APIKey, "", nil)
	var listed []string
	var wan map[string]any
	for _, m := range models.body["models"].([]any) {
		m := m.(map[string]any)
		listed = append(listed, str(m["modelId"]))
		if m["modelId"] == "wan-2.2-720p" {
			wan = m
		}
	}
	if got := strings.Join(listed, " "); got != "gen-3.1-generate-001 gen-3.1-fast-generate-001 gen-3.1-lite-generate-001 wan-2.2-720p" {
		t.Fatalf("models listed %s", got)
	}
	pricing, _ := json.Marshal(wan["pricing"])
	if wan["name"] != "Wan 2.2 (720p)" || string(pricing) != `{"creditsPerVideo":40,"creditsPerVideoNoAudio":30}` {
		t.Errorf("the declared model is listed as %v", wan)
	}
	limits, _ := wan["limits"].(map[string]any)
	if limits == nil || fmt.Sprint(limits["modes"]) != "[text-to-video]" {
		t.Errorf("the declared model's limits are %v, want its host's for text-to-video", wan["limits"])
	}

	q := e.postJSON("/api/gen/quote/text-to-video", k.APIKey, `{"prompt": "a lantern", "model": "wan-2.2-720p"}`)
	if q.status != http.StatusOK || num(q.body["creditsRequired"]) != 30 {
		t.Errorf("quote = %d %s, want 30 credits (the host makes no audio)", q.status, q.raw)
	}
	// What the host cannot honour is refused before any charge.
	if r := e.postJSON("/api/gen/text-to-video", k.APIKey, `{"prompt": "a lantern", "model": "wan-2.2-720p", "resolution": "1080p"}`); r.status != http.StatusBadRequest {
		t.Errorf("a 1080p start = %d %s, want 400", r.status, r.raw)
	}
	if r := e.postForm("/api/gen/image-to-video", k.APIKey, map[string]string{"prompt": "a lantern", "model": "wan-2.2-720p"},
		map[string][]byte{"image": testImage(t, 640, 360, color.RGBA{200, 40, 40, 255}, color.RGBA{20, 20, 220, 255})}); r.status != http.StatusBadRequest {
		t.Errorf("an image start of a text-only model = %d %s, want 400", r.status, r.raw)
	}
	if b := e.balance(k.AccountID); b != 1000 {
		t.Fatalf("balance %d after refusals, want 1000", b)
	}

	r := e.postJSON("/api/gen/text-to-video", k.APIKey, `{"prompt": "a declared lantern", "model": "wan-2.2-720p"}`)
	if r.status != http.StatusAccepted || num(r.body["creditsUsed"]) != 30 {
		t.Fatalf("start = %d %s, want 202 charged 30", r.status, r.raw)
	}
	done := waitTask(t, e, str(r.body["taskId"]), time.Minute)
	if done.Status != "completed" || done.Model != "wan-2.2-720p" {
		t.Fatalf("task ended %s on %s (%+v)", done.Status, done.Model, done.Failure)
	}
	facade := e.sendJSON(jsonOp{id: "openaiCreateVideo", method: http.MethodPost, path: "/openai/v1/videos"}, k.APIKey,
		`{"prompt": "a declared lantern, again", "model": "wan-2.2-720p", "seconds": "4"}`)
	if facade.status != http.StatusOK {
		t.Fatalf("facade create = %d %s", facade.status, facade.raw)
	}
	if done := waitTask(t, e, str(facade.body["id"]), time.Minute); done.Status != "completed" {
		t.Fatalf("facade task ended %s (%+v)", done.Status, done.Failure)
	}
	for _, s := range gpu.Submits() {
		if s.Model != "Wan-AI/Wan2.2-T2V-A14B-Diffusers" {
			t.Errorf("the host was asked for model %q, want the route's", s.Model)
		}
	}
	if n := len(gpu.Submits()); n != 2 {
		t.Errorf("%d jobs on the host, want 2", n)
	}
	if b := e.balance(k.AccountID); b != 1000-30-30 {
		t.Errorf("balance %d, want %d: charged as declared", b, 1000-60)
	}
	page := string(e.do(http.MethodGet, "/playground/limits.json", "", "", nil).raw)
	if !strings.Contains(page, `"modelId":"wan-2.2-720p"`) {
		t.Errorf("the playground's limits lack the declared model: %s", page)
	}
	storetest.CheckInvariants(t, e.stack.Store, k.AccountID)
}

// TestDeclaredModelBelowCost: a declared model whose route's video
// costs more than its price stops start-up, naming the model and the
// setting, never a key.
func TestDeclaredModelBelowCost(t *testing.T) {
	p, err := declaredWan(t, "http://gpu.invalid:8000", 0.1)
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{DataDir: t.TempDir(), Provider: p}
	e2eGenerator(t, &cfg)
	s, err := New(context.Background(), cfg)
	if err == nil {
		s.Close()
		t.Fatal("the stack started selling wan-2.2-720p below its cost")
	}
	for _, want := range []string{"wan-2.2-720p", "below cost", settings.CreditUSD} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}
