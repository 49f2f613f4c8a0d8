package workflow

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/genvideo/gen/shared/blob"
	"github.com/genvideo/gen/shared/domain"
	"github.com/genvideo/gen/shared/lifecycle"
	"github.com/genvideo/gen/shared/provider"
	"github.com/genvideo/gen/shared/task"
)

// VideoKey is the blob key of a task's n-th video (from 0). Generate
// writes the same keys on every run, so a re-run overwrites, never adds.
func VideoKey(taskID string, n int) string { return task.VideoKey(taskID, n) }

const videoMimeType = "video/mp4"

// MarkProcessing moves a pending task to processing and answers its
// status. A task already processing or finished is left as it is. A task
// not finished whose deadline has passed is a *DeadlineExceeded, which the
// workflow records as TIMEOUT.
func (s *Steps) MarkProcessing(ctx context.Context, in TaskRef) (TaskState, error) {
	if in.TaskID == "" {
		return TaskState{}, &InvalidInput{Step: "MarkProcessing", Reason: "taskId is empty"}
	}
	t, err := s.Store.Task(ctx, in.TaskID)
	if err != nil {
		return TaskState{}, storeError("load task", in.TaskID, err)
	}
	if t.Status.Terminal() {
		return TaskState{TaskID: t.ID, Status: t.Status}, nil
	}
	now := s.now()
	if lifecycle.PastDeadline(t, now) {
		return TaskState{}, &DeadlineExceeded{TaskID: t.ID, Deadline: t.Deadline}
	}
	t, err = s.Store.MarkProcessing(ctx, t.ID, now)
	if err != nil {
		return TaskState{}, storeError("start processing", in.TaskID, err)
	}
	return TaskState{TaskID: t.ID, Status: t.Status}, nil
}

// Poll waits are bounded: at least a second, at most MaxPollWait, so that
// a wrong hint neither spins nor sleeps past a task's deadline.
const (
	MinPollWait = time.Second
	MaxPollWait = time.Minute
	// busyWaitMin is the first wait after the provider said it is busy;
	// the waits grow with the time the task has waited so far.
	busyWaitMin = 2 * time.Second
)

// Generate advances the task's generation by one call to the provider
// and answers whether it is done. A task without an operation handle is
// submitted (its input images downloaded for the job) and the handle the
// provider answers is saved on the task before anything else; a task
// with one is polled, never submitted again, whoever calls. When the
// operation is done, its videos are stored at VideoKey: fewer than the
// samples is a partial result (Filtered says how many are missing), none
// at all a *GenerationFailed. Not done, it answers how long to wait
// before calling again (WaitSeconds); so does a provider that is busy or
// throttling, so that a burst of starts queues until the deadline instead
// of failing. Failures come back as *TransientGenerationError,
// *ContentPolicyViolation, *GenerationFailed, or *DeadlineExceeded once
// the task's deadline has passed.
//
// On a task already finished it generates nothing and answers the videos
// the task has, so that a re-run after completion changes nothing.
func (s *Steps) Generate(ctx context.Context, in TaskRef) (Generated, error) {
	g, out, err := s.prepareGeneration(ctx, in)
	if g == nil {
		return out, err
	}
	defer g.close()
	op, err := s.operate(ctx, g)
	return s.generationResult(ctx, g, op, err)
}

// generation is one call of Generate past its checks, held by pointer.
// Generate is split in three around the provider's call (operate) so
// that the frames under that call, which may wait for minutes (a local
// generator renders in it), are small: the goroutine's stack then
// shrinks back to a few KB while it waits, instead of keeping the 32 KB
// a store read grew it to (issue 25: thousands of generations in
// flight).
type generation struct {
	t   task.Task
	now time.Time
	// gctx ends at the task's deadline.
	gctx   context.Context
	cancel context.CancelFunc
	dir    string
	job    provider.Job
}

func (g *generation) close() {
	os.RemoveAll(g.dir)
	if g.cancel != nil {
		g.cancel()
	}
}

