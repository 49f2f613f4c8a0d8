package workflow_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/genvideo/gen/shared/asl"
	"github.com/genvideo/gen/shared/blob/memblob"
	"github.com/genvideo/gen/shared/catalog"
	"github.com/genvideo/gen/shared/devstack/localexec"
	"github.com/genvideo/gen/shared/domain"
	"github.com/genvideo/gen/shared/params"
	"github.com/genvideo/gen/shared/provider"
	"github.com/genvideo/gen/shared/store"
	"github.com/genvideo/gen/shared/store/sqlitestore"
	"github.com/genvideo/gen/shared/sweeper"
	"github.com/genvideo/gen/shared/task"
	"github.com/genvideo/gen/shared/testing/workflowtest"
	"github.com/genvideo/gen/shared/workflow"
	"github.com/genvideo/gen/statemachine"
)

// The end-to-end tests run the real definition in the real interpreter on
// a real SQLite store, with fakes only for blob storage and the generator.
// They run in synctest bubbles: time is virtual there, so the definition's
// retry intervals and timeouts pass at once and in a fixed order.

const (
	account        = "acct-1"
	initialCredits = 100_000
	model          = "gen-3.1-fast-generate-001"
)

// idTime dates task ids: the bubble's clock starts in 2000, before any
// valid id.
var idTime = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

type env struct {
	t      *testing.T
	store  *sqlitestore.Store
	blobs  *memblob.Store
	gen    *workflowtest.Generator
	steps  *workflow.Steps
	runner *localexec.Executions
	work   string
}

// newEnv must be called inside a bubble.
func newEnv(t *testing.T, outcome workflowtest.Outcome) *env {
	t.Helper()
	dir := t.TempDir()
	st, err := sqlitestore.Open(filepath.Join(dir, "gen.db"))
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.CreateAccount(context.Background(), domain.Account{ID: account, Credits: initialCredits, CreatedAt: time.Now()}); err != nil {
		t.Fatalf("create account: %v", err)
	}
	work := filepath.Join(dir, "work")
	if err := os.Mkdir(work, 0o755); err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, store: st, blobs: memblob.New(), gen: &workflowtest.Generator{Outcome: outcome}, work: work}
	e.steps = &workflow.Steps{Store: st, Blobs: e.blobs, Generator: e.gen, TempDir: work,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	e.runner = e.newRunner(e.steps)
	return e
}

func (e *env) newRunner(steps *workflow.Steps) *localexec.Executions {
	r, err := localexec.New(steps)
	if err != nil {
		e.t.Fatalf("localexec.New: %v", err)
	}
	e.t.Cleanup(r.Close)
	return r
}

// recoverTasks is what a process does as it starts: the sweeper re-drives
// every unfinished task over r, as the local stack's start-up does.
func (e *env) recoverTasks(r *localexec.Executions, steps *workflow.Steps) {
	e.t.Helper()
	sw := sweeper.New(sweeper.Config{Tasks: e.store, Failer: steps, Executions: r, Logger: steps.Logger})
	if _, err := sw.Recover(context.Background()); err != nil {
		e.t.Fatalf("Recover: %v", err)
	}
}

// newTask creates and charges a text-to-video task, as a start call does.
func (e *env) newTask(prompt string, samples int, edit ...func(*task.Task)) task.Task {
	e.t.Helper()
	m, _ := catalog.Lookup(model)
	now := time.Now()
	tk := task.Task{
		ID: task.NewID(idTime), AccountID: account, KeyName: "test key",
		Type: catalog.TextToVideo, Model: model, Prompt: prompt,
		Params: params.Parameters{SampleCount: samples, DurationSeconds: 8, AspectRatio: "16:9",
			Resolution: "1080p", GenerateAudio: true, EnhancePrompt: true, Seed: new(int64(7)), PersonGeneration: "allow_adult"},
		CreditsCost: m.Price(true) * samples,
		CreatedAt:   now,
		Deadline:    now.Add(10 * time.Minute),
	}
	for _, f := range edit {
		f(&tk)
	}
	if _, err := e.store.CreateTask(context.Background(), tk, domain.StartGuard{}); err != nil {
		e.t.Fatalf("create task: %v", err)
	}
	return tk
}

