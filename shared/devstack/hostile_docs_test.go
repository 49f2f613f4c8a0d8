package devstack

import (
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/genvideo/gen/shared/store"
)

// TestDocsPageAsProtectedAsThePlayground (issue 20, 6): /docs shares the
// origin of the playground, which keeps a key in session storage, and is
// now served as strictly: the playground's framing, sniffing, referrer and
// opener headers, and a Content-Security-Policy that no site may frame,
// that allows no inline code, and that lets scripts and styles come from
// the service and from the CDN only by the exact URLs of Swagger UI's two
// files, each pinned by its SRI hash. The page runs no inline script and
// has no inline style; its own script and style are served files, with
// the same headers.
func TestDocsPageAsProtectedAsThePlayground(t *testing.T) {
	e := startEnv(t, "", nil)
	playground := e.do(http.MethodGet, "/", "", "", nil)
	if playground.status != http.StatusOK {
		t.Fatalf("GET / = %d", playground.status)
	}
	const cdn = "https://cdn.jsdelivr.net/npm/swagger-ui-dist@5.17.14/"
	var page string
	for _, path := range []string{"/docs", "/docs/swagger.js", "/docs/listing.css"} {
		r := e.do(http.MethodGet, path, "", "", nil)
		if r.status != http.StatusOK {
			t.Errorf("GET %s = %d %s", path, r.status, r.raw)
			continue
		}
		if path == "/docs" {
			page = string(r.raw)
		}
		for _, h := range []string{"X-Frame-Options", "X-Content-Type-Options", "Referrer-Policy", "Cross-Origin-Opener-Policy", "Cache-Control"} {
			if got, want := r.header.Get(h), playground.header.Get(h); got != want || got == "" {
				t.Errorf("GET %s: %s = %q, want the playground's %q", path, h, got, want)
			}
		}
		csp := directives(r.header.Get("Content-Security-Policy"))
		for d, want := range map[string]string{
			"default-src":     "'none'",
			"frame-ancestors": "'none'",
			"base-uri":        "'none'",
			"form-action":     "'none'",
			"script-src":      "'self' " + cdn + "swagger-ui-bundle.js",
			"style-src":       "'self' " + cdn + "swagger-ui.css",
			"connect-src":     "'self'",
		} {
			if csp[d] != want {
				t.Errorf("GET %s: CSP %s %q, want %q (the whole policy: %q)", path, d, csp[d], want, r.header.Get("Content-Security-Policy"))
			}
		}
	}
	// No inline code: every script is a file, from the service or the
	// CDN, and the CDN's carry their hashes; no style element or
	// attribute, no event handler attribute.
	for _, tag := range regexp.MustCompile(`<script[^>]*>`).FindAllString(page, -1) {
		src := regexp.MustCompile(`src="([^"]+)"`).FindStringSubmatch(tag)
		switch {
		case src == nil:
			t.Errorf("inline script %s", tag)
		case strings.HasPrefix(src[1], "https://"):
			if !strings.HasPrefix(src[1], cdn) || !strings.Contains(tag, `integrity="sha384-`) {
				t.Errorf("script %s: not the pinned CDN file", tag)
			}
		case strings.Contains(src[1], "//") || strings.HasPrefix(src[1], "/"):
			t.Errorf("script %s: not the service's own file", tag)
		}
	}
	for _, bad := range []*regexp.Regexp{regexp.MustCompile(`<style`), regexp.MustCompile(`\sstyle=`), regexp.MustCompile(`\son[a-z]+=`)} {
		if m := bad.FindString(page); m != "" {
			t.Errorf("the page has inline %q", m)
		}
	}
	if r := e.do(http.MethodGet, "/docs/other.js", "", "", nil); r.status != http.StatusNotFound || r.body["error"] != "NOT_FOUND" {
		t.Errorf("GET /docs/other.js = %d %s, want the API's 404", r.status, r.raw)
	}

	// The answers that are data, not pages, on the same origin: nothing
	// active, no framing, no sniffing; an answer, an error and the
	// document alike. (Not API Gateway's own answers on AWS, before any
	// function runs: infra/docs/reliability.md.)
	k := e.key(100, store.KeyLimits{})
	for _, c := range []struct{ path, key string }{
		{"/api/gen/models", k.APIKey}, {"/api/gen/status/gen_nope", k.APIKey}, {"/openapi.json", ""},
	} {
		r := e.do(http.MethodGet, c.path, c.key, "", nil)
		csp := directives(r.header.Get("Content-Security-Policy"))
		if csp["default-src"] != "'none'" || csp["frame-ancestors"] != "'none'" || r.header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("GET %s = %d: CSP %q, nosniff %q; want default-src and frame-ancestors 'none'", c.path, r.status,
				r.header.Get("Content-Security-Policy"), r.header.Get("X-Content-Type-Options"))
		}
	}
}

// directives splits a Content-Security-Policy into its directives.
func directives(csp string) map[string]string {
	out := map[string]string{}
	for _, d := range strings.Split(csp, ";") {
		name, value, _ := strings.Cut(strings.TrimSpace(d), " ")
		out[name] = value
	}
	return out
}