// prepareGeneration loads the task and makes the work directory and the
// job. A nil generation is Generate's answer, out and err.
func (s *Steps) prepareGeneration(ctx context.Context, in TaskRef) (g *generation, out Generated, err error) {
	if in.TaskID == "" {
		return nil, Generated{}, &InvalidInput{Step: "Generate", Reason: "taskId is empty"}
	}
	t, err := s.Store.Task(ctx, in.TaskID)
	if err != nil {
		return nil, Generated{}, storeError("load task", in.TaskID, err)
	}
	if t.Status.Terminal() {
		return nil, generated(t, t.Videos), nil
	}
	now := s.now()
	if lifecycle.PastDeadline(t, now) {
		return nil, Generated{}, &DeadlineExceeded{TaskID: t.ID, Deadline: t.Deadline}
	}
	g = &generation{t: t, now: now, gctx: ctx}
	// The generator stops at the deadline even when the caller (a Lambda
	// with a longer timeout, or a retry) would let it run on.
	if !t.Deadline.IsZero() {
		g.gctx, g.cancel = context.WithTimeout(ctx, t.Deadline.Sub(now))
	}

	// The work directory is named now and made only when something is
	// written in it: the inputs below, or the videos (generators make
	// OutDir). A submit without images, and each poll of a job not yet
	// done, then touch no file system; a make and a removal of a
	// directory were a tenth of a generation's CPU. The name is unique
	// as MkdirTemp's would be, its suffix random.
	// "" is os.TempDir(), as it was for MkdirTemp: joined as it is, it
	// named a directory in the working directory, which on Lambda is the
	// read-only /var/task.
	dir := filepath.Join(cmp.Or(s.TempDir, os.TempDir()), workDirPrefix+t.ID+"-"+strconv.FormatUint(rand.Uint64(), 36))
	g.dir = dir
	g.job = provider.Job{TaskID: t.ID, Type: t.Type, Prompt: t.Prompt, Model: t.Model, Params: t.Params, OutDir: filepath.Join(dir, "out")}

	if since, submitting := task.SubmittingSince(t.Operation); submitting {
		g.close()
		// A submit started and its answer was never saved: it may still
		// be in flight, or its process died with it.
		if wait := since.Add(SubmitGrace).Sub(now); wait > 0 {
			return nil, s.pending(t, now, wait), nil
		}
		err := fmt.Errorf("a submit started at %s left no operation", since.UTC().Format(time.RFC3339))
		return nil, Generated{}, s.outcomeUnknown(t, err)
	}
	if t.Operation == "" && len(t.Inputs) > 0 {
		if err := os.Mkdir(dir, 0o700); err != nil {
			g.close()
			return nil, Generated{}, &TransientGenerationError{TaskID: t.ID, Err: fmt.Errorf("create work directory: %w", err)}
		}
		if g.job.Images, err = s.fetchInputs(ctx, &g.t, dir); err != nil {
			g.close()
			return nil, Generated{}, err
		}
		// An extension's video is no image: the job names it apart,
		// with the provider's address of it and the route that made it.
		if in, ok := t.Input(task.RoleVideo); ok {
			g.job.Video = &provider.SourceVideo{Path: g.job.Images[task.RoleVideo], URI: in.ProviderURI, Route: in.Route}
			delete(g.job.Images, task.RoleVideo)
		}
	}
	return g, Generated{}, nil
}

// operate polls the task's operation, or submits its job: the call that
// may wait for minutes, in a small frame (see generation).
func (s *Steps) operate(ctx context.Context, g *generation) (provider.Operation, error) {
	switch {
	case g.t.Operation != "":
		return s.provider().Poll(g.gctx, g.t.Operation, g.job)
	case s.Provider == nil:
		return provider.Rendered(s.Generator).Submit(g.gctx, g.job)
	}
	return s.submitJob(ctx, g)
}

// submitJob is submit for operate, kept out of operate's frame (submit's
// arguments are large).
//
//go:noinline
func (s *Steps) submitJob(ctx context.Context, g *generation) (provider.Operation, error) {
	return s.submit(ctx, g.gctx, g.t, g.job, g.now)
}

