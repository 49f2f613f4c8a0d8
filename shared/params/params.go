// Package params is the one validator of generation parameters. Both the
// JSON body of text-to-video and the multipart form fields of the image
// endpoints go through it, so a field means the same thing everywhere.
package params

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/genvideo/gen/shared/catalog"
	"github.com/genvideo/gen/shared/wire"
)

// Error codes a validation failure carries; they are the contract's 400 codes.
const (
	CodeValidation    = wire.CodeValidation
	CodeInvalidModel  = wire.CodeInvalidModel
	CodeInvalidPrompt = wire.CodeInvalidPrompt
)

// Bounds from the contract decisions.
const (
	MaxPromptChars         = 2000
	MaxNegativePromptChars = 1000
	MaxSampleCount         = 2
	MaxSeed                = 4294967295
	MaxWebhookURLChars     = 2048
	// MaxMaxCredits bounds maxCredits: far above any start's price.
	MaxMaxCredits = 1_000_000_000
	// DefaultDuration is durationSeconds when a request names none.
	DefaultDuration = 8
	// MaxReferenceImages is the most reference images a start brings.
	MaxReferenceImages = wire.MaxReferenceImages
)

// Parameters are the generation settings a task is made with, defaults
// filled in. They are echoed in the task's "parameters" object.
type Parameters struct {
	SampleCount     int    `json:"sampleCount"`
	DurationSeconds int    `json:"durationSeconds"`
	AspectRatio     string `json:"aspectRatio"`
	Resolution      string `json:"resolution"`
	GenerateAudio   bool   `json:"generateAudio"`
	EnhancePrompt   bool   `json:"enhancePrompt"`
	NegativePrompt  string `json:"negativePrompt,omitempty"`
	// Seed is nil on a backend that takes no seed (shared/provider/capability):
	// a task echoes only a seed its videos were made with.
	Seed             *int64 `json:"seed,omitempty"`
	PersonGeneration string `json:"personGeneration"`
}

// SeedValue is the seed, 0 when there is none.
func (p Parameters) SeedValue() int64 {
	if p.Seed == nil {
		return 0
	}
	return *p.Seed
}

// Request is a validated start request.
type Request struct {
	// Type is the task type: catalog.TextToVideo, ImageToVideo or FirstLastFrame.
	Type   string
	Prompt string
	Model  string
	Params Parameters
	// WebhookURL is where this task's events go besides the account's
	// endpoints (an extension of the contract); its address is checked
	// by the service, which knows the operator's setting.
	WebhookURL string
	// MaxCredits bounds what the start may be charged (an extension): a
	// start that costs more is refused before it is charged; 0 is no
	// bound.
	MaxCredits int
	// Sent holds the fields the client sent. The others hold the
	// contract's defaults, which the backend in use may replace by what
	// it accepts (shared/provider/capability).
	Sent map[string]bool
	// ReferenceUploads are the direct uploads a JSON text-to-video start
	// names as its reference images (referenceImages, an extension);
	// the HTTP layer turns them into the start's inputs.
	ReferenceUploads []string
	// References is how many reference images the start brings, from
	// its uploads or its form's files (set by the HTTP layer); a
	// text-to-video start with some is of mode catalog.ReferenceImages.
	References int
	// Extends is the video an extension continues (set by the service
	// from the task it names); nil for any other start.
	Extends *Source
}

// Source is the video an extension continues: what a capability table
// needs to know of it.
type Source struct {
	// TaskID is the completed task whose video it is.
	TaskID string
	// Route made it: only that route can extend it (task.Billing.Route).
	Route string
	// Seconds is its length, Resolution its resolution.
	Seconds    int
	Resolution string
	// Age is how long ago it was made.
	Age time.Duration
}

// Mode is the capability-table mode of the start: its type, or
// catalog.ReferenceImages for a text-to-video start with reference
// images.
func (r Request) Mode() string { return ModeOf(r.Type, r.References) }

// ModeOf is the mode of a start of type typ with refs reference images.
func ModeOf(typ string, refs int) string {
	if typ == catalog.TextToVideo && refs > 0 {
		return catalog.ReferenceImages
	}
	return typ
}

// Cost is the number of credits the request is charged at start.
func (r Request) Cost() int {
	m, _ := catalog.Lookup(r.Model)
	return m.PriceAt(r.Params.Resolution, r.Params.GenerateAudio) * r.Params.SampleCount
}

// Error is a validation failure: which field, the value given, and why.
type Error struct {
	Code    string
	Field   string
	Value   any
	Message string
}

