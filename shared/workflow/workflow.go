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
	"errors"
	"log/slog"
	"time"

	"github.com/genvideo/gen/shared/blob"
	"github.com/genvideo/gen/shared/domain"
	"github.com/genvideo/gen/shared/params"
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

// Job is one generation for a Generator.
type Job struct {
	TaskID, Type, Prompt string
	// Model is the contract's model id (catalog.Model.ID).
	Model  string
	Params params.Parameters
	// Images maps an input role (task.RoleImage, task.RoleFirstFrame,
	// task.RoleLastFrame) to the local path of the uploaded image.
	Images map[string]string
	// OutDir is where the generator writes the videos.
	OutDir string
}

// Result is what a generation produced: one MP4 per sample that survived
// the generator's own checks, so possibly fewer than Params.SampleCount.
// Its files are the workflow's once handed over: a blob store on the
// same file system takes them by renaming them into place, so they must
// be complete and written by nothing any more (the generators write
// them in Job.OutDir, which is the workflow's too).
type Result struct {
	Paths []string
	// Posters are the poster frames the generator made itself (the
	// built-in renderer in the same ffmpeg run as the video, a provider
	// that hands a thumbnail): a JPEG of the first frame, at the video's
	// size, per video, at the same index as Paths. A missing or ""
	// entry is none: Steps.Posters makes that video's.
	Posters []string
}

// Generator renders videos while the caller waits: the built-in ffmpeg
// renderer. Its errors are classified by the small interfaces they
// implement, not by their types, so that this package depends on no
// generator: Transient() bool (worth retrying) and FailureCode() string
// (a task.Fail* code). The workflow runs it as a Provider whose
// operations are done at submit.
type Generator interface {
	Generate(ctx context.Context, job Job) (Result, error)
}

// Provider is a model provider's API, shaped as a long-running
// operation: Submit starts a job and answers its Operation, which Poll
// then follows by name until it is done. A job is paid for when it is
// submitted, so the workflow saves the name on the task right after
// Submit and never submits a task that has one again.
//
// Errors are classified as a Generator's are, and one more way: an error
// with RetryAfter() time.Duration says the provider is busy or
// throttling (429, 503): the workflow waits about that long and calls
// again, until the task's deadline, rather than failing the task.
type Provider interface {
	Submit(ctx context.Context, job Job) (Operation, error)
	// Poll answers where the operation is. Once it is done, the videos
	// are files in job.OutDir (job.Images is empty: inputs are only
	// read at submit).
	Poll(ctx context.Context, name string, job Job) (Operation, error)
}

// Operation is where a submitted job is.
type Operation struct {
	// Name is the handle Poll takes; it may be empty for an operation
	// done at submit.
	Name string
	// Done: Result holds the videos, possibly fewer than the samples
	// asked for (the rest were filtered out by the provider).
	Done   bool
	Result Result
	// PollAfter is the provider's hint of when to poll again, while not
	// done; 0 means no hint.
	PollAfter time.Duration
	// Progress is the percentage done the provider reports while not
	// done, 1 to 100; 0 when it reports none.
	Progress int
	// Billing says, once Done, who ran the job and what it cost there.
	Billing Billing
}

// Billing is who ran a done job and what it cost the operator
// (task.Billing, which the task keeps).
type Billing = task.Billing

// rendered runs a Generator as a Provider whose operations are done at
// submit.
type rendered struct{ g Generator }

func (r rendered) Submit(ctx context.Context, job Job) (Operation, error) {
	res, err := r.g.Generate(ctx, job)
	if err != nil {
		return Operation{}, err
	}
	// The built-in generator renders on the service's own machine: its
	// own route, at no provider's price.
	return Operation{Done: true, Result: res, Billing: Billing{Route: RouteBuiltin}}, nil
}

// RouteBuiltin is the route of the built-in generator.
const RouteBuiltin = "builtin"

func (r rendered) Poll(context.Context, string, Job) (Operation, error) {
	return Operation{}, errors.New("the built-in generator has no operation to poll")
}

// Steps are the workflow's step handlers.
type Steps struct {
	Store     Store
	Blobs     blob.Store
	Generator Generator
	// Provider, when set, generates instead of Generator: a model
	// provider whose jobs the workflow submits and then polls.
	Provider Provider
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
	Billing Billing `json:"billing,omitzero"`
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

func (s *Steps) provider() Provider {
	if s.Provider != nil {
		return s.Provider
	}
	return rendered{s.Generator}
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
