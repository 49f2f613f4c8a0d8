package httpapi

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/genvideo/gen/shared/service"
	"github.com/genvideo/gen/shared/task"
)

// The pace of the event stream (infra/docs/contract.md, "Live events").
var (
	// A stream reads its task eventsPollMin after the last change of its
	// status, then twice as long after each read that found none, up to
	// eventsPollMax: at most 1 + eventsMaxDuration/eventsPollMax reads,
	// plus three for each of the (at most three) changes of status,
	// about 180 in 14 minutes, where a read every 0.5 s was 1,680.
	eventsPollMin = time.Second
	eventsPollMax = 5 * time.Second
	// eventsHeartbeat is the longest a stream stays silent: a comment
	// line keeps proxies (and API Gateway's idle timeout) from closing it.
	eventsHeartbeat = 15 * time.Second
	// eventsMaxDuration ends a stream; the client reconnects with
	// Last-Event-ID (API Gateway's streaming lasts 15 minutes at most,
	// and the Lambda that streams it as long: functions/status-events).
	eventsMaxDuration = 14 * time.Minute
	// eventsRetry is the reconnection delay the stream tells EventSource.
	eventsRetry = 2 * time.Second
)

// headerLastEventID is the header an EventSource resumes with.
const headerLastEventID = "Last-Event-ID"

// stage is one state of a task as the stream reports it: the task as it
// was then, and the event id, which grows with the task's life (pending
// 1000, processing 2000 plus its progress, finished 3000), so that a
// stream resumed with Last-Event-ID sends only what comes after, whichever
// process serves it.
type stage struct {
	id int
	t  task.Task
}

// stages are the states task t has gone through, oldest first, as far as
// its record tells: pending, processing when it started, then its end.
func stages(t task.Task) []stage {
	pending := t
	pending.Status, pending.Progress = task.Pending, 0
	pending.StartedAt, pending.CompletedAt = time.Time{}, time.Time{}
	pending.Videos, pending.Failure, pending.CreditsRefunded = nil, nil, 0
	out := []stage{{1000, pending}}
	if t.Status == task.Processing || !t.StartedAt.IsZero() {
		p := pending
		p.Status, p.StartedAt = task.Processing, t.StartedAt
		if t.Status == task.Processing {
			p.Progress = min(max(t.Progress, 0), 99)
		}
		out = append(out, stage{2000 + p.Progress, p})
	}
	if t.Status.Terminal() {
		out = append(out, stage{3000, t})
	}
	return out
}

// events serves GET /api/gen/status/{taskId}/events, Server-Sent Events
// (an extension): the task's status body, as the status endpoint answers
// it, at each state it reaches, in order and each once, the states it went
// through before the stream opened first; a heartbeat comment while
// nothing changes; closed after the terminal event. A client resumes with
// Last-Event-ID (or ?lastEventId=) and gets only later states. On AWS
// the same handler streams through API Gateway (endpoint.Stream).
func (a *API) events(w http.ResponseWriter, r *http.Request, c *service.Caller) error {
	ctx := r.Context()
	t, err := a.svc.Task(ctx, *c, taskID(r))
	if err != nil {
		return err
	}
	last, err := lastEventID(r)
	if err != nil {
		return err
	}
	// One of the key's few stream slots, held until the stream ends: no
	// one key holds every execution of the function that streams.
	slot, err := a.svc.OpenStream(ctx, *c)
	if err != nil {
		return err
	}
	defer slot.Close(ctx)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	_ = rc.SetWriteDeadline(time.Time{}) // a stream outlives any write timeout
	fmt.Fprintf(w, "retry: %d\n\n", eventsRetry.Milliseconds())

	start, quiet := time.Now(), time.Now()
	wait := eventsPollMin
	for {
		for _, s := range stages(t) {
			if s.id <= last {
				continue
			}
			if err := a.writeEvent(w, r, s); err != nil {
				a.log.LogAttrs(ctx, slog.LevelWarn, "event stream ended: cannot write an event",
					slog.String("task", t.ID), slog.String("error", err.Error()))
				return nil
			}
			last, quiet = s.id, time.Now()
		}
		if t.Status.Terminal() {
			return nil
		}
		// A failed write or flush is how a stream learns that its client
		// left where nothing cancels the request's context (a Lambda's
		// response stream: endpoint.Stream); it stops at the first.
		if err := rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
			return nil
		}
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil // the client went away
		case <-timer.C:
		}
		switch {
		case time.Since(start) >= eventsMaxDuration:
			fmt.Fprint(w, ": heartbeat\n\n")
			return nil
		case time.Since(quiet) >= eventsHeartbeat:
			if _, err := fmt.Fprint(w, ": heartbeat\n\n"); err != nil {
				return nil // the client went away
			}
			if err := rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
				return nil
			}
			quiet = time.Now()
		}
		if err := slot.Renew(ctx); err != nil {
			a.log.LogAttrs(ctx, slog.LevelWarn, "event stream ended: cannot keep its slot",
				slog.String("task", t.ID), slog.String("error", err.Error()))
			return nil
		}
		next, err := a.svc.Task(ctx, *c, t.ID)
		if err != nil {
			// Deleted, or the store is down: the client reconnects and
			// is answered as the status endpoint would answer it.
			if !errors.Is(err, service.ErrTaskNotFound) && ctx.Err() == nil {
				a.log.LogAttrs(ctx, slog.LevelWarn, "event stream ended: cannot read its task",
					slog.String("task", t.ID), slog.String("error", err.Error()))
			}
			return nil
		}
		if next.Status != t.Status {
			wait = eventsPollMin
		} else {
			wait = min(2*wait, eventsPollMax)
		}
		t = next
	}
}

// writeEvent writes one event: its id, its type (the task's status) and
// the status body as the status endpoint answers it, on one data line.
func (a *API) writeEvent(w http.ResponseWriter, r *http.Request, s stage) error {
	body, err := a.statusJSON(r.Context(), s.t)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "id: %d\nevent: %s\ndata: %s\n\n", s.id, s.t.Status, bytes.TrimRight(body, "\n"))
	return err
}

// lastEventID is the id a stream resumes after: the Last-Event-ID header
// an EventSource sends when it reconnects, or the lastEventId query
// parameter; 0 (from the start) when neither is given.
func lastEventID(r *http.Request) (int, error) {
	v := r.Header.Get(headerLastEventID)
	field := headerLastEventID
	if v == "" {
		v, field = r.URL.Query().Get("lastEventId"), "lastEventId"
	}
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, badRequest(field, "%s must be the id of an event of this stream (a whole number).", field)
	}
	return n, nil
}
