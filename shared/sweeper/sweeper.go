// Package sweeper makes sure no task waits forever, on both stacks. Each
// task is driven by a workflow execution (Step Functions on AWS, the ASL
// interpreter locally) that may never have started (the process died
// between the charge and the start) or may have ended without finishing
// the task (aborted by an operator or a restart, or its failure step
// itself failed). Run on a schedule, a sweep looks at every task still
// pending or processing:
//
//   - past its deadline (plus a grace period that lets the execution record
//     the timeout itself), it is failed with TIMEOUT and refunded, through
//     the workflow's own Fail step;
//   - pending, older than a minute, and never given an execution (none of
//     its names exists), it is failed and refunded as not started
//     (task.NotStartedFailure), not run: its start was answered without a
//     202 (the charge's reply was lost, or its workflow did not start and
//     the refund did not go through, or the process died), and a client
//     told "nothing was charged" must not find it charged and run;
//   - older than a minute with an execution that ended without finishing
//     it, the next execution is started: <id>-redrive-2, <id>-redrive-3,
//     ... (a name is never reused), up to MaxRedrives; after that the
//     deadline fails it.
//
// What says "never given an execution" is the executions themselves: Step
// Functions keeps a name for 90 days, far past any task's deadline. The
// local stack's executions live in its process, so after a restart every
// task looks never started; there Recover, which runs before the process
// serves, re-drives every unfinished task under its first name instead
// (infra/docs/reliability.md, "A start with no execution").
//
// Everything a sweep does is idempotent, so sweeps may overlap.
package sweeper

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/genvideo/gen/shared/lifecycle"
	"github.com/genvideo/gen/shared/task"
	"github.com/genvideo/gen/shared/workflow"
)

// Defaults of Config.
const (
	DefaultStartAfter  = time.Minute
	DefaultGrace       = time.Minute
	DefaultMaxRedrives = 3
	// DefaultParallelism is how many tasks a sweep handles at once: after
	// an outage hundreds may wait, and one at a time (each a few calls)
	// would outlast the sweeper's Lambda, but many more would throttle
	// Step Functions' DescribeExecution and StartExecution.
	DefaultParallelism = 8
)

// ErrTasks is wrapped by the error of a sweep that handled the list of
// tasks but not every task. The next sweep tries them again.
var ErrTasks = errors.New("some tasks could not be swept")

// Tasks lists the tasks not yet finished: store.Store.Unfinished.
type Tasks interface {
	Unfinished(ctx context.Context) ([]task.Task, error)
}

// Failer fails a task and refunds it: workflow.Steps.Fail.
type Failer interface {
	Fail(ctx context.Context, in workflow.FailInput) (workflow.TaskState, error)
}

// Executions starts and looks up executions by name: sfnstart.Executions.
type Executions interface {
	Execution(ctx context.Context, name string) (exists, running bool, err error)
	StartNamed(ctx context.Context, name string, t task.Task) error
}

// Config is what a Sweeper is built from. Tasks, Failer and Executions
// are required.
type Config struct {
	Tasks      Tasks
	Failer     Failer
	Executions Executions
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// StartAfter is how old a task must be before a missing execution is
	// started for it: a younger one may be in the middle of its start.
	StartAfter time.Duration
	// Grace is how long past its deadline a task is left to its execution
	// before the sweep fails it.
	Grace time.Duration
	// MaxRedrives bounds the executions started for one task after its
	// first.
	MaxRedrives int
	// Parallelism bounds the tasks handled at once (DefaultParallelism).
	Parallelism int
	Logger      *slog.Logger
}

// Sweeper sweeps. Build it with New.
type Sweeper struct{ cfg Config }

// Report says what a sweep did.
type Report struct {
	Unfinished int `json:"unfinished"` // tasks pending or processing
	Failed     int `json:"failed"`     // failed with TIMEOUT and refunded
	Started    int `json:"started"`    // executions started
	// NotStarted counts the pending tasks that never got an execution,
	// failed and refunded.
	NotStarted int `json:"notStarted"`
	Errors     int `json:"errors"` // tasks the sweep could not handle
}

