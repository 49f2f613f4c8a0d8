package devstack

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/genvideo/gen/shared/store"
	"github.com/genvideo/gen/shared/task"
)

// readCounter is the store with its Task reads counted by task.
type readCounter struct {
	store.Store
	mu    sync.Mutex
	reads map[string]int
}

func (s *readCounter) Task(ctx context.Context, id string) (task.Task, error) {
	s.mu.Lock()
	s.reads[id]++
	s.mu.Unlock()
	return s.Store.Task(ctx, id)
}

func (s *readCounter) of(id string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reads[id]
}

// eventsEnv is a stack whose generations wait at their gate (a task
// stays processing as long as a test needs), whose store counts task
// reads, and whose keys may hold maxStreams event streams at once.
func eventsEnv(t *testing.T, maxStreams int) (*env, *gatedGenerator, *readCounter) {
	g := newGatedGenerator()
	reads := &readCounter{reads: map[string]int{}}
	e := startEnv(t, "", func(c *Config) {
		gated(g)(c)
		c.MaxEventStreams = maxStreams
		c.Hooks.WrapStore = func(s store.Store) store.Store { reads.Store = s; return reads }
	})
	return e, g, reads
}

// processing starts a task for key and waits until its generation runs
// (and waits at its gate).
func processing(t *testing.T, e *env, g *gatedGenerator, key string) string {
	t.Helper()
	r := e.postJSON("/api/gen/text-to-video", key, `{"prompt":"a slow one","durationSeconds":8}`)
	if r.status != http.StatusAccepted {
		t.Fatalf("start = %d %s", r.status, r.raw)
	}
	id := str(r.body["taskId"])
	if got := <-g.entered; got != id {
		t.Fatalf("generator entered for %s, want %s", got, id)
	}
	return id
}

// stream is an open event stream.
type stream struct {
	resp   *http.Response
	cancel context.CancelFunc
}

// openStream opens the task's event stream with key. It returns the
// stream once its first event has arrived, or the refusal (status and
// body) when the answer is not 200.
func openStream(t *testing.T, e *env, key, taskID string) (*stream, int, []byte) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, e.url+"/api/gen/status/"+taskID+"/events", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-API-Key", key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatalf("open the stream: %v", err)
	}
	if resp.StatusCode != http.StatusOK {
		defer cancel()
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		return nil, resp.StatusCode, raw
	}
	s := &stream{resp: resp, cancel: cancel}
	t.Cleanup(s.close)
	lines := bufio.NewReader(resp.Body)
	for {
		line, err := lines.ReadString('\n')
		if err != nil {
			t.Fatalf("the stream ended before its first event: %v", err)
		}
		if strings.HasPrefix(line, "event: ") {
			return s, http.StatusOK, nil
		}
	}
}

// close leaves the stream as a client that goes away does.
func (s *stream) close() {
	s.cancel()
	s.resp.Body.Close()
}

// A key holds at most GEN_MAX_EVENT_STREAMS streams at once: one more is
// the contract's nested 429 with Retry-After, while another key still
// streams; a stream whose client leaves frees its slot at once, and its
// handler stops reading the task.
func TestEventStreamsPerKey(t *testing.T) {
	const max = 2
	e, g, reads := eventsEnv(t, max)
	a, b := e.key(1000, store.KeyLimits{}), e.key(1000, store.KeyLimits{})
	idA, idB := processing(t, e, g, a.APIKey), processing(t, e, g, b.APIKey)

	var open []*stream
	for range max {
		s, status, raw := openStream(t, e, a.APIKey, idA)
		if s == nil {
			t.Fatalf("stream %d of %d: %d %s", len(open)+1, max, status, raw)
		}
		open = append(open, s)
	}
	s, status, raw := openStream(t, e, a.APIKey, idA)
	if s != nil {
		t.Fatalf("stream %d of a key allowed %d: 200, want 429", max+1, max)
	}
	var body struct {
		Error struct {
			Code    string `json:"code"`
			Details struct {
				Limit      *int   `json:"limit"`
				Remaining  *int   `json:"remaining"`
				Reset      *int64 `json:"reset"`
				RetryAfter *int   `json:"retry_after"`
			} `json:"details"`
		} `json:"error"`
	}
	if err := json.Unmarshal(raw, &body); err != nil || status != http.StatusTooManyRequests {
		t.Fatalf("stream %d: %d %s (%v); want 429 with the nested body", max+1, status, raw, err)
	}
	d := body.Error.Details
	if body.Error.Code != "RATE_LIMIT_EXCEEDED" || d.Limit == nil || *d.Limit != max || d.Remaining == nil || *d.Remaining != 0 ||
		d.Reset == nil || *d.Reset < time.Now().Unix() || d.RetryAfter == nil || *d.RetryAfter < 1 || *d.RetryAfter > 60 {
		t.Errorf("429 body %s; want RATE_LIMIT_EXCEEDED with limit %d, remaining 0, a reset to come and retry_after 1..60", raw, max)
	}
	if other, status, raw := openStream(t, e, b.APIKey, idB); other == nil {
		t.Errorf("another key's stream while the first key's are all open: %d %s, want 200", status, raw)
	}

	// The client of one stream leaves: its slot is free right after, and
	// its handler reads the task no more.
	open[0].close()
	deadline := time.Now().Add(2 * time.Second)
	for {
		s, status, raw := openStream(t, e, a.APIKey, idA)
		if s != nil {
			open[0] = s
			break
		}
		if status != http.StatusTooManyRequests || time.Now().After(deadline) {
			t.Fatalf("a stream after one of %d left: %d %s, want 200 within 2 s", max, status, raw)
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, s := range open {
		s.close()
	}
	time.Sleep(300 * time.Millisecond) // the handlers see their clients gone
	before := reads.of(idA)
	time.Sleep(3 * time.Second)
	if n := reads.of(idA) - before; n != 0 {
		t.Errorf("%d reads of the task in the 3 s after its streams' clients left, want none", n)
	}
}

// A stream reads its task less and less often while nothing changes:
// after a second, then two, four, and every five: three reads in its
// first 6 s (a read every 0.5 s was a dozen), and each event still comes.
func TestEventStreamReadsBounded(t *testing.T) {
	e, g, reads := eventsEnv(t, 0)
	k := e.key(1000, store.KeyLimits{})
	id := processing(t, e, g, k.APIKey)
	before := reads.of(id)
	s, status, raw := openStream(t, e, k.APIKey, id)
	if s == nil {
		t.Fatalf("open: %d %s", status, raw)
	}
	time.Sleep(6 * time.Second)
	if n := reads.of(id) - before; n > 4 {
		t.Errorf("%d reads of the task in a stream's first 6 s, want at most 4 (at 0, 1, 3 s and one to spare)", n)
	}

	// Once the task finishes, the stream brings its end within 5 s.
	close(g.gate(id))
	done := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(s.resp.Body)
		done <- string(b)
	}()
	select {
	case rest := <-done:
		if !strings.Contains(rest, "event: completed") {
			t.Errorf("the stream ended with %q, want the completed event", rest)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no completed event 10 s after the task could finish")
	}
}
