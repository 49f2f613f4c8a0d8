package httpapi

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/genvideo/gen/shared/openapi"
	"github.com/genvideo/gen/shared/wire"
)

// Swagger UI renders the page in a browser that can reach jsDelivr. The
// files are pinned by version and by Subresource Integrity hashes
// (computed from the npm package swagger-ui-dist@5.17.14), so that a
// changed file is refused rather than run. Without the CDN the page shows
// the plain listing it carries: nothing is vendored into the binaries.
const (
	swaggerUIBase   = "https://cdn.jsdelivr.net/npm/swagger-ui-dist@5.17.14/"
	swaggerUIJSSRI  = "sha384-wmyclcVGX/WhUkdkATwhaK1X1JtiNrr2EoYJ+diV3vj4v6OC5yCeSu+yW13SYJep"
	swaggerUICSSSRI = "sha384-wxLW6kwyHktdDGr6Pv1zgm/VGJh99lfUbzSn6HNHBENZlCN7W602k9VkGdxuFvPn"
)

// PublicDocs serves the two routes that need no key, GET /openapi.json
// and GET /docs, without the rest of the API: it needs no store, blob
// storage or executions, so that a process serving only the documents (the
// docs Lambda) has none of them. They are the same handlers as New's
// (docsRoutes), with the same recovery, request log and 405 of another
// method; any other path is a 404 NOT_FOUND. A nil logger means
// slog.Default().
func PublicDocs(logger *slog.Logger) http.Handler {
	if logger == nil {
		logger = slog.Default()
	}
	mux := http.NewServeMux()
	for _, rt := range docsRoutes(logger) {
		mux.Handle(rt.path, rt.handler)
	}
	mux.Handle("/", unrouted(logger, http.HandlerFunc(notFoundRoute)))
	return canonicalPaths(logger, mux)
}

// docsRoute is one of the public routes: its path and its handler.
type docsRoute struct {
	path    string
	handler http.Handler
}

// docsRoutes builds the public routes, logging to log. It is their one
// definition, which New and PublicDocs both mount.
func docsRoutes(log *slog.Logger) []docsRoute {
	page, err := serveDocs()
	if err != nil {
		panic("httpapi: " + err.Error()) // the embedded document is broken
	}
	return []docsRoute{
		{"/openapi.json", public(log, serveOpenAPI())},
		{"/docs", public(log, page)},
		// The page's script and style: served files, not inline, so
		// that its Content-Security-Policy allows no inline code.
		{DocsFilePrefix + "{file}", public(log, page)},
	}
}

// DocsFilePrefix is where the docs page's own files are served: its
// script and its style.
const DocsFilePrefix = "/docs/"

// public wraps a handler of a route that needs no key: recovery, the
// request log, and the 405 of any method but GET and HEAD.
func public(log *slog.Logger, h http.HandlerFunc) http.Handler {
	return unrouted(log, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			WriteError(w, &Error{Status: http.StatusMethodNotAllowed, Code: wire.CodeMethodNotAllowed, Allow: "GET, HEAD",
				Message: fmt.Sprintf("%s is not allowed on %s; use GET.", r.Method, r.URL.Path)})
			return
		}
		h(w, r)
	}))
}

// PublicRoute wraps the handler of a page that needs no key, served
// beside the API (the playground): the same recovery, request log and 405
// of any method but GET and HEAD as /openapi.json and /docs. A nil logger
// means slog.Default().
func PublicRoute(logger *slog.Logger, h http.HandlerFunc) http.Handler {
	if logger == nil {
		logger = slog.Default()
	}
	return public(logger, h)
}

// serveOpenAPI answers the document. Any origin may read it (it is public
// and carries no credentials), so that browser tools elsewhere can load
// it; the ETag lets them revalidate cheaply.
func serveOpenAPI() http.HandlerFunc {
	doc := openapi.JSON()
	sum := sha256.Sum256(doc)
	etag := `"` + base64.RawURLEncoding.EncodeToString(sum[:12]) + `"`
	return func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("ETag", etag)
		h.Set("Cache-Control", "no-cache")
		h.Set("Access-Control-Allow-Origin", "*")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Content-Security-Policy", DataContentSecurityPolicy)
		if matchesETag(r.Header.Get("If-None-Match"), etag) {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		h.Set("Content-Type", "application/json")
		h.Set("Content-Length", strconv.Itoa(len(doc)))
		w.WriteHeader(http.StatusOK)
		w.Write(doc)
	}
}