func (e *Error) Error() string { return e.Message }

// Fields lists every parameter a start request may carry.
var Fields = []string{
	"prompt", "model", "sampleCount", "durationSeconds", "aspectRatio",
	"resolution", "generateAudio", "enhancePrompt", "negativePrompt", "seed",
	"personGeneration", "webhookUrl", "maxCredits", "referenceImages",
}

// fixedByExtension are the fields an extension does not take: its model
// and aspect ratio are those of the video it continues, and it makes one
// video (infra/docs/contract.md, "Reference images, extension and 4K").
var fixedByExtension = []string{"model", "aspectRatio", "sampleCount", "referenceImages"}

var (
	durations        = []int{4, 6, 8}
	aspectRatios     = []string{"16:9", "9:16"}
	personGeneration = []string{"allow_adult", "dont_allow", "allow_all"}
)

// Durations returns the allowed values of durationSeconds.
func Durations() []int { return append([]int(nil), durations...) }

// AspectRatios returns the allowed values of aspectRatio; the first is the
// default.
func AspectRatios() []string { return append([]string(nil), aspectRatios...) }

// PersonGenerations returns the allowed values of personGeneration; the
// first is the default.
func PersonGenerations() []string { return append([]string(nil), personGeneration...) }

// value is one raw field: exactly one of its forms is set. JSON fields keep
// their JSON type; form fields are strings that must parse.
type value interface {
	asString(field string) (string, *Error)
	asInt(field string) (int64, *Error)
	asBool(field string) (bool, *Error)
	// asStrings reads a list of strings: a JSON array; a form has none
	// (its repeated file field referenceImages is read as files).
	asStrings(field string) ([]string, *Error)
	raw() any
}

