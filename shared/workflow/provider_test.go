package workflow_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/genvideo/gen/shared/task"
	"github.com/genvideo/gen/shared/workflow"
)

// scripted is a workflow.Provider whose operations are done after
// doneAfter polls; busy, while positive, makes that many calls answer a
// busy provider first. It counts submits and polls by task.
type scripted struct {
	doneAfter int
	never     bool
	busy      int
	hint      time.Duration

	mu             sync.Mutex
	submits, polls map[string]int
}

type busyErr struct{}

func (busyErr) Error() string             { return "429 RESOURCE_EXHAUSTED" }
func (busyErr) RetryAfter() time.Duration { return 0 }

func newScripted(doneAfter int) *scripted {
	return &scripted{doneAfter: doneAfter, hint: 5 * time.Second, submits: map[string]int{}, polls: map[string]int{}}
}

func (p *scripted) takeBusy() bool {
	if p.busy > 0 {
		p.busy--
		return true
	}
	return false
}

func (p *scripted) Submit(_ context.Context, job workflow.Job) (workflow.Operation, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.takeBusy() {
		return workflow.Operation{}, busyErr{}
	}
	p.submits[job.TaskID]++
	return workflow.Operation{Name: fmt.Sprintf("ops/%s/%d", job.TaskID, p.submits[job.TaskID]), PollAfter: p.hint}, nil
}

func (p *scripted) Poll(_ context.Context, name string, job workflow.Job) (workflow.Operation, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.takeBusy() {
		return workflow.Operation{}, busyErr{}
	}
	p.polls[job.TaskID]++
	if p.never || p.polls[job.TaskID] < p.doneAfter {
		return workflow.Operation{Name: name, PollAfter: p.hint}, nil
	}
	if err := os.MkdirAll(job.OutDir, 0o700); err != nil {
		return workflow.Operation{}, err
	}
	path := filepath.Join(job.OutDir, "0.mp4")
	if err := os.WriteFile(path, []byte("a video of "+name), 0o600); err != nil {
		return workflow.Operation{}, err
	}
	return workflow.Operation{Name: name, Done: true, Result: workflow.Result{Paths: []string{path}}}, nil
}

func (p *scripted) count(m map[string]int, id string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return m[id]
}

// TestGenerateFollowsTheOperation calls Generate as the definition does:
// the first call submits and saves the handle, the next ones poll it, a
// busy provider is waited for, and the waits stay within the deadline.
func TestGenerateFollowsTheOperation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, nil)
		p := newScripted(2)
		e.steps.Provider = p
		ctx := context.Background()
		tk := e.newTask("a job", 1)
		if _, err := e.steps.MarkProcessing(ctx, workflow.TaskRef{TaskID: tk.ID}); err != nil {
			t.Fatal(err)
		}

		p.busy = 1
		g, err := e.steps.Generate(ctx, workflow.TaskRef{TaskID: tk.ID})
		if err != nil || g.Done || g.WaitSeconds < 2 || e.task(tk.ID).Operation != "" {
			t.Fatalf("Generate on a busy provider = %+v, %v; want a wait of 2 s or more and no operation", g, err)
		}
		g, err = e.steps.Generate(ctx, workflow.TaskRef{TaskID: tk.ID})
		op := e.task(tk.ID).Operation
		if err != nil || g.Done || g.WaitSeconds != 5 || op != "ops/"+tk.ID+"/1" {
			t.Fatalf("Generate = %+v, %v with operation %q; want a wait of the 5 s hint and the operation saved", g, err, op)
		}
		p.busy = 1 // a poll answered 503: waited for, the handle kept
		if g, err = e.steps.Generate(ctx, workflow.TaskRef{TaskID: tk.ID}); err != nil || g.Done {
			t.Fatalf("Generate on a busy poll = %+v, %v; want a wait", g, err)
		}
		for range 2 {
			g, err = e.steps.Generate(ctx, workflow.TaskRef{TaskID: tk.ID})
		}
		if err != nil || !g.Done || len(g.Videos) != 1 || g.Videos[0].Key != workflow.VideoKey(tk.ID, 0) {
			t.Fatalf("Generate at the second poll = %+v, %v; want done with the video", g, err)
		}
		if n := p.count(p.submits, tk.ID); n != 1 {
			t.Errorf("submitted %d times, want once", n)
		}
		if e.task(tk.ID).Operation != op {
			t.Errorf("operation changed to %q", e.task(tk.ID).Operation)
		}

		// The wait stops at the deadline.
		late := e.newTask("a late job", 1, func(tk *task.Task) { tk.Deadline = time.Now().Add(3 * time.Second) })
		p.hint = time.Hour
		e.steps.MarkProcessing(ctx, workflow.TaskRef{TaskID: late.ID})
		if g, err = e.steps.Generate(ctx, workflow.TaskRef{TaskID: late.ID}); err != nil || g.WaitSeconds > 4 {
			t.Errorf("Generate near the deadline = %+v, %v; want a wait of at most 4 s", g, err)
		}
	})
}

// TestOperationRunsToItsEnd runs the definition on the local interpreter:
// a provider done at its third poll completes the task, one never done
// fails it with TIMEOUT, refunded, and an execution re-driven after a
// restart polls the saved operation without submitting again.
func TestOperationRunsToItsEnd(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, nil)
		p := newScripted(3)
		e.steps.Provider = p
		ctx := context.Background()

		done := e.newTask("done at the third poll", 1)
		if _, err := e.runner.Run(ctx, done); err != nil {
			t.Fatal(err)
		}
		if tk := e.task(done.ID); tk.Status != task.Completed || p.count(p.submits, done.ID) != 1 || p.count(p.polls, done.ID) != 3 {
			t.Errorf("task %s after %d submits, %d polls; want completed after 1 and 3",
				tk.Status, p.count(p.submits, done.ID), p.count(p.polls, done.ID))
		}

		p.never = true
		stuck := e.newTask("never done", 1)
		if _, err := e.runner.Run(ctx, stuck); err != nil {
			t.Fatal(err)
		}
		tk := e.task(stuck.ID)
		if tk.Status != task.Failed || tk.Failure.Code != task.FailTimeout || tk.CreditsRefunded != tk.CreditsCost {
			t.Errorf("task never done: %s %+v, %d of %d refunded; want failed TIMEOUT, refunded",
				tk.Status, tk.Failure, tk.CreditsRefunded, tk.CreditsCost)
		}
		if n := p.count(p.submits, stuck.ID); n != 1 {
			t.Errorf("submitted %d times, want once", n)
		}

		// A process stops while the provider works; the next one
		// re-drives the task.
		p.never = false
		p.polls = map[string]int{}
		inter := e.newTask("interrupted", 1)
		if err := e.runner.Start(ctx, inter); err != nil {
			t.Fatal(err)
		}
		for e.task(inter.ID).Operation == "" {
			time.Sleep(time.Second)
		}
		e.runner.Close()
		next := e.newRunner(e.steps)
		e.recoverTasks(next, e.steps)
		next.Wait()
		if tk := e.task(inter.ID); tk.Status != task.Completed || p.count(p.submits, inter.ID) != 1 {
			t.Errorf("re-driven task %s after %d submits, want completed after 1", tk.Status, p.count(p.submits, inter.ID))
		}
	})
}