func (e *env) task(id string) task.Task {
	e.t.Helper()
	tk, err := e.store.Task(context.Background(), id)
	if err != nil {
		e.t.Fatalf("load task %s: %v", id, err)
	}
	return tk
}

func (e *env) account() domain.Account {
	e.t.Helper()
	a, err := e.store.Account(context.Background(), account)
	if err != nil {
		e.t.Fatalf("load account: %v", err)
	}
	return a
}

// refunds lists the refund entries of a task in the ledger.
func (e *env) refunds(taskID string) []int64 {
	e.t.Helper()
	entries, err := e.store.Ledger(context.Background(), account)
	if err != nil {
		e.t.Fatalf("ledger: %v", err)
	}
	var out []int64
	for _, le := range entries {
		if le.TaskID == taskID && le.Kind == domain.EntryRefund {
			out = append(out, le.Amount)
		}
	}
	return out
}

// checkWorkDirEmpty verifies that Generate cleaned up after itself.
func (e *env) checkWorkDirEmpty() {
	e.t.Helper()
	// A step past its state's timeout is left to finish on its own, its
	// context cancelled (asl's invoke, as Step Functions leaves a
	// Lambda): its work directory goes when it returns, which may be
	// after the execution ended. Every caller runs in a synctest bubble.
	synctest.Wait()
	left, err := os.ReadDir(e.work)
	if err != nil {
		e.t.Fatal(err)
	}
	if len(left) != 0 {
		e.t.Errorf("work directory holds %d entries after the workflow, want none", len(left))
	}
}

// checkVideos verifies that the task's videos are the fake generator's
// files, stored at their keys as video/mp4.
func (e *env) checkVideos(tk task.Task, want int) {
	e.t.Helper()
	if len(tk.Videos) != want {
		e.t.Fatalf("task has %d videos, want %d", len(tk.Videos), want)
	}
	for i, v := range tk.Videos {
		content := workflowtest.VideoContent(tk.ID, i)
		if v.Key != workflow.VideoKey(tk.ID, i) || v.MimeType != "video/mp4" || v.Size != int64(len(content)) {
			e.t.Errorf("video %d = %+v, want key %s, video/mp4, %d bytes", i, v, workflow.VideoKey(tk.ID, i), len(content))
		}
		data, ct, ok := e.blobs.Object(v.Key)
		if !ok || !bytes.Equal(data, content) || ct != "video/mp4" {
			e.t.Errorf("blob %s = %q (%s), present %v; want the generated video", v.Key, data, ct, ok)
		}
	}
}

// Errors as the render package shapes them: each classifies itself
// (provider.Classifier).
type transientErr struct{}

func (*transientErr) Error() string { return "ffmpeg was killed: signal 9" }
func (*transientErr) Classify() provider.Answer {
	return provider.Answer{Class: provider.Transient}
}

// codedErr is a failure that ends the task with its code.
type codedErr struct{ code string }

func (e *codedErr) Error() string { return "internal detail: /tmp/x exited 1 (" + e.code + ")" }
func (e *codedErr) Classify() provider.Answer {
	switch e.code {
	case task.FailContentPolicy:
		return provider.Answer{Class: provider.Refused}
	case task.FailModelUnavailable:
		return provider.Answer{Class: provider.ModelRetired}
	}
	return provider.Answer{Class: provider.Failed}
}

func fails(err error) workflowtest.Outcome {
	return func(context.Context, provider.Job, int) (int, error) { return 0, err }
}

func produces(n int) workflowtest.Outcome {
	return func(context.Context, provider.Job, int) (int, error) { return n, nil }
}

