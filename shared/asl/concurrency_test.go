package asl

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestTaskConcurrency: with a bound of 2, twelve executions' task calls
// run two at a time, every one of them runs, and each execution ends.
func TestTaskConcurrency(t *testing.T) {
	var running, most, calls atomic.Int64
	gate := make(chan struct{})
	tasks := map[string]TaskFunc{"work": func(ctx context.Context, in json.RawMessage) (json.RawMessage, error) {
		n := running.Add(1)
		defer running.Add(-1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		calls.Add(1)
		<-gate
		return in, nil
	}}
	def := `{"StartAt":"A","States":{"A":{"Type":"Task","Resource":"work","Next":"B"},"B":{"Type":"Task","Resource":"work","End":true}}}`
	e, err := NewExecutor(mustParse(t, def), tasks, WithTaskConcurrency(2))
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	var wg sync.WaitGroup
	errs := make(chan error, 12)
	for i := range 12 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := e.Run(context.Background(), fmt.Sprint("execution-", i), json.RawMessage(`{}`))
			errs <- err
		}()
	}
	// Two calls hold their slots until the gate opens: the others wait.
	for deadline := time.Now().Add(10 * time.Second); running.Load() < 2; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d task calls running, want 2", running.Load())
		}
	}
	close(gate) // every call may finish now; the bound still holds two at a time
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("execution: %v", err)
		}
	}
	if calls.Load() != 24 || most.Load() > 2 {
		t.Errorf("%d task calls, at most %d at once; want 24, at most 2", calls.Load(), most.Load())
	}
}

// TestTaskConcurrencyTimeoutWhileWaiting: a task call that waits for a
// slot past its TimeoutSeconds times out without being called, and the
// slot's holder is not disturbed.
func TestTaskConcurrencyTimeoutWhileWaiting(t *testing.T) {
	release := make(chan struct{})
	var calls atomic.Int64
	tasks := map[string]TaskFunc{
		"hold": func(ctx context.Context, in json.RawMessage) (json.RawMessage, error) {
			<-release
			return in, nil
		},
		"quick": func(ctx context.Context, in json.RawMessage) (json.RawMessage, error) {
			calls.Add(1)
			return in, nil
		},
	}
	def := `{"StartAt":"C","States":{"C":{"Type":"Choice","Choices":[{"Variable":"$.hold","BooleanEquals":true,"Next":"H"}],"Default":"Q"},
		"H":{"Type":"Task","Resource":"hold","End":true},
		"Q":{"Type":"Task","Resource":"quick","TimeoutSeconds":1,"End":true}}}`
	e, err := NewExecutor(mustParse(t, def), tasks, WithTaskConcurrency(1))
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if err := e.Start(context.Background(), "holder", json.RawMessage(`{"hold":true}`)); err != nil {
		t.Fatal(err)
	}
	_, err = e.Run(context.Background(), "waiter", json.RawMessage(`{"hold":false}`))
	var aerr *Error
	if !errors.As(err, &aerr) || aerr.Name != ErrorTimeout {
		t.Errorf("the waiting execution ended with %v, want %s", err, ErrorTimeout)
	}
	close(release)
	e.Wait()
	if calls.Load() != 0 {
		t.Errorf("the timed-out task was called %d times after it timed out, want 0", calls.Load())
	}
}
