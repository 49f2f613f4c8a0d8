package veotest_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/genvideo/gen/shared/testing/veotest"
)

// TestRetireWhileRunning: a model retired while the fake runs (in a
// test, or PUT /fake/retired on infra/fakeveo) is not found from then
// on, on both APIs, until it is brought back.
func TestRetireWhileRunning(t *testing.T) {
	srv := httptest.NewServer(veotest.New(veotest.Config{}))
	t.Cleanup(srv.Close)
	status := func(path string) int {
		t.Helper()
		res, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	retire := func(body string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPut, srv.URL+"/fake/retired", strings.NewReader(body))
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusNoContent {
			t.Fatalf("PUT /fake/retired %s: %d", body, res.StatusCode)
		}
	}
	const gemini, vertex = "/v1beta/models/veo-3.1-lite-generate-001", "/v1/publishers/google/models/veo-3.1-lite-generate-001"
	for _, tt := range []struct {
		retired string
		want    int
	}{{`[]`, 200}, {`["veo-3.1-lite-generate-001"]`, 404}, {`[]`, 200}} {
		retire(tt.retired)
		if g, v := status(gemini), status(vertex); g != tt.want || v != tt.want {
			t.Errorf("retired %s: the model's lookups answer %d (Gemini API), %d (Vertex AI), want %d", tt.retired, g, v, tt.want)
		}
	}
}