var messages = map[string]string{
	task.FailTimeout:       workflow.MessageTimeout,
	task.FailContentPolicy: workflow.MessageContentPolicy,
	task.FailGeneration:    workflow.MessageGeneration,
	task.FailInternal:      workflow.MessageInternal,
	// Codes of the providers' outcomes.
	task.FailProviderOutcomeUnknown: workflow.MessageOutcomeUnknown,
	task.FailModelUnavailable:       workflow.MessageModelUnavailable,
}

func TestWorkflow(t *testing.T) {
	m, _ := catalog.Lookup(model)
	price := m.Price(true)
	tests := []struct {
		name       string
		samples    int
		outcome    workflowtest.Outcome
		deadline   time.Duration // from now; 0 means 10 minutes
		wantStatus task.Status
		wantCode   string // for failed tasks
		wantVideos int
		wantRefund int
		wantCalls  int
	}{
		{name: "success", samples: 2, wantStatus: task.Completed, wantVideos: 2, wantCalls: 1},
		{name: "partial result refunds the missing sample", samples: 2, outcome: produces(1),
			wantStatus: task.Completed, wantVideos: 1, wantRefund: price, wantCalls: 1},
		{name: "generation failure", samples: 2, outcome: fails(&codedErr{task.FailGeneration}),
			wantStatus: task.Failed, wantCode: task.FailGeneration, wantRefund: 2 * price, wantCalls: 1},
		{name: "content policy, wrapped", samples: 1, outcome: fails(fmt.Errorf("render: %w", &codedErr{task.FailContentPolicy})),
			wantStatus: task.Failed, wantCode: task.FailContentPolicy, wantRefund: price, wantCalls: 1},
		{name: "unclassified generator error", samples: 1, outcome: fails(errors.New("mystery")),
			wantStatus: task.Failed, wantCode: task.FailGeneration, wantRefund: price, wantCalls: 1},
		{name: "no video at all", samples: 2, outcome: produces(0),
			wantStatus: task.Failed, wantCode: task.FailGeneration, wantRefund: 2 * price, wantCalls: 1},
		{name: "transient error retried, then success", samples: 1,
			outcome: func(_ context.Context, _ provider.Job, attempt int) (int, error) {
				if attempt == 1 {
					return 0, &transientErr{}
				}
				return 1, nil
			},
			wantStatus: task.Completed, wantVideos: 1, wantCalls: 2},
		{name: "transient error until the retries run out", samples: 1, outcome: fails(&transientErr{}),
			wantStatus: task.Failed, wantCode: task.FailGeneration, wantRefund: price, wantCalls: 4},
		{name: "generation past the deadline", samples: 2,
			outcome: func(ctx context.Context, _ provider.Job, _ int) (int, error) {
				<-ctx.Done() // as the renderer does: a cancelled render is transient
				return 0, &transientErr{}
			},
			wantStatus: task.Failed, wantCode: task.FailTimeout, wantRefund: 2 * price, wantCalls: 1},
		{name: "deadline passed before processing", samples: 1, deadline: -time.Second,
			wantStatus: task.Failed, wantCode: task.FailTimeout, wantRefund: price, wantCalls: 0},
		{name: "generator panic", samples: 1,
			outcome:    func(context.Context, provider.Job, int) (int, error) { panic("index out of range") },
			wantStatus: task.Failed, wantCode: task.FailInternal, wantRefund: price, wantCalls: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e := newEnv(t, tt.outcome)
				tk := e.newTask("a heron lands on a pier", tt.samples, func(tk *task.Task) {
					if tt.deadline != 0 {
						tk.Deadline = time.Now().Add(tt.deadline)
					}
				})
				exec, err := e.runner.Run(context.Background(), tk)
				if err != nil {
					t.Fatalf("Run: %v (execution %+v)", err, exec)
				}

				got := e.task(tk.ID)
				if got.Status != tt.wantStatus {
					t.Fatalf("status = %s (failure %+v), want %s", got.Status, got.Failure, tt.wantStatus)
				}
				if tt.wantStatus == task.Failed {
					want := task.Failure{Code: tt.wantCode, Message: messages[tt.wantCode]}
					if got.Failure == nil || *got.Failure != want {
						t.Errorf("failure = %+v, want %+v", got.Failure, want)
					}
				} else if got.Failure != nil {
					t.Errorf("failure = %+v, want none", got.Failure)
				}
				e.checkVideos(got, tt.wantVideos)
				if got.CreditsRefunded != tt.wantRefund {
					t.Errorf("creditsRefunded = %d, want %d", got.CreditsRefunded, tt.wantRefund)
				}
				var wantEntries []int64
				if tt.wantRefund > 0 {
					wantEntries = []int64{int64(tt.wantRefund)}
				}
				if r := e.refunds(tk.ID); !reflect.DeepEqual(r, wantEntries) {
					t.Errorf("refund entries = %v, want %v", r, wantEntries)
				}
				a := e.account()
				if want := int64(initialCredits - tk.CreditsCost + tt.wantRefund); a.Credits != want || a.InFlight != 0 {
					t.Errorf("account: %d credits, %d in flight; want %d, 0", a.Credits, a.InFlight, want)
				}
				if n := e.gen.Calls(tk.ID); n != tt.wantCalls {
					t.Errorf("generator called %d times, want %d", n, tt.wantCalls)
				}
				e.checkWorkDirEmpty()
			})
		})
	}
}

