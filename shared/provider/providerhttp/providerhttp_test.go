package providerhttp_test

import (
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/genvideo/gen/shared/provider/providerhttp"
)

// TestSubmitOutcome: a submit that never reached the provider may be
// sent again; one that went out whole with no answer may have made a
// job, and is never sent again.
func TestSubmitOutcome(t *testing.T) {
	dropped := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
			conn.Close()
		}
	}))
	t.Cleanup(dropped.Close)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := "http://" + l.Addr().String()
	l.Close()
	for _, tt := range []struct {
		name    string
		url     string
		unknown bool
	}{
		{"connection refused", refused, false},
		{"answer dropped", dropped.URL, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, tt.url+"/v1/videos", strings.NewReader("job"))
			_, err := providerhttp.Do(http.DefaultClient, req, "POST /v1/videos")
			var busy *providerhttp.BusyError
			if !errors.As(err, &busy) {
				t.Fatalf("Do = %v, want a *BusyError", err)
			}
			var unknown interface{ OutcomeUnknown() bool }
			if got := errors.As(providerhttp.SubmitOutcome(err), &unknown); got != tt.unknown {
				t.Errorf("SubmitOutcome(%v): unknown %v, want %v", err, got, tt.unknown)
			}
		})
	}
}

// TestKeepOnOrigin: a redirect to another origin loses the key; one on
// the same origin keeps it.
func TestKeepOnOrigin(t *testing.T) {
	var got []string
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, "other:"+r.Header.Get("X-Key"))
	}))
	t.Cleanup(other.Close)
	var api *httptest.Server
	api = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.URL.Path+":"+r.Header.Get("X-Key"))
		switch r.URL.Path {
		case "/a":
			http.Redirect(w, r, api.URL+"/b", http.StatusFound)
		case "/b":
			http.Redirect(w, r, other.URL+"/c", http.StatusFound)
		}
	}))
	t.Cleanup(api.Close)
	c := &http.Client{CheckRedirect: providerhttp.KeepOnOrigin(api.URL, "X-Key")}
	req, _ := http.NewRequest(http.MethodGet, api.URL+"/a", nil)
	req.Header.Set("X-Key", "secret")
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if want := "/a:secret /b:secret other:"; strings.Join(got, " ") != want {
		t.Errorf("requests %q, want %q", strings.Join(got, " "), want)
	}
}
