package mcpserver

import (
	"cmp"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/genvideo/gen/shared/client"
	"github.com/genvideo/gen/shared/webhook"
)

// tools are gen's tools over one API.
type tools struct {
	api  API
	opts Options
}

func annotations(title string, readOnly, idempotent bool) *mcp.ToolAnnotations {
	no := false
	return &mcp.ToolAnnotations{Title: title, ReadOnlyHint: readOnly, IdempotentHint: idempotent,
		DestructiveHint: &no, OpenWorldHint: &no}
}

// Tool names.
const (
	ToolListModels     = "list_models"
	ToolQuote          = "quote"
	ToolTextToVideo    = "start_text_to_video"
	ToolImageToVideo   = "start_image_to_video"
	ToolFirstLastFrame = "start_first_last_frame"
	ToolExtendVideo    = "extend_video"
	ToolGetTask        = "get_task"
	ToolWaitForTask    = "wait_for_task"
	ToolCancelTask     = "cancel_task"
	ToolHistory        = "history"
	ToolCredits        = "credits"
)

const startCharges = " It is charged at once (the start's creditsUsed; remainingCredits is the balance after), " +
	"and refunded if the generation fails. It returns the taskId at once: follow it with wait_for_task or get_task."

func (t *tools) definitions() []definition {
	models := func(r *Refusal) ModelsOutput { return ModelsOutput{Error: r} }
	quote := func(r *Refusal) QuoteOutput { return QuoteOutput{Error: r} }
	started := func(r *Refusal) StartOutput { return StartOutput{Error: r} }
	task := func(r *Refusal) TaskOutput { return TaskOutput{Error: r} }
	return []definition{
		define(mcp.Tool{Name: ToolListModels, Annotations: annotations("List models", true, true),
			Description: "The models gen offers: ids, capabilities (text-to-video, image-to-video, first-last-frame, audio-generation), " +
				"prices in credits per video with and without audio, whether each is available now, and the limits a start must keep " +
				"(durations, resolutions, aspect ratios, sample counts, personGeneration values, seed)."},
			t.listModels, models),
		define(mcp.Tool{Name: ToolQuote, Annotations: annotations("Quote a start", true, true),
			Description: "What a start with the same input would charge now, and whether it would be let through (balance, spending caps, rate limits), " +
				"without starting it: nothing is charged and no task is made. The input is validated as the start's is."},
			t.quote, quote),
		define(mcp.Tool{Name: ToolTextToVideo, Annotations: annotations("Start text-to-video", false, false),
			Description: "Start a video generated from a prompt, optionally keeping the person, character or product of up to three " +
				"reference images (referenceImages: direct uploads' ids) where the model's limits.modes has reference-images." + startCharges},
			t.textToVideo, started),
		define(mcp.Tool{Name: ToolImageToVideo, Annotations: annotations("Start image-to-video", false, false),
			Description: "Start a video that begins at an image (by https URL, base64, or a direct upload's id) and follows the prompt." + startCharges},
			t.imageToVideo, started),
		define(mcp.Tool{Name: ToolFirstLastFrame, Annotations: annotations("Start first+last frame", false, false),
			Description: "Start a video that goes from a first frame to a last frame (images by https URL, base64, or a direct upload's id), " +
				"on a model with the first-last-frame capability." + startCharges},
			t.firstLastFrame, started),
		define(mcp.Tool{Name: ToolExtendVideo, Annotations: annotations("Extend a video", false, false),
			Description: "Start a new task (type video-extension) that continues the video of a completed task by about 7 seconds; " +
				"its video is the whole. The model and aspect ratio are the task's. Only backends whose limits.modes has video-extension " +
				"extend, and only videos they made (limits.maxExtendSeconds, limits.extendResolutions, limits.extendWithinSeconds)." + startCharges},
			t.extendVideo, started),
		define(mcp.Tool{Name: ToolGetTask, Annotations: annotations("Get a task", true, true),
			Description: "A task now: status (pending, processing, completed, failed), progress, cost, and once completed the signed links " +
				"to its videos (videos[].url, MP4, valid 24 hours) and their posters (posterUrl); once failed the error and the credits refunded."},
			t.getTask, task),
		define(mcp.Tool{Name: ToolWaitForTask, Annotations: annotations("Wait for a task", true, true),
			Description: "Wait until a task is completed or failed, at most timeoutSeconds, sending progress notifications as it moves; " +
				"then the task as get_task shows it. finished is false when the time ran out: the task goes on, call again."},
			t.waitForTask, task),
		define(mcp.Tool{Name: ToolCancelTask, Annotations: annotations("Cancel a task", false, true),
			Description: "Cancel a pending or processing task: it fails with error code CANCELLED and its credits are refunded. " +
				"A finished task is refused (TASK_NOT_CANCELLABLE)."},
			t.cancelTask, task),
		define(mcp.Tool{Name: ToolHistory, Annotations: annotations("History", true, true),
			Description: "A page of the account's tasks, newest first, with their status and cost."},
			t.history, func(r *Refusal) HistoryOutput { return HistoryOutput{Error: r} }),
		define(mcp.Tool{Name: ToolCredits, Annotations: annotations("Credits", true, true),
			Description: "The balance, the credits held by generations in flight, the key's tier, rate limits and spending caps, " +
				"and a page of the ledger of grants, charges and refunds."},
			t.credits, func(r *Refusal) CreditsOutput { return CreditsOutput{Error: r} }),
	}
}

