package webhooktest

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// Holder is a receiver on loopback that holds every delivery's
// connection open, as a slow or hostile receiver does, until the test
// releases them or the sender gives up; then it answers 204. Held tells
// of each delivery as it arrives.
type Holder struct {
	*httptest.Server
	Held chan struct{}

	release chan struct{}
	once    sync.Once
	mu      sync.Mutex
	open    int
	most    int
	ended   int
}

// NewHolder starts a Holder, released and closed when the test ends.
func NewHolder(t testing.TB) *Holder {
	h := &Holder{Held: make(chan struct{}, 256), release: make(chan struct{})}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		h.mu.Lock()
		h.open++
		h.most = max(h.most, h.open)
		h.mu.Unlock()
		h.Held <- struct{}{}
		select {
		case <-h.release:
		case <-r.Context().Done():
		}
		h.mu.Lock()
		h.open--
		h.ended++
		h.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(func() { h.Release(); h.Close() })
	return h
}

// Release lets every held delivery, and every later one, be answered.
func (h *Holder) Release() { h.once.Do(func() { close(h.release) }) }

// Counts are the deliveries held now, the most held at once, and those
// that ended (released, or given up by the sender).
func (h *Holder) Counts() (open, most, ended int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.open, h.most, h.ended
}
