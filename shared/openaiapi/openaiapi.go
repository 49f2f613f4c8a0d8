// Package openaiapi is the wire shape of the OpenAI-compatible videos API
// that gen serves beside its contract, under {base}/openai/v1 (issue 23):
// the video, deleted and list objects, the error envelope, and the
// translation of a create request's OpenAI fields (seconds, size) into
// the contract's parameters, so that the one validator (shared/params)
// and the service's capability check judge it. shared/httpapi serves the
// routes; this package holds no HTTP handler and reads no store.
//
// Shapes follow the official SDK (github.com/openai/openai-node
// src/resources/videos.ts and src/core/error.ts, commit 7b7d6ca,
// 2026-08-21, read 2026-11-26): Video {id, object "video", model, status
// queued|in_progress|completed|failed, progress, created_at,
// completed_at, expires_at (Unix seconds), prompt, remixed_from_video_id,
// seconds (a string), size, error {code, message}}; the deleted object
// {id, object "video.deleted", deleted}; a list page {object "list",
// data, first_id, last_id, has_more} that the SDK's
// ConversationCursorPage follows with after=last_id; an error
// {"error": {message, type, param, code}}, whose HTTP status picks the
// SDK's exception class. videos.extend (issue 37) follows the npm
// `openai` 7.57.0 (resources/videos.d.ts and videos.js) and openai-go
// v3.99.0 (video.go), read 2026-11-28: POST /videos/extensions,
// multipart prompt, seconds ("length of the newly generated extension
// segment") and video (a file, or {id} sent as video[id]); the video
// object's seconds of an extension is "the stitched total duration".
package openaiapi

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/genvideo/gen/shared/params"
	"github.com/genvideo/gen/shared/provider/openai/openaimodels"
	"github.com/genvideo/gen/shared/task"
)

// Base is the path prefix of the API: the SDKs' baseURL is the service's
// base URL followed by it.
const Base = "/openai/v1"

// Video is OpenAI's video object.
type Video struct {
	ID                 string   `json:"id"`
	Object             string   `json:"object"`
	Model              string   `json:"model"`
	Status             string   `json:"status"`
	Progress           int      `json:"progress"`
	CreatedAt          int64    `json:"created_at"`
	CompletedAt        *int64   `json:"completed_at"`
	ExpiresAt          *int64   `json:"expires_at"`
	Prompt             string   `json:"prompt"`
	RemixedFromVideoID *string  `json:"remixed_from_video_id"`
	Seconds            string   `json:"seconds"`
	Size               string   `json:"size"`
	Error              *Failure `json:"error"`
}

// Failure is why a video failed: the task's failure code and message.
type Failure struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Deleted is the answer of a delete.
type Deleted struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Deleted bool   `json:"deleted"`
}

// NewDeleted is the deleted object of video id.
func NewDeleted(id string) Deleted { return Deleted{ID: id, Object: "video.deleted", Deleted: true} }

// List is a page of videos. FirstID and LastID are null on an empty page.
type List struct {
	Object  string  `json:"object"`
	Data    []Video `json:"data"`
	FirstID *string `json:"first_id"`
	LastID  *string `json:"last_id"`
	HasMore bool    `json:"has_more"`
}

// NewList is the page of videos, more telling whether another follows.
func NewList(videos []Video, more bool) List {
	l := List{Object: "list", Data: videos, HasMore: more}
	if videos == nil {
		l.Data = []Video{}
	}
	if len(videos) > 0 {
		first, last := videos[0].ID, videos[len(videos)-1].ID
		l.FirstID, l.LastID = &first, &last
	}
	return l
}

// Status is OpenAI's name of a task status.
func Status(s task.Status) string {
	switch s {
	case task.Pending:
		return "queued"
	case task.Processing:
		return "in_progress"
	}
	return string(s) // completed, failed
}

