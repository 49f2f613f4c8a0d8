package devstack

import (
	"bytes"
	"context"
	"encoding/hex"
	"image/color"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/genvideo/gen/shared/admin"
	"github.com/genvideo/gen/shared/apikey"
	"github.com/genvideo/gen/shared/store"
	"github.com/genvideo/gen/shared/testing/logtest"
)

// Security through the whole local stack (issue 4, item 5): what an API
// key leaves behind, and what a signed link reaches. The HTTP-level
// properties (foreign tasks, revocation, per-key limits) are tested in
// shared/httpapi/security_test.go.

// secNearMiss is key with its last character changed: well formed, and
// what a client's typo of a real key looks like.
func secNearMiss(key string) string {
	last := key[len(key)-1]
	repl := byte('A')
	if last == 'A' {
		repl = 'B'
	}
	return key[:len(key)-1] + string(repl)
}

// secScanFiles returns the files under dir whose bytes hold any of
// needles, and how many files it read.
func secScanFiles(t *testing.T, dir string, needles ...string) (found []string, files int) {
	t.Helper()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		files++
		for _, n := range needles {
			if bytes.Contains(b, []byte(n)) {
				found = append(found, p+" holds "+n[:8]+"...")
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("scan %s: %v", dir, err)
	}
	return found, files
}

// TestKeysNeverLoggedOrStoredInClear runs a full workflow through the
// real local stack (starts of each kind, a generation that completes and
// one that fails, status, download, history, models, refused keys, a
// revocation) with every log line captured, then scans the log and every
// file of the data directory (the SQLite database and its WAL, the blobs)
// for the API key and its secret part. Neither may appear; the key's
// hash must, in the database, so the scan is known to read the store.
func TestKeysNeverLoggedOrStoredInClear(t *testing.T) {
	logs := &logtest.Buffer{}
	dir := t.TempDir()
	e := startEnv(t, dir, func(c *Config) {
		c.Logger = slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
		c.FaultInjection = true // one generation fails with [fail]
	})
	k := e.key(100000, store.KeyLimits{})
	nearMiss := secNearMiss(k.APIKey)

	ok := func(r response, what string) response {
		t.Helper()
		if r.status >= 300 {
			t.Fatalf("%s = %d %s", what, r.status, r.raw)
		}
		return r
	}
	done := ok(e.postJSON("/api/gen/text-to-video", k.APIKey,
		`{"prompt":"a lighthouse at night","model":"gen-3.1-lite-generate-001","durationSeconds":4}`), "text-to-video")
	failed := ok(e.postJSON("/api/gen/text-to-video", k.APIKey,
		`{"prompt":"[fail] a storm","model":"gen-3.1-lite-generate-001","durationSeconds":4}`), "failing text-to-video")
	img := testImage(t, 320, 180, color.RGBA{200, 30, 30, 255}, color.RGBA{20, 40, 220, 255})
	image := ok(e.postForm("/api/gen/image-to-video", k.APIKey,
		map[string]string{"prompt": "the flag waves", "model": "gen-3.1-lite-generate-001", "durationSeconds": "4"},
		map[string][]byte{"image": img}), "image-to-video")
	for _, r := range []response{done, failed, image} {
		e.wait(k.APIKey, str(r.body["taskId"]))
	}
	dl := ok(e.do(http.MethodGet, "/api/gen/download/"+str(done.body["taskId"]), k.APIKey, "", nil), "download")
	e.fetch(str(dl.body["videos"].([]any)[0].(map[string]any)["url"]))
	ok(e.do(http.MethodGet, "/api/gen/history?limit=10", k.APIKey, "", nil), "history")
	ok(e.do(http.MethodGet, "/api/gen/models", k.APIKey, "", nil), "models")
	// Keys sent wrongly: each refused, none written down.
	for _, r := range []struct {
		what string
		req  func() *http.Request
	}{
		{"a near miss of the key", func() *http.Request {
			req, _ := http.NewRequest(http.MethodGet, e.srv.URL+"/api/gen/models", nil)
			req.Header.Set("X-API-Key", nearMiss)
			return req
		}},
		{"the key as a bearer token", func() *http.Request {
			req, _ := http.NewRequest(http.MethodGet, e.srv.URL+"/api/gen/history", nil)
			req.Header.Set("Authorization", "Bearer "+k.APIKey)
			return req
		}},
		{"the key in the query", func() *http.Request {
			req, _ := http.NewRequest(http.MethodGet, e.srv.URL+"/api/gen/models?api_key="+url.QueryEscape(k.APIKey), nil)
			return req
		}},
		{"the key with a prefix", func() *http.Request {
			req, _ := http.NewRequest(http.MethodGet, e.srv.URL+"/api/gen/models", nil)
			req.Header.Set("X-API-Key", "Bearer "+k.APIKey)
			return req
		}},
	} {
		res, err := http.DefaultClient.Do(r.req())
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s: status %d, want 401", r.what, res.StatusCode)
		}
	}
	if err := admin.New(e.stack.Store).Revoke(context.Background(), k.KeyID); err != nil {
		t.Fatal(err)
	}
	if r := e.do(http.MethodGet, "/api/gen/models", k.APIKey, "", nil); r.status != http.StatusUnauthorized {
		t.Errorf("the revoked key: status %d, want 401", r.status)
	}

	secrets := []string{k.APIKey, k.APIKey[len("gen_"):], nearMiss[len("gen_"):]}
	scan := func(when string) {
		t.Helper()
		found, files := secScanFiles(t, dir, secrets...)
		for _, f := range found {
			t.Errorf("%s: %s", when, f)
		}
		if positive, _ := secScanFiles(t, dir, apikey.Hash(k.APIKey)); len(positive) == 0 {
			t.Errorf("%s: the key's hash is in none of the %d files: the scan does not read the store", when, files)
		}
	}
	scan("while the stack runs")
	log := logs.Bytes()
	for _, s := range secrets {
		if bytes.Contains(log, []byte(s)) {
			t.Errorf("the log holds an API key (or its secret part %s...)", s[:8])
		}
	}
	if !bytes.Contains(log, []byte(k.KeyID)) || !bytes.Contains(log, []byte(`"status":401`)) {
		t.Errorf("the log does not hold the request lines of the workflow (key id %s, the 401s): the scan proves nothing", k.KeyID)
	}
	e.stop() // checkpoints the WAL into the database file
	scan("after the stack stopped")
}

