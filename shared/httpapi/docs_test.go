package httpapi_test

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/genvideo/gen/shared/httpapi"
	"github.com/genvideo/gen/shared/openapi"
	"github.com/genvideo/gen/shared/testing/logtest"
	"github.com/genvideo/gen/shared/testing/openapitest"
)

func TestOpenAPIDocumentIsServedWithoutAKey(t *testing.T) {
	e := newEnv(t, nil)
	res, err := e.Server.Client().Get(e.Server.URL + "/openapi.json")
	if err != nil {
		t.Fatalf("GET /openapi.json: %v", err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("status = %d, want 200 (%s)", res.StatusCode, body)
	}
	if got := res.Header.Get("Content-Type"); got != "application/json" {
		t.Errorf("Content-Type = %q, want application/json", got)
	}
	if got := res.Header.Get("Access-Control-Allow-Origin"); got != "*" {
		t.Errorf("Access-Control-Allow-Origin = %q, want *", got)
	}
	if !bytes.Equal(body, openapi.JSON()) {
		t.Error("body is not openapi.JSON()")
	}
	var doc struct {
		OpenAPI string `json:"openapi"`
	}
	if err := json.Unmarshal(body, &doc); err != nil || !strings.HasPrefix(doc.OpenAPI, "3.1.") {
		t.Errorf("openapi = %q (%v), want 3.1.x", doc.OpenAPI, err)
	}

	// A client that has it revalidates without downloading it again.
	etag := res.Header.Get("ETag")
	if etag == "" {
		t.Fatal("no ETag")
	}
	req, _ := http.NewRequest(http.MethodGet, e.Server.URL+"/openapi.json", nil)
	req.Header.Set("If-None-Match", `"stale", `+etag)
	r := e.send(req)
	if r.status != http.StatusNotModified || len(r.raw) != 0 {
		t.Errorf("with If-None-Match: %d and %d bytes, want 304 and none", r.status, len(r.raw))
	}
}

func TestDocsPageListsEveryOperation(t *testing.T) {
	e := newEnv(t, nil)
	res, err := e.Server.Client().Get(e.Server.URL + "/docs")
	if err != nil {
		t.Fatalf("GET /docs: %v", err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("status = %d, want 200", res.StatusCode)
	}
	if got := res.Header.Get("Content-Type"); got != "text/html; charset=utf-8" {
		t.Errorf("Content-Type = %q, want text/html; charset=utf-8", got)
	}
	page := string(body)
	doc, err := openapitest.Doc()
	if err != nil {
		t.Fatal(err)
	}
	// The plain listing works without the CDN: every operation is on it.
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			if row := "<td><code>" + method + "</code></td><td><code>" + path + "</code></td>"; !strings.Contains(page, row) {
				t.Errorf("the page does not list %s %s", method, path)
			}
		}
	}
	for _, want := range []string{
		`href="openapi.json"`,
		`<script src="docs/swagger.js"></script>`,
		`swagger-ui-bundle.js" integrity="sha384-`,
		`swagger-ui.css" integrity="sha384-`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
	// Its script, served: Swagger UI renders the document.
	res, err = e.Server.Client().Get(e.Server.URL + "/docs/swagger.js")
	if err != nil {
		t.Fatal(err)
	}
	script, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !strings.Contains(string(script), `url: "openapi.json"`) ||
		res.Header.Get("Content-Type") != "text/javascript; charset=utf-8" {
		t.Errorf("GET /docs/swagger.js = %d %s %s", res.StatusCode, res.Header.Get("Content-Type"), script)
	}
}

// The router and the document name the same routes and methods: every
// documented operation is served (it answers neither 404 nor 405), and
// the Allow header of every documented path lists exactly its methods.
func TestEveryDocumentedOperationIsServed(t *testing.T) {
	e := newEnv(t, nil)
	doc, err := openapitest.Doc()
	if err != nil {
		t.Fatal(err)
	}
	for path, item := range doc.Paths.Map() {
		url := strings.ReplaceAll(path, "{taskId}", "gen_1700000000000_abcdefghij")
		var methods []string
		for method, op := range item.Operations() {
			methods = append(methods, method)
			req, _ := http.NewRequest(method, e.Server.URL+url, strings.NewReader("{}"))
			req.Header.Set("Content-Type", "application/json")
			res, err := e.Server.Client().Do(req)
			if err != nil {
				t.Fatalf("%s %s: %v", method, path, err)
			}
			res.Body.Close()
			want := http.StatusUnauthorized
			if op.Security != nil && len(*op.Security) == 0 {
				want = http.StatusOK
			}
			if res.StatusCode != want {
				t.Errorf("%s %s without a key = %d, want %d", method, path, res.StatusCode, want)
			}
		}
		// Allow lists the documented methods (GET with HEAD), in any
		// order; a path with DELETE (the webhooks) is probed with PATCH.
		if slices.Contains(methods, http.MethodGet) {
			methods = append(methods, http.MethodHead)
		}
		slices.Sort(methods)
		probe := http.MethodDelete
		if slices.Contains(methods, probe) {
			probe = http.MethodPatch
		}
		r := e.do(probe, url, "", "", nil)
		got := strings.Split(r.header.Get("Allow"), ", ")
		slices.Sort(got)
		if r.status != http.StatusMethodNotAllowed || !slices.Equal(got, methods) {
			t.Errorf("%s %s = %d with Allow %q, want 405 with Allow %q", probe, path, r.status, r.header.Get("Allow"), methods)
		}
	}
}

func TestDocsHead(t *testing.T) {
	e := newEnv(t, nil)
	for _, path := range []string{"/openapi.json", "/docs"} {
		r := e.do(http.MethodHead, path, "", "", nil)
		if r.status != 200 || len(r.raw) != 0 || r.header.Get("Content-Length") == "" {
			t.Errorf("HEAD %s = %d with %d bytes and Content-Length %q, want 200, no body, a length",
				path, r.status, len(r.raw), r.header.Get("Content-Length"))
		}
	}
}

// PublicDocs serves the documents without a store, blobs or starter, with
// the API's own handlers: the same bytes and headers, the same 405 and
// 404 bodies, a request log line for each request.
func TestPublicDocs(t *testing.T) {
	logs := &logtest.Buffer{}
	srv := httptest.NewServer(httpapi.PublicDocs(slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	t.Cleanup(srv.Close)
	e := newEnv(t, nil)

	type answer struct {
		status int
		header http.Header
		body   []byte
	}
	send := func(base, method, path string) answer {
		t.Helper()
		req, _ := http.NewRequest(method, base+path, nil)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		return answer{res.StatusCode, res.Header, body}
	}
	for _, path := range []string{"/openapi.json", "/docs"} {
		got, want := send(srv.URL, http.MethodGet, path), send(e.Server.URL, http.MethodGet, path)
		if got.status != http.StatusOK || !bytes.Equal(got.body, want.body) {
			t.Errorf("GET %s = %d with %d bytes, want 200 with the API's %d bytes", path, got.status, len(got.body), len(want.body))
		}
		for _, h := range []string{"Content-Type", "Content-Length", "ETag", "Cache-Control", "Access-Control-Allow-Origin",
			"X-Content-Type-Options", "Referrer-Policy"} {
			if got.header.Get(h) != want.header.Get(h) {
				t.Errorf("GET %s: %s = %q, want the API's %q", path, h, got.header.Get(h), want.header.Get(h))
			}
		}
	}
	if got := send(srv.URL, http.MethodGet, "/openapi.json"); !bytes.Equal(got.body, openapi.JSON()) {
		t.Error("GET /openapi.json is not openapi.JSON()")
	}

	for _, c := range []struct {
		method, path string
		status       int
		code, allow  string
	}{
		{http.MethodPost, "/docs", 405, "METHOD_NOT_ALLOWED", "GET, HEAD"},
		{http.MethodDelete, "/openapi.json", 405, "METHOD_NOT_ALLOWED", "GET, HEAD"},
		{http.MethodGet, "/api/gen/models", 404, "NOT_FOUND", ""},
		{http.MethodGet, "/./docs", 404, "NOT_FOUND", ""},
	} {
		got, want := send(srv.URL, c.method, c.path), send(e.Server.URL, c.method, c.path)
		var body struct{ Error string }
		json.Unmarshal(got.body, &body)
		if got.status != c.status || body.Error != c.code || got.header.Get("Allow") != c.allow {
			t.Errorf("%s %s = %d %s with Allow %q, want %d %s with Allow %q", c.method, c.path, got.status, got.body,
				got.header.Get("Allow"), c.status, c.code, c.allow)
		}
		// The API without a key answers the same (models: 401, since it
		// has the route).
		if c.path != "/api/gen/models" && (want.status != got.status || !bytes.Equal(want.body, got.body)) {
			t.Errorf("%s %s = %d %s, the API answers %d %s", c.method, c.path, got.status, got.body, want.status, want.body)
		}
	}

	lines := logLines(logs, "request")
	wantLines := []struct {
		method, path string
		status       float64
	}{
		{"GET", "/openapi.json", 200}, {"GET", "/docs", 200}, {"GET", "/openapi.json", 200},
		{"POST", "/docs", 405}, {"DELETE", "/openapi.json", 405}, {"GET", "/api/gen/models", 404}, {"GET", "/./docs", 404},
	}
	if len(lines) != len(wantLines) {
		t.Fatalf("%d request log lines, want %d:\n%s", len(lines), len(wantLines), logs)
	}
	for i, w := range wantLines {
		if l := lines[i]; l["method"] != w.method || l["path"] != w.path || l["status"] != w.status {
			t.Errorf("log line %d = %v, want %s %s %v", i, l, w.method, w.path, w.status)
		}
	}
}
