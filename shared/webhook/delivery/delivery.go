// Package delivery is the webhook worker: it claims the outbox rows that
// are due, signs and posts each (webhook.Sender), records the attempt and
// reschedules a failure with exponential backoff and jitter, capped, for
// at least MaxAge before giving up. Rows are leased when claimed, so a
// worker that dies mid-delivery leaves them due again: delivery is at
// least once, and every retry of an event carries the same webhook-id.
// The same Worker runs in the local stack (Run) and in the AWS deliver
// Lambda (RunDue).
package delivery

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/genvideo/gen/shared/domain"
	"github.com/genvideo/gen/shared/store"
	"github.com/genvideo/gen/shared/webhook"
	"github.com/genvideo/gen/shared/wire"
	"github.com/genvideo/gen/shared/wire/taskview"
)

// Defaults of Worker.
const (
	DefaultFirstRetry = 30 * time.Second
	DefaultMaxBackoff = time.Hour
	// DefaultMaxAge is how long an event is retried: at least a day.
	DefaultMaxAge = 24 * time.Hour
	// maxInFlight bounds the attempts in flight at once. Each starts as
	// soon as it is claimed and the worker claims again whenever one
	// ends: no claimed row waits behind another's attempt, so its lease
	// need only cover its own attempt, and a slow receiver holds up no
	// one else's deliveries (issue 20: a claimed batch used to be waited
	// for whole).
	maxInFlight = 64
	// perAccount bounds one account's attempts in flight: more than its
	// endpoints (service.MaxWebhooks, 10), so that they do not wait for
	// each other, while one account's slow receivers, the URLs of its
	// starts included, leave most of maxInFlight to the others.
	perAccount = 16
	// perReceiver bounds the attempts to one receiver (an endpoint, or a
	// start's URL) in flight: a receiver is not flooded, and its backlog
	// does not take its account's room.
	perReceiver = 2
	// busyPoll is how often RunDue looks for new due rows while attempts
	// are in flight: the invocation running it is what delivers them on
	// AWS, since a stream shard's next batch waits for it to end.
	busyPoll = 500 * time.Millisecond
	// leaseMargin is what a lease adds to the attempt's timeout: signing
	// before it and recording it after (RecordAttempt), and clocks of
	// concurrent workers a little apart. A row is claimed again only once
	// its attempt is surely over.
	leaseMargin = 10 * time.Second
)

// Outbox is what the worker needs of the store.
type Outbox interface {
	ClaimDeliveries(ctx context.Context, now time.Time, lease time.Duration, limit int, fits store.ClaimFits) ([]domain.Delivery, error)
	RecordAttempt(ctx context.Context, a store.DeliveryAttempt, state string, next time.Time) error
	NextDelivery(ctx context.Context) (time.Time, bool, error)
}

// Worker delivers the outbox.
type Worker struct {
	Outbox Outbox
	Sender *webhook.Sender
	// Now is the clock (default time.Now): tests make hours pass.
	Now    func() time.Time
	Logger *slog.Logger
	// FirstRetry, MaxBackoff and MaxAge shape the retries (defaults
	// above).
	FirstRetry, MaxBackoff, MaxAge time.Duration
}

func (w *Worker) now() time.Time {
	if w.Now != nil {
		return w.Now()
	}
	return time.Now()
}

// timeout bounds one attempt: the sender's.
func (w *Worker) timeout() time.Duration {
	if w.Sender != nil && w.Sender.Timeout > 0 {
		return w.Sender.Timeout
	}
	return webhook.DefaultTimeout
}

// lease is how long a claimed row is not claimed again: the whole of its
// attempt, which starts as soon as it is claimed (20 s by default, which
// is also how soon a row claimed by a worker that died is sent again).
func (w *Worker) lease() time.Duration { return w.timeout() + leaseMargin }

func (w *Worker) log() *slog.Logger {
	if w.Logger != nil {
		return w.Logger
	}
	return slog.Default()
}

