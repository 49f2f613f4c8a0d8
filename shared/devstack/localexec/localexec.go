// Package localexec executes the generation state machine
// (statemachine/generation.asl.json) in this process, with the ASL
// interpreter (shared/asl), its Task states calling workflow.Steps
// directly. It is the local stack's executions, as Step Functions is
// AWS's; only the local stack links it, so that no Lambda carries the
// interpreter.
package localexec

import (
	"context"
	"fmt"
	"maps"
	"sync"
	"time"

	"github.com/genvideo/gen/shared/asl"
	"github.com/genvideo/gen/shared/task"
	"github.com/genvideo/gen/shared/workflow"
	"github.com/genvideo/gen/statemachine"
)

// Local resources standing for the Lambda ARNs of the definition.
const (
	resourceMarkProcessing = "local:MarkProcessing"
	resourceGenerate       = "local:Generate"
	resourcePoll           = "local:Poll"
	resourceComplete       = "local:Complete"
	resourceFail           = "local:Fail"
)

// Executions executes statemachine/generation.asl.json locally, its Task
// states calling workflow.Steps in this process. It is the local stack's
// executions, as Step Functions is AWS's: the API starts one per task,
// and the sweeper (shared/sweeper) looks them up by name and re-drives
// the tasks whose execution is gone, on both stacks alike.
type Executions struct {
	now  func() time.Time // the steps' clock
	exec *asl.Executor

	mu sync.Mutex
	// started maps the name of each execution this process started, for
	// a task not known to be finished, to the task's id: an execution that ended
	// without finishing its task still exists, as in Step Functions, so
	// that the sweeper moves on to the next name. A task's names are
	// forgotten once a Complete or Fail step finishes it, which bounds
	// the map by the tasks in flight.
	started map[string]string
}

// New parses the embedded definition and wires its resources to
// steps. opts configure the interpreter (asl.WithLogger).
func New(steps *workflow.Steps, opts ...asl.Option) (*Executions, error) {
	sm, err := asl.Parse(statemachine.Generation, map[string]string{
		"MarkProcessingFunctionArn": resourceMarkProcessing,
		"GenerateFunctionArn":       resourceGenerate,
		"PollFunctionArn":           resourcePoll,
		"CompleteFunctionArn":       resourceComplete,
		"FailFunctionArn":           resourceFail,
	})
	if err != nil {
		return nil, fmt.Errorf("generation workflow: %w", err)
	}
	r := &Executions{now: steps.Now, started: map[string]string{}}
	if r.now == nil {
		r.now = time.Now
	}
	r.exec, err = asl.NewExecutor(sm, map[string]asl.TaskFunc{
		resourceMarkProcessing: asl.Handler(steps.MarkProcessingOutcome),
		resourceGenerate:       asl.Handler(steps.GenerateOutcome),
		resourcePoll:           asl.Handler(steps.GenerateOutcome),
		resourceComplete:       asl.Handler(finished(r, steps.Complete)),
		resourceFail:           asl.Handler(finished(r, steps.Fail)),
	}, opts...)
	if err != nil {
		return nil, fmt.Errorf("generation workflow: %w", err)
	}
	return r, nil
}

// finished wraps a step that ends a task, to forget the task's execution
// names once the task is terminal.
func finished[In any](r *Executions, step func(context.Context, In) (workflow.TaskState, error)) func(context.Context, In) (workflow.TaskState, error) {
	return func(ctx context.Context, in In) (workflow.TaskState, error) {
		st, err := step(ctx, in)
		if err == nil && st.Status.Terminal() {
			r.mu.Lock()
			maps.DeleteFunc(r.started, func(_, id string) bool { return id == st.TaskID })
			r.mu.Unlock()
		}
		return st, err
	}
}

// Start starts the workflow for t in the background, in an execution named
// t.ID; starting a task whose execution is running does nothing. The
// execution outlives ctx: it runs until the task is finished or the
// executions are closed.
func (r *Executions) Start(ctx context.Context, t task.Task) error {
	return r.StartNamed(ctx, t.ID, t)
}

// StartNamed starts the workflow for t in an execution of the given name,
// as Start does; the sweeper names the executions after a task's first.
func (r *Executions) StartNamed(ctx context.Context, name string, t task.Task) error {
	r.mu.Lock()
	r.started[name] = t.ID
	r.mu.Unlock()
	if err := r.exec.Start(ctx, name, workflow.NewInput(t, r.now())); err != nil {
		return fmt.Errorf("start workflow %s for %s: %w", name, t.ID, err)
	}
	return nil
}

// Execution reports whether an execution of that name was started by
// this process, and whether it is still running. A process knows nothing
// of the executions of the one before it: after a restart every task is
// re-driven under its first name.
func (r *Executions) Execution(ctx context.Context, name string) (exists, running bool, err error) {
	r.mu.Lock()
	_, exists = r.started[name]
	r.mu.Unlock()
	return exists, exists && r.exec.Running(name), nil
}

// Stop aborts every execution this process started for t, as Step
// Functions' StopExecution does: a step running is cancelled (a
// generation in progress stops), no further step runs, and the task is
// never completed by them. t is expected to be finished (cancelled):
// otherwise the sweeper would start it again.
func (r *Executions) Stop(ctx context.Context, t task.Task) error {
	r.mu.Lock()
	var names []string
	for name, id := range r.started {
		if id == t.ID {
			names = append(names, name)
		}
	}
	maps.DeleteFunc(r.started, func(_, id string) bool { return id == t.ID })
	r.mu.Unlock()
	for _, name := range names {
		r.exec.Stop(name)
	}
	return nil
}

// Run runs the workflow for t in an execution named t.ID and waits for
// its end: the tests' way to drive one execution to its end and look at
// it.
func (r *Executions) Run(ctx context.Context, t task.Task) (asl.Execution, error) {
	exec, err := r.exec.Run(ctx, t.ID, workflow.NewInput(t, r.now()))
	if err != nil {
		return exec, fmt.Errorf("workflow for %s: %w", t.ID, err)
	}
	return exec, nil
}

// Running reports whether the execution of that name runs here.
func (r *Executions) Running(name string) bool { return r.exec.Running(name) }

// Wait blocks until no workflow is running.
func (r *Executions) Wait() { r.exec.Wait() }

// Close aborts the running workflows and waits for them to stop. Their
// tasks stay unfinished until the sweeper recovers them, here or in the next
// process.
func (r *Executions) Close() { r.exec.Close() }
