package httpapi_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/genvideo/gen/shared/catalog"
	"github.com/genvideo/gen/shared/testing/httpapitest"
)

// gone is a service.Availability whose set a test changes.
type gone struct {
	mu     sync.Mutex
	models map[string]bool
}

func (g *gone) Unavailable(context.Context) map[string]bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.models
}

func (g *gone) set(models ...string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.models = map[string]bool{}
	for _, m := range models {
		g.models[m] = true
	}
}

// TestModelUnavailable (issue 33): a model no provider route serves is
// shown unavailable, and every way of starting it is refused 400
// MODEL_UNAVAILABLE, naming the model, before anything is charged or
// counted; a quote is refused alike; once a route serves it again, it
// sells.
func TestModelUnavailable(t *testing.T) {
	const lite = "gen-3.1-lite-generate-001"
	g := &gone{}
	g.set(lite)
	e := newEnv(t, func(cfg *httpapitest.Config) { cfg.Availability = g })
	c := e.caller(10000)

	models := e.get("/api/gen/models", c.Key)
	for _, m := range models.body["models"].([]any) {
		m := m.(map[string]any)
		if want := m["modelId"] != lite; m["available"] != want {
			t.Errorf("model %v: available = %v, want %v", m["modelId"], m["available"], want)
		}
	}

	before := e.state(c.AccountID)
	for _, tt := range []struct {
		name, path, kind string
	}{
		{"text-to-video", "/api/gen/text-to-video", catalog.TextToVideo},
		{"image-to-video", "/api/gen/image-to-video", catalog.ImageToVideo},
		{"quote", "/api/gen/quote/text-to-video", catalog.TextToVideo},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := e.postStart(tt.path, tt.kind, c.Key, map[string]string{"prompt": "a lighthouse", "model": lite})
			wantError(t, r, 400, "MODEL_UNAVAILABLE")
			if r.body["field"] != "model" || r.body["value"] != lite {
				t.Errorf("field, value = %v, %v; want model, %s", r.body["field"], r.body["value"], lite)
			}
			if msg, _ := r.body["message"].(string); !strings.Contains(msg, lite) || !strings.Contains(msg, "not served") {
				t.Errorf("message %q does not say which model is not served", msg)
			}
		})
	}
	t.Run("openai create", func(t *testing.T) {
		r := e.bearer("POST", "/openai/v1/videos", c.Key, "application/json",
			strings.NewReader(`{"prompt":"a lighthouse","model":"`+lite+`"}`))
		wantOpenAIError(t, r, 400, "invalid_request_error", "model")
		if code, _ := r.body["error"].(map[string]any)["code"].(string); code != "model_unavailable" {
			t.Errorf("error.code = %q, want model_unavailable", code)
		}
	})
	// Another model still sells.
	if r := e.postStart("/api/gen/quote/text-to-video", catalog.TextToVideo, c.Key, map[string]string{"prompt": "x"}); r.status != 200 {
		t.Errorf("quote of the default model: %d %s", r.status, r.raw)
	}
	e.assertUnchanged(before, c.AccountID, "starts of an unavailable model")

	g.set()
	r := e.postStart("/api/gen/text-to-video", catalog.TextToVideo, c.Key, map[string]string{"prompt": "a lighthouse", "model": lite})
	if r.status != 200 && r.status != 201 && r.status != 202 {
		t.Fatalf("start once a route serves it again: %d %s", r.status, r.raw)
	}
	if after := e.state(c.AccountID); after.Credits >= before.Credits || len(after.Tasks) != len(before.Tasks)+1 {
		t.Errorf("start once it sells again: credits %d -> %d, tasks %d -> %d; want charged, one task",
			before.Credits, after.Credits, len(before.Tasks), len(after.Tasks))
	}
}