// generationResult is Generate's answer once the provider answered op
// or err.
func (s *Steps) generationResult(ctx context.Context, g *generation, op provider.Operation, err error) (Generated, error) {
	t, now, gctx := g.t, g.now, g.gctx
	if err != nil {
		if ownError(err) {
			return Generated{}, err
		}
		if a := provider.Classify(err); a.Class == provider.Busy && ctx.Err() == nil && gctx.Err() == nil {
			wait := max(a.After, busyWait(t, now))
			level := slog.LevelInfo
			if a.Operator {
				level = slog.LevelError
			}
			s.logger().Log(ctx, level, AlarmProviderBusy, "task", t.ID, "wait", wait.String(), "error", err)
			return s.pending(t, now, wait), nil
		}
		gerr := generatorError(ctx, gctx, t, err)
		if mu, ok := gerr.(*ModelUnavailable); ok {
			s.logger().Error(AlarmModelUnavailable, "task", t.ID, "model", mu.Model, "error", err)
		}
		return Generated{}, gerr
	}
	if !op.Done {
		s.saveProgress(ctx, t, op.Progress)
		return s.pending(t, now, op.PollAfter), nil
	}

	paths := op.Result.Paths
	if len(paths) > t.Params.SampleCount {
		paths = paths[:t.Params.SampleCount]
	}
	if len(paths) == 0 {
		return Generated{}, &GenerationFailed{TaskID: t.ID, Err: errors.New("the generator produced no video")}
	}

	videos := make([]task.Video, 0, len(paths))
	for i, p := range paths {
		var poster string
		if i < len(op.Result.Posters) {
			poster = op.Result.Posters[i]
		}
		v, err := s.storeVideo(ctx, t.ID, VideoKey(t.ID, i), p, poster)
		if err != nil {
			return Generated{}, err
		}
		if i < len(op.Result.URIs) {
			v.ProviderURI = op.Result.URIs[i]
		}
		videos = append(videos, v)
	}
	out := generated(t, videos)
	out.Billing = op.Billing
	if out.Filtered > 0 {
		s.logger().Info("generation partly filtered", "task", t.ID, "videos", len(videos), "filtered", out.Filtered)
	}
	return out, nil
}

// workDirPrefix begins the name of each work directory Generate makes in
// TempDir: generate-<task id>-<random>.
const workDirPrefix = "generate-"

// WorkDirTask returns the task a work directory of Generate (a name in
// Steps.TempDir) is for, so that one a killed process left behind can be
// told from one in use.
func WorkDirTask(name string) (taskID string, ok bool) {
	rest, ok := strings.CutPrefix(name, workDirPrefix)
	i := strings.LastIndexByte(rest, '-')
	if !ok || i < 0 || !task.ValidID(rest[:i]) {
		return "", false
	}
	return rest[:i], true
}

// SubmitGrace is how long a submit may be in flight: longer than a
// provider's request may take (veo's two minutes). A re-run that finds
// a task's submit marker younger than this waits for it; older, the
// submit's process died between sending it and saving its answer, and
// the task ends as ProviderOutcomeUnknown rather than submit again.
const SubmitGrace = 3 * time.Minute

// AlarmModelUnavailable is the ERROR log line of a task that found its
// provider model unavailable: the operator remaps the model. A metric
// filter of template.yaml counts it.
const AlarmModelUnavailable = provider.AlarmModelUnavailable

// AlarmOutcomeUnknown is the ERROR log line of a task ended because its
// submit's outcome is unknown: the operator may find a job billed for it
// in the provider's console.
const AlarmOutcomeUnknown = "provider outcome unknown: task failed rather than submitted twice"

// AlarmProviderBusy is the line of a task waiting on a provider that
// refuses it for a reason only the operator can clear (credentials
// refused while its job runs, a quota): at ERROR it is the template's
// ProviderBusyAlarm, since the task stays charged while it waits; the
// same line at INFO is weather, a provider's 429 or 5xx.
const AlarmProviderBusy = "provider busy: waiting"

// submit submits the job of task t, which has no operation yet. With a
// provider that bills (Steps.Provider), the task is marked as submitting
// first, so that no re-run submits a second job while the answer is
// unknown: the marker is replaced with the handle once accepted, and
// removed when the provider refused the job.
func (s *Steps) submit(ctx, gctx context.Context, t task.Task, job provider.Job, now time.Time) (provider.Operation, error) {
	if s.Provider == nil {
		return s.provider().Submit(gctx, job)
	}
	marker := task.SubmittingMarker(now)
	saved, err := s.Store.SetOperation(ctx, t.ID, "", marker)
	if err != nil {
		return provider.Operation{}, storeError("mark submitting", t.ID, err)
	}
	if saved.Operation != marker {
		// Another execution moved first (or the task ended): the next
		// call follows what it left.
		return provider.Operation{}, busyOther{}
	}
	op, err := s.Provider.Submit(gctx, job)
	switch {
	case err == nil && op.Done:
		return op, nil // done at submit: nothing left to follow
	case err == nil:
		return s.saveOperation(ctx, t, marker, op)
	case provider.Classify(err).Class == provider.OutcomeUnknown:
		return provider.Operation{}, s.outcomeUnknown(t, err)
	case ctx.Err() != nil || gctx.Err() != nil:
		return provider.Operation{}, err // cut short: the request may have gone out, the marker stays
	}
	// Refused before acceptance: nothing runs at the provider, and the
	// next call may submit again.
	if _, rerr := s.setOperation(ctx, t.ID, marker, ""); rerr != nil {
		s.logger().Error("refused submit, but its marker could not be removed: the task will fail as unknown",
			"task", t.ID, "error", rerr)
	}
	return provider.Operation{}, err
}

