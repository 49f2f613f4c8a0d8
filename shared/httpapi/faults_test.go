package httpapi_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/genvideo/gen/shared/domain"
	"github.com/genvideo/gen/shared/store"
	"github.com/genvideo/gen/shared/task"
)

// secret is in every injected failure: it must reach the log, never a
// response body.
const secret = "db-host-10.0.0.7 stack frame"

func TestDependencyFailures(t *testing.T) {
	unavailable := func() error { return fmt.Errorf("%s: %w", secret, store.ErrUnavailable) }
	broken := func() error { return errors.New(secret) }
	panics := func() error { panic(secret) }

	tests := []struct {
		name   string
		method string // store method to break
		fault  func() error
		send   func(e *env, key string) response
		status int
		code   string
	}{
		{"key look-up unavailable", "KeyByHash", unavailable, getModels, 503, "SERVICE_UNAVAILABLE"},
		{"counter store unavailable", "Take", unavailable, getModels, 503, "SERVICE_UNAVAILABLE"},
		{"charge unavailable", "CreateTask", unavailable, startText, 503, "SERVICE_UNAVAILABLE"},
		{"charge unavailable, image", "CreateTask", unavailable, startImage, 503, "SERVICE_UNAVAILABLE"},
		{"task read unavailable", "Task", unavailable, getStatus, 503, "SERVICE_UNAVAILABLE"},
		{"key look-up broken", "KeyByHash", broken, getModels, 500, "INTERNAL_ERROR"},
		{"charge broken", "CreateTask", broken, startImage, 500, "INTERNAL_ERROR"},
		{"history broken", "Tasks", broken, getHistory, 500, "INTERNAL_ERROR"},
		{"history panics", "Tasks", panics, getHistory, 500, "INTERNAL_ERROR"},
		{"charge panics", "CreateTask", panics, startText, 500, "INTERNAL_ERROR"},
		{"charge panics, image", "CreateTask", panics, startImage, 500, "INTERNAL_ERROR"},
		{"charge account missing", "CreateTask", func() error { return fmt.Errorf("%s: %w", secret, domain.ErrNotFound) }, startText, 500, "INTERNAL_ERROR"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, nil)
			c := e.caller(1000)
			before := e.state(c.AccountID)
			e.faults.set(tt.method, tt.fault)
			r := tt.send(e, c.Key)
			e.faults.set(tt.method, nil)

			wantError(t, r, tt.status, tt.code)
			if strings.Contains(string(r.raw), secret) || strings.Contains(string(r.raw), "goroutine") {
				t.Errorf("body leaks the failure: %s", r.raw)
			}
			if tt.status == 503 && !strings.Contains(r.body["message"].(string), "nothing was charged") {
				t.Errorf("503 message = %q, want it to say nothing was charged", r.body["message"])
			}
			if !strings.Contains(e.logs.String(), secret) {
				t.Errorf("the log does not record the failure; log:\n%s", e.logs)
			}
			e.assertUnchanged(before, c.AccountID, tt.name)
		})
	}
}

func getModels(e *env, key string) response  { return e.get("/api/gen/models", key) }
func getHistory(e *env, key string) response { return e.get("/api/gen/history", key) }
func getStatus(e *env, key string) response {
	return e.get("/api/gen/status/gen_1700000000000_abcdefghij", key)
}
func startText(e *env, key string) response {
	return e.postJSON("/api/gen/text-to-video", key, map[string]any{"prompt": "x"})
}
func startImage(e *env, key string) response {
	return e.postForm("/api/gen/image-to-video", key, file("image", "a.png", pngData), field("prompt", "x"))
}

func TestBlobStorageDown(t *testing.T) {
	e := newEnv(t, nil)
	c := e.caller(1000)
	before := e.state(c.AccountID)
	e.Blobs.SetPutErr(errors.New(secret))
	r := startImage(e, c.Key)
	e.Blobs.SetPutErr(nil)
	wantError(t, r, 503, "SERVICE_UNAVAILABLE")
	if strings.Contains(string(r.raw), secret) {
		t.Errorf("body leaks the failure: %s", r.raw)
	}
	e.assertUnchanged(before, c.AccountID, "an upload to a failing blob store")
}

// TestStarterFails: the task was charged, its workflow did not start. The
// answer is 503, and the task is failed and refunded in the store.
func TestStarterFails(t *testing.T) {
	for _, send := range []func(*env, string) response{startText, startImage} {
		e := newEnv(t, nil)
		c := e.caller(1000)
		e.Executions.SetErr(errors.New(secret))
		r := send(e, c.Key)
		wantError(t, r, 503, "SERVICE_UNAVAILABLE")
		if strings.Contains(string(r.raw), secret) {
			t.Errorf("body leaks the failure: %s", r.raw)
		}

		s := e.state(c.AccountID)
		if s.Credits != 1000 || s.InFlight != 0 || len(s.Blobs) != 0 || s.Started != 0 || len(s.Tasks) != 1 {
			t.Fatalf("state after a failed start = %+v, want 1000 credits, nothing in flight, no blobs, one task", s)
		}
		id := strings.Split(s.Tasks[0], ":")[0]
		tk := e.task(id)
		want := task.Failure{Code: "INTERNAL_ERROR", Message: "the generation could not be started", NotStarted: true}
		if tk.Status != task.Failed || tk.Failure == nil || *tk.Failure != want || tk.CreditsRefunded != 190 {
			t.Errorf("task = %s, failure %+v, refunded %d; want failed, %+v, 190", tk.Status, tk.Failure, tk.CreditsRefunded, want)
		}
		var kinds []string
		for _, l := range s.Ledger {
			kinds = append(kinds, fmt.Sprintf("%s %d", l.Kind, l.Amount))
		}
		if got := strings.Join(kinds, ", "); got != "grant 1000, charge -190, refund 190" {
			t.Errorf("ledger = %s, want grant 1000, charge -190, refund 190", got)
		}
	}
}