// TestSignedLinksReachOnlyTheirObject: a signed link, altered in any way,
// reaches nothing: not the task's other video, not another account's
// video, not an uploaded image, not by path traversal. Each try is a 403
// (or a 404) and serves no bytes; the link as given still works.
func TestSignedLinksReachOnlyTheirObject(t *testing.T) {
	localOnly(t, "the test forges links of the embedded stack's /files/ format (signature, expires); the assembly's links are S3 presigned URLs, tampered with in TestSignedLinks")
	contractRange(t, "two videos")
	e := startEnv(t, "", nil)
	a := e.key(10000, store.KeyLimits{})
	b := e.key(10000, store.KeyLimits{})
	img := testImage(t, 320, 180, color.RGBA{10, 200, 30, 255}, color.RGBA{240, 240, 10, 255})
	ra := e.postForm("/api/gen/image-to-video", a.APIKey,
		map[string]string{"prompt": "two takes", "model": "gen-3.1-lite-generate-001", "durationSeconds": "4", "sampleCount": "2"},
		map[string][]byte{"image": img})
	rb := e.postJSON("/api/gen/text-to-video", b.APIKey, `{"prompt":"b's video","model":"gen-3.1-lite-generate-001","durationSeconds":4}`)
	if ra.status != http.StatusAccepted || rb.status != http.StatusAccepted {
		t.Fatalf("starts = %d %s, %d %s", ra.status, ra.raw, rb.status, rb.raw)
	}
	idA, idB := str(ra.body["taskId"]), str(rb.body["taskId"])
	e.wait(a.APIKey, idA)
	e.wait(b.APIKey, idB)
	links := func(key, id string) []*url.URL {
		dl := e.do(http.MethodGet, "/api/gen/download/"+id, key, "", nil)
		var out []*url.URL
		for _, v := range dl.body["videos"].([]any) {
			u, err := url.Parse(str(v.(map[string]any)["url"]))
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, u)
		}
		if len(out) == 0 {
			t.Fatalf("download of %s: %s", id, dl.raw)
		}
		return out
	}
	la, lb := links(a.APIKey, idA), links(b.APIKey, idB)
	if len(la) != 2 {
		t.Fatalf("task %s has %d videos, want 2", idA, len(la))
	}
	// B's download of A's task is a 404: links come only from the owner.
	if r := e.do(http.MethodGet, "/api/gen/download/"+idA, b.APIKey, "", nil); r.status != http.StatusNotFound {
		t.Errorf("another account's download = %d, want 404", r.status)
	}

	get := func(u string) (int, []byte) {
		t.Helper()
		res, err := http.Get(u)
		if err != nil {
			t.Fatalf("GET %s: %v", u, err)
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		return res.StatusCode, body
	}
	status, video := get(la[0].String())
	if status != http.StatusOK || len(video) < 1000 {
		t.Fatalf("the link as given = %d with %d bytes, want 200 and the video", status, len(video))
	}

	withPath := func(u *url.URL, p string) string {
		v := *u
		v.Path, v.RawPath = p, ""
		return v.String()
	}
	withQuery := func(u *url.URL, edit func(url.Values)) string {
		v := *u
		q := v.Query()
		edit(q)
		v.RawQuery = q.Encode()
		return v.String()
	}
	sig := la[0].Query().Get("signature")
	flipped := []byte(sig)
	flipped[0] = "0123456789abcdef"[(strings.IndexByte("0123456789abcdef", flipped[0])+1)%16]
	input := "/files/inputs/" + idA + "/image.png"
	tries := []struct{ name, url string }{
		{"the task's other video", withPath(la[0], la[1].Path)},
		{"another account's video", withPath(la[0], lb[0].Path)},
		{"the uploaded image", withPath(la[0], input)},
		{"the signing key file", withPath(la[0], "/files/../signing.key")},
		{"a traversal to the image", la[0].Scheme + "://" + la[0].Host + la[0].Path + "/../../../inputs/" + idA + "/image.png?" + la[0].RawQuery},
		{"an escaped traversal", la[0].Scheme + "://" + la[0].Host + "/files/videos/" + idA + "/%2e%2e/%2e%2e/inputs/" + idA + "/image.png?" + la[0].RawQuery},
		{"an encoded slash", la[0].Scheme + "://" + la[0].Host + "/files/inputs%2f" + idA + "%2fimage.png?" + la[0].RawQuery},
		{"another link's signature", withQuery(la[0], func(q url.Values) { q.Set("signature", lb[0].Query().Get("signature")) })},
		{"a later expiry", withQuery(la[0], func(q url.Values) { q.Set("expires", q.Get("expires")+"0") })},
		{"one hex digit changed", withQuery(la[0], func(q url.Values) { q.Set("signature", string(flipped)) })},
		{"a truncated signature", withQuery(la[0], func(q url.Values) { q.Set("signature", sig[:32]) })},
		{"no signature", withQuery(la[0], func(q url.Values) { q.Del("signature") })},
		{"two signatures", withQuery(la[0], func(q url.Values) { q.Add("signature", lb[0].Query().Get("signature")) })},
		{"the signature as raw bytes", withQuery(la[0], func(q url.Values) {
			raw, _ := hex.DecodeString(sig)
			q.Set("signature", string(raw))
		})},
	}
	for _, tt := range tries {
		t.Run(tt.name, func(t *testing.T) {
			status, body := get(tt.url)
			if status != http.StatusForbidden && status != http.StatusNotFound {
				t.Errorf("GET %s = %d, want 403 (or 404)", tt.url, status)
			}
			if bytes.Contains(body, video[:512]) || bytes.Contains(body, img[:64]) || len(body) > 4096 {
				t.Errorf("GET %s served %d bytes of content", tt.url, len(body))
			}
		})
	}
}
