// Package sfnstart starts the generation workflow on AWS: a Step Functions
// execution of the generation state machine per task, named by the task
// id so that starting a task twice starts one execution. It is the
// service.Executions of the Lambdas, and what the sweeper re-drives tasks
// with.
package sfnstart

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/genvideo/gen/shared/sweeper"
	"github.com/genvideo/gen/shared/task"
	"github.com/genvideo/gen/shared/workflow"
)

// api is the part of the Step Functions client Executions calls.
type api interface {
	StartExecution(context.Context, *sfn.StartExecutionInput, ...func(*sfn.Options)) (*sfn.StartExecutionOutput, error)
	DescribeExecution(context.Context, *sfn.DescribeExecutionInput, ...func(*sfn.Options)) (*sfn.DescribeExecutionOutput, error)
	StopExecution(context.Context, *sfn.StopExecutionInput, ...func(*sfn.Options)) (*sfn.StopExecutionOutput, error)
}

// Executions starts executions of one state machine.
type Executions struct {
	api          api
	stateMachine string
	execPrefix   string // the ARN of an execution, less its name
	now          func() time.Time
}

// New returns the executions of the state machine stateMachineARN
// (arn:<partition>:states:<region>:<account>:stateMachine:<name>). now is
// the clock the execution input's timeout is computed at; nil means
// time.Now.
func New(client *sfn.Client, stateMachineARN string, now func() time.Time) (*Executions, error) {
	p := strings.Split(stateMachineARN, ":")
	if len(p) != 7 || p[0] != "arn" || p[2] != "states" || p[5] != "stateMachine" || p[6] == "" {
		return nil, fmt.Errorf("state machine ARN %q: want arn:<partition>:states:<region>:<account>:stateMachine:<name>", stateMachineARN)
	}
	if now == nil {
		now = time.Now
	}
	p[5] = "execution"
	return &Executions{
		api:          client,
		stateMachine: stateMachineARN,
		execPrefix:   strings.Join(p, ":") + ":",
		now:          now,
	}, nil
}

// Start starts the execution of t named t.ID, with the input
// workflow.NewInput gives. An execution of that name already existing is
// success: it was started for this task (its input may differ only in the
// seconds left), and Step Functions keeps a name for 90 days, so that a
// retried start never runs a task twice.
func (s *Executions) Start(ctx context.Context, t task.Task) error {
	return s.StartNamed(ctx, t.ID, t)
}

// StartNamed starts an execution for t under another name, for the sweeper
// re-driving a task whose first execution ended without finishing it.
// Like Start, it treats an existing execution of that name as started.
func (s *Executions) StartNamed(ctx context.Context, name string, t task.Task) error {
	input, err := json.Marshal(workflow.NewInput(t, s.now()))
	if err != nil {
		return fmt.Errorf("start execution %s: %w", name, err)
	}
	_, err = s.api.StartExecution(ctx, &sfn.StartExecutionInput{
		StateMachineArn: &s.stateMachine,
		Name:            &name,
		Input:           aws.String(string(input)),
	})
	var exists *types.ExecutionAlreadyExists
	if err != nil && !errors.As(err, &exists) {
		return fmt.Errorf("start execution %s of %s: %w", name, s.stateMachine, err)
	}
	return nil
}

// Execution reports whether an execution of that name exists, and whether
// it is still running (or waiting to be redriven).
func (s *Executions) Execution(ctx context.Context, name string) (exists, running bool, err error) {
	out, err := s.api.DescribeExecution(ctx, &sfn.DescribeExecutionInput{ExecutionArn: aws.String(s.ExecutionARN(name))})
	var missing *types.ExecutionDoesNotExist
	if errors.As(err, &missing) {
		return false, false, nil
	}
	if err != nil {
		return false, false, fmt.Errorf("describe execution %s: %w", name, err)
	}
	switch out.Status {
	case types.ExecutionStatusRunning, types.ExecutionStatusPendingRedrive:
		return true, true, nil
	}
	return true, false, nil
}

// ExecutionARN is the ARN of the execution of the state machine named name.
func (s *Executions) ExecutionARN(name string) string { return s.execPrefix + name }

// maxStops bounds the execution names Stop tries: a task has its first
// execution and the few the sweeper started after it.
const maxStops = 20

// Stop stops the executions of t, a task its client cancelled: the first
// one (named t.ID) and those the sweeper started after it
// (sweeper.ExecutionName), up to the first name that does not exist.
// Stopping an execution that has ended changes nothing. A Lambda that is
// running a step finishes that step, which finds the task failed and
// changes nothing; no further step runs.
//
// A failure to stop one execution does not keep the next from being
// stopped; the errors are returned together.
func (s *Executions) Stop(ctx context.Context, t task.Task) error {
	var errs []error
	for n := 1; n <= maxStops; n++ {
		name := sweeper.ExecutionName(t.ID, n)
		_, err := s.api.StopExecution(ctx, &sfn.StopExecutionInput{
			ExecutionArn: aws.String(s.ExecutionARN(name)),
			Cause:        aws.String("the task was cancelled"),
		})
		var missing *types.ExecutionDoesNotExist
		if errors.As(err, &missing) {
			break
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("stop execution %s: %w", name, err))
		}
		if ctx.Err() != nil {
			break
		}
	}
	return errors.Join(errs...)
}
