package fsblob

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
)

// server runs the store's handler behind a real HTTP server whose URL is
// the store's base URL, with a clock the test moves.
type server struct {
	*Store
	srv *httptest.Server
	now time.Time
}

func newServer(t *testing.T) *server {
	t.Helper()
	s := &server{now: time.Date(2025, 11, 13, 12, 0, 0, 0, time.UTC)}
	var h http.Handler
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(w, r) }))
	t.Cleanup(s.srv.Close)
	st, err := New(t.TempDir(), s.srv.URL, testSecret)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	st.Now = func() time.Time { return s.now }
	s.Store = st
	h = st.Handler()
	return s
}

func (s *server) put(t *testing.T, key, data, contentType string) {
	t.Helper()
	if _, err := s.Put(context.Background(), key, strings.NewReader(data), contentType); err != nil {
		t.Fatalf("Put(%q): %v", key, err)
	}
}

func (s *server) sign(t *testing.T, key string, expires time.Time) string {
	t.Helper()
	u, err := s.SignURL(context.Background(), key, expires)
	if err != nil {
		t.Fatalf("SignURL(%q): %v", key, err)
	}
	return u
}

func do(t *testing.T, method, u string, header http.Header) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, u, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

type errorBody struct {
	Success *bool  `json:"success"`
	Error   string `json:"error"`
	Message string `json:"message"`
}

// wantError checks an error response's status, code and message.
func wantError(t *testing.T, resp *http.Response, body []byte, status int, code, inMessage string) {
	t.Helper()
	if resp.StatusCode != status {
		t.Errorf("status = %d, want %d (body %s)", resp.StatusCode, status, body)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type = %q, want application/json", ct)
	}
	var e errorBody
	if err := json.Unmarshal(body, &e); err != nil {
		t.Fatalf("error body %q: %v", body, err)
	}
	if e.Success == nil || *e.Success || e.Error != code {
		t.Errorf("body = %s, want success false and error %q", body, code)
	}
	if !strings.Contains(e.Message, inMessage) {
		t.Errorf("message = %q, want it to contain %q", e.Message, inMessage)
	}
}

func TestSignedURLServesObject(t *testing.T) {
	s := newServer(t)
	data := strings.Repeat("0123456789", 1000)
	s.put(t, "videos/v.mp4", data, "video/mp4")
	u := s.sign(t, "videos/v.mp4", s.now.Add(24*time.Hour))

	want := fmt.Sprintf("%s/files/videos/v.mp4?expires=%d&signature=", s.srv.URL, s.now.Add(24*time.Hour).Unix())
	if !strings.HasPrefix(u, want) {
		t.Errorf("SignURL = %q, want prefix %q", u, want)
	}
	resp, body := do(t, http.MethodGet, u, nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET status = %d, want 200 (body %s)", resp.StatusCode, body)
	}
	if string(body) != data {
		t.Errorf("GET body is %d bytes differing from the object", len(body))
	}
	for header, want := range map[string]string{
		"Content-Type":   "video/mp4",
		"Content-Length": fmt.Sprint(len(data)),
		"Accept-Ranges":  "bytes",
		"Cache-Control":  "private, max-age=86400",
	} {
		if got := resp.Header.Get(header); got != want {
			t.Errorf("%s = %q, want %q", header, got, want)
		}
	}

	// Just before expiry the link still works.
	s.now = s.now.Add(24*time.Hour - time.Second)
	if resp, _ := do(t, http.MethodGet, u, nil); resp.StatusCode != http.StatusOK {
		t.Errorf("GET one second before expiry: status %d, want 200", resp.StatusCode)
	}
}