func (t *tools) listModels(ctx context.Context, _ *mcp.CallToolRequest, _ Empty) (result[ModelsOutput], error) {
	l, err := t.api.Models(ctx)
	if err != nil {
		return result[ModelsOutput]{}, err
	}
	return result[ModelsOutput]{out: ModelsOutput{Models: l.Models, DefaultModel: l.DefaultModel}}, nil
}

func (t *tools) quote(ctx context.Context, _ *mcp.CallToolRequest, in QuoteInput) (result[QuoteOutput], error) {
	var q *client.Quote
	var err error
	req := in.request()
	// What each mode takes besides the parameters; any other member is
	// refused before anything is sent.
	takes := map[string][]string{
		ModeTextToVideo:    {"referenceImages"},
		ModeImageToVideo:   {"image"},
		ModeFirstLastFrame: {"firstFrame", "lastFrame"},
		ModeExtend:         {"taskId"},
	}[in.Mode]
	if takes == nil {
		return result[QuoteOutput]{}, &inputError{field: "mode",
			message: fmt.Sprintf("mode %q: want %s, %s, %s or %s", in.Mode, ModeTextToVideo, ModeImageToVideo, ModeFirstLastFrame, ModeExtend)}
	}
	given := map[string]bool{"referenceImages": in.ReferenceImages != nil, "image": in.Image != nil,
		"firstFrame": in.FirstFrame != nil, "lastFrame": in.LastFrame != nil, "taskId": in.TaskID != ""}
	if in.Mode == ModeExtend {
		// An extension's model, aspect ratio and sample count are its task's.
		given["model"], given["aspectRatio"], given["sampleCount"] = in.Model != "", in.AspectRatio != "", in.SampleCount != 0
	}
	for _, field := range []string{"referenceImages", "image", "firstFrame", "lastFrame", "taskId", "model", "aspectRatio", "sampleCount"} {
		if given[field] && !slices.Contains(takes, field) {
			return result[QuoteOutput]{}, &inputError{field: field, message: fmt.Sprintf("%s takes no %s", in.Mode, field)}
		}
	}
	switch in.Mode {
	case ModeTextToVideo:
		req.ReferenceImages = in.ReferenceImages
		q, err = t.api.QuoteTextToVideo(ctx, req)
	case ModeImageToVideo:
		var im client.Image
		if im, err = t.image(ctx, "image", in.Image); err == nil {
			q, err = t.api.QuoteImageToVideo(ctx, req, im)
		}
	case ModeFirstLastFrame:
		var first, last client.Image
		if first, err = t.image(ctx, "firstFrame", in.FirstFrame); err == nil {
			if last, err = t.image(ctx, "lastFrame", in.LastFrame); err == nil {
				q, err = t.api.QuoteFirstLastFrame(ctx, req, first, last)
			}
		}
	case ModeExtend:
		if in.TaskID == "" {
			return result[QuoteOutput]{}, &inputError{field: "taskId", message: "taskId is required: the task whose extension to quote"}
		}
		q, err = t.api.QuoteExtend(ctx, in.TaskID, in.Continuation.request())
	}
	if err != nil {
		return result[QuoteOutput]{}, err
	}
	return result[QuoteOutput]{out: QuoteOutput{Quote: q}}, nil
}