// ownError reports whether err is one of the named errors submit
// returns as they are.
func ownError(err error) bool {
	switch err.(type) {
	case *ProviderOutcomeUnknown, *StoreUnavailable, *TaskNotFound, *GenerationFailed:
		return true
	}
	return false
}

// busyOther is the wait of a task another execution is submitting.
type busyOther struct{}

func (busyOther) Error() string { return "another execution is submitting the task" }
func (busyOther) Classify() provider.Answer {
	return provider.Answer{Class: provider.Busy, After: MinPollWait}
}

func (s *Steps) outcomeUnknown(t task.Task, err error) error {
	s.logger().Error(AlarmOutcomeUnknown, "task", t.ID, "model", t.Model, "error", err)
	return &ProviderOutcomeUnknown{TaskID: t.ID, Err: err}
}

// saveOperation replaces the task's submit marker with the handle of the
// operation just submitted, and answers the operation to follow. A
// failure to save is retried here, a few times; should it last, the
// marker stays, and a re-run ends the task as ProviderOutcomeUnknown
// rather than submit again.
func (s *Steps) saveOperation(ctx context.Context, t task.Task, marker string, op provider.Operation) (provider.Operation, error) {
	if op.Name == "" {
		return op, s.outcomeUnknown(t, errors.New("the provider answered an operation without a name"))
	}
	saved, err := s.setOperation(ctx, t.ID, marker, op.Name)
	if err != nil {
		s.logger().Error("submitted, but the operation could not be saved: the task will fail as unknown",
			"task", t.ID, "operation", op.Name, "error", err)
		return op, storeError("save operation", t.ID, err)
	}
	if saved.Operation != op.Name {
		s.logger().Error("submitted, but the task moved on meanwhile: the job is abandoned",
			"task", t.ID, "status", saved.Status, "abandoned", op.Name)
		return op, &GenerationFailed{TaskID: t.ID, Err: fmt.Errorf("the task moved on while operation %s was submitted", op.Name)}
	}
	s.logger().Info("submitted", "task", t.ID, "operation", op.Name)
	return op, nil
}

// setOperation is Store.SetOperation, tried a few times.
func (s *Steps) setOperation(ctx context.Context, id, from, to string) (task.Task, error) {
	var saved task.Task
	var err error
	for attempt := range saveAttempts {
		if attempt > 0 {
			select {
			case <-ctx.Done():
				return saved, ctx.Err()
			case <-time.After(time.Duration(attempt) * time.Second):
			}
		}
		if saved, err = s.Store.SetOperation(ctx, id, from, to); err == nil || errors.Is(err, domain.ErrNotFound) {
			break
		}
	}
	return saved, err
}

const saveAttempts = 4

// saveProgress keeps the percentage the provider reported on the task,
// for status to show. It is only a hint: a failure to save it is logged
// and the generation goes on.
func (s *Steps) saveProgress(ctx context.Context, t task.Task, percent int) {
	if percent <= 0 || percent == t.Progress {
		return
	}
	if err := s.Store.SetProgress(ctx, t.ID, min(percent, 100)); err != nil {
		s.logger().Warn("progress not saved", "task", t.ID, "progress", percent, "error", err)
	}
}

// pending is Generate's answer while the operation runs: wait about
// hint, at least MinPollWait and at most MaxPollWait, and no longer than
// the deadline, by when the next call answers DeadlineExceeded.
func (s *Steps) pending(t task.Task, now time.Time, hint time.Duration) Generated {
	wait := min(max(hint, MinPollWait), MaxPollWait)
	if !t.Deadline.IsZero() {
		wait = min(wait, t.Deadline.Sub(now)+time.Second)
	}
	secs := int((wait + time.Second - 1) / time.Second)
	return Generated{TaskID: t.ID, Videos: []task.Video{}, WaitSeconds: max(1, secs)}
}