// FromTask is t as a video object. A completed task's videos expire at
// expires (its completion plus the link lifetime, service.URLLifetime).
func FromTask(t task.Task, expires int64) Video {
	v := Video{
		ID:        t.ID,
		Object:    "video",
		Model:     t.Model,
		Status:    Status(t.Status),
		CreatedAt: t.CreatedAt.Unix(),
		Prompt:    t.Prompt,
		// An extension's is the stitched whole, as OpenAI's is.
		Seconds: openaimodels.Seconds(t.VideoSeconds()),
	}
	v.Size, _ = openaimodels.Size(t.Params.AspectRatio, t.Params.Resolution)
	switch t.Status {
	case task.Processing:
		v.Progress = t.Progress
	case task.Completed:
		v.Progress = 100
		v.ExpiresAt = &expires
	case task.Failed:
		f := Failure{Code: task.FailInternal, Message: "the generation failed"}
		if t.Failure != nil {
			f = Failure{Code: t.Failure.Code, Message: t.Failure.Message}
		}
		v.Error = &f
	}
	if t.Status.Terminal() && !t.CompletedAt.IsZero() {
		at := t.CompletedAt.Unix()
		v.CompletedAt = &at
	}
	return v
}

// The create request's fields. input_reference is a file (multipart).
const (
	FieldPrompt         = "prompt"
	FieldModel          = "model"
	FieldSeconds        = "seconds"
	FieldSize           = "size"
	FieldInputReference = "input_reference"
)

// The extension request's fields (videos.extend, POST
// /videos/extensions): prompt and seconds as a create's, and the video
// it continues, which both SDKs send as the form field video[id] (their
// bracketed encoding of {"video": {"id": ...}}) or as a file under
// video. gen extends only its own completed videos: the id.
const (
	FieldVideo   = "video"
	FieldVideoID = "video[id]"
)

// The content endpoint's variants that gen serves: the video, and its
// poster frame as the thumbnail. OpenAI's third, spritesheet, gen does
// not make.
const (
	VariantVideo     = "video"
	VariantThumbnail = "thumbnail"
)

// sizes are the sizes a create may name, each the contract's aspect
// ratio and resolution (openaimodels.Size); whether the model and the
// backend make it is the validator's and the capability table's call.
var sizes = []string{"1280x720", "720x1280", "1920x1080", "1080x1920", "3840x2160", "2160x3840"}

// Sizes lists the accepted size values.
func Sizes() []string { return slices.Clone(sizes) }

// ContractFields translates a create's OpenAI fields into the contract's
// form fields (durationSeconds, aspectRatio, resolution), for
// params.ParseForm. A field the API does not take, a seconds that is no
// whole number of seconds, or a size of no known shape is a
// *params.Error naming the OpenAI field. What is absent stays absent: the
// contract's defaults apply (model gen-3.1-fast-generate-001, 8 seconds,
// 16:9 at the model's default resolution).
func ContractFields(fields map[string]string) (map[string][]string, error) {
	out := make(map[string][]string, len(fields)+1)
	names := make([]string, 0, len(fields))
	for name := range fields {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		v := fields[name]
		switch name {
		case FieldPrompt:
			out["prompt"] = []string{v}
		case FieldModel:
			out["model"] = []string{v}
		case FieldSeconds:
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil || !slices.Contains(params.Durations(), n) {
				return nil, &params.Error{Code: params.CodeValidation, Field: FieldSeconds, Value: v,
					Message: fmt.Sprintf("seconds must be one of %s.", quoted(durations()))}
			}
			out["durationSeconds"] = []string{strconv.Itoa(n)}
		case FieldSize:
			aspect, res, ok := openaimodels.AspectAndResolution(v)
			if !ok || !slices.Contains(sizes, v) {
				return nil, &params.Error{Code: params.CodeValidation, Field: FieldSize, Value: v,
					Message: fmt.Sprintf("size must be one of %s.", quoted(sizes))}
			}
			out["aspectRatio"], out["resolution"] = []string{aspect}, []string{res}
		default:
			return nil, &params.Error{Code: params.CodeValidation, Field: name,
				Message: fmt.Sprintf("unknown field %q; this API takes prompt, model, seconds, size and input_reference (an image file).", name)}
		}
	}
	return out, nil
}

