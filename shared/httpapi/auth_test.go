package httpapi_test

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/genvideo/gen/shared/apikey"
	"github.com/genvideo/gen/shared/httpapi"
	"github.com/genvideo/gen/shared/ratelimit"
	"github.com/genvideo/gen/shared/store"
	"github.com/genvideo/gen/shared/testing/httpapitest"
)

func TestRouting(t *testing.T) {
	e := newEnv(t, nil)
	tests := []struct {
		method, path string
		status       int
		code         string
		allow        string
	}{
		{"GET", "/", 404, "NOT_FOUND", ""},
		{"GET", "/api/gen/nope", 404, "NOT_FOUND", ""},
		{"GET", "/api/gen/status/", 404, "NOT_FOUND", ""},
		{"GET", "/api/gen/status/a/b", 404, "NOT_FOUND", ""},
		{"GET", "/v1/videos", 404, "NOT_FOUND", ""},
		{"POST", "/api/gen/history/", 404, "NOT_FOUND", ""},
		{"GET", "/api/gen/text-to-video", 405, "METHOD_NOT_ALLOWED", "POST"},
		{"PUT", "/api/gen/image-to-video", 405, "METHOD_NOT_ALLOWED", "POST"},
		{"DELETE", "/api/gen/first-last-frame", 405, "METHOD_NOT_ALLOWED", "POST"},
		{"DELETE", "/api/gen/status/gen_1700000000000_abcdefghij", 405, "METHOD_NOT_ALLOWED", "GET, HEAD"},
		{"POST", "/api/gen/download/x", 405, "METHOD_NOT_ALLOWED", "GET, HEAD"},
		{"POST", "/api/gen/history", 405, "METHOD_NOT_ALLOWED", "GET, HEAD"},
		{"PATCH", "/api/gen/models", 405, "METHOD_NOT_ALLOWED", "GET, HEAD"},
		{"OPTIONS", "/api/gen/models", 405, "METHOD_NOT_ALLOWED", "GET, HEAD"},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			r := e.do(tt.method, tt.path, "", "", nil)
			wantError(t, r, tt.status, tt.code)
			if got := r.header.Get("Allow"); got != tt.allow {
				t.Errorf("Allow = %q, want %q", got, tt.allow)
			}
			if got := r.header.Get("X-RateLimit-Limit"); got != "" {
				t.Errorf("X-RateLimit-Limit = %q on an unauthenticated answer, want none", got)
			}
		})
	}
	if lookups, _ := e.faults.counts(); lookups != 0 {
		t.Errorf("404s and 405s looked up %d keys, want 0", lookups)
	}
}

func TestAuth(t *testing.T) {
	e := newEnv(t, nil)
	c := e.caller(1000)
	revoked := e.caller(1000)
	if err := e.faults.Store.RevokeKey(context.Background(), revoked.KeyID, httpapitest.Epoch); err != nil {
		t.Fatalf("revoke: %v", err)
	}
	tests := []struct {
		name    string
		keys    []string // X-API-Key values; nil: no header
		status  int
		message string
		lookup  bool // whether the store is asked
	}{
		{"no header", nil, 401, httpapi.MessageKeyMissing, false},
		{"empty header", []string{""}, 401, httpapi.MessageKeyMissing, false},
		{"malformed", []string{"gen_short"}, 401, httpapi.MessageKeyInvalid, false},
		{"wrong prefix", []string{"xyz_" + c.Key[4:]}, 401, httpapi.MessageKeyInvalid, false},
		{"bearer form", []string{"Bearer " + c.Key}, 401, httpapi.MessageKeyInvalid, false},
		{"two keys", []string{c.Key, c.Key}, 401, httpapi.MessageKeyInvalid, false},
		{"unknown", []string{apikey.New()}, 401, httpapi.MessageKeyInvalid, true},
		{"revoked", []string{revoked.Key}, 401, httpapi.MessageKeyInvalid, true},
		{"valid", []string{c.Key}, 200, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before, _ := e.faults.counts()
			req, _ := http.NewRequest(http.MethodGet, e.Server.URL+"/api/gen/models", nil)
			for _, k := range tt.keys {
				req.Header.Add("X-API-Key", k)
			}
			r := e.send(req)
			after, _ := e.faults.counts()
			if looked := after > before; looked != tt.lookup {
				t.Errorf("store looked up the key: %v, want %v", looked, tt.lookup)
			}
			if tt.status == 200 {
				if r.status != 200 {
					t.Fatalf("status = %d, want 200 (body %s)", r.status, r.raw)
				}
				return
			}
			wantError(t, r, tt.status, "UNAUTHORIZED")
			if got := r.body["message"]; got != tt.message {
				t.Errorf("message = %q, want %q", got, tt.message)
			}
		})
	}
	// Every endpoint asks for the key.
	for _, ep := range []struct{ method, path string }{
		{"POST", "/api/gen/text-to-video"}, {"POST", "/api/gen/image-to-video"}, {"POST", "/api/gen/first-last-frame"},
		{"GET", "/api/gen/status/gen_1700000000000_abcdefghij"}, {"GET", "/api/gen/download/gen_1700000000000_abcdefghij"},
		{"GET", "/api/gen/history"}, {"GET", "/api/gen/models"},
	} {
		r := e.do(ep.method, ep.path, "", "application/json", strings.NewReader("{}"))
		if r.status != 401 || r.body["message"] != httpapi.MessageKeyMissing {
			t.Errorf("%s %s without a key: %d %v, want 401 %q", ep.method, ep.path, r.status, r.body["message"], httpapi.MessageKeyMissing)
		}
	}
}

func TestRateLimitHeadersOnEveryAuthenticatedAnswer(t *testing.T) {
	e := newEnv(t, nil)
	c := httpapitest.NewCaller(t, e.faults.Store, 1000, ratelimit.Standard, store.KeyLimits{})
	reset := httpapitest.Epoch.Unix() + 60
	tests := []struct {
		method, path string
		status       int
	}{
		{"GET", "/api/gen/models", 200},
		{"GET", "/api/gen/history?limit=0", 400},
		{"GET", "/api/gen/status/nope", 404},
		{"POST", "/api/gen/text-to-video", 400},
		{"GET", "/api/gen/history", 200},
	}
	for i, tt := range tests {
		r := e.do(tt.method, tt.path, c.Key, "", nil)
		if r.status != tt.status {
			t.Fatalf("%s %s: status %d, want %d (%s)", tt.method, tt.path, r.status, tt.status, r.raw)
		}
		want := map[string]string{
			"X-RateLimit-Limit":     "60",
			"X-RateLimit-Remaining": strconv.Itoa(60 - (i + 1)),
			"X-RateLimit-Reset":     strconv.Itoa(int(reset)),
		}
		for h, v := range want {
			if got := r.header.Get(h); got != v {
				t.Errorf("%s %s: %s = %q, want %q", tt.method, tt.path, h, got, v)
			}
		}
		if got := r.header.Get("Retry-After"); got != "" {
			t.Errorf("%s %s: Retry-After = %q on a non-429, want none", tt.method, tt.path, got)
		}
	}
}
