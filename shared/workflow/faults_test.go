package workflow_test

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/genvideo/gen/shared/catalog"
	"github.com/genvideo/gen/shared/devstack/localexec"
	"github.com/genvideo/gen/shared/faults"
	"github.com/genvideo/gen/shared/task"
	"github.com/genvideo/gen/shared/testing/storetest"
	"github.com/genvideo/gen/shared/testing/workflowtest"
)

// The fault-injection tests run the real definition on a real store with
// shared/faults decorators between the steps and their dependencies. In
// the synctest bubble the definition's retry intervals pass at once.

// faultEnv is an env whose steps reach the store, the blobs and the
// generator through one injector. The env's own runner is the process
// that comes after a crash: it has no faults.
type faultEnv struct {
	*env
	inj    *faults.Injector
	faulty *localexec.Executions
}

func newFaultEnv(t *testing.T, outcome workflowtest.Outcome) *faultEnv {
	t.Helper()
	e := newEnv(t, outcome)
	inj := faults.NewInjector()
	steps := *e.steps
	steps.Store = faults.WrapStore(e.store, inj)
	steps.Blobs = faults.WrapBlobs(e.blobs, inj)
	steps.Generator = faults.WrapGenerator(e.gen, inj)
	return &faultEnv{env: e, inj: inj, faulty: e.newRunner(&steps)}
}

// imageTask creates an image-to-video task whose image is in the blobs.
func (e *faultEnv) imageTask(prompt string) task.Task {
	e.t.Helper()
	return e.newTask(prompt, 1, func(tk *task.Task) {
		tk.Type = catalog.ImageToVideo
		key := "inputs/" + tk.ID + "/image.png"
		if _, err := e.blobs.Put(context.Background(), key, strings.NewReader("png bytes"), "image/png"); err != nil {
			e.t.Fatal(err)
		}
		tk.Inputs = []task.Input{{Role: task.RoleImage, Key: key, MimeType: "image/png", Size: 9}}
	})
}

// recover is the next process: it re-drives every unfinished task with
// no faults and waits for them.
func (e *faultEnv) recover() {
	e.t.Helper()
	e.recoverTasks(e.runner, e.steps)
	e.runner.Wait()
	if left, err := e.store.Unfinished(context.Background()); err != nil || len(left) != 0 {
		e.t.Fatalf("after Recover %d tasks are unfinished (%v), want none", len(left), err)
	}
}

// want is how a task must end.
type want struct {
	status task.Status
	code   string // failure code of a failed task
	videos int    // of a completed task
	refund int
}

// failedRefunded is how a task must end that fails with code: refunded
// in full.
func failedRefunded(code string) func(task.Task) want {
	return func(tk task.Task) want { return want{status: task.Failed, code: code, refund: tk.CreditsCost} }
}

// check asserts that tk ended as w says: its videos stored, its refund in
// one ledger entry, its failure message the client-safe one.
func (e *faultEnv) check(tk task.Task, w want) {
	e.t.Helper()
	got := e.task(tk.ID)
	if got.Status != w.status {
		e.t.Fatalf("task %s ended %s (failure %+v), want %s", tk.ID, got.Status, got.Failure, w.status)
	}
	switch w.status {
	case task.Failed:
		f := task.Failure{Code: w.code, Message: messages[w.code]}
		if got.Failure == nil || *got.Failure != f {
			e.t.Errorf("task %s: failure %+v, want %+v", tk.ID, got.Failure, f)
		}
	case task.Completed:
		e.checkVideos(got, w.videos)
	}
	if got.CreditsRefunded != w.refund {
		e.t.Errorf("task %s: refunded %d, want %d", tk.ID, got.CreditsRefunded, w.refund)
	}
	var entries []int64
	if w.refund > 0 {
		entries = []int64{int64(w.refund)}
	}
	if r := e.refunds(tk.ID); !reflect.DeepEqual(r, entries) {
		e.t.Errorf("task %s: refund entries %v, want %v", tk.ID, r, entries)
	}
}