func TestImageInputs(t *testing.T) {
	tests := []struct {
		name   string
		typ    string
		inputs map[string]string // role -> content
	}{
		{"image-to-video", catalog.ImageToVideo, map[string]string{task.RoleImage: "png bytes"}},
		{"first-last-frame", catalog.FirstLastFrame, map[string]string{task.RoleFirstFrame: "first", task.RoleLastFrame: "last"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e := newEnv(t, nil)
				tk := e.newTask("animate this", 1, func(tk *task.Task) {
					tk.Type = tt.typ
					for role, content := range tt.inputs {
						key := "inputs/" + tk.ID + "/" + role
						if _, err := e.blobs.Put(context.Background(), key, strings.NewReader(content), "image/png"); err != nil {
							t.Fatal(err)
						}
						tk.Inputs = append(tk.Inputs, task.Input{Role: role, Key: key, MimeType: "image/png", Size: int64(len(content))})
					}
				})
				if _, err := e.runner.Run(context.Background(), tk); err != nil {
					t.Fatalf("Run: %v", err)
				}
				if got := e.task(tk.ID).Status; got != task.Completed {
					t.Fatalf("status = %s, want completed", got)
				}
				got := map[string]string{}
				for role, data := range e.gen.Inputs(tk.ID) {
					got[role] = string(data)
				}
				if !reflect.DeepEqual(got, tt.inputs) {
					t.Errorf("generator saw images %v, want %v", got, tt.inputs)
				}
				e.checkWorkDirEmpty()
			})
		})
	}
}

func TestMissingInputIsRetriedThenInternalError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, nil)
		tk := e.newTask("animate this", 1, func(tk *task.Task) {
			tk.Type = catalog.ImageToVideo
			tk.Inputs = []task.Input{{Role: task.RoleImage, Key: "inputs/none.png", MimeType: "image/png"}}
		})
		start := time.Now()
		if _, err := e.runner.Run(context.Background(), tk); err != nil {
			t.Fatalf("Run: %v", err)
		}
		got := e.task(tk.ID)
		if got.Status != task.Failed || got.Failure.Code != task.FailInternal {
			t.Errorf("task = %s %+v, want failed with %s", got.Status, got.Failure, task.FailInternal)
		}
		// BlobsUnavailable: 4 retries at 2, 4, 8 and 16 seconds.
		if waited := time.Since(start); waited != 30*time.Second {
			t.Errorf("the workflow took %v, want 30s of retries", waited)
		}
		if n := e.gen.Calls(tk.ID); n != 0 {
			t.Errorf("generator called %d times, want 0", n)
		}
	})
}

