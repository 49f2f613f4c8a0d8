package asl

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// blocking returns a task that signals started and then waits for its
// context, recording the context's error in cancelled.
func blocking() (TaskFunc, chan struct{}, chan error) {
	started := make(chan struct{}, 10)
	cancelled := make(chan error, 10)
	return func(ctx context.Context, _ json.RawMessage) (json.RawMessage, error) {
		started <- struct{}{}
		<-ctx.Done()
		cancelled <- ctx.Err()
		return nil, ctx.Err()
	}, started, cancelled
}

// The timeout tests run in a synctest bubble, with the system clock: time
// is virtual there and advances only when every goroutine is blocked, so
// the timeout fires without waiting and never before a task that returns.
func TestTaskTimeout(t *testing.T) {
	tests := []struct {
		name, timeout, input string
		want                 time.Duration
	}{
		{"TimeoutSeconds", `"TimeoutSeconds":5`, `{}`, 5 * time.Second},
		{"TimeoutSecondsPath", `"TimeoutSecondsPath":"$.t"`, `{"t":8}`, 8 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				def := `{"StartAt":"T","States":{
					"T":{"Type":"Task","Resource":"fn",` + tt.timeout + `,
						"Retry":[{"ErrorEquals":["States.TaskFailed"]}],
						"Catch":[{"ErrorEquals":["States.Timeout"],"ResultPath":"$.error","Next":"C"}],"End":true},
					"C":{"Type":"Pass","End":true}}}`
				fn, started, cancelled := blocking()
				e := mustExecutor(t, def, map[string]TaskFunc{"fn": fn})
				start := time.Now()
				exec, err := e.Run(context.Background(), "t", json.RawMessage(tt.input))
				if err != nil {
					t.Fatalf("Run: %v", err)
				}
				if got := time.Since(start); got != tt.want {
					t.Errorf("timed out after %v, want %v", got, tt.want)
				}
				var out struct{ Error struct{ Error string } }
				if err := json.Unmarshal(exec.Output, &out); err != nil || out.Error.Error != ErrorTimeout {
					t.Errorf("output = %s, want a caught %s (not retried by States.TaskFailed)", exec.Output, ErrorTimeout)
				}
				if n := len(started); n != 1 {
					t.Errorf("task started %d times, want 1", n)
				}
				e.Wait()
				if err := <-cancelled; !errors.Is(err, context.Canceled) {
					t.Errorf("timed-out task's context error = %v, want context.Canceled", err)
				}
			})
		})
	}
}

func TestTaskWithinTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		def := `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"fn","TimeoutSeconds":10,"End":true}}}`
		fn := func(ctx context.Context, in json.RawMessage) (json.RawMessage, error) {
			time.Sleep(9 * time.Second)
			return json.RawMessage(`"done"`), nil
		}
		e := mustExecutor(t, def, map[string]TaskFunc{"fn": fn})
		exec, err := e.Run(context.Background(), "t", map[string]any{})
		if err != nil || string(exec.Output) != `"done"` {
			t.Errorf("Run = %s, %v; want \"done\"", exec.Output, err)
		}
	})
}

func TestExecutionTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		def := `{"TimeoutSeconds":60,"StartAt":"W","States":{"W":{"Type":"Wait","Seconds":3600,"End":true}}}`
		e := mustExecutor(t, def, nil)
		start := time.Now()
		exec, err := e.Run(context.Background(), "t", map[string]any{})
		var fe *Error
		if !errors.As(err, &fe) || fe.Name != ErrorTimeout {
			t.Fatalf("Run: err = %v, want %s", err, ErrorTimeout)
		}
		if exec.Status != TimedOut || time.Since(start) != time.Minute {
			t.Errorf("status %s after %v, want %s after 1m", exec.Status, time.Since(start), TimedOut)
		}
	})
}

func TestRunCancelled(t *testing.T) {
	def := `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"fn","Catch":[{"ErrorEquals":["States.ALL"],"Next":"C"}],"End":true},"C":{"Type":"Succeed"}}}`
	fn, started, cancelled := blocking()
	e := mustExecutor(t, def, map[string]TaskFunc{"fn": fn})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-started
		cancel()
	}()
	exec, err := e.Run(ctx, "t", map[string]any{})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Run: err = %v, want context.Canceled", err)
	}
	if exec.Status != Aborted {
		t.Errorf("status = %s, want %s (the task's error must not be caught)", exec.Status, Aborted)
	}
	if err := <-cancelled; err == nil {
		t.Errorf("task context not cancelled")
	}
}

