package workflow

import (
	"context"
	"fmt"

	"github.com/genvideo/gen/shared/asl"
	"github.com/genvideo/gen/shared/task"
)

// Run runs the workflow for t and waits for its end: the tests' way to
// drive one execution to its end and look at it.
func (r *LocalExecutions) Run(ctx context.Context, t task.Task) (asl.Execution, error) {
	exec, err := r.exec.Run(ctx, t.ID, NewInput(t, r.steps.now()))
	if err != nil {
		return exec, fmt.Errorf("workflow for %s: %w", t.ID, err)
	}
	return exec, nil
}

// Running reports whether the workflow of the task is running here.
func (r *LocalExecutions) Running(taskID string) bool { return r.exec.Running(taskID) }
