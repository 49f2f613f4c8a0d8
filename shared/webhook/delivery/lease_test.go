package delivery

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/genvideo/gen/shared/domain"
	"github.com/genvideo/gen/shared/params"
	"github.com/genvideo/gen/shared/store/sqlitestore"
	"github.com/genvideo/gen/shared/task"
	"github.com/genvideo/gen/shared/webhook"
)

// FakeClock is a clock a test moves: this file's, and the package's
// external tests' (delivery_test) through this test-only export.
type FakeClock struct {
	mu  sync.Mutex
	now time.Time
}

// NewFakeClock returns a clock standing at t.
func NewFakeClock(t time.Time) *FakeClock { return &FakeClock{now: t} }

func (c *FakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *FakeClock) Add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// attempts is what both workers' transports saw: the webhook-ids of the
// attempts in flight and how often each id was attempted.
type attempts struct {
	mu       sync.Mutex
	inFlight map[string]string // webhook-id -> worker
	count    map[string]int
	twice    []string
}

func (a *attempts) begin(worker, id string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if other, ok := a.inFlight[id]; ok {
		a.twice = append(a.twice, fmt.Sprintf("%s attempted by %s while %s's attempt was in flight", id, worker, other))
	}
	a.inFlight[id] = worker
	a.count[id]++
}

func (a *attempts) end(id string) {
	a.mu.Lock()
	delete(a.inFlight, id)
	a.mu.Unlock()
}

// gatedTransport is the network at the boundary: it notes each attempt,
// tells started (when set), takes a token from gate (when set), and
// answers 204.
type gatedTransport struct {
	name    string
	seen    *attempts
	started chan<- string
	gate    <-chan struct{}
}

func (g *gatedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	id := req.Header.Get("webhook-id")
	g.seen.begin(g.name, id)
	defer g.seen.end(id)
	if g.started != nil {
		g.started <- id
	}
	if g.gate != nil {
		select {
		case <-g.gate:
		case <-req.Context().Done():
			return nil, req.Context().Err()
		}
	}
	return &http.Response{StatusCode: 204, Body: io.NopCloser(strings.NewReader("")), Header: http.Header{}, Request: req}, nil
}

// TestNoSecondAttemptWithinTheFirst: two workers on one store (the
// stream-woken and the scheduled deliver Lambdas on AWS). While worker A's
// attempts are in flight, within their timeout, worker B runs: it must
// not claim and send any of them again. A's receiver holds every attempt
// until the test has moved the fake clock by most of a timeout and run B,
// which takes the rest (A holds its receiver's perReceiver at a time);
// with several rounds of rows due, a lease that covered only the start
// of a claimed batch let B take A's later rounds.
func TestNoSecondAttemptWithinTheFirst(t *testing.T) {
	clk := NewFakeClock(time.Now().UTC())
	s, err := sqlitestore.Open(filepath.Join(t.TempDir(), "gen.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	ctx := t.Context()
	if err := s.CreateAccount(ctx, domain.Account{ID: "acct", Credits: 1000, CreatedAt: clk.Now()}); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateWebhook(ctx, domain.WebhookEndpoint{ID: "wh_1", AccountID: "acct", URL: "https://receiver.example/hook",
		Events: domain.EventTypes, Secret: webhook.NewSecret(), CreatedAt: clk.Now()}); err != nil {
		t.Fatal(err)
	}
	const n = 3 * perReceiver
	for i := range n {
		tk := task.Task{ID: fmt.Sprintf("gen_%02d", i), AccountID: "acct", KeyName: "k", Type: "text-to-video",
			Model: "gen-3.1-fast-generate-001", Prompt: "p", CreditsCost: 10, CreatedAt: clk.Now(),
			Params: params.Parameters{SampleCount: 1, DurationSeconds: 8}}
		if _, err := s.CreateTask(ctx, tk, domain.StartGuard{}); err != nil {
			t.Fatal(err)
		}
		// One generation.processing delivery per task.
		if _, err := s.MarkProcessing(ctx, tk.ID, clk.Now()); err != nil {
			t.Fatal(err)
		}
	}

	seen := &attempts{inFlight: map[string]string{}, count: map[string]int{}}
	started := make(chan string)
	gate := make(chan struct{})
	a := &Worker{Outbox: s, Now: clk.Now,
		Sender: &webhook.Sender{Transport: &gatedTransport{name: "A", seen: seen, started: started, gate: gate}}}
	b := &Worker{Outbox: s, Now: clk.Now,
		Sender: &webhook.Sender{Transport: &gatedTransport{name: "B", seen: seen}}}

	done := make(chan error, 1)
	go func() { _, err := a.RunDue(ctx); done <- err }()

	timeout := a.timeout()
	for finished := false; !finished; {
		seen.mu.Lock()
		want := min(perReceiver, n-len(seen.count))
		seen.mu.Unlock()
		// Wait for A's next round to be in flight, or for A to end.
		got := 0
		for got < want || want == 0 {
			select {
			case <-started:
				got++
			case err := <-done:
				if err != nil {
					t.Fatal(err)
				}
				finished = true
			}
			if finished {
				break
			}
		}
		if got == 0 {
			continue
		}
		// A's round is in flight, its attempts still within their
		// timeout, when B runs.
		clk.Add(timeout - time.Second)
		if _, err := b.RunDue(ctx); err != nil {
			t.Fatal(err)
		}
		for range got {
			gate <- struct{}{}
		}
	}

	seen.mu.Lock()
	defer seen.mu.Unlock()
	for _, m := range seen.twice {
		t.Error(m)
	}
	for id, c := range seen.count {
		if c != 1 {
			t.Errorf("%s attempted %d times", id, c)
		}
	}
	if len(seen.count) != n {
		t.Errorf("%d of %d deliveries attempted", len(seen.count), n)
	}
	if _, ok, _ := s.NextDelivery(context.Background()); ok {
		t.Error("deliveries still pending")
	}
}