// crashScenarios are tasks whose workflow takes each kind of path.
var crashScenarios = []struct {
	name    string
	outcome workflowtest.Outcome
	image   bool
	samples int
	want    func(tk task.Task) want
}{
	{"text, two samples", nil, false, 2,
		func(tk task.Task) want { return want{status: task.Completed, videos: 2} }},
	{"image", nil, true, 1,
		func(tk task.Task) want { return want{status: task.Completed, videos: 1} }},
	{"partial result", produces(1), false, 2,
		func(tk task.Task) want { return want{status: task.Completed, videos: 1, refund: tk.CreditsCost / 2} }},
	{"generation fails", fails(&codedErr{task.FailGeneration}), false, 1,
		failedRefunded(task.FailGeneration)},
}

func (e *faultEnv) scenarioTask(image bool, samples int) task.Task {
	if image {
		return e.imageTask("a kite over the dunes")
	}
	return e.newTask("a kite over the dunes", samples)
}

// TestCrashBetweenAnyTwoSteps stops the process at every call the
// workflow makes to a dependency, before the call and after it took
// effect, restarts, and checks that the task ends as it would have
// without the crash: completed, or failed and refunded once.
func TestCrashBetweenAnyTwoSteps(t *testing.T) {
	for _, sc := range crashScenarios {
		// The calls of an undisturbed run are the crash points.
		var trace []string
		synctest.Test(t, func(t *testing.T) {
			e := newFaultEnv(t, sc.outcome)
			tk := e.scenarioTask(sc.image, sc.samples)
			if _, err := e.faulty.Run(context.Background(), tk); err != nil {
				t.Fatalf("%s: undisturbed run: %v", sc.name, err)
			}
			trace = e.inj.Trace()
		})
		if len(trace) < 4 {
			t.Fatalf("%s: the workflow made %d calls %v, want at least 4", sc.name, len(trace), trace)
		}
		for i, method := range trace {
			nth := countOf(trace[:i+1], method)
			for _, after := range []bool{false, true} {
				if after && readOnly[method] {
					continue // the same state as before the next call
				}
				name := fmt.Sprintf("%s/%s#%d/before", sc.name, method, nth)
				if after {
					name = strings.TrimSuffix(name, "before") + "after"
				}
				t.Run(name, func(t *testing.T) {
					t.Parallel()
					synctest.Test(t, func(t *testing.T) {
						e := newFaultEnv(t, sc.outcome)
						tk := e.scenarioTask(sc.image, sc.samples)
						e.inj.Set(method, faults.Nth(nth, faults.Fault{Hang: true, After: after}))
						if err := e.faulty.Start(context.Background(), tk); err != nil {
							t.Fatalf("Start: %v", err)
						}
						if got := <-e.inj.Hung(); got != method {
							t.Fatalf("the process stopped in %s, want %s", got, method)
						}
						e.inj.Crash()
						e.faulty.Close()

						e.recover()
						e.check(tk, sc.want(tk))
						if a := e.account(); a.InFlight != 0 {
							t.Errorf("%d tasks in flight after recovery, want 0", a.InFlight)
						}
						storetest.CheckInvariants(t, e.store, account)
						e.checkWorkDirEmpty()
					})
				})
			}
		}
	}
}

// readOnly are the calls that change nothing: a crash after one is a
// crash before the next.
var readOnly = map[string]bool{"Store.Task": true, "Blobs.Get": true}

func countOf(s []string, v string) int {
	n := 0
	for _, x := range s {
		if x == v {
			n++
		}
	}
	return n
}

