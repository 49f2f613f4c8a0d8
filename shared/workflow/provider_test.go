package workflow_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/genvideo/gen/shared/provider"
	"github.com/genvideo/gen/shared/provider/veo"
	"github.com/genvideo/gen/shared/task"
	"github.com/genvideo/gen/shared/testing/logtest"
	"github.com/genvideo/gen/shared/testing/veotest"
	"github.com/genvideo/gen/shared/workflow"
)

// scripted is a provider.Provider whose operations are done after
// doneAfter polls; busy, while positive, makes that many calls answer a
// busy provider first. It counts submits and polls by task.
type scripted struct {
	doneAfter int
	never     bool
	busy      int
	hint      time.Duration
	// submitErr, when set, is what each submit answers once counted (a
	// job whose answer was lost counts).
	submitErr error

	mu             sync.Mutex
	submits, polls map[string]int
}

type busyErr struct{}

func (busyErr) Error() string             { return "429 RESOURCE_EXHAUSTED" }
func (busyErr) Classify() provider.Answer { return provider.Answer{Class: provider.Busy} }

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

func (p *scripted) Submit(_ context.Context, job provider.Job) (provider.Operation, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.takeBusy() {
		return provider.Operation{}, busyErr{}
	}
	p.submits[job.TaskID]++
	if p.submitErr != nil {
		return provider.Operation{}, p.submitErr
	}
	return provider.Operation{Name: fmt.Sprintf("ops/%s/%d", job.TaskID, p.submits[job.TaskID]), PollAfter: p.hint}, nil
}

func (p *scripted) Poll(_ context.Context, name string, job provider.Job) (provider.Operation, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.takeBusy() {
		return provider.Operation{}, busyErr{}
	}
	p.polls[job.TaskID]++
	if p.never || p.polls[job.TaskID] < p.doneAfter {
		return provider.Operation{Name: name, PollAfter: p.hint}, nil
	}
	if err := os.MkdirAll(job.OutDir, 0o700); err != nil {
		return provider.Operation{}, err
	}
	path := filepath.Join(job.OutDir, "0.mp4")
	if err := os.WriteFile(path, []byte("a video of "+name), 0o600); err != nil {
		return provider.Operation{}, err
	}
	return provider.Operation{Name: name, Done: true, Result: provider.Result{Paths: []string{path}}}, nil
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

// lostAnswer is a submit that went out with no answer back.
type lostAnswer struct{}

func (lostAnswer) Error() string { return "POST predictLongRunning: connection reset by peer" }
func (lostAnswer) Classify() provider.Answer {
	return provider.Answer{Class: provider.OutcomeUnknown}
}

// TestAmbiguousSubmitIsNeverRepeated: a submit whose answer was lost
// ends the task PROVIDER_OUTCOME_UNKNOWN, refunded, after one job; a
// re-run of the step (the execution retried, or re-driven after a
// restart) submits nothing, waiting out a submit that may still be in
// flight, then failing the same way.
func TestAmbiguousSubmitIsNeverRepeated(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, nil)
		p := newScripted(1)
		p.submitErr = lostAnswer{}
		e.steps.Provider = p
		ctx := context.Background()
		ref := func(tk task.Task) workflow.TaskRef { return workflow.TaskRef{TaskID: tk.ID} }

		lost := e.newTask("an answer lost", 1)
		e.steps.MarkProcessing(ctx, ref(lost))
		_, err := e.steps.Generate(ctx, ref(lost))
		var unknown *workflow.ProviderOutcomeUnknown
		if !errors.As(err, &unknown) {
			t.Fatalf("Generate = %v, want a *ProviderOutcomeUnknown", err)
		}
		// A re-run at once waits for the submit that may be in flight;
		// past SubmitGrace it fails as well; neither submits.
		if g, err := e.steps.Generate(ctx, ref(lost)); err != nil || g.Done || g.WaitSeconds < 1 {
			t.Errorf("re-run = %+v, %v; want a wait", g, err)
		}
		time.Sleep(workflow.SubmitGrace)
		if _, err := e.steps.Generate(ctx, ref(lost)); !errors.As(err, &unknown) {
			t.Errorf("re-run past the grace = %v, want a *ProviderOutcomeUnknown", err)
		}
		if n := p.count(p.submits, lost.ID); n != 1 {
			t.Errorf("submitted %d times, want once", n)
		}

		// Through the definition: failed, refunded once, one job.
		run := e.newTask("an answer lost, run", 1)
		if _, err := e.runner.Run(ctx, run); err != nil {
			t.Fatal(err)
		}
		tk := e.task(run.ID)
		if tk.Status != task.Failed || tk.Failure.Code != task.FailProviderOutcomeUnknown ||
			tk.Failure.Message != workflow.MessageOutcomeUnknown || len(e.refunds(run.ID)) != 1 || tk.CreditsRefunded != tk.CreditsCost {
			t.Errorf("task %s %+v, refunds %v; want failed %s, refunded once in full",
				tk.Status, tk.Failure, e.refunds(run.ID), task.FailProviderOutcomeUnknown)
		}
		if n := p.count(p.submits, run.ID); n != 1 {
			t.Errorf("submitted %d times, want once", n)
		}

		// A process that died between its submit and saving the answer
		// left the marker: the next one never submits.
		p.submitErr = nil
		crashed := e.newTask("a crash while submitting", 1)
		e.steps.MarkProcessing(ctx, ref(crashed))
		if _, err := e.store.SetOperation(ctx, crashed.ID, "", task.SubmittingMarker(time.Now())); err != nil {
			t.Fatal(err)
		}
		if g, err := e.steps.Generate(ctx, ref(crashed)); err != nil || g.Done {
			t.Errorf("Generate over a fresh marker = %+v, %v; want a wait", g, err)
		}
		time.Sleep(workflow.SubmitGrace)
		if _, err := e.steps.Generate(ctx, ref(crashed)); !errors.As(err, &unknown) {
			t.Errorf("Generate over an old marker = %v, want a *ProviderOutcomeUnknown", err)
		}
		if n := p.count(p.submits, crashed.ID); n != 0 {
			t.Errorf("submitted %d times, want never", n)
		}
	})
}

