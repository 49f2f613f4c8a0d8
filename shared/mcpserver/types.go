package mcpserver

import "github.com/genvideo/gen/shared/client"

// The tools' inputs. Each is decoded strictly (shared/strictjson): an
// unknown member, or a value of the wrong type, is VALIDATION_ERROR
// naming it. A member given as null is absent. The values themselves are
// the service's to judge, so the schemas give types and descriptions,
// not the service's ranges (which list_models tells).

// Generation is the parameters of a start, as the REST API's start
// endpoints take them.
type Generation struct {
	Continuation
	Model       string `json:"model,omitempty" jsonschema:"a model id of list_models; default: the defaultModel"`
	AspectRatio string `json:"aspectRatio,omitempty" jsonschema:"one of the model's limits.aspectRatios, such as 16:9 or 9:16"`
	SampleCount int    `json:"sampleCount,omitempty" jsonschema:"videos to make, 1 (default) up to the model's limits.maxSampleCount; each is charged"`
}

// Continuation is the parameters a start shares with an extension,
// whose model, aspect ratio and sample count are its task's.
type Continuation struct {
	Prompt           string `json:"prompt" jsonschema:"what the video shows"`
	DurationSeconds  int    `json:"durationSeconds,omitempty" jsonschema:"length in seconds, one of the model's limits.durations; default its first"`
	Resolution       string `json:"resolution,omitempty" jsonschema:"720p, 1080p or 4k, as the model's limits.resolutions allow for the duration"`
	GenerateAudio    *bool  `json:"generateAudio,omitempty" jsonschema:"make a soundtrack (default true where the model has audio-generation); prices differ"`
	EnhancePrompt    *bool  `json:"enhancePrompt,omitempty" jsonschema:"let the model enhance the prompt"`
	NegativePrompt   string `json:"negativePrompt,omitempty" jsonschema:"what to avoid"`
	Seed             *int64 `json:"seed,omitempty" jsonschema:"reproducibility seed, 0..4294967295, where the model's limits.seed is true"`
	PersonGeneration string `json:"personGeneration,omitempty" jsonschema:"allow_adult, dont_allow or allow_all, as the model's limits.personGeneration allow for the mode"`
	MaxCredits       int    `json:"maxCredits,omitempty" jsonschema:"refuse the start (MAX_CREDITS_EXCEEDED, nothing charged) if it would cost more credits than this"`
	WebhookURL       string `json:"webhookUrl,omitempty" jsonschema:"also send this task's events to an https URL, signed with the account's webhook secret"`
}

// request is g as the client sends it.
func (g Generation) request() client.Request {
	c := g.Continuation
	return client.Request{Prompt: c.Prompt, Model: g.Model, DurationSeconds: c.DurationSeconds, AspectRatio: g.AspectRatio,
		Resolution: c.Resolution, SampleCount: g.SampleCount, GenerateAudio: c.GenerateAudio, EnhancePrompt: c.EnhancePrompt,
		NegativePrompt: c.NegativePrompt, Seed: c.Seed, PersonGeneration: c.PersonGeneration, MaxCredits: c.MaxCredits,
		WebhookURL: c.WebhookURL}
}

// request is c as the client sends an extension.
func (c Continuation) request() client.ExtendRequest {
	return client.ExtendRequest{Prompt: c.Prompt, DurationSeconds: c.DurationSeconds, Resolution: c.Resolution,
		GenerateAudio: c.GenerateAudio, EnhancePrompt: c.EnhancePrompt, NegativePrompt: c.NegativePrompt, Seed: c.Seed,
		PersonGeneration: c.PersonGeneration, MaxCredits: c.MaxCredits, WebhookURL: c.WebhookURL}
}

// Image is an image a start takes: exactly one of URL, Base64 and
// UploadID.
type Image struct {
	URL      string `json:"url,omitempty" jsonschema:"an https URL the server fetches (public addresses only, no redirects); a JPEG or PNG of at most 20 MiB"`
	Base64   string `json:"base64,omitempty" jsonschema:"the image's bytes in base64 (a data: URL too); a JPEG or PNG"`
	UploadID string `json:"uploadId,omitempty" jsonschema:"the uploadId of a direct upload (POST /api/gen/uploads of the REST API), for an image up to 20 MiB"`
	Name     string `json:"name,omitempty" jsonschema:"a file name for the image (echoed as imageInfo.originalName)"`
}

// TextStart is start_text_to_video's input.
type TextStart struct {
	Generation
	ReferenceImages []string `json:"referenceImages,omitempty" jsonschema:"optional: one to three uploadIds of direct uploads (POST /api/gen/uploads of the REST API), asset images of a person, character or product the video keeps, where the model's limits.modes has reference-images"`
	IdempotencyKey  string   `json:"idempotencyKey,omitempty" jsonschema:"optional: the same key with the same request within 24 hours answers the first start again, one task and one charge"`
}

// ImageStart is start_image_to_video's input.
type ImageStart struct {
	Generation
	Image          Image  `json:"image" jsonschema:"the image the video starts from"`
	IdempotencyKey string `json:"idempotencyKey,omitempty" jsonschema:"optional: the same key with the same request within 24 hours answers the first start again, one task and one charge"`
}

// FramesStart is start_first_last_frame's input.
type FramesStart struct {
	Generation
	FirstFrame     Image  `json:"firstFrame" jsonschema:"the image the video starts at"`
	LastFrame      Image  `json:"lastFrame" jsonschema:"the image the video ends at"`
	IdempotencyKey string `json:"idempotencyKey,omitempty" jsonschema:"optional: the same key with the same request within 24 hours answers the first start again, one task and one charge"`
}