func startOptions(key string) []client.StartOption {
	if key == "" {
		return nil
	}
	return []client.StartOption{client.WithIdempotencyKey(key)}
}

func (t *tools) textToVideo(ctx context.Context, _ *mcp.CallToolRequest, in TextStart) (result[StartOutput], error) {
	req := in.request()
	req.ReferenceImages = in.ReferenceImages
	s, err := t.api.TextToVideo(ctx, req, startOptions(in.IdempotencyKey)...)
	if err != nil {
		return result[StartOutput]{}, err
	}
	return result[StartOutput]{out: StartOutput{Started: s}}, nil
}

func (t *tools) extendVideo(ctx context.Context, _ *mcp.CallToolRequest, in ExtendStart) (result[StartOutput], error) {
	if in.TaskID == "" {
		return result[StartOutput]{}, &inputError{field: "taskId", message: "taskId is required: the completed task whose video to continue"}
	}
	s, err := t.api.Extend(ctx, in.TaskID, in.Continuation.request(), startOptions(in.IdempotencyKey)...)
	if err != nil {
		return result[StartOutput]{}, err
	}
	return result[StartOutput]{out: StartOutput{Started: s}}, nil
}

func (t *tools) imageToVideo(ctx context.Context, _ *mcp.CallToolRequest, in ImageStart) (result[StartOutput], error) {
	im, err := t.image(ctx, "image", &in.Image)
	if err != nil {
		return result[StartOutput]{}, err
	}
	s, err := t.api.ImageToVideo(ctx, in.request(), im, startOptions(in.IdempotencyKey)...)
	if err != nil {
		return result[StartOutput]{}, err
	}
	return result[StartOutput]{out: StartOutput{Started: s}}, nil
}

func (t *tools) firstLastFrame(ctx context.Context, _ *mcp.CallToolRequest, in FramesStart) (result[StartOutput], error) {
	first, err := t.image(ctx, "firstFrame", &in.FirstFrame)
	if err != nil {
		return result[StartOutput]{}, err
	}
	last, err := t.image(ctx, "lastFrame", &in.LastFrame)
	if err != nil {
		return result[StartOutput]{}, err
	}
	s, err := t.api.FirstLastFrame(ctx, in.request(), first, last, startOptions(in.IdempotencyKey)...)
	if err != nil {
		return result[StartOutput]{}, err
	}
	return result[StartOutput]{out: StartOutput{Started: s}}, nil
}

