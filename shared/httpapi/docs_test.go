package httpapi_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/genvideo/gen/shared/openapi"
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
	doc, err := openapi.Doc()
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
		`url: "openapi.json"`,
		`swagger-ui-bundle.js" integrity="sha384-`,
		`swagger-ui.css" integrity="sha384-`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
}

// The router and the document name the same routes and methods: every
// documented operation is served (it answers neither 404 nor 405), and
// the Allow header of every documented path lists exactly its methods.
func TestEveryDocumentedOperationIsServed(t *testing.T) {
	e := newEnv(t, nil)
	doc, err := openapi.Doc()
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
		allow := strings.Join(methods, ", ")
		if allow == http.MethodGet {
			allow = "GET, HEAD"
		}
		r := e.do(http.MethodDelete, url, "", "", nil)
		if r.status != http.StatusMethodNotAllowed || r.header.Get("Allow") != allow {
			t.Errorf("DELETE %s = %d with Allow %q, want 405 with Allow %q", path, r.status, r.header.Get("Allow"), allow)
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
