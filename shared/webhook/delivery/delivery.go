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
	"sync"
	"time"

	"github.com/genvideo/gen/shared/store"
	"github.com/genvideo/gen/shared/task"
	"github.com/genvideo/gen/shared/webhook"
)

// Defaults of Worker.
const (
	DefaultFirstRetry = 30 * time.Second
	DefaultMaxBackoff = time.Hour
	// DefaultMaxAge is how long an event is retried: at least a day.
	DefaultMaxAge = 24 * time.Hour
	// parallel is how many rows one claim takes and how many attempts
	// are in flight at once, so that one slow receiver does not hold up
	// the others. A claim is exactly one round of attempts, all started
	// at once: no claimed row waits behind another's attempt, and so its
	// lease need only cover its own attempt.
	parallel = 8
	// leaseMargin is what a lease adds to the attempt's timeout: signing
	// before it and recording it after (RecordAttempt), and clocks of
	// concurrent workers a little apart. A row is claimed again only once
	// its attempt is surely over.
	leaseMargin = 10 * time.Second
)

// Outbox is what the worker needs of the store.
type Outbox interface {
	ClaimDeliveries(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]store.Delivery, error)
	RecordAttempt(ctx context.Context, a store.DeliveryAttempt, state string, next time.Time) error
	NextDelivery(ctx context.Context) (time.Time, bool, error)
}

// Worker delivers the outbox.
type Worker struct {
	Outbox Outbox
	Sender *webhook.Sender
	// Data is an event's data: the task's status body
	// (httpapi.WebhookData).
	Data func(task.Task) any
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

// Payload is the body of an event.
type Payload struct {
	Type      string `json:"type"`
	Timestamp string `json:"timestamp"`
	Data      any    `json:"data"`
}

// Body is the JSON body of d: the same bytes on every attempt.
func (w *Worker) Body(d store.Delivery) ([]byte, error) {
	return json.Marshal(Payload{Type: d.Event, Timestamp: d.CreatedAt.UTC().Format(time.RFC3339Nano), Data: w.Data(d.Task)})
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

// RunDue delivers every row due now, attempting each once, and returns
// how many it attempted. It claims a round of rows at a time, leased for
// one attempt, and attempts them at once; with a deadline on ctx it stops
// claiming when a round could no longer finish in time.
func (w *Worker) RunDue(ctx context.Context) (int, error) {
	total := 0
	for {
		if end, ok := ctx.Deadline(); ok && time.Until(end) < w.lease() {
			// What is left stays due: the next run takes it.
			return total, nil
		}
		ds, err := w.Outbox.ClaimDeliveries(ctx, w.now(), w.lease(), parallel)
		if err != nil {
			return total, fmt.Errorf("claim deliveries: %w", err)
		}
		if len(ds) == 0 {
			return total, nil
		}
		var wg sync.WaitGroup
		errs := make([]error, len(ds))
		for i, d := range ds {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = w.attempt(ctx, d)
			}()
		}
		wg.Wait()
		total += len(ds)
		if err := errors.Join(errs...); err != nil {
			return total, err
		}
		if len(ds) < parallel {
			return total, nil
		}
	}
}

// attempt tries d once and records what happened.
func (w *Worker) attempt(ctx context.Context, d store.Delivery) error {
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
	state, next := store.DeliveryDelivered, at
	if res.Err != nil {
		a.Error = truncate(res.Err.Error(), 300)
		state, next = store.DeliveryPending, at.Add(w.Backoff(a.Attempt))
		maxAge := w.MaxAge
		if maxAge <= 0 {
			maxAge = DefaultMaxAge
		}
		if at.Sub(d.CreatedAt) >= maxAge || d.Secret == "" {
			state = store.DeliveryFailed
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

// Run delivers until ctx ends: whenever wake fires (a move wrote rows),
// when the earliest pending row is due, and at least every poll.
func (w *Worker) Run(ctx context.Context, wake <-chan struct{}, poll time.Duration) {
	for {
		if _, err := w.RunDue(ctx); err != nil && ctx.Err() == nil {
			w.log().Error("webhook deliveries", "error", err)
		}
		wait := poll
		if next, ok, err := w.Outbox.NextDelivery(ctx); err == nil && ok {
			wait = min(wait, max(next.Sub(w.now()), 10*time.Millisecond))
		}
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case <-wake:
		case <-timer.C:
		}
		timer.Stop()
	}
}