// validate turns raw fields into a Request. present holds only the fields
// the client sent (a JSON null counts as absent). model, when not "", is
// the start's model whatever the fields say (an extension's: its
// source's).
func validate(kind string, present map[string]value, model string) (Request, error) {
	if err := checkFields(kind, present); err != nil {
		return Request{}, err
	}

	r := Request{Type: kind}
	v, ok := present["prompt"]
	if !ok {
		return Request{}, &Error{Code: CodeInvalidPrompt, Field: "prompt", Message: "prompt is required"}
	}
	prompt, verr := v.asString("prompt")
	if verr != nil {
		verr.Code = CodeInvalidPrompt
		return Request{}, verr
	}
	if err := checkText("prompt", prompt, 1, MaxPromptChars, CodeInvalidPrompt); err != nil {
		return Request{}, err
	}
	r.Prompt = prompt

	r.Model = catalog.Default()
	if model != "" {
		r.Model = model
	} else if v, ok := present["model"]; ok {
		id, verr := v.asString("model")
		if verr != nil {
			verr.Code = CodeInvalidModel
			return Request{}, verr
		}
		r.Model = id
	}
	m, ok := catalog.Lookup(r.Model)
	if !ok {
		return Request{}, &Error{Code: CodeInvalidModel, Field: "model", Value: r.Model,
			Message: fmt.Sprintf("unknown model %q; available models are %s", r.Model, strings.Join(catalog.IDs(), ", "))}
	}
	if !m.Supports(kind) {
		return Request{}, &Error{Code: CodeInvalidModel, Field: "model", Value: r.Model,
			Message: fmt.Sprintf("model %q does not support %s", r.Model, kind)}
	}
	if v, ok := present["referenceImages"]; ok {
		ids, err := referenceUploads(kind, r.Model, m, v)
		if err != nil {
			return Request{}, err
		}
		r.ReferenceUploads, r.References = ids, len(ids)
	}

	p := Parameters{
		SampleCount:      1,
		DurationSeconds:  DefaultDuration,
		AspectRatio:      "16:9",
		Resolution:       m.DefaultResolution(),
		GenerateAudio:    m.Supports(catalog.AudioGeneration),
		EnhancePrompt:    true,
		PersonGeneration: "allow_adult",
	}
	if v, ok := present["sampleCount"]; ok {
		n, verr := v.asInt("sampleCount")
		if verr != nil {
			return Request{}, verr
		}
		if n < 1 || n > MaxSampleCount {
			return Request{}, &Error{Code: CodeValidation, Field: "sampleCount", Value: v.raw(),
				Message: fmt.Sprintf("sampleCount must be between 1 and %d", MaxSampleCount)}
		}
		p.SampleCount = int(n)
	}
	if v, ok := present["durationSeconds"]; ok {
		n, verr := v.asInt("durationSeconds")
		if verr != nil {
			return Request{}, verr
		}
		if !containsInt(durations, n) {
			return Request{}, &Error{Code: CodeValidation, Field: "durationSeconds", Value: v.raw(),
				Message: "durationSeconds must be 4, 6 or 8"}
		}
		p.DurationSeconds = int(n)
	}
	if err := oneOf(present, "aspectRatio", aspectRatios, &p.AspectRatio); err != nil {
		return Request{}, err
	}
	if err := oneOf(present, "resolution", m.Resolutions, &p.Resolution); err != nil {
		return Request{}, err
	}
	if err := oneOf(present, "personGeneration", personGeneration, &p.PersonGeneration); err != nil {
		return Request{}, err
	}
	for field, dst := range map[string]*bool{"generateAudio": &p.GenerateAudio, "enhancePrompt": &p.EnhancePrompt} {
		if v, ok := present[field]; ok {
			b, verr := v.asBool(field)
			if verr != nil {
				return Request{}, verr
			}
			*dst = b
		}
	}
	if p.GenerateAudio && !m.Supports(catalog.AudioGeneration) {
		// A model declared without audio (GEN_MODELS) is sold at its
		// silent price: a start may not ask it for audio.
		return Request{}, &Error{Code: CodeValidation, Field: "generateAudio", Value: true,
			Message: fmt.Sprintf("model %q makes no audio; generateAudio must be false", r.Model)}
	}
	if v, ok := present["negativePrompt"]; ok {
		s, verr := v.asString("negativePrompt")
		if verr != nil {
			return Request{}, verr
		}
		if err := checkText("negativePrompt", s, 0, MaxNegativePromptChars, CodeValidation); err != nil {
			return Request{}, err
		}
		p.NegativePrompt = s
	}
	if v, ok := present["seed"]; ok {
		n, verr := v.asInt("seed")
		if verr != nil {
			return Request{}, verr
		}
		if n < 0 || n > MaxSeed {
			return Request{}, &Error{Code: CodeValidation, Field: "seed", Value: v.raw(),
				Message: fmt.Sprintf("seed must be between 0 and %d", int64(MaxSeed))}
		}
		p.Seed = &n
	} else {
		seed := randomSeed()
		p.Seed = &seed
	}
	r.Params = p
	r.Sent = make(map[string]bool, len(present))
	for name := range present {
		r.Sent[name] = true
	}
	if v, ok := present["webhookUrl"]; ok {
		u, verr := v.asString("webhookUrl")
		if verr != nil {
			return Request{}, verr
		}
		if u == "" || utf8.RuneCountInString(u) > MaxWebhookURLChars {
			return Request{}, &Error{Code: CodeValidation, Field: "webhookUrl", Value: u,
				Message: fmt.Sprintf("webhookUrl must be an https URL of 1 to %d characters", MaxWebhookURLChars)}
		}
		r.WebhookURL = u
	}
	if v, ok := present["maxCredits"]; ok {
		n, verr := v.asInt("maxCredits")
		if verr != nil {
			return Request{}, verr
		}
		if n < 1 || n > MaxMaxCredits {
			return Request{}, &Error{Code: CodeValidation, Field: "maxCredits", Value: v.raw(),
				Message: fmt.Sprintf("maxCredits must be between 1 and %d", MaxMaxCredits)}
		}
		r.MaxCredits = int(n)
	}
	return r, nil
}

// referenceUploads reads referenceImages: on a JSON text-to-video start,
// one to MaxReferenceImages direct-upload ids of a model that takes
// reference images. Google takes reference images with a text prompt
// alone, never with a first frame, a last frame or a video to extend
// (shared/provider/veo/veomodels, [refs]), so no other start takes them.
func referenceUploads(kind, model string, m catalog.Model, v value) ([]string, error) {
	if kind != catalog.TextToVideo {
		return nil, &Error{Code: CodeValidation, Field: "referenceImages",
			Message: fmt.Sprintf("referenceImages is not taken by %s: reference images guide a video made from the prompt alone, never with a first or last frame or a video to extend; start text-to-video with them", kind)}
	}
	if !m.Supports(catalog.ReferenceImages) {
		return nil, &Error{Code: CodeValidation, Field: "referenceImages",
			Message: fmt.Sprintf("model %q takes no reference images", model)}
	}
	ids, verr := v.asStrings("referenceImages")
	if verr != nil {
		return nil, verr
	}
	if len(ids) < 1 || len(ids) > MaxReferenceImages {
		return nil, &Error{Code: CodeValidation, Field: "referenceImages", Value: v.raw(),
			Message: fmt.Sprintf("referenceImages must name 1 to %d uploads", MaxReferenceImages)}
	}
	for i, id := range ids {
		if id == "" || slices.Contains(ids[:i], id) {
			return nil, &Error{Code: CodeValidation, Field: "referenceImages", Value: v.raw(),
				Message: "referenceImages must name each upload once, by its uploadId"}
		}
	}
	return ids, nil
}