func TestStepsAreIdempotent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, produces(1)) // one of two samples: a refund to keep exact
		ctx := context.Background()
		s := e.steps
		tk := e.newTask("a heron", 2)
		ref := workflow.TaskRef{TaskID: tk.ID}

		for i := range 2 {
			st, err := s.MarkProcessing(ctx, ref)
			if err != nil || st.Status != task.Processing {
				t.Fatalf("MarkProcessing #%d = %+v, %v; want processing", i+1, st, err)
			}
		}
		started := e.task(tk.ID).StartedAt
		var results []workflow.Generated
		for i := range 2 {
			g, err := s.Generate(ctx, ref)
			if err != nil {
				t.Fatalf("Generate #%d: %v", i+1, err)
			}
			results = append(results, g)
		}
		if !reflect.DeepEqual(results[0], results[1]) || results[0].Filtered != 1 {
			t.Errorf("Generate twice = %+v and %+v, want the same result with 1 filtered", results[0], results[1])
		}
		keys := e.blobs.Keys()

		for i := range 2 {
			st, err := s.Complete(ctx, workflow.CompleteInput{TaskID: tk.ID, Result: results[0]})
			if err != nil || st.Status != task.Completed {
				t.Fatalf("Complete #%d = %+v, %v; want completed", i+1, st, err)
			}
		}
		before := e.task(tk.ID)
		balance := e.account().Credits
		// The built-in generator's billing went from Generate's result to
		// the task: its own route, at no cost.
		if want := (task.Billing{Route: provider.RouteBuiltin}); results[0].Billing != want || before.Billing != want {
			t.Errorf("billing: result %+v, task %+v; want %+v", results[0].Billing, before.Billing, want)
		}

		// Everything again on the completed task, and a late failure.
		if st, err := s.MarkProcessing(ctx, ref); err != nil || st.Status != task.Completed {
			t.Errorf("MarkProcessing after completion = %+v, %v; want completed", st, err)
		}
		if g, err := s.Generate(ctx, ref); err != nil || !reflect.DeepEqual(g, results[0]) {
			t.Errorf("Generate after completion = %+v, %v; want %+v", g, err, results[0])
		}
		late := workflow.FailInput{TaskID: tk.ID, Error: workflow.CaughtError{Error: "States.Timeout", Cause: "late"}}
		if st, err := s.Fail(ctx, late); err != nil || st.Status != task.Completed {
			t.Errorf("Fail after completion = %+v, %v; want completed, no error", st, err)
		}
		if _, err := e.runner.Run(ctx, tk); err != nil {
			t.Errorf("a whole second execution: %v", err)
		}

		after := e.task(tk.ID)
		if !reflect.DeepEqual(after, before) || !after.StartedAt.Equal(started) {
			t.Errorf("task changed by the re-runs:\n got %+v\nwant %+v", after, before)
		}
		if got := e.account().Credits; got != balance {
			t.Errorf("balance changed by the re-runs: %d, want %d", got, balance)
		}
		if r := e.refunds(tk.ID); len(r) != 1 {
			t.Errorf("refund entries = %v, want exactly one", r)
		}
		if n := e.gen.Calls(tk.ID); n != 2 {
			t.Errorf("generator called %d times, want 2 (not after completion)", n)
		}
		if got := e.blobs.Keys(); !reflect.DeepEqual(got, keys) {
			t.Errorf("blob keys = %v, want %v", got, keys)
		}

		// A failed task: refunded once, whatever follows.
		other := e.newTask("another", 1)
		fail := workflow.FailInput{TaskID: other.ID, Error: workflow.CaughtError{Error: "GenerationFailed", Cause: "x"}}
		for i := range 2 {
			if st, err := s.Fail(ctx, fail); err != nil || st.Status != task.Failed {
				t.Fatalf("Fail #%d = %+v, %v; want failed", i+1, st, err)
			}
		}
		if st, err := s.Complete(ctx, workflow.CompleteInput{TaskID: other.ID, Result: results[0]}); err != nil || st.Status != task.Failed {
			t.Errorf("Complete after failure = %+v, %v; want failed, no error", st, err)
		}
		if r := e.refunds(other.ID); !reflect.DeepEqual(r, []int64{int64(other.CreditsCost)}) {
			t.Errorf("refund entries = %v, want one of %d", r, other.CreditsCost)
		}
	})
}