// New returns a sweeper, filling in Config's defaults. A Config without
// Tasks, Failer or Executions is a wiring bug: New panics naming it.
func New(cfg Config) *Sweeper {
	switch {
	case cfg.Tasks == nil:
		panic("sweeper.New: Config.Tasks is nil")
	case cfg.Failer == nil:
		panic("sweeper.New: Config.Failer is nil")
	case cfg.Executions == nil:
		panic("sweeper.New: Config.Executions is nil")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.StartAfter <= 0 {
		cfg.StartAfter = DefaultStartAfter
	}
	if cfg.Grace <= 0 {
		cfg.Grace = DefaultGrace
	}
	if cfg.MaxRedrives <= 0 {
		cfg.MaxRedrives = DefaultMaxRedrives
	}
	if cfg.Parallelism <= 0 {
		cfg.Parallelism = DefaultParallelism
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Sweeper{cfg: cfg}
}

// ExecutionName is the name of the n-th execution of a task: the task id
// for the first (n = 1), <id>-redrive-<n> after it.
func ExecutionName(taskID string, n int) string {
	if n <= 1 {
		return taskID
	}
	return fmt.Sprintf("%s-redrive-%d", taskID, n)
}

// deadlineCause is what the failure of a task the sweep timed out records
// as its cause (for the logs; the task shows the TIMEOUT message).
const deadlineCause = "the sweeper found the task unfinished past its deadline"

// notStartedCause is the cause recorded for a task failed because it never
// got an execution.
const notStartedCause = "the sweeper found the task pending with no execution ever started for it"

// Sweep handles every unfinished task once. It goes on past a task it
// cannot handle and returns, with the report, the errors joined.
func (s *Sweeper) Sweep(ctx context.Context) (Report, error) {
	return s.sweep(ctx, s.cfg.StartAfter, false)
}

// Recover is the sweep of a process that has just started, before it
// serves: no start of its own can be under way, so the start delay, which
// protects a start in progress, has nothing to protect, and every
// unfinished task whose execution is gone is re-driven at once, a pending
// one that looks never started included: the executions of the process
// before are not known to this one. The local stack recovers so at every
// start; Step Functions outlives the Lambdas, so AWS only sweeps.
func (s *Sweeper) Recover(ctx context.Context) (Report, error) {
	return s.sweep(ctx, 0, true)
}

func (s *Sweeper) sweep(ctx context.Context, startAfter time.Duration, recovering bool) (Report, error) {
	tasks, err := s.cfg.Tasks.Unfinished(ctx)
	if err != nil {
		return Report{}, fmt.Errorf("sweep: list unfinished tasks: %w", err)
	}
	r := Report{Unfinished: len(tasks)}
	var (
		mu   sync.Mutex
		errs []error
		wg   sync.WaitGroup
	)
	now := s.cfg.Now()
	slots := make(chan struct{}, s.cfg.Parallelism)
	for _, t := range tasks {
		if err := ctx.Err(); err != nil {
			mu.Lock()
			errs = append(errs, err)
			mu.Unlock()
			break
		}
		slots <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-slots; wg.Done() }()
			out, err := s.sweepTask(ctx, t, now, startAfter, recovering)
			mu.Lock()
			defer mu.Unlock()
			r.Failed += out.Failed
			r.Started += out.Started
			r.NotStarted += out.NotStarted
			if err != nil {
				r.Errors++
				errs = append(errs, err)
			}
		}()
	}
	wg.Wait()
	log := s.cfg.Logger
	if len(errs) > 0 || r.Failed > 0 || r.Started > 0 || r.NotStarted > 0 {
		log.InfoContext(ctx, "sweep", "unfinished", r.Unfinished, "failed", r.Failed, "started", r.Started,
			"notStarted", r.NotStarted, "errors", r.Errors)
	}
	if err := errors.Join(errs...); err != nil {
		return r, fmt.Errorf("sweep: %w: %w", ErrTasks, err)
	}
	return r, nil
}