func TestRangeAndHead(t *testing.T) {
	s := newServer(t)
	data := "abcdefghijklmnopqrstuvwxyz"
	s.put(t, "k", data, "text/plain; charset=utf-8")
	u := s.sign(t, "k", s.now.Add(time.Hour))

	resp, body := do(t, http.MethodGet, u, http.Header{"Range": {"bytes=2-5"}})
	if resp.StatusCode != http.StatusPartialContent {
		t.Fatalf("ranged GET status = %d, want 206", resp.StatusCode)
	}
	if string(body) != "cdef" {
		t.Errorf("ranged GET body = %q, want %q", body, "cdef")
	}
	if got, want := resp.Header.Get("Content-Range"), "bytes 2-5/26"; got != want {
		t.Errorf("Content-Range = %q, want %q", got, want)
	}

	resp, body = do(t, http.MethodGet, u, http.Header{"Range": {"bytes=-3"}})
	if resp.StatusCode != http.StatusPartialContent || string(body) != "xyz" {
		t.Errorf("suffix range: status %d body %q, want 206 %q", resp.StatusCode, body, "xyz")
	}

	resp, body = do(t, http.MethodHead, u, nil)
	if resp.StatusCode != http.StatusOK {
		t.Errorf("HEAD status = %d, want 200", resp.StatusCode)
	}
	if len(body) != 0 {
		t.Errorf("HEAD returned a body of %d bytes", len(body))
	}
	if got := resp.Header.Get("Content-Length"); got != "26" {
		t.Errorf("HEAD Content-Length = %q, want 26", got)
	}
	if got := resp.Header.Get("Content-Type"); got != "text/plain; charset=utf-8" {
		t.Errorf("HEAD Content-Type = %q, want the stored type", got)
	}

	resp, body = do(t, http.MethodPost, u, nil)
	wantError(t, resp, body, http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED", "GET")
	if got := resp.Header.Get("Allow"); got != "GET, HEAD" {
		t.Errorf("Allow = %q, want %q", got, "GET, HEAD")
	}
}

func TestRejectedLinks(t *testing.T) {
	s := newServer(t)
	s.put(t, "mine.mp4", "my video", "video/mp4")
	s.put(t, "yours.mp4", "your video", "video/mp4")
	expires := s.now.Add(time.Hour)
	good := s.sign(t, "mine.mp4", expires)
	gu, err := url.Parse(good)
	if err != nil {
		t.Fatal(err)
	}
	sig := gu.Query().Get("signature")
	flipped := []byte(sig)
	flipped[0] = map[bool]byte{true: '1', false: '0'}[flipped[0] == '0']
	base := s.srv.URL + "/files/"

	tests := []struct {
		name string
		url  string
	}{
		{"no signature", fmt.Sprintf("%smine.mp4?expires=%d", base, expires.Unix())},
		{"no expiry", fmt.Sprintf("%smine.mp4?signature=%s", base, sig)},
		{"empty query", base + "mine.mp4"},
		{"tampered signature", fmt.Sprintf("%smine.mp4?expires=%d&signature=%s", base, expires.Unix(), flipped)},
		{"truncated signature", fmt.Sprintf("%smine.mp4?expires=%d&signature=%s", base, expires.Unix(), sig[:32])},
		{"non-hex signature", fmt.Sprintf("%smine.mp4?expires=%d&signature=%s", base, expires.Unix(), strings.Repeat("zz", 32))},
		{"other key", fmt.Sprintf("%syours.mp4?expires=%d&signature=%s", base, expires.Unix(), sig)},
		{"extended expiry", fmt.Sprintf("%smine.mp4?expires=%d&signature=%s", base, expires.Add(time.Hour).Unix(), sig)},
		{"non-numeric expiry", fmt.Sprintf("%smine.mp4?expires=soon&signature=%s", base, sig)},
		{"repeated expiry", good + fmt.Sprintf("&expires=%d", expires.Add(time.Hour).Unix())},
		{"escaping key", fmt.Sprintf("%s..%%2fmine.mp4?expires=%d&signature=%s", base, expires.Unix(), sig)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := do(t, http.MethodGet, tt.url, nil)
			wantError(t, resp, body, http.StatusForbidden, "FORBIDDEN", "invalid")
			if bytes.Contains(body, []byte("my video")) || bytes.Contains(body, []byte("your video")) {
				t.Errorf("a rejected link served the object: %s", body)
			}
		})
	}

	// The untampered link works, so the rejections above are about the
	// tampering, not a broken signer.
	if resp, _ := do(t, http.MethodGet, good, nil); resp.StatusCode != http.StatusOK {
		t.Errorf("untampered link: status %d, want 200", resp.StatusCode)
	}
}