// TakeReferenceFiles records that a form's start brings n reference
// images as files (the repeated file field referenceImages): what
// referenceImages checks of upload ids, checked of files.
func TakeReferenceFiles(r *Request, n int) error {
	if n == 0 {
		return nil
	}
	m, _ := catalog.Lookup(r.Model)
	if _, err := referenceUploads(r.Type, r.Model, m, filesValue(n)); err != nil {
		return err
	}
	r.References = n
	return nil
}

// filesValue stands for n files in referenceUploads: n distinct names.
type filesValue int

func (v filesValue) raw() any { return int(v) }
func (v filesValue) asStrings(string) ([]string, *Error) {
	out := make([]string, int(v))
	for i := range out {
		out[i] = "file " + strconv.Itoa(i+1)
	}
	return out, nil
}
func (v filesValue) asString(f string) (string, *Error) {
	return "", &Error{Code: CodeValidation, Field: f}
}
func (v filesValue) asInt(f string) (int64, *Error) { return 0, &Error{Code: CodeValidation, Field: f} }
func (v filesValue) asBool(f string) (bool, *Error) {
	return false, &Error{Code: CodeValidation, Field: f}
}

// checkFields refuses a field unknown, or one a start of kind does not
// take, naming it; the first in name order.
func checkFields(kind string, present map[string]value) *Error {
	var names []string
	for name := range present {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if !known(name) {
			return &Error{Code: CodeValidation, Field: name,
				Message: fmt.Sprintf("unknown field %q; allowed fields are %s", name, strings.Join(Fields, ", "))}
		}
	}
	if kind == catalog.VideoExtension {
		for _, name := range fixedByExtension {
			if _, ok := present[name]; ok {
				return &Error{Code: CodeValidation, Field: name,
					Message: fmt.Sprintf("%s is not taken by an extension: it continues its task's video with that task's model and aspect ratio, as one video; leave %s out", name, name)}
			}
		}
	}
	return nil
}

func known(name string) bool {
	for _, f := range Fields {
		if f == name {
			return true
		}
	}
	return false
}

func oneOf(present map[string]value, field string, allowed []string, dst *string) error {
	v, ok := present[field]
	if !ok {
		return nil
	}
	s, verr := v.asString(field)
	if verr != nil {
		return verr
	}
	for _, a := range allowed {
		if s == a {
			*dst = s
			return nil
		}
	}
	quoted := make([]string, len(allowed))
	for i, a := range allowed {
		quoted[i] = fmt.Sprintf("%q", a)
	}
	return &Error{Code: CodeValidation, Field: field, Value: s,
		Message: fmt.Sprintf("%s must be one of %s", field, strings.Join(quoted, ", "))}
}

// checkText enforces the character rules shared by prompt and
// negativePrompt: valid UTF-8, no control characters but newline and tab,
// and a length in characters (not bytes) after trimming.
func checkText(field, s string, min, max int, code string) error {
	if !utf8.ValidString(s) {
		return &Error{Code: code, Field: field, Message: field + " is not valid UTF-8"}
	}
	for _, r := range s {
		if unicode.IsControl(r) && r != '\n' && r != '\t' {
			return &Error{Code: code, Field: field,
				Message: fmt.Sprintf("%s contains the control character %U; only newline and tab are allowed", field, r)}
		}
	}
	n := utf8.RuneCountInString(strings.TrimSpace(s))
	if n < min {
		return &Error{Code: code, Field: field, Message: field + " must not be empty"}
	}
	if n > max {
		return &Error{Code: code, Field: field,
			Message: fmt.Sprintf("%s is %d characters; the maximum is %d", field, n, max)}
	}
	return nil
}

func containsInt(list []int, n int64) bool {
	for _, v := range list {
		if int64(v) == n {
			return true
		}
	}
	return false
}

// randomSeed picks the seed of a request that names none, so that the task
// can echo it and the client can reproduce the video.
func randomSeed() int64 {
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(fmt.Sprintf("crypto/rand: %v", err))
	}
	return int64(binary.BigEndian.Uint32(b[:]))
}
