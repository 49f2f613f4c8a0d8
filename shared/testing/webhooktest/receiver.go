package webhooktest

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// Receiver is a webhook receiver on this machine: it records every
// delivery and answers each with one status.
type Receiver struct {
	URL string
	mu  sync.Mutex
	got []Delivery
}

// Delivery is one request a Receiver got.
type Delivery struct {
	Path   string
	Header http.Header
	Body   []byte
}

// NewReceiver starts a Receiver that answers status; it closes when the
// test ends.
func NewReceiver(t testing.TB, status int) *Receiver {
	r := &Receiver{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.got = append(r.got, Delivery{req.URL.Path, req.Header.Clone(), b})
		r.mu.Unlock()
		w.WriteHeader(status)
	}))
	t.Cleanup(srv.Close)
	r.URL = srv.URL
	return r
}

// Await waits until the receiver has n deliveries, two minutes at most,
// and returns all it has.
func (r *Receiver) Await(t testing.TB, n int) []Delivery {
	t.Helper()
	for i := 0; ; i++ {
		r.mu.Lock()
		got := append([]Delivery(nil), r.got...)
		r.mu.Unlock()
		if len(got) >= n {
			return got
		}
		if i > 1200 {
			t.Fatalf("%d deliveries after 2 minutes, want %d", len(got), n)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