// ExtensionFields translates an extension's OpenAI fields into the
// contract's form fields of an extension (prompt, durationSeconds), for
// params.ParseExtensionForm, and the id of the video it continues. seconds
// is the length of the new segment, as in OpenAI's shape; the contract's
// extension takes one length (durationSeconds), which the validator
// holds it to. A field OpenAI's extension does not have, or a missing
// video[id], is a *params.Error naming the OpenAI field.
func ExtensionFields(fields map[string]string) (form map[string][]string, videoID string, err error) {
	rest := make(map[string]string, len(fields))
	for name, v := range fields {
		switch name {
		case FieldVideoID:
			videoID = v
		case FieldPrompt, FieldSeconds:
			rest[name] = v
		default:
			return nil, "", &params.Error{Code: params.CodeValidation, Field: name,
				Message: fmt.Sprintf("unknown field %q; an extension takes prompt, seconds and video[id] (the id of a completed video of yours).", name)}
		}
	}
	if videoID == "" {
		return nil, "", &params.Error{Code: params.CodeValidation, Field: FieldVideo,
			Message: "video is required: the id of a completed video of yours, as video[id]."}
	}
	form, err = ContractFields(rest)
	if err != nil {
		return nil, "", err
	}
	return form, videoID, nil
}

func durations() []string {
	var out []string
	for _, d := range params.Durations() {
		out = append(out, openaimodels.Seconds(d))
	}
	return out
}

func quoted(vs []string) string {
	q := make([]string, len(vs))
	for i, v := range vs {
		q[i] = strconv.Quote(v)
	}
	return strings.Join(q, ", ")
}

// Param is the OpenAI field that stands for a contract field in an
// error's param: durationSeconds is seconds, aspectRatio and resolution
// are size, the image is input_reference, the task an extension
// continues (taskId) is video; others keep their name.
func Param(field string) string {
	switch field {
	case "taskId":
		return FieldVideo
	case "durationSeconds":
		return FieldSeconds
	case "aspectRatio", "resolution":
		return FieldSize
	case task.RoleImage:
		return FieldInputReference
	}
	return field
}

// ErrorBody is OpenAI's error envelope.
type ErrorBody struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail is the error inside the envelope. Param and Code are null
// when they do not apply.
type ErrorDetail struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
}

// NewError is the envelope of an error of the contract: its status picks
// the type (and the SDK's exception class), its code (the contract's,
// lower-cased: insufficient_credits, rate_limit_exceeded, ...) is the
// code, and its field, translated by Param, the param.
//
// Insufficient credits keep the contract's 402, type
// "insufficient_quota": OpenAI answers its own quota with a 429, which
// the SDKs retry, and a retry cannot make credits appear.
func NewError(status int, code, message, field string) ErrorBody {
	d := ErrorDetail{Message: message, Type: errorType(status)}
	if code != "" {
		c := strings.ToLower(code)
		d.Code = &c
	}
	if field != "" {
		p := Param(field)
		d.Param = &p
	}
	return ErrorBody{Error: d}
}

// errorType is OpenAI's error type for a status.
func errorType(status int) string {
	switch {
	case status == http.StatusUnauthorized:
		return "authentication_error"
	case status == http.StatusPaymentRequired:
		return "insufficient_quota"
	case status == http.StatusForbidden:
		return "permission_error"
	case status == http.StatusNotFound:
		return "not_found_error"
	case status == http.StatusConflict:
		return "conflict_error"
	case status == http.StatusTooManyRequests:
		return "rate_limit_error"
	case status >= 500:
		return "server_error"
	}
	return "invalid_request_error"
}