// ExtendStart is extend_video's input.
type ExtendStart struct {
	TaskID string `json:"taskId" jsonschema:"the completed task whose video to continue"`
	Continuation
	IdempotencyKey string `json:"idempotencyKey,omitempty" jsonschema:"optional: the same key with the same request within 24 hours answers the first start again, one task and one charge"`
}

// Modes of quote, as the REST API names its start endpoints.
const (
	ModeTextToVideo    = "text-to-video"
	ModeImageToVideo   = "image-to-video"
	ModeFirstLastFrame = "first-last-frame"
	ModeExtend         = "extend"
)

// QuoteInput is quote's input.
type QuoteInput struct {
	Mode string `json:"mode" jsonschema:"the start to quote: text-to-video, image-to-video (give image), first-last-frame (give firstFrame and lastFrame) or extend (extend_video: give taskId, and no model, aspectRatio or sampleCount)"`
	Generation
	ReferenceImages []string `json:"referenceImages,omitempty" jsonschema:"text-to-video's reference images, as start_text_to_video takes them"`
	Image           *Image   `json:"image,omitempty" jsonschema:"image-to-video's image"`
	FirstFrame      *Image   `json:"firstFrame,omitempty" jsonschema:"first-last-frame's first frame"`
	LastFrame       *Image   `json:"lastFrame,omitempty" jsonschema:"first-last-frame's last frame"`
	TaskID          string   `json:"taskId,omitempty" jsonschema:"extend's task"`
}

// TaskRef names a task.
type TaskRef struct {
	TaskID string `json:"taskId" jsonschema:"the taskId a start returned"`
}

// WaitInput is wait_for_task's input.
type WaitInput struct {
	TaskID         string `json:"taskId" jsonschema:"the taskId a start returned"`
	TimeoutSeconds int    `json:"timeoutSeconds,omitempty" jsonschema:"how long to wait at most (default 45); the task goes on after, so call again while finished is false"`
}

// HistoryInput is history's input.
type HistoryInput struct {
	Status string `json:"status,omitempty" jsonschema:"only tasks in this status: pending, processing, completed or failed"`
	Limit  int    `json:"limit,omitempty" jsonschema:"page size, 1..100 (default 20)"`
	Skip   int    `json:"skip,omitempty" jsonschema:"tasks to skip"`
	Cursor string `json:"cursor,omitempty" jsonschema:"a previous page's nextCursor: the page after it"`
}

// CreditsInput is credits' input.
type CreditsInput struct {
	LedgerLimit int    `json:"ledgerLimit,omitempty" jsonschema:"ledger entries to show, 1..100 (default 20)"`
	Cursor      string `json:"cursor,omitempty" jsonschema:"a previous answer's nextCursor: the ledger's next page"`
}

// Empty is the input of a tool that takes none.
type Empty struct{}

// The tools' outputs: the REST API's answer under one member, or, for a
// refused call (isError), error alone. Every member is optional, so that
// both conform to the tool's output schema.

// Refusal is a refused call: the REST API's error answer.
type Refusal struct {
	// Status is the HTTP status the REST API answered (0 when it was not
	// reached).
	Status  int    `json:"status,omitempty" jsonschema:"the HTTP status of the REST API's refusal"`
	Code    string `json:"code" jsonschema:"the contract's error code, such as VALIDATION_ERROR, INSUFFICIENT_CREDITS, SPENDING_CAP_EXCEEDED, RATE_LIMIT_EXCEEDED, TASK_NOT_FOUND"`
	Message string `json:"message"`
	Field   string `json:"field,omitempty" jsonschema:"the input member at fault"`
	// RetryAfterSeconds is when the same call may succeed (a 429, a 503).
	RetryAfterSeconds int `json:"retryAfterSeconds,omitempty" jsonschema:"seconds to wait before the same call may succeed"`
	// Required and Available are what a start costs and the balance
	// (INSUFFICIENT_CREDITS).
	Required  int64          `json:"required,omitempty"`
	Available int64          `json:"available,omitempty"`
	Details   map[string]any `json:"details,omitempty"`
}

// ModelsOutput is list_models' output.
type ModelsOutput struct {
	Models       []client.Model `json:"models,omitempty"`
	DefaultModel string         `json:"defaultModel,omitempty"`
	Error        *Refusal       `json:"error,omitempty"`
}

// QuoteOutput is quote's output.
type QuoteOutput struct {
	Quote *client.Quote `json:"quote,omitempty"`
	Error *Refusal      `json:"error,omitempty"`
}

// StartOutput is the output of the starts, extend_video's included.
type StartOutput struct {
	Started *client.Started `json:"started,omitempty"`
	Error   *Refusal        `json:"error,omitempty"`
}

// TaskOutput is the output of get_task, wait_for_task and cancel_task.
type TaskOutput struct {
	Task *client.Task `json:"task,omitempty"`
	// Finished says whether the task is completed or failed: a wait that
	// ran out of time answers the task as it is, unfinished.
	Finished *bool    `json:"finished,omitempty" jsonschema:"the task is completed or failed; false: wait again"`
	Error    *Refusal `json:"error,omitempty"`
}

// HistoryOutput is history's output.
type HistoryOutput struct {
	History *client.HistoryPage `json:"history,omitempty"`
	Error   *Refusal            `json:"error,omitempty"`
}

// CreditsOutput is credits' output.
type CreditsOutput struct {
	Credits    *client.Credits `json:"credits,omitempty"`
	NextCursor string          `json:"nextCursor,omitempty" jsonschema:"the ledger's next page, as cursor"`
	Error      *Refusal        `json:"error,omitempty"`
}