// Scheduled is Sweep for a scheduler that retries a run that failed
// (EventBridge invoking the sweeper's Lambda): a task that could not be
// handled is logged, not returned, since retrying the whole sweep at once
// would only repeat it for every task; the next scheduled sweep tries it
// again. Only a sweep that could not even list the tasks fails.
func (s *Sweeper) Scheduled(ctx context.Context) (Report, error) {
	r, err := s.Sweep(ctx)
	if errors.Is(err, ErrTasks) {
		s.cfg.Logger.ErrorContext(ctx, "sweep: tasks left for the next sweep", "errors", r.Errors, "error", err.Error())
		return r, nil
	}
	return r, err
}

// sweepTask handles one task; its report counts only what it did.
func (s *Sweeper) sweepTask(ctx context.Context, t task.Task, now time.Time, startAfter time.Duration, recovering bool) (Report, error) {
	var r Report
	if lifecycle.PastGrace(t, now, s.cfg.Grace) {
		st, err := s.cfg.Failer.Fail(ctx, workflow.FailInput{TaskID: t.ID,
			Error: workflow.CaughtError{Error: "DeadlineExceeded", Cause: deadlineCause}})
		if err != nil {
			return r, fmt.Errorf("fail task %s past its deadline: %w", t.ID, err)
		}
		if st.Status == task.Failed {
			r.Failed++
		}
		return r, nil
	}
	if now.Sub(t.CreatedAt) < startAfter {
		return r, nil
	}
	found, err := s.executions(ctx, t.ID)
	if err != nil {
		return r, fmt.Errorf("task %s: %w", t.ID, err)
	}
	if t.Status == task.Pending && !found[0].exists && !recovering {
		// Names are taken in order: without the first, there is none.
		st, err := s.cfg.Failer.Fail(ctx, workflow.FailInput{TaskID: t.ID,
			Error: workflow.CaughtError{Error: workflow.ErrorNotStarted, Cause: notStartedCause}})
		if err != nil {
			return r, fmt.Errorf("fail task %s that never got an execution: %w", t.ID, err)
		}
		if st.Status == task.Failed {
			r.NotStarted++
			s.cfg.Logger.WarnContext(ctx, "sweep: failed and refunded a task that never got an execution", "task", t.ID)
		}
		return r, nil
	}
	for n, e := range found {
		if e.running {
			return r, nil
		}
		if e.exists {
			continue // ended without finishing the task: try the next name
		}
		name := ExecutionName(t.ID, n+1)
		if err := s.cfg.Executions.StartNamed(ctx, name, t); err != nil {
			return r, fmt.Errorf("task %s: %w", t.ID, err)
		}
		r.Started++
		s.cfg.Logger.WarnContext(ctx, "sweep: started a missing execution", "task", t.ID, "execution", name, "status", t.Status)
		return r, nil
	}
	s.cfg.Logger.WarnContext(ctx, "sweep: task out of redrives; its deadline will fail it",
		"task", t.ID, "redrives", s.cfg.MaxRedrives, "deadline", t.Deadline)
	return r, nil
}

// execution is what a lookup found of one execution name.
type execution struct{ exists, running bool }

// executions looks up every execution name of a task (the first and its
// redrives) at once, not one after the other: a task's sweep costs one
// round trip, not up to 1 + MaxRedrives.
func (s *Sweeper) executions(ctx context.Context, taskID string) ([]execution, error) {
	found := make([]execution, 1+s.cfg.MaxRedrives)
	errs := make([]error, len(found))
	var wg sync.WaitGroup
	for i := range found {
		wg.Go(func() {
			e := &found[i]
			e.exists, e.running, errs[i] = s.cfg.Executions.Execution(ctx, ExecutionName(taskID, i+1))
		})
	}
	wg.Wait()
	return found, errors.Join(errs...)
}