// TestRetiredModelFails: a provider that no longer serves the model
// fails the task MODEL_UNAVAILABLE, refunded, with the operator's alarm
// in the log.
func TestRetiredModelFails(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, nil)
		var logs logtest.Buffer
		e.steps.Logger = slog.New(slog.NewJSONHandler(&logs, nil))
		p := newScripted(1)
		p.submitErr = &codedErr{task.FailModelUnavailable}
		e.steps.Provider = p
		tk := e.newTask("a retired model", 1)
		if _, err := e.runner.Run(context.Background(), tk); err != nil {
			t.Fatal(err)
		}
		got := e.task(tk.ID)
		if got.Status != task.Failed || got.Failure.Code != task.FailModelUnavailable || got.CreditsRefunded != got.CreditsCost {
			t.Errorf("task %s %+v, %d of %d refunded; want failed %s, refunded", got.Status, got.Failure,
				got.CreditsRefunded, got.CreditsCost, task.FailModelUnavailable)
		}
		if !strings.Contains(logs.String(), `"level":"ERROR","msg":"`+workflow.AlarmModelUnavailable+`"`) ||
			!strings.Contains(logs.String(), tk.ID) {
			t.Errorf("no ERROR %q naming the task in the log:\n%s", workflow.AlarmModelUnavailable, logs.String())
		}
	})
}

// TestLostAnswerCostsOneJobAtTheFake: against the fake Vertex AI, a
// submit whose connection drops after the job was accepted, and every
// re-run of the step after it, cost the one job the fake counted.
func TestLostAnswerCostsOneJobAtTheFake(t *testing.T) {
	fake := veotest.New(veotest.Config{Token: "ya29.t"})
	fake.When("a dropped answer", veotest.Outcome{Drop: true})
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	v, err := veo.NewVertex(t.Context(), veo.VertexConfig{Project: "p", Endpoint: srv.URL, AccessToken: "ya29.t"})
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, nil)
	e.steps.Provider = v
	clock := time.Now()
	e.steps.Now = func() time.Time { return clock }
	ctx := t.Context()
	tk := e.newTask("a dropped answer", 1)
	ref := workflow.TaskRef{TaskID: tk.ID}
	e.steps.MarkProcessing(ctx, ref)
	var unknown *workflow.ProviderOutcomeUnknown
	if _, err := e.steps.Generate(ctx, ref); !errors.As(err, &unknown) {
		t.Fatalf("Generate = %v, want a *ProviderOutcomeUnknown", err)
	}
	for _, later := range []time.Duration{time.Second, workflow.SubmitGrace} {
		clock = clock.Add(later)
		e.steps.Generate(ctx, ref)
	}
	if n := fake.Accepted("a dropped answer"); n != 1 || len(fake.Submits()) != 1 {
		t.Errorf("the fake accepted %d jobs of %d submits, want the one", n, len(fake.Submits()))
	}
}

// refusedToken is a poll whose credentials were refused while the job
// runs: a wait only an operator can end.
type refusedToken struct{}

func (refusedToken) Error() string { return "401 UNAUTHENTICATED" }
func (refusedToken) Classify() provider.Answer {
	return provider.Answer{Class: provider.Busy, Operator: true}
}

// pollRefused polls with refused credentials.
type pollRefused struct{ *scripted }

func (p pollRefused) Poll(context.Context, string, provider.Job) (provider.Operation, error) {
	return provider.Operation{}, refusedToken{}
}

// TestRefusedCredentialsOnAPollWait: a poll whose credentials were
// refused waits, the handle kept, and says so at ERROR for the operator.
func TestRefusedCredentialsOnAPollWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, nil)
		var logs logtest.Buffer
		e.steps.Logger = slog.New(slog.NewJSONHandler(&logs, nil))
		e.steps.Provider = pollRefused{newScripted(1)}
		ctx := context.Background()
		tk := e.newTask("an expired token", 1)
		ref := workflow.TaskRef{TaskID: tk.ID}
		e.steps.MarkProcessing(ctx, ref)
		for range 2 { // the submit, then a poll
			if g, err := e.steps.Generate(ctx, ref); err != nil || g.Done {
				t.Fatalf("Generate = %+v, %v; want a wait", g, err)
			}
		}
		if e.task(tk.ID).Handle() == "" || !strings.Contains(logs.String(), `"level":"ERROR","msg":"provider busy: waiting"`) {
			t.Errorf("handle %q, log:\n%s\nwant the handle kept and the wait at ERROR", e.task(tk.ID).Operation, logs.String())
		}
	})
}
