// Package workflow holds the steps of the generation workflow: the
// handlers that the Task states of statemachine/generation.asl.json call.
// On AWS each step is a Lambda (functions/<step>/main.go does
// lambda.Start(steps.MarkProcessing) and so on); locally, shared/devstack/localexec executes
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
	"github.com/genvideo/gen/shared/domain"
	"github.com/genvideo/gen/shared/provider"
	"github.com/genvideo/gen/shared/task"
)

// Store is the part of store.Store the steps use.
type Store interface {
	Task(ctx context.Context, id string) (task.Task, error)
	MarkProcessing(ctx context.Context, id string, at time.Time) (task.Task, error)
	SetOperation(ctx context.Context, id, from, to string) (task.Task, error)
	SetProgress(ctx context.Context, id string, percent int) error
	Complete(ctx context.Context, id string, c domain.Completion, at time.Time) (task.Task, error)
	Fail(ctx context.Context, id string, f task.Failure, at time.Time) (task.Task, error)
}

// Steps are the workflow's step handlers.
type Steps struct {
	Store     Store
	Blobs     blob.Store
	Generator provider.Generator
	// Provider, when set, generates instead of Generator: a model
	// provider whose jobs the workflow submits and then polls.
	Provider provider.Provider
	// Posters, when set, makes the poster frame of each stored video
	// the generator handed none for (Result.Posters). A poster, handed
	// or made, is stored beside its video and named on it
	// (task.Video.Poster).
	Posters Posters
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

// Generated is the output of Generate. Once Done, it holds the stored
// videos and how many samples the generator filtered out; before, it
// says how long to wait before calling Generate again.
type Generated struct {
	TaskID   string       `json:"taskId"`
	Videos   []task.Video `json:"videos"`
	Filtered int          `json:"filtered"`
	Done     bool         `json:"done"`
	// Billing, once Done, is who made the videos and what they cost;
	// Complete keeps it on the task.
	Billing provider.Billing `json:"billing,omitzero"`
	// WaitSeconds is how long the workflow waits before calling
	// Generate again while not Done: the provider's hint, bounded by
	// MaxPollWait and the task's deadline.
	WaitSeconds int `json:"waitSeconds,omitempty"`
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

func (s *Steps) provider() provider.Provider {
	if s.Provider != nil {
		return s.Provider
	}
	return provider.Rendered(s.Generator)
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
