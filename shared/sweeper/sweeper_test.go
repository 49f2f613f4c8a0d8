package sweeper_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/genvideo/gen/shared/domain"
	"github.com/genvideo/gen/shared/params"
	"github.com/genvideo/gen/shared/sfnstart"
	"github.com/genvideo/gen/shared/store/sqlitestore"
	"github.com/genvideo/gen/shared/sweeper"
	"github.com/genvideo/gen/shared/task"
	"github.com/genvideo/gen/shared/testing/sfnstarttest"
	"github.com/genvideo/gen/shared/workflow"
)

var _ sweeper.Executions = (*sfnstart.Executions)(nil)

var quiet = slog.New(slog.DiscardHandler)

var now = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

const (
	account = "acct_sweep"
	credits = 1000
	cost    = 120
)

type fixture struct {
	st    *sqlitestore.Store
	sfn   *sfnstarttest.Server
	sweep *sweeper.Sweeper
}

// newFixture sweeps a real store with the workflow's real Fail step,
// starting executions through the real starter on a fake Step Functions.
func newFixture(t *testing.T) *fixture {
	t.Helper()
	st, err := sqlitestore.Open(filepath.Join(t.TempDir(), "gen.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.CreateAccount(context.Background(), domain.Account{ID: account, Credits: credits, CreatedAt: now.Add(-time.Hour)}); err != nil {
		t.Fatal(err)
	}
	fake := sfnstarttest.NewServer(t)
	clock := func() time.Time { return now }
	starter, err := sfnstart.New(fake.Client(), sfnstarttest.StateMachineARN, clock)
	if err != nil {
		t.Fatal(err)
	}
	steps := &workflow.Steps{Store: st, Now: clock, Logger: quiet}
	return &fixture{st: st, sfn: fake, sweep: sweeper.New(sweeper.Config{
		Tasks: st, Failer: steps, Executions: starter, Now: clock, Logger: quiet,
	})}
}

// task creates a pending task created age ago with the usual 10-minute
// deadline.
func (f *fixture) task(t *testing.T, suffix string, age time.Duration) task.Task {
	t.Helper()
	created := now.Add(-age)
	tk := task.Task{
		ID: "gen_1772366400000_" + suffix, AccountID: account, Type: "text-to-video",
		Model: "gen-3.1-fast-generate-001", Prompt: "waves",
		Params:      params.Parameters{SampleCount: 1, DurationSeconds: 4, Resolution: "720p", AspectRatio: "16:9"},
		CreditsCost: cost, Status: task.Pending, CreatedAt: created, Deadline: created.Add(10 * time.Minute),
	}
	if _, err := f.st.CreateTask(context.Background(), tk, domain.StartGuard{}); err != nil {
		t.Fatal(err)
	}
	return tk
}

func (f *fixture) started() []string {
	var names []string
	for _, c := range f.sfn.Calls() {
		if name, ok := strings.CutPrefix(c, "StartExecution "); ok {
			names = append(names, name)
		}
	}
	return names
}

func TestSweepStartsMissingExecutions(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	young := f.task(t, "youngxxxxx", 30*time.Second)
	orphan := f.task(t, "orphanxxxx", 2*time.Minute)
	running := f.task(t, "runningxxx", 3*time.Minute)
	aborted := f.task(t, "abortedxxx", 4*time.Minute)
	twice := f.task(t, "twicexxxxx", 5*time.Minute)
	spent := f.task(t, "spentxxxxx", 6*time.Minute)

	starter, _ := sfnstart.New(f.sfn.Client(), sfnstarttest.StateMachineARN, func() time.Time { return now })
	for _, tk := range []task.Task{running, aborted, twice, spent} {
		if err := starter.Start(ctx, tk); err != nil {
			t.Fatal(err)
		}
	}
	for _, tk := range []task.Task{orphan, aborted} {
		// orphan's execution ran, and is gone (as on the local stack
		// after a restart).
		if _, err := f.st.MarkProcessing(ctx, tk.ID, tk.CreatedAt); err != nil {
			t.Fatal(err)
		}
	}
	f.sfn.Finish(t, aborted.ID, "ABORTED")
	f.sfn.Finish(t, twice.ID, "FAILED")
	if err := starter.StartNamed(ctx, sweeper.ExecutionName(twice.ID, 2), twice); err != nil {
		t.Fatal(err)
	}
	f.sfn.Finish(t, sweeper.ExecutionName(twice.ID, 2), "ABORTED")
	for n := 1; n <= 1+sweeper.DefaultMaxRedrives; n++ {
		name := sweeper.ExecutionName(spent.ID, n)
		if n > 1 {
			if err := starter.StartNamed(ctx, name, spent); err != nil {
				t.Fatal(err)
			}
		}
		f.sfn.Finish(t, name, "ABORTED")
	}
	before := len(f.started())

	r, err := f.sweep.Sweep(ctx)
	if err != nil {
		t.Fatalf("Sweep: %v", err)
	}
	got := slices.Sorted(slices.Values(f.started()[before:]))
	want := []string{aborted.ID + "-redrive-2", orphan.ID, twice.ID + "-redrive-3"}
	if !slices.Equal(got, want) {
		t.Errorf("started %v, want %v (nothing for %s, too young, %s, running, or %s, out of redrives)",
			got, want, young.ID, running.ID, spent.ID)
	}
	if r != (sweeper.Report{Unfinished: 6, Started: 3}) {
		t.Errorf("report %+v, want 6 unfinished, 3 started", r)
	}

	// The input is the task's: the seconds left until its deadline.
	for _, e := range f.sfn.Executions() {
		if e.Name != orphan.ID {
			continue
		}
		var in workflow.Input
		if err := json.Unmarshal([]byte(e.Input), &in); err != nil {
			t.Fatal(err)
		}
		if in.TaskID != orphan.ID || in.TimeoutSeconds != 8*60 {
			t.Errorf("input %+v, want task %s with 480 seconds left", in, orphan.ID)
		}
	}

	// A second sweep finds every execution running and starts nothing.
	before = len(f.started())
	if r, err := f.sweep.Sweep(ctx); err != nil || r.Started != 0 {
		t.Errorf("second sweep = %+v, %v; want nothing started", r, err)
	}
	if extra := f.started()[before:]; len(extra) != 0 {
		t.Errorf("second sweep started %v", extra)
	}
}

// A pending task that never got an execution is one whose start did not
// answer 202: its charge's reply was lost and the commit landed after the
// start answered, or its workflow did not start and the refund failed,
// or the process died. The sweep fails and refunds it as not started,
// rather than run what the client was told was not charged (issue 34,
// defect 4); Recover, which cannot know the executions of the process
// before it, re-drives it instead. A task younger than the start delay,
// or with an execution, is left alone.
func TestSweepRefundsTasksNeverStarted(t *testing.T) {
	for _, tt := range []struct {
		name    string
		sweep   func(*sweeper.Sweeper, context.Context) (sweeper.Report, error)
		refund  bool
		started []string
	}{
		{"sweep", (*sweeper.Sweeper).Sweep, true, nil},
		{"recover", (*sweeper.Sweeper).Recover, false,
			[]string{"gen_1772366400000_neverxxxxx", "gen_1772366400000_youngxxxxx"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			ctx := context.Background()
			never := f.task(t, "neverxxxxx", 2*time.Minute)
			young := f.task(t, "youngxxxxx", 30*time.Second)
			running := f.task(t, "runningxxx", 2*time.Minute)
			starter, _ := sfnstart.New(f.sfn.Client(), sfnstarttest.StateMachineARN, func() time.Time { return now })
			if err := starter.Start(ctx, running); err != nil {
				t.Fatal(err)
			}
			before := len(f.started())

			r, err := tt.sweep(f.sweep, ctx)
			if err != nil {
				t.Fatal(err)
			}
			if got := slices.Sorted(slices.Values(f.started()[before:])); !slices.Equal(got, tt.started) {
				t.Errorf("started %v, want %v", got, tt.started)
			}
			notStarted := map[bool]int{true: 1}[tt.refund]
			if r.NotStarted != notStarted || r.Started != len(tt.started) || r.Failed != 0 {
				t.Errorf("report %+v, want %d not started, %d started", r, notStarted, len(tt.started))
			}
			tk, err := f.st.Task(ctx, never.ID)
			if err != nil {
				t.Fatal(err)
			}
			if tt.refund {
				if tk.Status != task.Failed || !tk.NotStarted() || tk.CreditsRefunded != cost {
					t.Errorf("task never started: %s, failure %+v, refunded %d; want failed as not started, %d refunded",
						tk.Status, tk.Failure, tk.CreditsRefunded, cost)
				}
			} else if tk.Status != task.Pending {
				t.Errorf("task recovered: %s, want pending, its execution started", tk.Status)
			}
			for _, id := range []string{young.ID, running.ID} {
				if tk, err := f.st.Task(ctx, id); err != nil || tk.Status != task.Pending {
					t.Errorf("task %s: %s, %v; want pending, left alone", id, tk.Status, err)
				}
			}
			acct, err := f.st.Account(ctx, account)
			if err != nil {
				t.Fatal(err)
			}
			if want := int64(credits - 3*cost + notStarted*cost); acct.Credits != want {
				t.Errorf("credits %d, want %d", acct.Credits, want)
			}
			if tt.refund {
				// Once: the next sweep finds it finished.
				if r, err := f.sweep.Sweep(ctx); err != nil || r.NotStarted != 0 {
					t.Errorf("second sweep = %+v, %v; want nothing more", r, err)
				}
			}
		})
	}
}

func TestSweepFailsTasksPastDeadline(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	late := f.task(t, "latexxxxxx", 12*time.Minute) // 2 minutes past its deadline
	inGrace := f.task(t, "gracexxxxx", 10*time.Minute+30*time.Second)
	starter, _ := sfnstart.New(f.sfn.Client(), sfnstarttest.StateMachineARN, func() time.Time { return now })
	if err := starter.Start(ctx, inGrace); err != nil {
		t.Fatal(err)
	}
	processing := f.task(t, "processing", 20*time.Minute)
	if _, err := f.st.MarkProcessing(ctx, processing.ID, now.Add(-19*time.Minute)); err != nil {
		t.Fatal(err)
	}

	r, err := f.sweep.Sweep(ctx)
	if err != nil {
		t.Fatalf("Sweep: %v", err)
	}
	if r.Failed != 2 {
		t.Errorf("report %+v, want 2 failed", r)
	}
	for _, id := range []string{late.ID, processing.ID} {
		tk, err := f.st.Task(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if tk.Status != task.Failed || tk.Failure == nil || tk.Failure.Code != task.FailTimeout || tk.CreditsRefunded != cost {
			t.Errorf("task %s: %s, failure %+v, refunded %d; want failed with TIMEOUT, %d refunded",
				id, tk.Status, tk.Failure, tk.CreditsRefunded, cost)
		}
	}
	tk, err := f.st.Task(ctx, inGrace.ID)
	if err != nil {
		t.Fatal(err)
	}
	if tk.Status != task.Pending {
		t.Errorf("task within the grace period is %s, want pending (left to its execution)", tk.Status)
	}
	acct, err := f.st.Account(ctx, account)
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(credits - cost); acct.Credits != want || acct.InFlight != 1 {
		t.Errorf("account: %d credits, %d in flight; want %d, 1 (two tasks refunded)", acct.Credits, acct.InFlight, want)
	}

	// Failing again changes nothing: each task is refunded once.
	if _, err := f.sweep.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	if acct2, _ := f.st.Account(ctx, account); acct2.Credits != acct.Credits {
		t.Errorf("credits %d after a second sweep, want %d", acct2.Credits, acct.Credits)
	}
}

// flaky fails Execution for one task.
type flaky struct {
	sweeper.Executions
	bad string
}

func (f flaky) Execution(ctx context.Context, name string) (bool, bool, error) {
	if name == f.bad {
		return false, false, errors.New("ThrottlingException")
	}
	return f.Executions.Execution(ctx, name)
}

func TestSweepGoesOnPastErrors(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	bad := f.task(t, "badxxxxxxx", 2*time.Minute)
	good := f.task(t, "goodxxxxxx", 2*time.Minute)
	for _, tk := range []task.Task{bad, good} {
		if _, err := f.st.MarkProcessing(ctx, tk.ID, tk.CreatedAt); err != nil {
			t.Fatal(err)
		}
	}
	starter, _ := sfnstart.New(f.sfn.Client(), sfnstarttest.StateMachineARN, func() time.Time { return now })
	sw := sweeper.New(sweeper.Config{Tasks: f.st, Failer: &workflow.Steps{Store: f.st, Logger: quiet},
		Executions: flaky{starter, bad.ID}, Now: func() time.Time { return now }, Logger: quiet})

	r, err := sw.Sweep(ctx)
	if err == nil || !strings.Contains(err.Error(), bad.ID) {
		t.Errorf("Sweep error %v, want one naming %s", err, bad.ID)
	}
	if r.Errors != 1 || r.Started != 1 {
		t.Errorf("report %+v, want 1 error and 1 started", r)
	}
	if got := f.started(); !slices.Equal(got, []string{good.ID}) {
		t.Errorf("started %v, want [%s]", got, good.ID)
	}
}

func TestExecutionName(t *testing.T) {
	for _, tc := range []struct {
		n    int
		want string
	}{{1, "gen_1_a"}, {2, "gen_1_a-redrive-2"}, {4, "gen_1_a-redrive-4"}} {
		if got := sweeper.ExecutionName("gen_1_a", tc.n); got != tc.want {
			t.Errorf("ExecutionName(gen_1_a, %d) = %q, want %q", tc.n, got, tc.want)
		}
	}
}

// Recover, the sweep of a process that has just started, re-drives even
// a task younger than the start delay: no start of the new process can be
// under way. Sweep leaves that task to its start.
func TestRecoverIgnoresTheStartDelay(t *testing.T) {
	for _, tt := range []struct {
		name  string
		sweep func(*sweeper.Sweeper, context.Context) (sweeper.Report, error)
		want  []string
	}{
		{"sweep", (*sweeper.Sweeper).Sweep, nil},
		{"recover", (*sweeper.Sweeper).Recover, []string{"gen_1772366400000_youngxxxxx"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			f.task(t, "youngxxxxx", 10*time.Second)
			r, err := tt.sweep(f.sweep, context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if got := f.started(); !slices.Equal(got, tt.want) || r.Started != len(tt.want) {
				t.Errorf("started %v (report %+v), want %v", got, r, tt.want)
			}
		})
	}
}
