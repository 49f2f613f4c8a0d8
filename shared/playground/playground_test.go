package playground

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/genvideo/gen/shared/catalog"
	"github.com/genvideo/gen/shared/httpapi"
)

func newHandler(t *testing.T, origins ...string) http.Handler {
	t.Helper()
	h, err := Handler(Config{MediaOrigins: origins, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// Every file of the page is served with its type, the strict policy and
// the headers that keep it from being framed, sniffed or leaking a
// Referer; any other path or method is the API's JSON error.
func TestServes(t *testing.T) {
	h := newHandler(t, "https://media.example.s3.us-east-1.amazonaws.com")
	tests := []struct {
		method, path string
		status       int
		contentType  string
	}{
		{"GET", "/", 200, "text/html; charset=utf-8"},
		{"HEAD", "/", 200, "text/html; charset=utf-8"},
		{"GET", "/?from=docs", 200, "text/html; charset=utf-8"},
		{"GET", "/playground/app.js", 200, "text/javascript; charset=utf-8"},
		{"GET", "/playground/api.js", 200, "text/javascript; charset=utf-8"},
		{"GET", "/playground/style.css", 200, "text/css; charset=utf-8"},
		{"GET", "/playground/limits.json", 200, "application/json"},
		{"GET", "/playground/index.html", 404, "application/json"},
		{"GET", "/playground/app.js?v=1", 200, "text/javascript; charset=utf-8"},
		{"GET", "/playground/", 404, "application/json"},
		{"POST", "/", 405, "application/json"},
		{"DELETE", "/playground/app.js", 405, "application/json"},
	}
	for _, tt := range tests {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(tt.method, tt.path, nil))
		if rec.Code != tt.status || !strings.HasPrefix(rec.Header().Get("Content-Type"), tt.contentType) {
			t.Errorf("%s %s = %d %q, want %d %q", tt.method, tt.path, rec.Code, rec.Header().Get("Content-Type"), tt.status, tt.contentType)
		}
		if tt.status != 200 {
			var body struct{ Error string }
			if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || body.Error == "" {
				t.Errorf("%s %s: body %q, want the API's error body", tt.method, tt.path, rec.Body)
			}
			continue
		}
		want := map[string]string{
			"Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; " +
				"img-src 'self' blob: data: https://media.example.s3.us-east-1.amazonaws.com; " +
				"media-src 'self' blob: https://media.example.s3.us-east-1.amazonaws.com; " +
				"connect-src 'self' https://media.example.s3.us-east-1.amazonaws.com; " +
				"frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
			"X-Content-Type-Options": "nosniff",
			"Referrer-Policy":        "no-referrer",
			"Cache-Control":          "no-cache",
		}
		for k, v := range want {
			if got := rec.Header().Get(k); got != v {
				t.Errorf("%s %s: %s = %q, want %q", tt.method, tt.path, k, got, v)
			}
		}
		if (tt.method == "HEAD") != (rec.Body.Len() == 0) {
			t.Errorf("%s %s: %d bytes of body", tt.method, tt.path, rec.Body.Len())
		}
	}
}

// A page already loaded is revalidated by its ETag.
func TestETag(t *testing.T) {
	h := newHandler(t)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/playground/app.js", nil))
	etag := rec.Header().Get("ETag")
	req := httptest.NewRequest("GET", "/playground/app.js", nil)
	req.Header.Set("If-None-Match", etag)
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if etag == "" || rec.Code != http.StatusNotModified || rec.Body.Len() != 0 {
		t.Errorf("If-None-Match %s: %d with %d bytes, want 304 and no body", etag, rec.Code, rec.Body.Len())
	}
}

// The page loads nothing from elsewhere and runs no inline script or
// style: every src and href is a path of its own (or a data: icon), and
// no tag carries a style or an on... attribute. It embeds no other page
// either: /docs, which loads Swagger UI from jsDelivr, is only linked to
// (a navigation the person chooses), never framed or fetched.
func TestPageIsSelfContained(t *testing.T) {
	for _, name := range []string{"static/index.html", "static/app.js", "static/api.js", "static/style.css"} {
		b, err := static.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		s := string(b)
		for _, bad := range []string{"http://", "https://", "//cdn", "@import", "<style", " style=", "javascript:", "eval(", "new Function", "localStorage", "document.cookie", "console.log",
			"<iframe", "<frame", "<object", "<embed", `"docs")`, "api/docs", "openapi.json"} {
			if strings.Contains(s, bad) {
				t.Errorf("%s contains %q", name, bad)
			}
		}
		if regexp.MustCompile(`<script(?:\s[^>]*)?>[^<]`).MatchString(s) || regexp.MustCompile(`\son[a-z]+=`).MatchString(s) {
			t.Errorf("%s has an inline script or handler", name)
		}
	}
}

// The limits are the service's own definitions.
func TestLimits(t *testing.T) {
	l := Limits()
	if l.DefaultModel != catalog.DefaultModel || l.MaxImageBytes != httpapi.DefaultMaxImageBytes || !slices.Equal(l.Durations, []int{4, 6, 8}) {
		t.Errorf("Limits() = %+v", l)
	}
	for _, m := range l.Models {
		c, _ := catalog.Lookup(m.ModelID)
		if !slices.Equal(m.Resolutions, c.Resolutions) || !slices.Equal(m.Capabilities, c.Capabilities) {
			t.Errorf("model %s: %v %v, want the catalog's %v %v", m.ModelID, m.Resolutions, m.Capabilities, c.Resolutions, c.Capabilities)
		}
	}
}

func TestCheckOrigin(t *testing.T) {
	for _, tt := range []struct {
		origin string
		ok     bool
	}{
		{"https://b.s3.us-east-1.amazonaws.com", true},
		{"http://127.0.0.1:8080", true},
		{"https://b.s3.amazonaws.com/videos", false},
		{"https://b.s3.amazonaws.com; script-src *", false},
		{"ftp://b", false},
		{"*", false},
		{"", false},
	} {
		if err := CheckOrigin(tt.origin); (err == nil) != tt.ok {
			t.Errorf("CheckOrigin(%q) = %v, want ok %v", tt.origin, err, tt.ok)
		}
	}
	if _, err := Handler(Config{MediaOrigins: []string{"https://x 'unsafe-inline'"}}); err == nil {
		t.Error("Handler accepted an origin that would loosen the policy")
	}
}
