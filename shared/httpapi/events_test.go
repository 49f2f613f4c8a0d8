package httpapi_test

import (
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/genvideo/gen/shared/task"
)

// rawGet sends a GET with the key and headers and returns the status and
// the body as it came.
func (e *env) rawGet(path, key string, header map[string]string) (int, http.Header, string) {
	e.t.Helper()
	req, err := http.NewRequest(http.MethodGet, e.Server.URL+path, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("X-API-Key", key)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := e.Server.Client().Do(req)
	if err != nil {
		e.t.Fatalf("GET %s: %v", path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		e.t.Fatalf("read %s: %v", path, err)
	}
	return res.StatusCode, res.Header, string(b)
}

var eventLine = regexp.MustCompile(`(?m)^id: (\d+)\nevent: (\w+)\ndata: \{.*"status":"(\w+)"`)

// A finished task's stream sends the states it went through, in order,
// then closes; resumed after an id it sends only what follows; an invalid
// id and another account's task are refused as the status endpoint would.
func TestStatusEvents(t *testing.T) {
	e := newEnv(t, nil)
	c := e.caller(1000)
	r := e.postJSON("/api/gen/text-to-video", c.Key, map[string]any{"prompt": "x", "model": "gen-3.1-lite-generate-001"})
	if r.status != 202 {
		t.Fatalf("start: %d %s", r.status, r.raw)
	}
	id := r.body["taskId"].(string)
	// Cancelled while pending: it never processed.
	if _, err := e.faults.Store.Fail(context.Background(), id, task.Failure{Code: task.FailCancelled, Message: "x"}, e.Clock.Now()); err != nil {
		t.Fatal(err)
	}
	path := "/api/gen/status/" + id + "/events"
	for _, tt := range []struct {
		last string
		want string
	}{
		{"", "1000 pending pending, 3000 failed failed"},
		{"1000", "3000 failed failed"},
		{"3000", ""},
	} {
		status, h, body := e.rawGet(path, c.Key, map[string]string{"Last-Event-ID": tt.last})
		var got []string
		for _, m := range eventLine.FindAllStringSubmatch(body, -1) {
			got = append(got, strings.Join(m[1:], " "))
		}
		if status != 200 || !strings.HasPrefix(h.Get("Content-Type"), "text/event-stream") || strings.Join(got, ", ") != tt.want {
			t.Errorf("after %q: %d %s %q; want the events %q", tt.last, status, h.Get("Content-Type"), body, tt.want)
		}
	}
	if status, _, body := e.rawGet(path, c.Key, map[string]string{"Last-Event-ID": "soon"}); status != 400 || !strings.Contains(body, "VALIDATION_ERROR") {
		t.Errorf("a malformed Last-Event-ID: %d %s; want 400 VALIDATION_ERROR", status, body)
	}
	other := e.caller(1000)
	if status, _, body := e.rawGet(path, other.Key, nil); status != 404 || !strings.Contains(body, "TASK_NOT_FOUND") {
		t.Errorf("another account's task: %d %s; want 404 TASK_NOT_FOUND", status, body)
	}
}
