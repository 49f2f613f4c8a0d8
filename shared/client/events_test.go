package client_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/genvideo/gen/shared/client"
	"github.com/genvideo/gen/shared/store"
)

// An event stream shows every state of a task in order and its terminal
// event exactly once, across a reconnect with Last-Event-ID; resumed after
// the terminal event, it sends nothing more.
func TestWatchAcrossAReconnect(t *testing.T) {
	t.Parallel()
	k := stack.Key(t, 1000, store.KeyLimits{})
	c := newClient(t, k.APIKey)
	s, err := c.TextToVideo(t.Context(), lite("a heron takes off"))
	if err != nil {
		t.Fatalf("TextToVideo: %v", err)
	}

	var seen []client.Event
	// The first connection is dropped after its first event.
	ctx, cancel := context.WithCancel(t.Context())
	_, err = c.Watch(ctx, s.TaskID, client.WatchOptions{OnEvent: func(ev client.Event) { seen = append(seen, ev); cancel() }})
	if !errors.Is(err, context.Canceled) || len(seen) != 1 {
		t.Fatalf("first connection: %d events, %v; want one event, then the cancel", len(seen), err)
	}
	task, err := c.Watch(t.Context(), s.TaskID, client.WatchOptions{LastEventID: seen[0].ID,
		OnEvent: func(ev client.Event) { seen = append(seen, ev) }})
	if err != nil || task.Status != client.StatusCompleted || len(task.Videos) != 1 {
		t.Fatalf("Watch = %+v, %v; want the completed task with its video", task, err)
	}

	var types []string
	prev := -1
	for _, ev := range seen {
		types = append(types, ev.Type)
		id, err := strconv.Atoi(ev.ID)
		if err != nil || id <= prev {
			t.Errorf("event id %q after %d: want growing ids", ev.ID, prev)
		}
		prev = id
		if string(ev.Task.Status) != ev.Type || ev.Task.TaskID != s.TaskID {
			t.Errorf("event %s of type %s carries %s of %s", ev.ID, ev.Type, ev.Task.Status, ev.Task.TaskID)
		}
	}
	if got := strings.Join(types, " "); got != "pending processing completed" {
		t.Errorf("events %q, want pending processing completed, each once", got)
	}
	if v := seen[len(seen)-1].Task.Videos; len(v) != 1 || v[0].URL == "" {
		t.Errorf("the completed event's videos = %+v, want a signed link", v)
	}

	// Resumed after the terminal event: no event, and the stream ends.
	body := rawEvents(t, k.APIKey, s.TaskID, seen[len(seen)-1].ID)
	if strings.Contains(body, "\nid:") || strings.HasPrefix(body, "id:") {
		t.Errorf("stream resumed after the terminal event sent %q", body)
	}
}

// rawEvents reads a whole event stream resumed after last.
func rawEvents(t *testing.T, key, taskID, last string) string {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, baseURL+"/api/gen/status/"+taskID+"/events", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-API-Key", key)
	req.Header.Set("Last-Event-ID", last)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	res, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		t.Fatalf("GET events: %v", err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("GET events: %d %s (%v) %q", res.StatusCode, res.Header.Get("Content-Type"), err, b)
	}
	return string(b)
}

// The event stream is a stream on both stacks (on the AWS assembly through
// API Gateway's response streaming): the first event of a task reaches
// the client on a connection that later carries the task's end, and that
// end is caused after the first event was read: the task is cancelled
// once its first event has arrived, and the same connection then brings
// the cancellation. A buffered answer could deliver nothing before the
// task's end. Locally the generation is held ([slow:60]); on the assembly
// (no prompt directives) the longest lite render leaves the cancel ample
// room, and a task that finished first fails the test with what happened.
func TestEventsArriveAsTheyHappen(t *testing.T) {
	t.Parallel()
	k := stack.Key(t, 1000, store.KeyLimits{})
	c := newClient(t, k.APIKey)
	req := lite("a lighthouse at dusk")
	if local != nil {
		req.Prompt = "[slow:60] " + req.Prompt
	} else {
		req.DurationSeconds = 8
	}
	s, err := c.TextToVideo(t.Context(), req)
	if err != nil {
		t.Fatalf("TextToVideo: %v", err)
	}

	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	hreq, err := http.NewRequestWithContext(ctx, http.MethodGet, baseURL+"/api/gen/status/"+s.TaskID+"/events", nil)
	if err != nil {
		t.Fatal(err)
	}
	hreq.Header.Set("X-API-Key", k.APIKey)
	res, err := http.DefaultClient.Do(hreq)
	if err != nil {
		t.Fatalf("GET events: %v", err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		b, _ := io.ReadAll(res.Body)
		t.Fatalf("GET events: %d %s %q", res.StatusCode, res.Header.Get("Content-Type"), b)
	}
	events := readEvents(res.Body)

	first, ok := <-events
	if !ok || (first != "pending" && first != "processing") {
		t.Fatalf("first event %q (stream open %v), want pending or processing", first, ok)
	}
	cancelled, err := c.Cancel(t.Context(), s.TaskID)
	if err != nil {
		t.Fatalf("Cancel after the first event (%s): %v; the task ended before it could be cancelled", first, err)
	}
	if cancelled.Status != client.StatusFailed || cancelled.Error == nil || cancelled.Error.Code != "CANCELLED" {
		t.Fatalf("Cancel = %+v, want the task failed with CANCELLED", cancelled)
	}
	var rest []string
	for ev := range events {
		rest = append(rest, ev)
	}
	if len(rest) == 0 || rest[len(rest)-1] != "failed" {
		t.Fatalf("after %s, the same connection carried %q; want it to end with the cancellation (failed)", first, rest)
	}
	for _, ev := range rest[:len(rest)-1] {
		if ev != "processing" {
			t.Errorf("after %s, the same connection carried %q; want at most processing before failed", first, rest)
		}
	}
}

// readEvents sends the type of each event of an SSE body as it is read,
// and closes the channel when the body ends.
func readEvents(body io.Reader) <-chan string {
	out := make(chan string, 64) // a test that stops reading leaves no sender blocked for long
	go func() {
		defer close(out)
		sc := bufio.NewScanner(body)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			if typ, ok := strings.CutPrefix(sc.Text(), "event: "); ok {
				out <- typ
			}
		}
	}()
	return out
}