func TestStepErrors(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, nil)
		ctx := context.Background()
		s := e.steps
		missing := workflow.TaskRef{TaskID: task.NewID(idTime)}
		tests := []struct {
			name string
			call func() error
			want string
		}{
			{"MarkProcessing of an unknown task", func() error { _, err := s.MarkProcessing(ctx, missing); return err }, "TaskNotFound"},
			{"Generate without a task id", func() error { _, err := s.Generate(ctx, workflow.TaskRef{}); return err }, "InvalidInput"},
			{"Complete with no video", func() error {
				tk := e.newTask("x", 1)
				_, err := s.Complete(ctx, workflow.CompleteInput{TaskID: tk.ID})
				return err
			}, "GenerationFailed"},
		}
		for _, tt := range tests {
			if err := tt.call(); asl.ErrorName(err) != tt.want {
				t.Errorf("%s: error %v named %q, want %q", tt.name, err, asl.ErrorName(err), tt.want)
			}
		}

		// A closed store is unavailable, which the definition retries.
		tk := e.newTask("x", 1)
		e.store.Close()
		_, err := s.MarkProcessing(ctx, workflow.TaskRef{TaskID: tk.ID})
		if asl.ErrorName(err) != "StoreUnavailable" || !errors.Is(err, store.ErrUnavailable) {
			t.Errorf("MarkProcessing on a closed store: error %v named %q, want StoreUnavailable wrapping store.ErrUnavailable", err, asl.ErrorName(err))
		}
	})
}

func TestRecover(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// The first process generates until it is stopped.
		entered := make(chan string, 10)
		e := newEnv(t, func(ctx context.Context, job provider.Job, _ int) (int, error) {
			entered <- job.TaskID
			<-ctx.Done()
			return 0, &transientErr{}
		})
		ctx := context.Background()
		var running []task.Task
		for i := range 3 {
			running = append(running, e.newTask(fmt.Sprintf("task %d", i), 1))
		}
		expiring := e.newTask("expires while the service is down", 1, func(tk *task.Task) {
			tk.Deadline = time.Now().Add(time.Minute)
		})
		running = append(running, expiring)
		for _, tk := range running {
			if err := e.runner.Start(ctx, tk); err != nil {
				t.Fatalf("Start: %v", err)
			}
		}
		never := e.newTask("created, never started", 2) // the process stopped in between
		for range running {
			<-entered
		}
		e.runner.Close()
		for _, tk := range append(running, never) {
			if got := e.task(tk.ID).Status; got.Terminal() {
				t.Fatalf("task %s is %s after the stop, want it unfinished", tk.ID, got)
			}
		}

		time.Sleep(2 * time.Minute) // the service is down; one deadline passes

		// The next process recovers with a generator that works.
		gen := &workflowtest.Generator{}
		steps := *e.steps
		steps.Generator = gen
		r := e.newRunner(&steps)
		e.recoverTasks(r, &steps)
		r.Wait()

		left, err := e.store.Unfinished(ctx)
		if err != nil || len(left) != 0 {
			t.Errorf("Unfinished after Recover = %d tasks, %v; want none", len(left), err)
		}
		for _, tk := range append(running[:3], never) {
			got := e.task(tk.ID)
			if got.Status != task.Completed {
				t.Errorf("task %s is %s, want completed", tk.ID, got.Status)
				continue
			}
			e.checkVideos(got, tk.Params.SampleCount)
		}
		got := e.task(expiring.ID)
		if got.Status != task.Failed || got.Failure.Code != task.FailTimeout || got.CreditsRefunded != expiring.CreditsCost {
			t.Errorf("expired task = %s %+v refunded %d, want failed TIMEOUT refunded %d",
				got.Status, got.Failure, got.CreditsRefunded, expiring.CreditsCost)
		}
		if gen.Calls(expiring.ID) != 0 {
			t.Errorf("the expired task was generated again")
		}
		spent := 0
		for _, tk := range append(running[:3], never) {
			spent += tk.CreditsCost
		}
		if a := e.account(); a.Credits != int64(initialCredits-spent) || a.InFlight != 0 {
			t.Errorf("account: %d credits, %d in flight; want %d, 0", a.Credits, a.InFlight, initialCredits-spent)
		}
		e.checkWorkDirEmpty()
	})
}

