package client

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Event is one event of a task's live stream (an extension): the task's
// status body at a state it reached.
type Event struct {
	// ID grows with the task's life; a stream resumed after it sends
	// only later states.
	ID string
	// Type is the task's status then: pending, processing, completed or
	// failed.
	Type string
	Task *Task
}

// WatchOptions pace Watch.
type WatchOptions struct {
	// LastEventID resumes a stream after that event ("" from the start).
	LastEventID string
	// OnEvent, when set, is called with each event, once, in order.
	OnEvent func(Event)
	// Reconnects bounds the reconnections in a row after a stream that
	// failed (a network error, a 5xx, a stream that sent nothing at all)
	// (default 5). A stream that ends after sending something is normal
	// (a proxy's timeout; on the AWS assembly each response is a long
	// poll): it is reconnected without counting.
	Reconnects int
}

// Watch follows a task's live event stream (GET
// /api/gen/status/{taskId}/events, Server-Sent Events) until its
// terminal event, reconnecting with Last-Event-ID whenever the stream ends
// before it. It returns the task as the terminal event showed it; a
// failed task with a *GenerationError, as Wait. A refusal (a 404, a 429)
// is the service's *Error.
func (c *Client) Watch(ctx context.Context, taskID string, opts WatchOptions) (*Task, error) {
	if opts.Reconnects <= 0 {
		opts.Reconnects = 5
	}
	last := opts.LastEventID
	var task *Task
	for fails := 0; ; {
		done, heard, err := c.stream(ctx, taskID, last, func(ev Event) {
			last, task = ev.ID, ev.Task
			if opts.OnEvent != nil {
				opts.OnEvent(ev)
			}
		})
		if ctx.Err() != nil {
			return task, ctx.Err()
		}
		var apiErr *Error
		if errors.As(err, &apiErr) && !apiErr.Temporary() {
			return task, err
		}
		if done {
			break
		}
		wait := 100 * time.Millisecond
		if err != nil || !heard {
			if fails++; fails > opts.Reconnects {
				return task, fmt.Errorf("gen: the event stream of %s failed %d times in a row: %w", taskID, fails, cmpErr(err))
			}
			wait = time.Duration(fails) * time.Second
		} else {
			fails = 0
		}
		if apiErr != nil && apiErr.RetryAfter > 0 {
			wait = apiErr.RetryAfter
		}
		if err := sleep(ctx, wait); err != nil {
			return task, err
		}
	}
	if task.Status == StatusFailed {
		e := &GenerationError{TaskID: task.TaskID, CreditsRefunded: task.Refunded()}
		if task.Error != nil {
			e.Code, e.Message = task.Error.Code, task.Error.Message
		}
		return task, e
	}
	return task, nil
}

// cmpErr is err, or io.ErrUnexpectedEOF for a stream that ended silent.
func cmpErr(err error) error {
	if err == nil {
		return io.ErrUnexpectedEOF
	}
	return err
}

// stream reads one connection of the event stream, calling emit for each
// event, and reports whether it saw the terminal event and whether the
// stream sent anything at all.
func (c *Client) stream(ctx context.Context, taskID, last string, emit func(Event)) (done, heard bool, _ error) {
	u := *c.base
	path := "/api/gen/status/" + url.PathEscape(taskID) + "/events"
	u.RawPath = c.base.EscapedPath() + path
	p, err := url.PathUnescape(u.RawPath)
	if err != nil {
		return false, heard, fmt.Errorf("gen: path %q: %w", path, err)
	}
	u.Path = p
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return false, heard, fmt.Errorf("gen: GET %s: %w", path, err)
	}
	if c.key != "" {
		req.Header.Set("X-API-Key", c.key)
	}
	if last != "" {
		req.Header.Set("Last-Event-ID", last)
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("User-Agent", c.userAgent)
	res, err := c.http.Do(req)
	if err != nil {
		return false, heard, fmt.Errorf("gen: GET %s: %w", path, err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(res.Body, maxBody))
		return false, false, parseError(res, b, c.now())
	}
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 0, 64<<10), maxBody)
	var ev Event
	var data strings.Builder
	for sc.Scan() {
		heard = true
		line := sc.Text()
		if line == "" { // the end of an event
			if data.Len() > 0 {
				var t Task
				if err := json.Unmarshal([]byte(data.String()), &t); err != nil {
					return false, heard, fmt.Errorf("gen: GET %s: decode event %s: %w", path, ev.ID, err)
				}
				ev.Task = &t
				emit(ev)
				if err := ctx.Err(); err != nil {
					return false, true, err // no event after a cancel
				}
				if t.Status.Terminal() {
					return true, true, nil
				}
			}
			ev, data = Event{}, strings.Builder{}
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "id":
			ev.ID = value
		case "event":
			ev.Type = value
		case "data":
			if data.Len() > 0 {
				data.WriteByte('\n')
			}
			data.WriteString(value)
		}
	}
	if err := sc.Err(); err != nil {
		return false, heard, fmt.Errorf("gen: GET %s: %w", path, err)
	}
	return false, heard, nil
}
