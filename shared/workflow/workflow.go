// Package workflow holds the steps of the generation workflow: the
// handlers that the Task states of statemachine/generation.asl.json call.
// On AWS each step is a Lambda (functions/<step>/main.go does
// lambda.Start(steps.MarkProcessing) and so on); locally, LocalExecutions executes
// the same definition with the asl interpreter and calls the same methods.
//
// Steps report failures as named error types, returned unwrapped, because
// Step Functions matches Retry and Catch on the error's type name (see
// asl.ErrorName) and hands the failure state nothing but {Error, Cause}.
// Every step is idempotent: an execution may be started again for the same
// task at any point, and it drives the task to completed, or to failed with
// its credits refunded exactly once.
package workflow

import (
	"context"
	"log/slog"
	"time"

	"github.com/genvideo/gen/shared/blob"
	"github.com/genvideo/gen/shared/params"
	"github.com/genvideo/gen/shared/store"
	"github.com/genvideo/gen/shared/task"
)

// Store is the part of store.Store the steps use.
type Store interface {
	Task(ctx context.Context, id string) (task.Task, error)
	StartProcessing(ctx context.Context, id string, at time.Time) (task.Task, error)
	Complete(ctx context.Context, id string, c store.Completion, at time.Time) (task.Task, error)
	Fail(ctx context.Context, id string, f task.Failure, at time.Time) (task.Task, error)
}

// Job is one generation for a Generator.
type Job struct {
	TaskID, Type, Prompt string
	Params               params.Parameters
	// Images maps an input role (task.RoleImage, task.RoleFirstFrame,
	// task.RoleLastFrame) to the local path of the uploaded image.
	Images map[string]string
	// OutDir is where the generator writes the videos.
	OutDir string
}

// Result is what a generation produced: one MP4 per sample that survived
// the generator's own checks, so possibly fewer than Params.SampleCount.
type Result struct {
	Paths []string
}

// Generator renders videos. Its errors are classified by the small
// interfaces they implement, not by their types, so that this package
// depends on no generator: Transient() bool (worth retrying) and
// FailureCode() string (a task.Fail* code).
type Generator interface {
	Generate(ctx context.Context, job Job) (Result, error)
}

// Steps are the workflow's step handlers.
type Steps struct {
	Store     Store
	Blobs     blob.Store
	Generator Generator
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// TempDir is where Generate downloads inputs and the generator writes
	// videos, in a directory of its own per call; "" means os.TempDir().
	TempDir string
	// Logger receives what the steps log; nil means slog.Default().
	Logger *slog.Logger
}

// TaskRef is the input of MarkProcessing and Generate.
type TaskRef struct {
	TaskID string `json:"taskId"`
}

// TaskState is the output of MarkProcessing, Complete and Fail: where the
// task is now.
type TaskState struct {
	TaskID string      `json:"taskId"`
	Status task.Status `json:"status"`
}

// Generated is the output of Generate: the stored videos, and how many
// samples the generator filtered out.
type Generated struct {
	TaskID   string       `json:"taskId"`
	Videos   []task.Video `json:"videos"`
	Filtered int          `json:"filtered"`
}

// CompleteInput is the input of Complete.
type CompleteInput struct {
	TaskID string    `json:"taskId"`
	Result Generated `json:"result"`
}

// FailInput is the input of Fail: the task and what a Catch caught.
type FailInput struct {
	TaskID string      `json:"taskId"`
	Error  CaughtError `json:"error"`
}

// CaughtError is the error object a Catch passes on.
type CaughtError struct {
	Error string `json:"Error"`
	Cause string `json:"Cause"`
}

func (s *Steps) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func (s *Steps) logger() *slog.Logger {
	if s.Logger != nil {
		return s.Logger
	}
	return slog.Default()
}