// TestFaultsAtEachBoundary injects one kind of fault at one place and
// checks how the task ends. unfinished says that the faults may leave the
// task unfinished (the store is down for good), in which case the outage
// ends and a recovery must finish it.
func TestFaultsAtEachBoundary(t *testing.T) {
	outage := faults.Fault{Err: faults.Unavailable()}
	lostReply := faults.Fault{Err: faults.Unavailable(), After: true}
	tests := []struct {
		name       string
		outcome    workflowtest.Outcome
		samples    int
		rules      map[string]faults.Rule
		want       func(tk task.Task) want
		unfinished task.Status // what the faults leave, if not terminal
	}{
		{name: "store down at MarkProcessing for three tries", samples: 1,
			rules: map[string]faults.Rule{"Store.MarkProcessing": func(_ string, n int) faults.Fault {
				if n <= 3 {
					return outage
				}
				return faults.Fault{}
			}},
			want: func(task.Task) want { return want{status: task.Completed, videos: 1} }},
		{name: "MarkProcessing reply lost", samples: 1,
			rules: map[string]faults.Rule{"Store.MarkProcessing": faults.Nth(1, lostReply)},
			want:  func(task.Task) want { return want{status: task.Completed, videos: 1} }},
		{name: "Complete reply lost, partial result", outcome: produces(1), samples: 2,
			rules: map[string]faults.Rule{"Store.Complete": faults.Nth(1, lostReply)},
			want: func(tk task.Task) want {
				return want{status: task.Completed, videos: 1, refund: tk.CreditsCost / 2}
			}},
		{name: "Fail reply lost", outcome: fails(&codedErr{task.FailGeneration}), samples: 1,
			rules: map[string]faults.Rule{"Store.Fail": faults.Nth(1, lostReply)},
			want:  failedRefunded(task.FailGeneration)},
		{name: "Complete down for good", samples: 1,
			rules: map[string]faults.Rule{"Store.Complete": faults.Always(outage)},
			want:  failedRefunded(task.FailInternal)},
		{name: "Complete broken", samples: 1,
			rules: map[string]faults.Rule{"Store.Complete": faults.Always(faults.Fault{Err: faults.Broken()})},
			want:  failedRefunded(task.FailInternal)},
		{name: "store panics at MarkProcessing", samples: 1,
			rules: map[string]faults.Rule{"Store.MarkProcessing": faults.Always(faults.Fault{Panic: faults.Detail})},
			want:  failedRefunded(task.FailInternal)},
		{name: "video upload down for good", samples: 2,
			rules: map[string]faults.Rule{"Blobs.Put": faults.Always(outage)},
			want:  failedRefunded(task.FailInternal)},
		{name: "second video upload fails once", samples: 2,
			rules: map[string]faults.Rule{"Blobs.Put": faults.Nth(2, faults.Fault{Err: faults.Broken()})},
			want:  func(task.Task) want { return want{status: task.Completed, videos: 2} }},
		{name: "generator transient once", samples: 1,
			rules: map[string]faults.Rule{"Generator.Generate": faults.Nth(1, faults.Fault{Err: faults.Transient()})},
			want:  func(task.Task) want { return want{status: task.Completed, videos: 1} }},
		{name: "generator transient for good", samples: 1,
			rules: map[string]faults.Rule{"Generator.Generate": faults.Always(faults.Fault{Err: faults.Transient()})},
			want:  failedRefunded(task.FailGeneration)},
		{name: "generator broken", samples: 2,
			rules: map[string]faults.Rule{"Generator.Generate": faults.Always(faults.Fault{Err: faults.Broken()})},
			want:  failedRefunded(task.FailGeneration)},
		{name: "generator refuses", samples: 1,
			rules: map[string]faults.Rule{"Generator.Generate": faults.Always(faults.Fault{Err: faults.Refused()})},
			want:  failedRefunded(task.FailContentPolicy)},
		{name: "generator panics", samples: 1,
			rules: map[string]faults.Rule{"Generator.Generate": faults.Always(faults.Fault{Panic: faults.Detail})},
			want:  failedRefunded(task.FailInternal)},
		{name: "generator slow, within the deadline", samples: 1,
			rules: map[string]faults.Rule{"Generator.Generate": faults.Always(faults.Fault{Delay: 9 * time.Minute})},
			want:  func(task.Task) want { return want{status: task.Completed, videos: 1} }},
		{name: "generator past the deadline", samples: 2,
			rules: map[string]faults.Rule{"Generator.Generate": faults.Always(faults.Fault{Delay: time.Hour})},
			want:  failedRefunded(task.FailTimeout)},
		{name: "store down for good", samples: 1, unfinished: task.Pending,
			rules: map[string]faults.Rule{"Store.*": faults.Always(outage)},
			want:  func(task.Task) want { return want{status: task.Completed, videos: 1} }},
		{name: "Fail down for good after a failed generation", outcome: fails(&codedErr{task.FailGeneration}),
			samples: 1, unfinished: task.Processing,
			rules: map[string]faults.Rule{"Store.Fail": faults.Always(outage)},
			want:  failedRefunded(task.FailGeneration)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				e := newFaultEnv(t, tt.outcome)
				tk := e.newTask("a lighthouse in the fog", tt.samples)
				for method, r := range tt.rules {
					e.inj.Set(method, r)
				}
				e.faulty.Run(context.Background(), tk) // the execution may fail: the task's state says how it went
				if e.inj.Injected() == 0 {
					t.Fatalf("no fault was injected")
				}
				if tt.unfinished != "" {
					if got := e.task(tk.ID); got.Status != tt.unfinished || got.CreditsRefunded != 0 {
						t.Fatalf("during the outage the task is %s refunded %d, want %s, not refunded",
							got.Status, got.CreditsRefunded, tt.unfinished)
					}
					e.inj.Reset()
					// The failure the execution could not record is
					// recorded by the next one, from the generator again.
				}
				e.recover()
				e.check(tk, tt.want(tk))
				storetest.CheckInvariants(t, e.store, account)
				// A step the first process gave up on (a timeout) finishes
				// on its own, as a Lambda does after Step Functions gave up:
				// its work directory is gone once it has.
				e.faulty.Wait()
				e.checkWorkDirEmpty()
			})
		})
	}
}

