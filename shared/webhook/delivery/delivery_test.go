package delivery_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/genvideo/gen/shared/domain"
	"github.com/genvideo/gen/shared/params"
	"github.com/genvideo/gen/shared/store"
	"github.com/genvideo/gen/shared/store/sqlitestore"
	"github.com/genvideo/gen/shared/strictjson"
	"github.com/genvideo/gen/shared/task"
	"github.com/genvideo/gen/shared/testing/webhooktest"
	"github.com/genvideo/gen/shared/webhook"
	"github.com/genvideo/gen/shared/webhook/delivery"
	"github.com/genvideo/gen/shared/wire"
)

// receiver records what it got; it answers 500 until healthy.
type receiver struct {
	mu      sync.Mutex
	healthy bool
	got     []webhooktest.Message
	ok      []webhooktest.Message
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	defer r.mu.Unlock()
	m := webhooktest.Message{Header: req.Header.Clone(), Body: body}
	r.got = append(r.got, m)
	if !r.healthy {
		w.WriteHeader(500)
		return
	}
	r.ok = append(r.ok, m)
	w.WriteHeader(204)
}

func setup(t *testing.T, clk *delivery.FakeClock, url string) (*sqlitestore.Store, string) {
	t.Helper()
	s, err := sqlitestore.Open(filepath.Join(t.TempDir(), "gen.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	ctx := t.Context()
	if err := s.CreateAccount(ctx, domain.Account{ID: "acct", Credits: 1000, CreatedAt: clk.Now()}); err != nil {
		t.Fatal(err)
	}
	secret := webhook.NewSecret()
	if err := s.CreateWebhook(ctx, domain.WebhookEndpoint{ID: "wh_1", AccountID: "acct", URL: url,
		Events: domain.EventTypes, Secret: secret, CreatedAt: clk.Now()}); err != nil {
		t.Fatal(err)
	}
	return s, secret
}

func newTask(clk *delivery.FakeClock, suffix string) task.Task {
	return task.Task{ID: "gen_" + suffix, AccountID: "acct", KeyName: "k", Type: "text-to-video",
		Model: "gen-3.1-fast-generate-001", Prompt: "p", CreditsCost: 10, CreatedAt: clk.Now(),
		Params: params.Parameters{SampleCount: 1, DurationSeconds: 8}}
}

// TestOutageOfTenMinutes: a receiver answers 500 for ten minutes, then
// 200; every event arrives, each verified by the reference library, and
// every retry of an event carries its webhook-id. The clock is fake: ten
// minutes pass in steps, without sleeping.
func TestOutageOfTenMinutes(t *testing.T) {
	clk := delivery.NewFakeClock(time.Now().UTC().Add(-11 * time.Minute))
	rcv := &receiver{}
	srv := httptest.NewServer(rcv)
	defer srv.Close()
	s, secret := setup(t, clk, srv.URL+"/hook")
	ctx := t.Context()
	w := &delivery.Worker{Outbox: s, Sender: &webhook.Sender{AllowPrivate: true}, Now: clk.Now}

	const n = 3
	for i := range n {
		tk := newTask(clk, string(rune('a'+i)))
		if _, err := s.CreateTask(ctx, tk, domain.StartGuard{}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.MarkProcessing(ctx, tk.ID, clk.Now()); err != nil {
			t.Fatal(err)
		}
		if i == n-1 {
			if _, err := s.Fail(ctx, tk.ID, task.Failure{Code: task.FailGeneration, Message: "x"}, clk.Now()); err != nil {
				t.Fatal(err)
			}
		} else if _, err := s.Complete(ctx, tk.ID, domain.Completion{Videos: []task.Video{{Key: "v"}}}, clk.Now()); err != nil {
			t.Fatal(err)
		}
	}
	outageEnds := clk.Now().Add(10 * time.Minute)
	for step := 0; step < 200; step++ {
		if !clk.Now().Before(outageEnds) {
			rcv.mu.Lock()
			rcv.healthy = true
			rcv.mu.Unlock()
		}
		if _, err := w.RunDue(ctx); err != nil {
			t.Fatal(err)
		}
		if _, ok, _ := s.NextDelivery(ctx); !ok {
			break
		}
		clk.Add(10 * time.Second)
	}
	if _, ok, _ := s.NextDelivery(ctx); ok {
		t.Fatal("deliveries still pending")
	}
	// 3 processing + 2 completed + 1 failed events, each delivered once.
	byID := map[string]int{}
	types := map[string]int{}
	// Each body is the contract's webhook event, nothing more: its data
	// the task's status body as the move left it, without videos.
	statusOf := map[string]wire.Status{domain.EventProcessing: wire.StatusProcessing,
		domain.EventCompleted: wire.StatusCompleted, domain.EventFailed: wire.StatusFailed}
	for _, m := range rcv.ok {
		byID[m.Header.Get("webhook-id")]++
		var ev wire.WebhookEvent
		if err := strictjson.Unmarshal(m.Body, &ev); err != nil {
			t.Fatalf("body %s: %v; want a wire.WebhookEvent", m.Body, err)
		}
		types[ev.Type]++
		if d := ev.Data; d.Status != statusOf[ev.Type] || d.TaskID == "" || len(d.Videos) != 0 ||
			(d.Status == wire.StatusFailed) != (d.Error != nil) || ev.Timestamp.IsZero() {
			t.Errorf("%s event: %+v, want the task %s as its status body, without videos", ev.Type, ev, statusOf[ev.Type])
		}
	}
	if len(byID) != 6 || types[domain.EventProcessing] != 3 || types[domain.EventCompleted] != 2 || types[domain.EventFailed] != 1 {
		t.Fatalf("accepted %d events by id %v, by type %v", len(rcv.ok), byID, types)
	}
	// Retries: the outage made several attempts of each; all ids are
	// among the six.
	if len(rcv.got) <= len(rcv.ok) {
		t.Fatalf("%d attempts for %d deliveries: the outage was not retried", len(rcv.got), len(rcv.ok))
	}
	for _, m := range rcv.got {
		if _, ok := byID[m.Header.Get("webhook-id")]; !ok {
			t.Errorf("an attempt with an unknown webhook-id %q", m.Header.Get("webhook-id"))
		}
	}
	// The signatures, by the reference library: the timestamps are the
	// fake clock's, within five minutes of the real one at the end.
	var msgs []webhooktest.Message
	for _, m := range rcv.ok {
		m.Secret = secret
		msgs = append(msgs, m)
	}
	for i, res := range webhooktest.Verify(t, msgs) {
		if res != "ok" {
			t.Errorf("delivery %d: reference verifier: %s", i, res)
		}
	}
	page, _, err := s.Attempts(ctx, "acct", "wh_1", store.AttemptQuery{Limit: 100})
	if err != nil || len(page) != len(rcv.got) {
		t.Fatalf("attempts listed %d, receiver got %d (%v)", len(page), len(rcv.got), err)
	}
}

// TestGivesUpAfterADay: a receiver that never answers 2xx is retried,
// with backoff capped, for at least a day, then the delivery fails; a
// replay sends it again.
func TestGivesUpAfterADay(t *testing.T) {
	clk := delivery.NewFakeClock(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	rcv := &receiver{}
	srv := httptest.NewServer(rcv)
	defer srv.Close()
	s, _ := setup(t, clk, srv.URL)
	ctx := t.Context()
	w := &delivery.Worker{Outbox: s, Sender: &webhook.Sender{AllowPrivate: true}, Now: clk.Now}
	tk := newTask(clk, "a")
	if _, err := s.CreateTask(ctx, tk, domain.StartGuard{}); err != nil {
		t.Fatal(err)
	}
	start := clk.Now()
	if _, err := s.MarkProcessing(ctx, tk.ID, start); err != nil {
		t.Fatal(err)
	}
	var last time.Time
	for range 1000 {
		next, ok, err := s.NextDelivery(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		if next.After(clk.Now()) {
			clk.Add(next.Sub(clk.Now()))
		}
		last = clk.Now()
		if _, err := w.RunDue(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if last.Sub(start) < 24*time.Hour || last.Sub(start) > 26*time.Hour {
		t.Errorf("last attempt %s after the event, want about a day", last.Sub(start))
	}
	attempts := len(rcv.got)
	if attempts < 20 || attempts > 60 {
		t.Errorf("%d attempts over a day", attempts)
	}
	id := domain.DeliveryID(tk.ID, domain.EventProcessing, "wh_1")
	rcv.healthy = true
	if err := s.ReplayDelivery(ctx, "acct", "wh_1", id, clk.Now()); err != nil {
		t.Fatal(err)
	}
	if _, err := w.RunDue(ctx); err != nil {
		t.Fatal(err)
	}
	if len(rcv.ok) != 1 || rcv.ok[0].Header.Get("webhook-id") != id {
		t.Fatalf("replay: %d accepted", len(rcv.ok))
	}
}

// countingOutbox counts claims and has nothing due.
type countingOutbox struct{ claims int }

func (o *countingOutbox) ClaimDeliveries(context.Context, time.Time, time.Duration, int, store.ClaimFits) ([]domain.Delivery, error) {
	o.claims++
	return nil, nil
}
func (o *countingOutbox) RecordAttempt(context.Context, store.DeliveryAttempt, string, time.Time) error {
	return nil
}
func (o *countingOutbox) NextDelivery(context.Context) (time.Time, bool, error) {
	return time.Time{}, false, nil
}

// TestRunDueLeavesWhatCannotFinish: with a deadline too near for a batch
// of attempts (the deliver Lambda's last seconds), RunDue claims nothing,
// so that no row is leased by an invocation about to end; with room, it
// claims.
func TestRunDueLeavesWhatCannotFinish(t *testing.T) {
	for _, c := range []struct {
		left   time.Duration
		claims int
	}{{time.Second, 0}, {10 * time.Minute, 1}} {
		o := &countingOutbox{}
		w := &delivery.Worker{Outbox: o}
		ctx, cancel := context.WithTimeout(context.Background(), c.left)
		n, err := w.RunDue(ctx)
		cancel()
		if n != 0 || err != nil || o.claims != c.claims {
			t.Errorf("%s left: %d attempted, %v, %d claims; want %d claims", c.left, n, err, o.claims, c.claims)
		}
	}
}

// TestSlowEndpointHoldsUpNotItsNeighbour (issue 20, 2, within one
// account): an endpoint whose receiver holds every connection gets at
// most two attempts in flight, and the account's other endpoint gets its
// delivery meanwhile, from the same run.
func TestSlowEndpointHoldsUpNotItsNeighbour(t *testing.T) {
	slow := webhooktest.NewHolder(t)
	fast := make(chan struct{}, 8)
	quick := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fast <- struct{}{}
		w.WriteHeader(204)
	}))
	defer quick.Close()

	clk := delivery.NewFakeClock(time.Now().UTC())
	s, _ := setup(t, clk, slow.URL+"/hook") // wh_1: the slow one
	ctx := t.Context()
	// Five events for the slow endpoint first, then one for the fast.
	for i := range 5 {
		tk := newTask(clk, string(rune('a'+i)))
		if _, err := s.CreateTask(ctx, tk, domain.StartGuard{}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.MarkProcessing(ctx, tk.ID, clk.Now()); err != nil {
			t.Fatal(err)
		}
	}
	clk.Add(time.Second)
	if err := s.CreateWebhook(ctx, domain.WebhookEndpoint{ID: "wh_2", AccountID: "acct", URL: quick.URL + "/hook",
		Events: domain.EventTypes, Secret: webhook.NewSecret(), CreatedAt: clk.Now()}); err != nil {
		t.Fatal(err)
	}
	tk := newTask(clk, "z")
	if _, err := s.CreateTask(ctx, tk, domain.StartGuard{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.MarkProcessing(ctx, tk.ID, clk.Now()); err != nil {
		t.Fatal(err)
	}

	w := &delivery.Worker{Outbox: s, Sender: &webhook.Sender{AllowPrivate: true}, Now: clk.Now}
	done := make(chan error, 1)
	go func() { _, err := w.RunDue(ctx); done <- err }()
	// The fast endpoint has one delivery (it was created after the first
	// five moves); the slow one has six.
	select {
	case <-fast:
	case <-time.After(time.Minute):
		t.Fatal("the fast endpoint got nothing within a minute")
	}
	// No slow attempt can end before Release, so the fast one did not wait
	// for them. The slow endpoint's attempts may still be connecting when
	// the fast one arrives: wait until it holds one, so that the test saw
	// both endpoints served at once.
	held := 0
	for end := time.Now().Add(time.Minute); held == 0; time.Sleep(10 * time.Millisecond) {
		if held, _, _ = slow.Counts(); held == 0 && time.Now().After(end) {
			t.Fatal("the slow endpoint held no attempt within a minute of the fast one's")
		}
	}
	slow.Release()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if _, most, _ := slow.Counts(); most > 2 {
		t.Errorf("at most %d slow attempts at once; want no more than 2, the bound per receiver", most)
	}
}
