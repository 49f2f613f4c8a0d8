package devstack

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/genvideo/gen/shared/nodetools"
	"github.com/genvideo/gen/shared/testing/openapitest"
)

// The docs page in Chromium (playwright-core, as the playground's test),
// with the CDN answered from the npm package of the page's pinned Swagger
// UI (issue 20, 6): under the page's Content-Security-Policy, Swagger UI
// renders every operation with no violation; a bundle changed by a byte
// is refused by its SRI hash, and the page's own listing stays, styled
// by its served stylesheet.
func TestDocsPageInChromium(t *testing.T) {
	if os.Getenv(nodetools.SkipEnv) == "1" {
		t.Skipf("%s=1: skipping the browser test (it needs npm and Chromium)", nodetools.SkipEnv)
	}
	const chromium = "/usr/bin/chromium"
	if _, err := os.Stat(chromium); err != nil {
		t.Fatalf("no Chromium at %s: install Debian's chromium (make tools does), or set %s=1", chromium, nodetools.SkipEnv)
	}
	tools := nodetools.Require(t, "playwright-core@1.65.1", "swagger-ui-dist@5.17.14")
	e := startEnv(t, "", nil)
	input, _ := json.Marshal(map[string]any{"base": e.url, "chromium": chromium,
		"swaggerDist": filepath.Join(tools.Modules(), "swagger-ui-dist")})
	script, _ := filepath.Abs("testdata/docs-browser.cjs")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	stdout, stderr, err := tools.RunInput(ctx, input, script)
	if err != nil {
		t.Fatalf("browser script: %v\n%s", err, stderr)
	}
	type visit struct {
		CSPViolations, ConsoleErrors, Requests []string
		Operations                             int
		ListingHidden                          bool
		ListingWidth                           string
	}
	var r struct{ Published, Changed visit }
	if err := json.Unmarshal(stdout, &r); err != nil {
		t.Fatalf("report: %v\n%s", err, stdout)
	}
	doc, err := openapitest.Doc()
	if err != nil {
		t.Fatal(err)
	}
	ops := 0
	for _, item := range doc.Paths.Map() {
		ops += len(item.Operations())
	}
	p := r.Published
	if p.Operations != ops || !p.ListingHidden || len(p.CSPViolations) != 0 || len(p.ConsoleErrors) != 0 {
		t.Errorf("with the published files: %d operations rendered (want the document's %d), listing hidden %v, CSP violations %q, console errors %q",
			p.Operations, ops, p.ListingHidden, p.CSPViolations, p.ConsoleErrors)
	}
	for _, u := range p.Requests {
		if !strings.HasPrefix(u, e.url+"/") && !strings.HasPrefix(u, "https://cdn.jsdelivr.net/npm/swagger-ui-dist@5.17.14/") &&
			!strings.HasPrefix(u, "data:") {
			t.Errorf("the page requested %s", u)
		}
	}
	c := r.Changed
	if c.Operations != 0 || c.ListingHidden || c.ListingWidth != "960px" {
		t.Errorf("with a changed bundle: %d operations rendered, listing hidden %v, its max-width %q; want the bundle refused and the styled listing",
			c.Operations, c.ListingHidden, c.ListingWidth)
	}
	if !strings.Contains(strings.Join(c.ConsoleErrors, "\n"), "integrity") {
		t.Errorf("with a changed bundle, no integrity error: %q", c.ConsoleErrors)
	}
}