func TestStartIsIdempotent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		e := newEnv(t, func(context.Context, provider.Job, int) (int, error) {
			<-release
			return 1, nil
		})
		tk := e.newTask("once", 1)
		for range 3 {
			if err := e.runner.Start(context.Background(), tk); err != nil {
				t.Fatalf("Start: %v", err)
			}
		}
		synctest.Wait()
		if !e.runner.Running(tk.ID) {
			t.Errorf("Running = false while generating, want true")
		}
		close(release)
		e.runner.Wait()
		if n := e.gen.Calls(tk.ID); n != 1 {
			t.Errorf("generator called %d times for three Starts, want 1", n)
		}
		if got := e.task(tk.ID).Status; got != task.Completed {
			t.Errorf("status = %s, want completed", got)
		}
	})
}

func TestFailureFor(t *testing.T) {
	tests := []struct{ name, wantCode string }{
		{"States.Timeout", task.FailTimeout},
		{"DeadlineExceeded", task.FailTimeout},
		{"Sandbox.Timedout", task.FailTimeout},
		{"ContentPolicyViolation", task.FailContentPolicy},
		{"GenerationFailed", task.FailGeneration},
		{"TransientGenerationError", task.FailGeneration},
		{"ProviderOutcomeUnknown", task.FailProviderOutcomeUnknown},
		{"ModelUnavailable", task.FailModelUnavailable},
		{"StoreUnavailable", task.FailInternal},
		{"wrapError", task.FailInternal},
		{"Lambda.ServiceException", task.FailInternal},
		{"", task.FailInternal},
	}
	for _, tt := range tests {
		got := workflow.FailureFor(tt.name)
		if got.Code != tt.wantCode || got.Message != messages[tt.wantCode] {
			t.Errorf("FailureFor(%q) = %+v, want %s with its message", tt.name, got, tt.wantCode)
		}
	}
}

// A step's Lambda that dies without an error of its own (Lambda.Unknown:
// out of time or memory) fails its task with the contract's TIMEOUT or
// GENERATION_FAILED, read from the cause; other names as FailureFor.
func TestFailureOf(t *testing.T) {
	tests := []struct{ name, cause, wantCode string }{
		{"Lambda.Unknown", `{"errorMessage":"2030-01-02T03:04:05Z 1b2c Task timed out after 900.10 seconds"}`, task.FailTimeout},
		{"Lambda.Unknown", "The cause could not be determined because Lambda did not return an error type. Returned payload: Runtime exited with error: signal: killed", task.FailGeneration},
		{"Runtime.OutOfMemory", "Runtime exited with error: signal: killed", task.FailGeneration},
		{"Sandbox.Timedout", "", task.FailTimeout},
		{"ContentPolicyViolation", "", task.FailContentPolicy},
		{"Lambda.ServiceException", "timed out", task.FailInternal},
	}
	for _, tt := range tests {
		got := workflow.FailureOf(tt.name, tt.cause)
		if got.Code != tt.wantCode || got.Message != messages[tt.wantCode] {
			t.Errorf("FailureOf(%q, %q) = %+v, want %s with its message", tt.name, tt.cause, got, tt.wantCode)
		}
	}
}

