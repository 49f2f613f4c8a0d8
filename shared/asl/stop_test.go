package asl

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
)

// Stop aborts one running execution by name: its task call's context is
// cancelled, it takes no further state, and the others run on.
func TestStop(t *testing.T) {
	const def = `{"StartAt": "Work", "States": {
		"Work": {"Type": "Task", "Resource": "work", "Next": "After"},
		"After": {"Type": "Task", "Resource": "after", "End": true}}}`
	entered := make(chan string, 2)
	release := make(chan struct{})
	afterCalls := make(chan string, 2)
	e := mustExecutor(t, def, map[string]TaskFunc{
		"work": func(ctx context.Context, in json.RawMessage) (json.RawMessage, error) {
			var name string
			json.Unmarshal(in, &name)
			entered <- name
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-release:
				return in, nil
			}
		},
		"after": func(ctx context.Context, in json.RawMessage) (json.RawMessage, error) {
			var name string
			json.Unmarshal(in, &name)
			afterCalls <- name
			return in, nil
		},
	})
	if e.Stop("none") {
		t.Error("Stop of no execution reported one running")
	}
	errs := make(chan error, 1)
	go func() {
		_, err := e.Run(context.Background(), "stopped", "stopped")
		errs <- err
	}()
	if err := e.Start(context.Background(), "kept", "kept"); err != nil {
		t.Fatal(err)
	}
	<-entered
	<-entered
	if !e.Stop("stopped") {
		t.Fatal("Stop found no running execution")
	}
	if err := <-errs; !errors.Is(err, context.Canceled) {
		t.Errorf("the stopped execution ended with %v, want context.Canceled (aborted)", err)
	}
	close(release)
	e.Wait()
	close(afterCalls)
	var got []string
	for n := range afterCalls {
		got = append(got, n)
	}
	if len(got) != 1 || got[0] != "kept" {
		t.Errorf("the next state ran for %v, want only the execution not stopped", got)
	}
	if e.Running("stopped") || e.Stop("stopped") {
		t.Error("the stopped execution is still registered")
	}
}