// Body is the JSON body of d, a wire.WebhookEvent whose data is the
// task's status body as the delivery recorded it: the same bytes on
// every attempt.
func (w *Worker) Body(d domain.Delivery) ([]byte, error) {
	return json.Marshal(wire.WebhookEvent{Type: d.Event, Timestamp: d.CreatedAt.UTC(), Data: taskview.Status(d.Task)})
}

// Backoff is the wait after the n-th failed attempt: FirstRetry doubled
// each time, capped at MaxBackoff, less up to a fifth at random so that
// receivers coming back are not met by every retry at once.
func (w *Worker) Backoff(n int) time.Duration {
	first, most := w.FirstRetry, w.MaxBackoff
	if first <= 0 {
		first = DefaultFirstRetry
	}
	if most <= 0 {
		most = DefaultMaxBackoff
	}
	d := first
	for i := 1; i < n && d < most; i++ {
		d *= 2
	}
	d = min(d, most)
	return d - time.Duration(rand.Int64N(int64(d)/5+1))
}

// flight is what one run has in flight: the attempts per account and
// per receiver, bounded (maxInFlight, perAccount, perReceiver).
type flight struct {
	w         *Worker
	n         int
	accounts  map[string]int
	receivers map[string]int
	done      chan landed
	attempted int
	errs      []error
}

// landed is an attempt that ended.
type landed struct {
	d   domain.Delivery
	err error
}

func (w *Worker) flight() *flight {
	return &flight{w: w, accounts: map[string]int{}, receivers: map[string]int{}, done: make(chan landed, maxInFlight)}
}

// fits is the claim's store.ClaimFits: the bounds, counting what is in
// flight and what the claim took before d.
func (f *flight) fits(taken []domain.Delivery, d domain.Delivery) bool {
	acct, rcv := f.accounts[d.AccountID], f.receivers[d.Receiver()]
	for _, t := range taken {
		if t.AccountID == d.AccountID {
			acct++
		}
		if t.Receiver() == d.Receiver() {
			rcv++
		}
	}
	return acct < perAccount && rcv < perReceiver
}

// fill claims what is due and fits the bounds, and starts each attempt at
// once.
func (f *flight) fill(ctx context.Context) error {
	for f.n < maxInFlight {
		ds, err := f.w.Outbox.ClaimDeliveries(ctx, f.w.now(), f.w.lease(), maxInFlight-f.n, f.fits)
		if err != nil {
			return fmt.Errorf("claim deliveries: %w", err)
		}
		if len(ds) == 0 {
			return nil
		}
		for _, d := range ds {
			f.n++
			f.accounts[d.AccountID]++
			f.receivers[d.Receiver()]++
			go func() { f.done <- landed{d, f.w.attempt(ctx, d)} }()
		}
	}
	return nil
}

// land counts an attempt that ended.
func (f *flight) land(l landed) {
	f.n--
	f.attempted++
	if f.accounts[l.d.AccountID]--; f.accounts[l.d.AccountID] == 0 {
		delete(f.accounts, l.d.AccountID)
	}
	if f.receivers[l.d.Receiver()]--; f.receivers[l.d.Receiver()] == 0 {
		delete(f.receivers, l.d.Receiver())
	}
	if l.err != nil {
		f.errs = append(f.errs, l.err)
	}
}

// drain waits for every attempt in flight.
func (f *flight) drain() {
	for f.n > 0 {
		f.land(<-f.done)
	}
}