func TestStartIsIdempotentWhileRunning(t *testing.T) {
	def := `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"fn","End":true}}}`
	release := make(chan struct{})
	var mu sync.Mutex
	calls := map[string]int{}
	fn := func(_ context.Context, in json.RawMessage) (json.RawMessage, error) {
		mu.Lock()
		calls[string(in)]++
		mu.Unlock()
		<-release
		return in, nil
	}
	e := mustExecutor(t, def, map[string]TaskFunc{"fn": fn})
	ctx := context.Background()
	for _, name := range []string{"a", "a", "b", "a"} {
		if err := e.Start(ctx, name, name); err != nil {
			t.Fatalf("Start(%q): %v", name, err)
		}
	}
	if !e.Running("a") || !e.Running("b") {
		t.Errorf("Running(a), Running(b) = %v, %v; want true, true", e.Running("a"), e.Running("b"))
	}
	close(release)
	e.Wait()
	if e.Running("a") {
		t.Errorf("Running(a) after Wait = true, want false")
	}
	// Once finished, the name can run again.
	if err := e.Start(ctx, "a", "a"); err != nil {
		t.Fatalf("Start(a) again: %v", err)
	}
	e.Wait()
	if want := map[string]int{`"a"`: 2, `"b"`: 1}; calls[`"a"`] != want[`"a"`] || calls[`"b"`] != want[`"b"`] {
		t.Errorf("calls = %v, want %v", calls, want)
	}
}

func TestStartOutlivesCallerContext(t *testing.T) {
	def := `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"fn","End":true}}}`
	done := make(chan error, 1)
	proceed := make(chan struct{})
	fn := func(ctx context.Context, in json.RawMessage) (json.RawMessage, error) {
		<-proceed
		done <- ctx.Err()
		return in, nil
	}
	e := mustExecutor(t, def, map[string]TaskFunc{"fn": fn})
	ctx, cancel := context.WithCancel(context.Background())
	if err := e.Start(ctx, "x", 1); err != nil {
		t.Fatalf("Start: %v", err)
	}
	cancel() // like an HTTP request that ends after starting a task
	close(proceed)
	e.Wait()
	if err := <-done; err != nil {
		t.Errorf("task context error after the caller's context ended = %v, want nil", err)
	}
	if err := e.Start(ctx, "y", 1); !errors.Is(err, context.Canceled) {
		t.Errorf("Start with a cancelled context: err = %v, want context.Canceled", err)
	}
}

func TestCloseAbortsAndDrains(t *testing.T) {
	def := `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"fn","Catch":[{"ErrorEquals":["States.ALL"],"Next":"C"}],"End":true},"C":{"Type":"Task","Resource":"after","End":true}}}`
	fn, started, cancelled := blocking()
	var after recorder
	e := mustExecutor(t, def, map[string]TaskFunc{"fn": fn, "after": after.echo})
	for _, name := range []string{"a", "b"} {
		if err := e.Start(context.Background(), name, 1); err != nil {
			t.Fatalf("Start: %v", err)
		}
	}
	<-started
	<-started
	e.Close()
	if len(cancelled) != 2 {
		t.Errorf("%d task calls returned by the time Close returned, want 2", len(cancelled))
	}
	if after.calls() != 0 {
		t.Errorf("the Catch target ran %d times after Close, want 0 (aborted, not failed)", after.calls())
	}
	if err := e.Start(context.Background(), "c", 1); !errors.Is(err, ErrClosed) {
		t.Errorf("Start after Close: err = %v, want ErrClosed", err)
	}
	if _, err := e.Run(context.Background(), "d", 1); !errors.Is(err, ErrClosed) {
		t.Errorf("Run after Close: err = %v, want ErrClosed", err)
	}
}

func TestRunRejectsRunningName(t *testing.T) {
	def := `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"fn","End":true}}}`
	fn, started, _ := blocking()
	e := mustExecutor(t, def, map[string]TaskFunc{"fn": fn})
	if err := e.Start(context.Background(), "x", 1); err != nil {
		t.Fatalf("Start: %v", err)
	}
	<-started
	if _, err := e.Run(context.Background(), "x", 1); !errors.Is(err, ErrRunning) {
		t.Errorf("Run of a running name: err = %v, want ErrRunning", err)
	}
}

func TestLogging(t *testing.T) {
	def := `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"fn","Retry":[{"ErrorEquals":["transientError"],"MaxAttempts":1}],"Next":"F"},"F":{"Type":"Fail","Error":"Done","Cause":"the end"}}}`
	fn, _ := failing(&transientError{})
	var buf bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	e := mustExecutor(t, def, map[string]TaskFunc{"fn": fn}, withClock(newFakeClock()), WithLogger(logger))
	if _, err := e.Run(context.Background(), "logged", map[string]any{}); err == nil {
		t.Fatalf("Run: err = nil, want the Fail state's error")
	}
	logs := buf.String()
	for _, want := range []string{
		`level=DEBUG msg="state entered" execution=logged state=T type=Task`,
		`level=DEBUG msg="state exited" execution=logged state=T next=F`,
		`level=WARN msg="task failed, retrying" execution=logged state=T error=transientError`,
		`level=WARN msg="execution failed" execution=logged state=F error=Done cause="the end"`,
	} {
		if !strings.Contains(logs, want) {
			t.Errorf("logs lack %q; got:\n%s", want, logs)
		}
	}
}
