package client_test

import (
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
	k := stack.Key(t, 1000, store.Limits{})
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