// matchesETag reports whether an If-None-Match value names etag.
func matchesETag(ifNoneMatch, etag string) bool {
	for _, t := range strings.Split(ifNoneMatch, ",") {
		if t = strings.TrimSpace(t); t == etag || t == "*" {
			return true
		}
	}
	return false
}

// SetPageHeaders sets the headers of a page served beside the API, and
// of its files: the docs and the playground, which share the API's
// origin (where the playground keeps a key in session storage). Its
// Content-Security-Policy csp, no framing by any site (frame-ancestors
// in csp, and X-Frame-Options for older browsers), no sniffing, no
// referrer, its own browsing context group; revalidated on every load
// (by ETag), so that a new deployment's page and files are never mixed
// with old ones.
func SetPageHeaders(h http.Header, csp string) {
	h.Set("Content-Security-Policy", csp)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cache-Control", "no-cache")
}

// DocsContentSecurityPolicy is the docs page's policy: its own script
// and style from the service ('self'), Swagger UI's two files from the
// CDN by their exact URLs (each also pinned by its SRI hash in the
// page), images from the service and data: (Swagger UI's icons),
// requests to the service only (the document, and "Try it out"); no
// inline script or style, no frame, no form submission, no <base>.
func DocsContentSecurityPolicy() string {
	return "default-src 'none'; script-src 'self' " + swaggerUIBase + "swagger-ui-bundle.js; " +
		"style-src 'self' " + swaggerUIBase + "swagger-ui.css; img-src 'self' data:; connect-src 'self'; " +
		"frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
}

// PageAsset is one response of a page served beside the API (the page
// or one of its files), prepared once: its ETag is of its bytes.
type PageAsset struct {
	body        []byte
	contentType string
	etag        string
}

// NewPageAsset prepares body as contentType (application/octet-stream
// when empty; a text type gets charset=utf-8).
func NewPageAsset(body []byte, contentType string) PageAsset {
	if contentType == "" {
		contentType = "application/octet-stream"
	}
	if strings.HasPrefix(contentType, "text/") && !strings.Contains(contentType, "charset") {
		contentType += "; charset=utf-8"
	}
	sum := sha256.Sum256(body)
	return PageAsset{body, contentType, `"` + base64.RawURLEncoding.EncodeToString(sum[:12]) + `"`}
}

