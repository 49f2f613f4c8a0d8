package devstack

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// TestEveryPathAnswersJSON (item 2): whatever path the server receives,
// the answer is one of the contract's JSON bodies, never a redirect with
// an HTML body. Non-canonical paths are unknown routes (404 NOT_FOUND),
// under /files/ too.
func TestEveryPathAnswersJSON(t *testing.T) {
	s := serve(t, "", nil)
	k := s.key(10000)
	tests := []struct {
		method, target string
		status         int
		code           string // "" for a 2xx
	}{
		{"GET", "/api/gen/status/..", 404, "NOT_FOUND"},
		{"GET", "//api/gen/models", 404, "NOT_FOUND"},
		{"GET", "/api/gen/./models", 404, "NOT_FOUND"},
		{"GET", "/files/../x", 404, "NOT_FOUND"},
		{"GET", "/files/..", 404, "NOT_FOUND"},
		{"GET", "/files/./videos/x/0.mp4", 404, "NOT_FOUND"},
		{"GET", "/files//videos/x/0.mp4", 404, "NOT_FOUND"},
		{"GET", "/files", 404, "NOT_FOUND"},
		{"GET", "/files/", 403, "FORBIDDEN"},
		{"GET", "/files/videos/x/0.mp4", 403, "FORBIDDEN"},
		{"GET", "/files/%2e%2e/signing.key", 403, "FORBIDDEN"},
		{"GET", "/%2e%2e/api/gen/models", 404, "NOT_FOUND"},
		{"GET", "/api/gen/%2E/models", 404, "NOT_FOUND"},
		{"GET", "/api/gen/models%2f", 404, "NOT_FOUND"},
		{"GET", "/api/gen/models/", 404, "NOT_FOUND"},
		{"GET", "/api/gen/models/.", 404, "NOT_FOUND"},
		{"GET", "/api/gen/history/", 404, "NOT_FOUND"},
		{"GET", "/api/gen/status/", 404, "NOT_FOUND"},
		{"GET", "/api/gen/status", 404, "NOT_FOUND"},
		{"GET", "/api/gen/download/", 404, "NOT_FOUND"},
		{"POST", "/api/gen/text-to-video/", 404, "NOT_FOUND"},
		{"POST", "/api/gen/image-to-video/", 404, "NOT_FOUND"},
		{"POST", "/api/gen/first-last-frame/", 404, "NOT_FOUND"},
		{"GET", "/openapi.json/", 404, "NOT_FOUND"},
		{"GET", "/docs/", 404, "NOT_FOUND"},
		{"GET", "/api\\gen\\models", 404, "NOT_FOUND"},
		{"GET", "/api/gen/models\\", 404, "NOT_FOUND"},
		{"GET", "/index.html", 404, "NOT_FOUND"},
		{"GET", "/playground/", 404, "NOT_FOUND"},
		{"GET", "/playground/nope.js", 404, "NOT_FOUND"},
		{"GET", "/playground/../api/gen/models", 404, "NOT_FOUND"},
		{"GET", "/playground/%2e%2e/app.js", 404, "NOT_FOUND"},
		{"GET", "//playground/app.js", 404, "NOT_FOUND"},
		{"POST", "/", 405, "METHOD_NOT_ALLOWED"},
		{"GET", "/api/gen/models?next=/../x", 200, ""},
		{"GET", "/api/gen/%6dodels", 200, ""},
		{"GET", "http://" + "127.0.0.1/api/gen/models", 200, ""},
		{"HEAD", "//api/gen/models", 404, "NOT_FOUND"},
		{"HEAD", "/files/../x", 404, "NOT_FOUND"},
		{"OPTIONS", "/api/gen/models", 405, "METHOD_NOT_ALLOWED"},
		{"OPTIONS", "*", 404, "NOT_FOUND"},
		{"DELETE", "/api/gen/status/gen_1_abcdefghi", 405, "METHOD_NOT_ALLOWED"},
		{"PUT", "/files/videos/x/0.mp4", 405, "METHOD_NOT_ALLOWED"},
		{"TRACE", "/api/gen/models", 405, "METHOD_NOT_ALLOWED"},
		{"CONNECT", "127.0.0.1:443", 404, "NOT_FOUND"},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.target, func(t *testing.T) {
			raw := fmt.Sprintf("%s %s HTTP/1.1\r\nHost: %s\r\nX-API-Key: %s\r\nConnection: close\r\n\r\n", tt.method, tt.target, s.addr, k.APIKey)
			x := s.exchange(raw, tt.method == http.MethodHead, nil)
			if len(x.responses) != 1 {
				t.Fatalf("%d responses, want 1 (%v)", len(x.responses), x.err)
			}
			r := x.responses[0]
			if loc := r.header.Get("Location"); loc != "" || r.status/100 == 3 {
				t.Errorf("answered %d with Location %q, want no redirect", r.status, loc)
			}
			switch {
			case tt.method == http.MethodHead:
				if r.status != tt.status || !strings.HasPrefix(r.header.Get("Content-Type"), "application/json") {
					t.Errorf("HEAD answered %d %q, want %d with a JSON type", r.status, r.header.Get("Content-Type"), tt.status)
				}
			case tt.code == "":
				if r.status != tt.status || !strings.HasPrefix(r.header.Get("Content-Type"), "application/json") {
					t.Errorf("answered %d %q %s, want %d JSON", r.status, r.header.Get("Content-Type"), r.body, tt.status)
				}
			default:
				contractError(t, r, tt.status, tt.code)
			}
		})
	}
}
