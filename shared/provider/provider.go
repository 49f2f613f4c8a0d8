// Package provider is the contract between gen and the models behind it:
// what a provider is (Provider: submit, poll; Checker: the start-up
// check), the job it is handed and the operation it answers, and the one
// classification of every answer a provider gives (Class, read with
// Classify). Each adapter, in a folder under this one, maps its
// provider's answers onto that classification once; routing and the
// workflow read nothing else, so that neither knows any adapter.
//
// The outcomes and what each does to money are infra/docs/providers.md's
// outcome table; "Adding a provider" there says how a new one joins.
package provider

import (
	"context"
	"errors"
	"time"

	"github.com/genvideo/gen/shared/params"
	"github.com/genvideo/gen/shared/task"
)

// Job is one generation for a Provider or a Generator.
type Job struct {
	TaskID, Type, Prompt string
	// Model is the contract's model id (catalog.Model.ID).
	Model  string
	Params params.Parameters
	// Images maps an input role (task.RoleImage, task.RoleFirstFrame,
	// task.RoleLastFrame, task.ReferenceRole(i)) to the local path of
	// the uploaded image.
	Images map[string]string
	// Video is the video an extension continues (a job of type
	// catalog.VideoExtension); nil for any other job.
	Video *SourceVideo
	// OutDir is where the generator writes the videos.
	OutDir string
}

// SourceVideo is the video an extension continues.
type SourceVideo struct {
	// Path is a local copy of it.
	Path string
	// URI is the provider's own address of it (Result.URIs), "" when
	// the provider answered it inline.
	URI string
	// Route is the route that made it: only that route may extend it,
	// so a router never hands the job to another.
	Route string
}

// Mode is the capability-table mode of the job (params.ModeOf): its
// type, or catalog.ReferenceImages for one with reference images.
func (j Job) Mode() string {
	refs := 0
	for role := range j.Images {
		if task.IsReference(role) {
			refs++
		}
	}
	return params.ModeOf(j.Type, refs)
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
	// entry is none: the workflow makes that video's.
	Posters []string
	// URIs are where the provider keeps each video, at the same index
	// as Paths, when it said (task.Video.ProviderURI): what an extension
	// of the video names it by.
	URIs []string
}

// Generator renders videos while the caller waits: the built-in ffmpeg
// renderer. Its errors are classified as a Provider's are (Classify).
// The workflow runs it as a Provider whose operations are done at
// submit (Rendered).
type Generator interface {
	Generate(ctx context.Context, job Job) (Result, error)
}

// Provider is a model provider's API, shaped as a long-running
// operation: Submit starts a job and answers its Operation, which Poll
// then follows by name until it is done. A job is paid for when it is
// submitted, so the workflow saves the name on the task right after
// Submit and never submits a task that has one again.
//
// Its errors are read with Classify: an adapter answers an *Error for
// every refusal or failure it can name.
type Provider interface {
	Submit(ctx context.Context, job Job) (Operation, error)
	// Poll answers where the operation is. Once it is done, the videos
	// are files in job.OutDir (job.Images is empty: inputs are only
	// read at submit).
	Poll(ctx context.Context, name string, job Job) (Operation, error)
}

// Canceller is a Provider that can stop a job it accepted (not every
// provider can: Veo's long-running operations have no cancel).
type Canceller interface {
	Cancel(ctx context.Context, name string) error
}

// Checker is a Provider with a start-up check: it asks the provider
// whether it answers, takes the credentials and serves the models it is
// mapped to. Verify runs it.
type Checker interface {
	Check(ctx context.Context) error
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

// RouteBuiltin is the route of the built-in generator.
const RouteBuiltin = "builtin"

// Rendered runs a Generator as a Provider whose operations are done at
// submit: the built-in renderer renders on the service's own machine,
// its own route, at no provider's price.
func Rendered(g Generator) Provider { return rendered{g} }

type rendered struct{ g Generator }

func (r rendered) Submit(ctx context.Context, job Job) (Operation, error) {
	res, err := r.g.Generate(ctx, job)
	if err != nil {
		return Operation{}, err
	}
	return Operation{Done: true, Result: res, Billing: Billing{Route: RouteBuiltin}}, nil
}

func (r rendered) Poll(context.Context, string, Job) (Operation, error) {
	return Operation{}, errors.New("the built-in generator has no operation to poll")
}
