package playgroundlambda

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/genvideo/gen/shared/awsstack"
)

func lookup(vars map[string]string) func(string) (string, bool) {
	return func(name string) (string, bool) {
		v, ok := vars[name]
		return v, ok
	}
}

// The bucket's origin the template sets reaches the page's policy; a
// value that would loosen it fails the cold start.
func TestHandler(t *testing.T) {
	const bucket = "https://gen-media-abc.s3.us-east-1.amazonaws.com"
	tests := []struct {
		value  string
		ok     bool
		policy string
	}{
		{"", true, "media-src 'self' blob:; connect-src 'self';"},
		{bucket, true, "media-src 'self' blob: " + bucket + "; connect-src 'self' " + bucket + ";"},
		{bucket + "/, https://cdn.example.com", true, "media-src 'self' blob: " + bucket + " https://cdn.example.com;"},
		{"*", false, ""},
		{bucket + "; script-src *", false, ""},
		{"https://x.example.com/videos", false, ""},
	}
	for _, tt := range tests {
		var logs bytes.Buffer
		h, _, err := handler(lookup(map[string]string{EnvMediaOrigins: tt.value, awsstack.EnvLogLevel: "DEBUG"}), &logs)
		if (err == nil) != tt.ok {
			t.Errorf("%s=%q: err %v, want ok %v", EnvMediaOrigins, tt.value, err, tt.ok)
			continue
		}
		if !tt.ok {
			if !strings.Contains(err.Error(), EnvMediaOrigins) {
				t.Errorf("%s=%q: error %q does not name the variable", EnvMediaOrigins, tt.value, err)
			}
			continue
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
		if csp := rec.Header().Get("Content-Security-Policy"); rec.Code != 200 || !strings.Contains(csp, tt.policy) {
			t.Errorf("%s=%q: GET / = %d with policy %q, want 200 with %q", EnvMediaOrigins, tt.value, rec.Code, csp, tt.policy)
		}
		if !strings.Contains(logs.String(), `"path":"/"`) {
			t.Errorf("no JSON request log: %q", logs.String())
		}
	}
}
