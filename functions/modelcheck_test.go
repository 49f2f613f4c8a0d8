package functions_test

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/genvideo/gen/shared/testing/veotest"
)

// testModelCheck (issue 33): the hourly model check asks the route (the
// Gemini API, on the strict fake, which no longer serves Lite's model)
// which models it serves and writes what it found; the models function,
// which runs no provider, then shows Lite unavailable and the others
// available.
func testModelCheck(t *testing.T, h *harness) {
	const key = "AIza-functions-fake"
	fake := veotest.New(veotest.Config{APIKey: key, Retired: []string{"veo-3.1-lite-generate-001"}})
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	env := []string{"GEN_GENERATOR=gemini", "GEN_GEMINI_API_KEY=" + key, "GEN_GEMINI_ENDPOINT=" + srv.URL}

	var report struct{ Routes []string }
	stepResult(t, h.start(t, "model-check", env...).Invoke(t, readEvent(t, "model-check")), &report)
	if !slices.Equal(report.Routes, []string{"gemini"}) {
		t.Fatalf("model-check checked %v, want the gemini route", report.Routes)
	}
	var body struct {
		Models []struct {
			ModelID   string
			Available bool
		}
	}
	resp := response(t, h.start(t, "models", env...).Invoke(t, readEvent(t, "models")), &body)
	if resp.StatusCode != http.StatusOK || len(body.Models) != 3 {
		t.Fatalf("models: %d %s", resp.StatusCode, resp.Body)
	}
	for _, m := range body.Models {
		if want := m.ModelID != "gen-3.1-lite-generate-001"; m.Available != want {
			t.Errorf("models: %s available %v, want %v", m.ModelID, m.Available, want)
		}
	}
}