func TestNewInput(t *testing.T) {
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		deadline time.Time
		want     int64
	}{
		{now.Add(90*time.Second + time.Millisecond), 91},
		{now.Add(10 * time.Minute), 600},
		{now.Add(-time.Hour), 1},
		{time.Time{}, int64(workflow.DefaultTimeout / time.Second)},
	}
	for _, tt := range tests {
		got := workflow.NewInput(task.Task{ID: "t", Deadline: tt.deadline}, now)
		if got.TaskID != "t" || got.TimeoutSeconds != tt.want {
			t.Errorf("NewInput(deadline %v) = %+v, want timeoutSeconds %d", tt.deadline, got, tt.want)
		}
	}
}

// TestDefinitionNamesTheStepErrors guards the link between the definition
// and this package: every error name its Retry and Catch fields match is
// either a States./Lambda. name or the type name of an error the steps
// return, so renaming a type cannot silently disable a retry.
func TestDefinitionNamesTheStepErrors(t *testing.T) {
	stepErrors := map[string]error{
		"DeadlineExceeded":         &workflow.DeadlineExceeded{},
		"TransientGenerationError": &workflow.TransientGenerationError{},
		"ContentPolicyViolation":   &workflow.ContentPolicyViolation{},
		"GenerationFailed":         &workflow.GenerationFailed{},
		"StoreUnavailable":         &workflow.StoreUnavailable{},
		"BlobsUnavailable":         &workflow.BlobsUnavailable{},
		"TaskNotFound":             &workflow.TaskNotFound{},
		"InvalidInput":             &workflow.InvalidInput{},
		"ProviderOutcomeUnknown":   &workflow.ProviderOutcomeUnknown{},
		"ModelUnavailable":         &workflow.ModelUnavailable{},
	}
	for name, err := range stepErrors {
		if got := asl.ErrorName(err); got != name {
			t.Errorf("asl.ErrorName(%T) = %q, want %q", err, got, name)
		}
	}

	var def struct {
		States map[string]struct {
			Retry, Catch []struct{ ErrorEquals []string }
		}
	}
	if err := json.Unmarshal(statemachine.Generation, &def); err != nil {
		t.Fatal(err)
	}
	matched := map[string]bool{}
	for state, s := range def.States {
		for _, r := range append(s.Retry, s.Catch...) {
			for _, name := range r.ErrorEquals {
				matched[name] = true
				if strings.HasPrefix(name, "States.") || strings.HasPrefix(name, "Lambda.") {
					continue
				}
				if _, ok := stepErrors[name]; !ok {
					t.Errorf("state %s matches %q, which no step returns", state, name)
				}
			}
		}
	}
	for _, name := range []string{"TransientGenerationError", "StoreUnavailable", "BlobsUnavailable", "TaskNotFound"} {
		if !matched[name] {
			t.Errorf("the definition never matches %s", name)
		}
	}
}

// TestDefinitionParsesWithARNs checks the definition as SAM deploys it:
// only the five placeholders, each a Lambda ARN.
func TestDefinitionParsesWithARNs(t *testing.T) {
	subs := map[string]string{}
	for _, name := range []string{"MarkProcessing", "Generate", "Poll", "Complete", "Fail"} {
		subs[name+"FunctionArn"] = "arn:aws:lambda:eu-west-1:123456789012:function:gen-" + name
	}
	sm, err := asl.Parse(statemachine.Generation, subs)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if got := len(sm.Resources()); got != 5 {
		t.Errorf("%d resources, want 5", got)
	}
	delete(subs, "FailFunctionArn")
	if _, err := asl.Parse(statemachine.Generation, subs); err == nil {
		t.Errorf("Parse without FailFunctionArn succeeded, want an error")
	}
}
