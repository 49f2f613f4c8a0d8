package workflow

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/genvideo/gen/shared/asl"
	"github.com/genvideo/gen/shared/task"
	"github.com/genvideo/gen/statemachine"
)

// Local resources standing for the Lambda ARNs of the definition.
const (
	resourceMarkProcessing = "local:MarkProcessing"
	resourceGenerate       = "local:Generate"
	resourceComplete       = "local:Complete"
	resourceFail           = "local:Fail"
)

// DefaultTimeout bounds the generation of a task that has no deadline.
const DefaultTimeout = 15 * time.Minute

// Input is the execution input of generation.asl.json.
type Input struct {
	TaskID string `json:"taskId"`
	// TimeoutSeconds bounds each Generate attempt (TimeoutSecondsPath).
	TimeoutSeconds int64 `json:"timeoutSeconds"`
}

// NewInput is the execution input for t at now: the seconds left until
// its deadline, rounded up and at least 1 (a task already past it still
// gets an execution, which records the TIMEOUT).
func NewInput(t task.Task, now time.Time) Input {
	left := DefaultTimeout
	if !t.Deadline.IsZero() {
		left = t.Deadline.Sub(now)
	}
	secs := int64((left + time.Second - 1) / time.Second)
	return Input{TaskID: t.ID, TimeoutSeconds: max(1, secs)}
}

// TaskLister lists the tasks not yet finished, for Recover.
type TaskLister interface {
	Unfinished(ctx context.Context) ([]task.Task, error)
}

// Runner executes statemachine/generation.asl.json locally, its Task
// states calling Steps in this process.
type Runner struct {
	steps *Steps
	tasks TaskLister
	exec  *asl.Executor
}

// NewRunner parses the embedded definition and wires its resources to
// steps. tasks (usually the same store as steps.Store) serves Recover.
// opts configure the interpreter (asl.WithLogger, asl.WithClock).
func NewRunner(steps *Steps, tasks TaskLister, opts ...asl.Option) (*Runner, error) {
	sm, err := asl.Parse(statemachine.Generation, map[string]string{
		"MarkProcessingFunctionArn": resourceMarkProcessing,
		"GenerateFunctionArn":       resourceGenerate,
		"CompleteFunctionArn":       resourceComplete,
		"FailFunctionArn":           resourceFail,
	})
	if err != nil {
		return nil, fmt.Errorf("generation workflow: %w", err)
	}
	exec, err := asl.NewExecutor(sm, map[string]asl.TaskFunc{
		resourceMarkProcessing: asl.Handler(steps.MarkProcessing),
		resourceGenerate:       asl.Handler(steps.Generate),
		resourceComplete:       asl.Handler(steps.Complete),
		resourceFail:           asl.Handler(steps.Fail),
	}, opts...)
	if err != nil {
		return nil, fmt.Errorf("generation workflow: %w", err)
	}
	return &Runner{steps: steps, tasks: tasks, exec: exec}, nil
}

// Start starts the workflow for t in the background, in an execution named
// t.ID; starting a task whose execution is running does nothing. The
// execution outlives ctx: it runs until the task is finished or the
// runner is closed.
func (r *Runner) Start(ctx context.Context, t task.Task) error {
	if err := r.exec.Start(ctx, t.ID, NewInput(t, r.steps.now())); err != nil {
		return fmt.Errorf("start workflow for %s: %w", t.ID, err)
	}
	return nil
}

// Run runs the workflow for t and waits for its end.
func (r *Runner) Run(ctx context.Context, t task.Task) (asl.Execution, error) {
	exec, err := r.exec.Run(ctx, t.ID, NewInput(t, r.steps.now()))
	if err != nil {
		return exec, fmt.Errorf("workflow for %s: %w", t.ID, err)
	}
	return exec, nil
}

// Recover starts the workflow again for every task still pending or
// processing, for instance after a restart interrupted them. The steps are
// idempotent, so each task ends completed, or failed and refunded once.
func (r *Runner) Recover(ctx context.Context) error {
	tasks, err := r.tasks.Unfinished(ctx)
	if err != nil {
		return fmt.Errorf("recover workflows: %w", err)
	}
	var errs []error
	for _, t := range tasks {
		if err := r.Start(ctx, t); err != nil {
			errs = append(errs, err)
		}
	}
	if len(tasks) > 0 {
		r.steps.logger().Info("recovering unfinished tasks", "tasks", len(tasks), "failedToStart", len(errs))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("recover workflows: %w", err)
	}
	return nil
}

// Running reports whether the workflow of the task is running here.
func (r *Runner) Running(taskID string) bool { return r.exec.Running(taskID) }

// Wait blocks until no workflow is running.
func (r *Runner) Wait() { r.exec.Wait() }

// Close aborts the running workflows and waits for them to stop. Their
// tasks stay unfinished until Recover, here or in the next process.
func (r *Runner) Close() { r.exec.Close() }