// ServePage answers r with the asset at its path, under the page
// headers (SetPageHeaders, with csp), revalidated by ETag; any other
// path is the API's 404 NOT_FOUND.
func ServePage(w http.ResponseWriter, r *http.Request, assets map[string]PageAsset, csp string) {
	a, ok := assets[r.URL.Path]
	if !ok {
		notFoundRoute(w, r)
		return
	}
	h := w.Header()
	SetPageHeaders(h, csp)
	h.Set("ETag", a.etag)
	if matchesETag(r.Header.Get("If-None-Match"), a.etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h.Set("Content-Type", a.contentType)
	h.Set("Content-Length", strconv.Itoa(len(a.body)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		w.Write(a.body)
	}
}

// serveDocs answers the page, rendered once from the document, and its
// files under DocsFilePrefix; another file is the API's 404.
func serveDocs() (http.HandlerFunc, error) {
	page, err := docsPage(openapi.JSON())
	if err != nil {
		return nil, err
	}
	assets := map[string]PageAsset{
		"/docs":                        NewPageAsset(page, "text/html"),
		DocsFilePrefix + "swagger.js":  NewPageAsset([]byte(docsScript), "text/javascript"),
		DocsFilePrefix + "listing.css": NewPageAsset([]byte(docsStyle), "text/css"),
	}
	csp := DocsContentSecurityPolicy()
	return func(w http.ResponseWriter, r *http.Request) { ServePage(w, r, assets, csp) }, nil
}

// docOperation is one line of the page's plain listing.
type docOperation struct {
	Method, Path, Summary string
	Public                bool
}

// docsPage renders the page from the JSON document: a listing of every
// operation, which Swagger UI replaces when it loads.
func docsPage(doc []byte) ([]byte, error) {
	var d struct {
		Info struct {
			Title, Version, Description string
		}
		Paths map[string]map[string]struct {
			Summary  string
			Security *[]any
		}
	}
	if err := json.Unmarshal(doc, &d); err != nil {
		return nil, fmt.Errorf("read openapi document: %w", err)
	}
	var ops []docOperation
	for path, item := range d.Paths {
		for method, op := range item {
			ops = append(ops, docOperation{Method: strings.ToUpper(method), Path: path, Summary: op.Summary,
				Public: op.Security != nil && len(*op.Security) == 0})
		}
	}
	// The contract's order: starts, then reads, then the public pages.
	rank := func(o docOperation) int {
		switch {
		case o.Public:
			return 2
		case o.Method == http.MethodPost:
			return 0
		}
		return 1
	}
	slices.SortStableFunc(ops, func(x, y docOperation) int {
		if c := rank(x) - rank(y); c != 0 {
			return c
		}
		if c := strings.Compare(x.Path, y.Path); c != 0 {
			return c
		}
		// Paths hold more than one read (GET and PATCH credits): the
		// map's order is random, the page's must not be.
		return strings.Compare(x.Method, y.Method)
	})
	// Not html/template: its Execute looks fields and methods up by name
	// through reflection, and a binary that can do that keeps every
	// exported method of its types, which doubled the size of the endpoint
	// Lambdas. Every value is escaped as text.
	esc := html.EscapeString
	var rows strings.Builder
	for _, o := range ops {
		public := ""
		if o.Public {
			public = " (no key needed)"
		}
		fmt.Fprintf(&rows, "\n<tr><td><code>%s</code></td><td><code>%s</code></td><td>%s%s</td></tr>",
			esc(o.Method), esc(o.Path), esc(o.Summary), public)
	}
	return []byte(strings.NewReplacer(
		"{{title}}", esc(d.Info.Title), "{{version}}", esc(d.Info.Version), "{{description}}", esc(d.Info.Description),
		"{{operations}}", rows.String(),
		"{{base}}", esc(swaggerUIBase), "{{jsSRI}}", esc(swaggerUIJSSRI), "{{cssSRI}}", esc(swaggerUICSSSRI),
	).Replace(docsPageHTML)), nil
}

// docsPageHTML is the page, its {{name}} marks replaced by docsPage.
const docsPageHTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{title}} {{version}}</title>
<link rel="stylesheet" href="{{base}}swagger-ui.css" integrity="{{cssSRI}}" crossorigin="anonymous">
<link rel="stylesheet" href="docs/listing.css">
</head>
<body>
<div id="swagger-ui"></div>
<main id="listing">
<h1>{{title}} <small>{{version}}</small></h1>
<p>The OpenAPI 3.1 document of this API is <a href="openapi.json"><code>openapi.json</code></a>.
This page renders it with Swagger UI when your browser can load it from jsDelivr; this is the plain listing.</p>
<table>
<thead><tr><th>Method</th><th>Path</th><th>What it does</th></tr></thead>
<tbody>{{operations}}
</tbody>
</table>
<h2>About</h2>
<pre>{{description}}</pre>
</main>
<script src="{{base}}swagger-ui-bundle.js" integrity="{{jsSRI}}" crossorigin="anonymous"></script>
<script src="docs/swagger.js"></script>
</body>
</html>
`

// docsScript renders the document with Swagger UI once its bundle has
// loaded; without it the page's plain listing stays. No validator badge:
// it would send the document to validator.swagger.io.
const docsScript = `"use strict";
if (window.SwaggerUIBundle) {
  document.getElementById("listing").hidden = true;
  window.ui = window.SwaggerUIBundle({ url: "openapi.json", dom_id: "#swagger-ui", deepLinking: true, validatorUrl: null });
}
`

// docsStyle is the style of the plain listing.
const docsStyle = `body { margin: 0; font-family: system-ui, sans-serif; }
#listing { max-width: 60rem; margin: 2rem auto; padding: 0 1rem; line-height: 1.5; }
#listing table { border-collapse: collapse; width: 100%; }
#listing td, #listing th { text-align: left; vertical-align: top; padding: .4rem .6rem; border-bottom: 1px solid #ddd; }
#listing code { font-size: .95em; }
#listing pre { white-space: pre-wrap; background: #f6f6f6; padding: 1rem; }
`