// image is the client's image of an input: fetched now when named by
// URL, decoded when given in base64, named by id when uploaded. Whether
// its bytes are an image the service takes is the service's to say.
func (t *tools) image(ctx context.Context, field string, im *Image) (client.Image, error) {
	if im == nil {
		return client.Image{}, &inputError{field: field, message: field + " is required: give its url, base64 or uploadId"}
	}
	given := 0
	for _, v := range []string{im.URL, im.Base64, im.UploadID} {
		if v != "" {
			given++
		}
	}
	if given != 1 {
		return client.Image{}, &inputError{field: field, message: field + ": give exactly one of url, base64 and uploadId"}
	}
	name := im.Name
	switch {
	case im.UploadID != "":
		return client.UploadedImage(im.UploadID), nil
	case im.Base64 != "":
		data, err := decodeBase64(im.Base64)
		if err != nil {
			return client.Image{}, &inputError{field: field, message: field + ".base64: " + err.Error()}
		}
		if name == "" {
			name = field
		}
		return client.ImageBytes(name, data), nil
	}
	fctx, cancel := context.WithTimeout(ctx, fetchTimeout)
	defer cancel()
	data, _, err := t.opts.Fetcher.Fetch(fctx, im.URL, MaxImageBytes+1)
	if err != nil {
		if ctx.Err() != nil {
			return client.Image{}, ctx.Err()
		}
		return client.Image{}, &inputError{field: field, message: field + ".url: " + fetchReason(err)}
	}
	if name == "" {
		name = urlName(im.URL, field)
	}
	return client.ImageBytes(name, data), nil
}

// fetchReason says why an image URL could not be read, in the words of
// the webhook rules it is held to.
func fetchReason(err error) string {
	var ue *webhook.URLError
	switch {
	case errors.As(err, &ue):
		return "the URL " + ue.Reason
	case errors.Is(err, webhook.ErrForbiddenAddress):
		return "the URL points at a private, loopback, link-local or reserved address"
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Sprintf("the image could not be read within %s", fetchTimeout)
	}
	return "the image could not be read: " + err.Error()
}

// urlName is the last segment of an image URL's path, for the file name.
func urlName(raw, field string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return field
	}
	p := u.Path
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		p = p[i+1:]
	}
	if p == "" {
		return field
	}
	return p
}

// decodeBase64 reads standard or URL-safe base64, padded or not, or a
// data: URL carrying it.
func decodeBase64(s string) ([]byte, error) {
	if rest, ok := strings.CutPrefix(s, "data:"); ok {
		_, data, found := strings.Cut(rest, ";base64,")
		if !found {
			return nil, errors.New("a data: URL must be base64 (data:image/png;base64,...)")
		}
		s = data
	}
	s = strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' || r == ' ' || r == '\t' {
			return -1
		}
		return r
	}, s)
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			return b, nil
		}
	}
	return nil, errors.New("not base64")
}

func (t *tools) getTask(ctx context.Context, _ *mcp.CallToolRequest, in TaskRef) (result[TaskOutput], error) {
	task, err := t.api.Status(ctx, in.TaskID)
	if err != nil {
		return result[TaskOutput]{}, err
	}
	return taskResult(task), nil
}

func (t *tools) cancelTask(ctx context.Context, _ *mcp.CallToolRequest, in TaskRef) (result[TaskOutput], error) {
	task, err := t.api.Cancel(ctx, in.TaskID)
	if err != nil {
		return result[TaskOutput]{}, err
	}
	return taskResult(task), nil
}

// taskResult is a task's output, with a link to each of its videos and
// posters, which a host can show or open.
func taskResult(task *client.Task) result[TaskOutput] {
	finished := task.Status.Terminal()
	r := result[TaskOutput]{out: TaskOutput{Task: task, Finished: &finished}}
	for i, v := range task.Videos {
		name := task.TaskID + ".mp4"
		if len(task.Videos) > 1 {
			name = fmt.Sprintf("%s-%d.mp4", task.TaskID, i+1)
		}
		r.links = append(r.links, &mcp.ResourceLink{URI: v.URL, Name: name, MIMEType: cmp.Or(v.MimeType, "video/mp4"),
			Description: "The video, valid until " + v.ExpiresAt.UTC().Format(time.RFC3339)})
		if v.PosterURL != "" {
			r.links = append(r.links, &mcp.ResourceLink{URI: v.PosterURL, Name: strings.TrimSuffix(name, ".mp4") + "-poster.jpg",
				MIMEType: "image/jpeg", Description: "The video's poster frame"})
		}
	}
	return r
}