func TestExpiredLink(t *testing.T) {
	s := newServer(t)
	s.put(t, "k", "data", "text/plain")
	u := s.sign(t, "k", s.now.Add(time.Minute))
	s.now = s.now.Add(time.Minute) // expiry is exclusive: at expiresAt the link is dead
	resp, body := do(t, http.MethodGet, u, nil)
	wantError(t, resp, body, http.StatusForbidden, "FORBIDDEN", "expired")
	s.now = s.now.Add(time.Hour)
	resp, body = do(t, http.MethodHead, u, nil)
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("HEAD of an expired link: status %d, want 403", resp.StatusCode)
	}
	if len(body) != 0 {
		t.Errorf("HEAD of an expired link has a body")
	}
}

func TestMissingObject(t *testing.T) {
	s := newServer(t)
	u := s.sign(t, "gone.mp4", s.now.Add(time.Hour))
	resp, body := do(t, http.MethodGet, u, nil)
	wantError(t, resp, body, http.StatusNotFound, "NOT_FOUND", "does not exist")

	s.put(t, "deleted.mp4", "x", "video/mp4")
	u = s.sign(t, "deleted.mp4", s.now.Add(time.Hour))
	if err := s.Delete(context.Background(), "deleted.mp4"); err != nil {
		t.Fatal(err)
	}
	resp, body = do(t, http.MethodGet, u, nil)
	wantError(t, resp, body, http.StatusNotFound, "NOT_FOUND", "does not exist")

	// A signed prefix of other keys is no object either.
	s.put(t, "dir/inner", "x", "text/plain")
	resp, body = do(t, http.MethodGet, s.sign(t, "dir", s.now.Add(time.Hour)), nil)
	wantError(t, resp, body, http.StatusNotFound, "NOT_FOUND", "does not exist")
}

func TestLinksSurviveRestart(t *testing.T) {
	dir, secretPath := t.TempDir(), t.TempDir()+"/secret"
	open := func() *Store {
		secret, err := LoadOrCreateSecret(secretPath)
		if err != nil {
			t.Fatal(err)
		}
		s, err := New(dir, "http://files.test", secret)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	first := open()
	if _, err := first.Put(context.Background(), "k", strings.NewReader("kept"), "text/plain"); err != nil {
		t.Fatal(err)
	}
	u, err := first.SignURL(context.Background(), "k", time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	path := strings.TrimPrefix(u, "http://files.test")
	rec := httptest.NewRecorder()
	open().Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	if rec.Code != http.StatusOK || rec.Body.String() != "kept" {
		t.Errorf("link signed before the restart: status %d body %q, want 200 %q", rec.Code, rec.Body, "kept")
	}
}

// TestKeptLinksAreTheSigned checks that the links SignURL keeps are the
// ones it would sign afresh: the same for the same key and expiry, as a
// store without the cache signs them, and another for another expiry.
func TestKeptLinksAreTheSigned(t *testing.T) {
	open := func() *Store {
		s, err := New(t.TempDir(), "http://files.test", testSecret)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	ctx := context.Background()
	s, fresh := open(), open()
	exp := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	first, err := s.SignURL(ctx, "videos/a.mp4", exp)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		s    *Store
		exp  time.Time
		same bool
	}{
		{s, exp, true},
		{fresh, exp, true},
		{s, exp.Add(time.Second), false},
	} {
		u, err := tt.s.SignURL(ctx, "videos/a.mp4", tt.exp)
		if err != nil {
			t.Fatal(err)
		}
		if (u == first) != tt.same {
			t.Errorf("SignURL(expiry %v) = %s; the first was %s, want the same: %v", tt.exp, u, first, tt.same)
		}
	}
}