// TestEveryTaskEndsUnderRandomFaults starts many tasks while every
// boundary fails at random in every way it can, then lets the outage end
// and recovers: every task is completed with its videos, or failed with a
// client-safe message and refunded once.
func TestEveryTaskEndsUnderRandomFaults(t *testing.T) {
	for seed := range uint64(4) {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				e := newFaultEnv(t, nil)
				e.inj.Set("Store.*", faults.Random(seed, 0.15,
					faults.Fault{Err: faults.Unavailable()},
					faults.Fault{Err: faults.Unavailable(), After: true},
					faults.Fault{Err: faults.Broken()},
					faults.Fault{Delay: 3 * time.Second},
					faults.Fault{Panic: faults.Detail}))
				e.inj.Set("Blobs.*", faults.Random(seed+100, 0.15,
					faults.Fault{Err: faults.Unavailable()},
					faults.Fault{Err: faults.Broken(), After: true},
					faults.Fault{Delay: 2 * time.Second}))
				e.inj.Set("Generator.*", faults.Random(seed+200, 0.4,
					faults.Fault{Err: faults.Transient()},
					faults.Fault{Err: faults.Transient(), After: true},
					faults.Fault{Err: faults.Broken()},
					faults.Fault{Err: faults.Refused()},
					faults.Fault{Panic: faults.Detail},
					faults.Fault{Delay: time.Hour},
					faults.Fault{Delay: 2 * time.Minute}))

				var tasks []task.Task
				for i := range 12 {
					var tk task.Task
					if i%3 == 0 {
						tk = e.imageTask(fmt.Sprintf("image task %d", i))
					} else {
						tk = e.newTask(fmt.Sprintf("text task %d", i), 1+i%2)
					}
					tasks = append(tasks, tk)
					if err := e.faulty.Start(context.Background(), tk); err != nil {
						t.Fatalf("Start: %v", err)
					}
				}
				e.faulty.Wait()
				if e.inj.Injected() == 0 {
					t.Fatalf("no fault was injected")
				}
				e.inj.Reset() // the outage ends
				e.recover()

				var ended []string
				for _, tk := range tasks {
					got := e.task(tk.ID)
					switch got.Status {
					case task.Completed:
						e.checkVideos(got, tk.Params.SampleCount)
						if got.CreditsRefunded != 0 {
							t.Errorf("completed task %s: refunded %d, want 0", tk.ID, got.CreditsRefunded)
						}
					case task.Failed:
						if got.Failure == nil || messages[got.Failure.Code] != got.Failure.Message {
							t.Errorf("failed task %s: failure %+v, want a known code with its client-safe message", tk.ID, got.Failure)
						}
						if got.CreditsRefunded != tk.CreditsCost || len(e.refunds(tk.ID)) != 1 {
							t.Errorf("failed task %s: refunded %d in entries %v, want %d once", tk.ID, got.CreditsRefunded, e.refunds(tk.ID), tk.CreditsCost)
						}
					default:
						t.Errorf("task %s is %s, want it finished", tk.ID, got.Status)
					}
					ended = append(ended, string(got.Status))
				}
				t.Logf("tasks ended %v", ended)
				if a := e.account(); a.InFlight != 0 {
					t.Errorf("%d tasks in flight, want 0", a.InFlight)
				}
				storetest.CheckInvariants(t, e.store, account)
				e.checkWorkDirEmpty()
			})
		})
	}
}