// waitForTask looks at the task until it is finished or the wait is
// over, as the service's Retry-After asks (or backing off when it gives
// none), and sends a progress notification each time the task moves.
func (t *tools) waitForTask(ctx context.Context, req *mcp.CallToolRequest, in WaitInput) (result[TaskOutput], error) {
	wait := DefaultWait
	if in.TimeoutSeconds < 0 {
		return result[TaskOutput]{}, &inputError{field: "timeoutSeconds", message: "timeoutSeconds must be positive"}
	}
	if in.TimeoutSeconds > 0 {
		wait = time.Duration(in.TimeoutSeconds) * time.Second
	}
	wait = min(wait, t.opts.MaxWait)
	deadline := time.Now().Add(wait)
	progress := newProgress(req)
	interval := t.opts.MinPoll
	for {
		task, err := t.api.Status(ctx, in.TaskID)
		if err != nil {
			return result[TaskOutput]{}, err
		}
		progress.report(ctx, task)
		left := time.Until(deadline)
		if task.Status.Terminal() || left <= 0 {
			return taskResult(task), nil
		}
		next := interval
		if task.RetryAfter > 0 {
			next = max(task.RetryAfter, t.opts.MinPoll)
		} else {
			interval = min(interval*3/2, t.opts.MaxPoll)
		}
		// A little jitter, so that agents that started together do not
		// poll together.
		next += rand.N(next/10 + 1)
		timer := time.NewTimer(min(next, left))
		select {
		case <-ctx.Done():
			timer.Stop()
			return result[TaskOutput]{}, ctx.Err()
		case <-timer.C:
		}
	}
}

// progress sends a request's progress notifications: one when the wait
// begins, then one each time the task moves on, never going back (the
// specification wants each notification's progress above the last).
type progress struct {
	req   *mcp.CallToolRequest
	token any
	last  float64
}

func newProgress(req *mcp.CallToolRequest) *progress {
	p := &progress{req: req, last: -1}
	if req != nil && req.Params != nil {
		p.token = req.Params.GetProgressToken()
	}
	return p
}

func (p *progress) report(ctx context.Context, task *client.Task) {
	if p.token == nil || p.req.Session == nil {
		return
	}
	value, message := 0.0, string(task.Status)
	switch task.Status {
	case client.StatusProcessing:
		value = float64(min(max(task.Progress, 1), 99))
		message = fmt.Sprintf("processing, %d%%", int(value))
	case client.StatusCompleted:
		value = 100
	case client.StatusFailed:
		value = 100
		if task.Error != nil {
			message = "failed: " + task.Error.Code
		}
	}
	if value <= p.last {
		return
	}
	p.last = value
	// A notification that cannot be sent (the client left) is no reason
	// to stop waiting: the answer will tell.
	_ = p.req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: p.token,
		Progress: value, Total: 100, Message: message})
}

func (t *tools) history(ctx context.Context, _ *mcp.CallToolRequest, in HistoryInput) (result[HistoryOutput], error) {
	page, err := t.api.History(ctx, client.HistoryQuery{Status: client.Status(in.Status), Limit: in.Limit, Skip: in.Skip, Cursor: in.Cursor})
	if err != nil {
		return result[HistoryOutput]{}, err
	}
	return result[HistoryOutput]{out: HistoryOutput{History: page}}, nil
}

func (t *tools) credits(ctx context.Context, _ *mcp.CallToolRequest, in CreditsInput) (result[CreditsOutput], error) {
	c, err := t.api.Credits(ctx, client.CreditsQuery{Limit: in.LedgerLimit, Cursor: in.Cursor})
	if err != nil {
		return result[CreditsOutput]{}, err
	}
	return result[CreditsOutput]{out: CreditsOutput{Credits: c, NextCursor: c.Pagination.NextCursor}}, nil
}