// busyWait is how long a task waits after the provider said it is busy:
// a quarter of the time it has been processing, so that the waits of a
// task that keeps meeting a busy provider grow (2s, then longer, up to
// MaxPollWait), spread by a random part so that a burst of tasks does not
// come back at once.
func busyWait(t task.Task, now time.Time) time.Duration {
	base := busyWaitMin
	if !t.StartedAt.IsZero() {
		base = max(base, now.Sub(t.StartedAt)/4)
	}
	base = min(base, MaxPollWait/2)
	return base + rand.N(base)
}

// fetchInputs downloads the task's input images into dir and returns
// their paths by role.
func (s *Steps) fetchInputs(ctx context.Context, t *task.Task, dir string) (map[string]string, error) {
	images := make(map[string]string, len(t.Inputs))
	for i, in := range t.Inputs {
		// The file name comes from the index, never from stored text.
		path := filepath.Join(dir, fmt.Sprintf("input-%d%s", i, imageExt(in.MimeType)))
		if err := s.download(ctx, t.ID, in.Key, path); err != nil {
			return nil, err
		}
		images[in.Role] = path
	}
	return images, nil
}

func (s *Steps) download(ctx context.Context, taskID, key, path string) error {
	r, err := s.Blobs.Get(ctx, key)
	if err != nil {
		return &BlobsUnavailable{Op: "get input", Key: key, Err: err}
	}
	defer r.Close()
	f, err := os.Create(path)
	if err != nil {
		return &TransientGenerationError{TaskID: taskID, Err: fmt.Errorf("create %s: %w", path, err)}
	}
	_, err = f.ReadFrom(r)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return &BlobsUnavailable{Op: "download input", Key: key, Err: err}
	}
	return nil
}

// storeVideo stores the video at path under key, and its poster frame
// beside it: poster, the one the generator made, or else one
// Steps.Posters makes. That one is made before the video is stored: a
// store that takes files (filePutter) moves the video away.
func (s *Steps) storeVideo(ctx context.Context, taskID, key, path, poster string) (task.Video, error) {
	if poster == "" {
		poster = s.makePoster(ctx, taskID, key, path)
		if poster != "" {
			defer os.Remove(poster) // a no-op once stored
		}
	}
	size, err := s.storeFile(ctx, key, path, videoMimeType)
	if err != nil {
		var nf *noFileError
		if errors.As(err, &nf) {
			return task.Video{}, &GenerationFailed{TaskID: taskID, Err: fmt.Errorf("open generated video: %w", nf.err)}
		}
		return task.Video{}, &BlobsUnavailable{Op: "put video", Key: key, Err: err}
	}
	v := task.Video{Key: key, MimeType: videoMimeType, Size: size}
	if poster != "" {
		v.Poster = s.storePoster(ctx, taskID, key, poster)
	}
	return v, nil
}

// filePutter is a blob store that takes a finished file by path and
// renames it into place instead of copying its bytes (fsblob: on one
// machine the generator's file is already on the store's file system,
// issue 25). The file is the store's once PutFile succeeds. A store
// without it, or wrapped by one without it (fault injection), is given
// the file's bytes with Put: the same object, at the cost of a copy.
type filePutter interface {
	PutFile(ctx context.Context, key, path, contentType string) (int64, error)
}

// noFileError is a file to store that cannot be read: the generator's
// fault, not the blob store's.
type noFileError struct{ err error }

func (e *noFileError) Error() string { return e.err.Error() }

// storeFile stores the finished file at path under key and returns its
// size: moved into place when the store takes files (it is gone from
// path then), else copied with Put. A file that is not there is a
// *noFileError.
func (s *Steps) storeFile(ctx context.Context, key, path, contentType string) (int64, error) {
	if fp, ok := s.Blobs.(filePutter); ok {
		n, err := fp.PutFile(ctx, key, path, contentType)
		if err != nil {
			// Only now, on the failure path, is the file looked at:
			// the store opens it anyway.
			if _, serr := os.Stat(path); serr != nil {
				return 0, &noFileError{serr}
			}
			return 0, err
		}
		return n, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return 0, &noFileError{err}
	}
	defer f.Close()
	return s.Blobs.Put(ctx, key, f, contentType)
}

// posterMimeType is the type of every poster frame.
const posterMimeType = "image/jpeg"

// makePoster makes the poster frame of the video at path (to be stored
// under videoKey) with Posters, beside it, and returns the poster's
// path: "" when there is no Posters or it failed (logged). A poster is a
// convenience, not what the task was charged for.
func (s *Steps) makePoster(ctx context.Context, taskID, videoKey, path string) string {
	if s.Posters == nil {
		return ""
	}
	out := path + ".poster.jpg"
	if err := s.Posters.Poster(ctx, path, out); err != nil {
		os.Remove(out)
		s.logger().Warn("no poster frame for a video", "task", taskID, "video", videoKey, "error", err)
		return ""
	}
	return out
}