// RunDue delivers every row due now, attempting each once, and returns
// how many it attempted: the AWS deliver Lambda's run. It claims what is
// due within the bounds, starts each attempt at once, and claims again
// as attempts end, and every busyPoll while some are in flight, until
// nothing is in flight and nothing more is due. With a deadline on ctx
// it stops claiming when an attempt could no longer finish in time.
func (w *Worker) RunDue(ctx context.Context) (int, error) {
	f := w.flight()
	var claimErr error
	for {
		if end, ok := ctx.Deadline(); ok && time.Until(end) < w.lease() {
			// What is left stays due: the next run takes it.
			f.drain()
			return f.attempted, errors.Join(f.errs...)
		}
		if err := f.fill(ctx); err != nil {
			claimErr = err
		}
		if f.n == 0 || claimErr != nil {
			f.drain()
			return f.attempted, errors.Join(append(f.errs, claimErr)...)
		}
		t := time.NewTimer(busyPoll)
		select {
		case l := <-f.done:
			f.land(l)
		case <-t.C:
		}
		t.Stop()
	}
}

// attempt tries d once and records what happened.
func (w *Worker) attempt(ctx context.Context, d domain.Delivery) error {
	at := w.now()
	a := store.DeliveryAttempt{DeliveryID: d.ID, Event: d.Event, TaskID: d.Task.ID, Attempt: d.Attempts + 1, At: at}
	var res webhook.Result
	body, err := w.Body(d)
	var h map[string][]string
	if err == nil {
		if d.Secret == "" {
			err = errors.New("no signing secret")
		} else {
			// The timestamp is the attempt's, as Standard Webhooks
			// wants; the id is the event's, the same on every retry.
			h, err = webhook.Headers(d.Secret, d.ID, at, body)
		}
	}
	if err != nil {
		res = webhook.Result{Err: err}
	} else {
		res = w.Sender.Send(ctx, d.URL, h, body)
	}
	a.Status, a.Latency = res.Status, res.Latency
	state, next := domain.DeliveryDelivered, at
	if res.Err != nil {
		a.Error = truncate(res.Err.Error(), 300)
		state, next = domain.DeliveryPending, at.Add(w.Backoff(a.Attempt))
		maxAge := w.MaxAge
		if maxAge <= 0 {
			maxAge = DefaultMaxAge
		}
		if at.Sub(d.CreatedAt) >= maxAge || d.Secret == "" {
			state = domain.DeliveryFailed
		}
	}
	// The URL may carry a token of the receiver's: it is not logged.
	w.log().Info("webhook attempt", "delivery", d.ID, "event", d.Event, "task", d.Task.ID,
		"endpoint", d.EndpointID, "attempt", a.Attempt, "status", a.Status,
		"latency_ms", a.Latency.Milliseconds(), "state", state, "error", a.Error)
	if err := w.Outbox.RecordAttempt(ctx, a, state, next); err != nil {
		return fmt.Errorf("record attempt %d of %s: %w", a.Attempt, d.ID, err)
	}
	return nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}

// Run delivers until ctx ends: the local worker. It claims whenever wake
// fires (a move or a replay wrote rows), an attempt ends, the earliest
// pending row comes due, and at least every poll; attempts run as
// RunDue's do, each started once claimed, within the bounds.
func (w *Worker) Run(ctx context.Context, wake <-chan struct{}, poll time.Duration) {
	f := w.flight()
	defer f.drain()
	for {
		if err := f.fill(ctx); err != nil && ctx.Err() == nil {
			w.log().Error("webhook deliveries", "error", err)
		}
		for _, err := range f.errs {
			w.log().Error("webhook deliveries", "error", err)
		}
		f.errs = nil
		wait := poll
		if next, ok, err := w.Outbox.NextDelivery(ctx); err == nil && ok {
			switch d := next.Sub(w.now()); {
			case d > 0:
				wait = min(wait, d)
			case f.n == 0:
				// Due but not claimed (another claim took it meanwhile,
				// or it came due just now): look again soon.
				wait = min(wait, 10*time.Millisecond)
			}
			// Due with attempts in flight: held back by a bound, it is
			// claimed when one of them ends.
		}
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case <-wake:
		case l := <-f.done:
			f.land(l)
		case <-timer.C:
		}
		timer.Stop()
	}
}
