package workflow

import (
	"context"
	"fmt"

	"github.com/genvideo/gen/shared/asl"
	"github.com/genvideo/gen/shared/task"
)

// Only the tests run a workflow to its end or ask whether one is running;
// the service starts them (Start, Recover) and stops them (Close).

// Run runs the workflow for t and waits for its end.
func (r *Runner) Run(ctx context.Context, t task.Task) (asl.Execution, error) {
	exec, err := r.exec.Run(ctx, t.ID, NewInput(t, r.steps.now()))
	if err != nil {
		return exec, fmt.Errorf("workflow for %s: %w", t.ID, err)
	}
	return exec, nil
}

// Running reports whether the workflow of the task is running here.
func (r *Runner) Running(taskID string) bool { return r.exec.Running(taskID) }