// storePoster stores the poster frame at path, the generator's or one
// makePoster made, beside the video stored under videoKey and returns
// its key. A poster is a convenience, not what the task was charged
// for: one that cannot be read or stored is logged and left out (""),
// and the video completes without it.
func (s *Steps) storePoster(ctx context.Context, taskID, videoKey, path string) string {
	key := blob.PosterKey(videoKey)
	if _, err := s.storeFile(ctx, key, path, posterMimeType); err != nil {
		var nf *noFileError
		if errors.As(err, &nf) {
			s.logger().Warn("no poster frame for a video", "task", taskID, "video", videoKey, "error", err)
		} else {
			s.logger().Warn("cannot store a video's poster frame", "task", taskID, "key", key, "error", err)
		}
		return ""
	}
	return key
}

func imageExt(mimeType string) string {
	switch mimeType {
	case "image/png":
		return ".png"
	case "image/jpeg":
		return ".jpg"
	case videoMimeType:
		return ".mp4"
	}
	return ""
}

func generated(t task.Task, videos []task.Video) Generated {
	if videos == nil {
		videos = []task.Video{}
	}
	return Generated{TaskID: t.ID, Videos: videos, Filtered: max(0, t.Params.SampleCount-len(videos)), Done: true,
		Billing: t.Billing}
}

// Complete records the videos and who made them at what cost (the
// result's Billing) and moves the task to completed, refunding
// the price of every sample that was not produced. The refund is
// lifecycle.PartialRefund's, computed from the task, not taken from the
// input. On a task already finished it changes nothing and answers its
// status (a failed task stays failed: its credits were refunded in full).
func (s *Steps) Complete(ctx context.Context, in CompleteInput) (TaskState, error) {
	if in.TaskID == "" {
		return TaskState{}, &InvalidInput{Step: "Complete", Reason: "taskId is empty"}
	}
	t, err := s.Store.Task(ctx, in.TaskID)
	if err != nil {
		return TaskState{}, storeError("load task", in.TaskID, err)
	}
	if t.Status.Terminal() {
		return TaskState{TaskID: t.ID, Status: t.Status}, nil
	}
	videos := in.Result.Videos
	if len(videos) == 0 {
		return TaskState{}, &GenerationFailed{TaskID: t.ID, Err: errors.New("no video to complete the task with")}
	}
	refund, err := lifecycle.PartialRefund(t, len(videos))
	if err != nil {
		return TaskState{}, &InvalidInput{Step: "Complete", Reason: err.Error()}
	}

	done, err := s.Store.Complete(ctx, t.ID, domain.Completion{Videos: videos, Refund: refund, Billing: in.Result.Billing}, s.now())
	if errors.Is(err, domain.ErrTerminal) {
		return s.status(ctx, t.ID)
	}
	if err != nil {
		return TaskState{}, storeError("complete", t.ID, err)
	}
	return TaskState{TaskID: done.ID, Status: done.Status}, nil
}

// Fail moves the task to failed with the failure FailureOf gives the
// caught error's name, refunding what is left of its charge in the same
// write. A task already failed is left as it is; one already completed is
// not an error either (the failure came too late to matter).
func (s *Steps) Fail(ctx context.Context, in FailInput) (TaskState, error) {
	if in.TaskID == "" {
		return TaskState{}, &InvalidInput{Step: "Fail", Reason: "taskId is empty"}
	}
	f := FailureOf(in.Error.Error, in.Error.Cause)
	s.logger().Warn("generation failed", "task", in.TaskID, "error", in.Error.Error,
		"cause", causeMessage(in.Error.Cause), "code", f.Code)
	t, err := s.Store.Fail(ctx, in.TaskID, f, s.now())
	if errors.Is(err, domain.ErrTerminal) {
		return s.status(ctx, in.TaskID)
	}
	if err != nil {
		return TaskState{}, storeError("fail", in.TaskID, err)
	}
	return TaskState{TaskID: t.ID, Status: t.Status}, nil
}

func (s *Steps) status(ctx context.Context, id string) (TaskState, error) {
	t, err := s.Store.Task(ctx, id)
	if err != nil {
		return TaskState{}, storeError("load task", id, err)
	}
	return TaskState{TaskID: t.ID, Status: t.Status}, nil
}
