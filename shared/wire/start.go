package wire

import (
	"strconv"
	"strings"
	"time"
)

// ExtendRequest is the JSON body of POST /api/gen/extend/{taskId} (an
// extension): a text-to-video body without model, sampleCount,
// aspectRatio and referenceImages, which the extended task decides.
type ExtendRequest struct {
	Prompt           string `json:"prompt"`
	DurationSeconds  int    `json:"durationSeconds,omitempty"`
	Resolution       string `json:"resolution,omitempty"`
	GenerateAudio    *bool  `json:"generateAudio,omitempty"`
	EnhancePrompt    *bool  `json:"enhancePrompt,omitempty"`
	NegativePrompt   string `json:"negativePrompt,omitempty"`
	Seed             *int64 `json:"seed,omitempty"`
	PersonGeneration string `json:"personGeneration,omitempty"`
	WebhookURL       string `json:"webhookUrl,omitempty"`
	MaxCredits       int    `json:"maxCredits,omitempty"`
}

// StartRequest is the body of POST /api/gen/text-to-video, and the text
// fields of the multipart image starts: a prompt and optional parameters.
// A zero field (a nil pointer) is left to the service's default. The
// service reads it field by field (shared/params), refusing what this
// type would let through silently (a member given twice, null, a name in
// another case).
type StartRequest struct {
	Prompt string `json:"prompt"`
	// Model is gen-3.1-fast-generate-001 (the default),
	// gen-3.1-generate-001 or gen-3.1-lite-generate-001.
	Model string `json:"model,omitempty"`
	// SampleCount is the number of videos, 1 (default) or 2.
	SampleCount int `json:"sampleCount,omitempty"`
	// DurationSeconds is 4, 6 or 8 (default).
	DurationSeconds int `json:"durationSeconds,omitempty"`
	// AspectRatio is "16:9" (default) or "9:16".
	AspectRatio string `json:"aspectRatio,omitempty"`
	// Resolution is "720p" or "1080p" (default, but Lite renders only 720p).
	Resolution string `json:"resolution,omitempty"`
	// GenerateAudio selects the price tier (default true).
	GenerateAudio *bool `json:"generateAudio,omitempty"`
	// EnhancePrompt switches prompt enhancement (default true).
	EnhancePrompt  *bool  `json:"enhancePrompt,omitempty"`
	NegativePrompt string `json:"negativePrompt,omitempty"`
	// Seed makes a generation reproducible, 0..4294967295 (default random).
	Seed *int64 `json:"seed,omitempty"`
	// PersonGeneration is "allow_adult", "dont_allow" or "allow_all", where
	// the backend accepts it (GET /api/gen/models lists what it does; the
	// default is what it accepts for the mode).
	PersonGeneration string `json:"personGeneration,omitempty"`
	// WebhookURL also sends this task's events to an https URL (an
	// extension of the contract), signed with the account's secret.
	WebhookURL string `json:"webhookUrl,omitempty"`
	// MaxCredits bounds what the start may be charged (an extension): a
	// start that costs more is refused 402 MAX_CREDITS_EXCEEDED, and
	// nothing is charged; 0 is no bound.
	MaxCredits int `json:"maxCredits,omitempty"`
	// ReferenceImages are up to three direct uploads' ids (POST
	// /api/gen/uploads) whose images the video keeps (an extension,
	// where the backend offers it; infra/docs/contract.md).
	ReferenceImages []string `json:"referenceImages,omitempty"`
}

// Started is the 202 of every start endpoint. image-to-video adds
// ImageInfo; first-last-frame adds FirstFrame and LastFrame, one per
// uploaded frame. The cost is creditsUsed in every start answer of this
// service (some deployments of the contract name it creditsCost; the Go
// client reads either).
type Started struct {
	Success           bool   `json:"success"`
	Message           string `json:"message"`
	TaskID            string `json:"taskId"`
	Status            Status `json:"status"`
	EstimatedWaitTime string `json:"estimatedWaitTime"`
	// CreditsUsed is what the start cost.
	CreditsUsed      int        `json:"creditsUsed"`
	RemainingCredits int64      `json:"remainingCredits"`
	StatusURL        string     `json:"statusUrl"`
	DownloadURL      string     `json:"downloadUrl"`
	ImageInfo        *ImageInfo `json:"imageInfo,omitempty"`
	FirstFrame       *ImageInfo `json:"firstFrame,omitempty"`
	LastFrame        *ImageInfo `json:"lastFrame,omitempty"`
	// ReferenceImages describe a text-to-video start's reference images,
	// in their order (an extension); ExtendsTaskID names the task an
	// extension continues.
	ReferenceImages []ImageInfo `json:"referenceImages,omitempty"`
	ExtendsTaskID   string      `json:"extendsTaskId,omitempty"`
	// IdempotencyKey is not in the body: the Go client sets it to the
	// Idempotency-Key the start was sent with, if any; the same request
	// sent with it again gets this answer again.
	IdempotencyKey string `json:"-"`
}

// EstimatedWait parses EstimatedWaitTime ("<min>-<max> seconds").
func (s *Started) EstimatedWait() (lo, hi time.Duration, ok bool) {
	r, ok := strings.CutSuffix(strings.TrimSpace(s.EstimatedWaitTime), " seconds")
	if !ok {
		return 0, 0, false
	}
	a, b, ok := strings.Cut(r, "-")
	if !ok {
		return 0, 0, false
	}
	x, err1 := strconv.Atoi(strings.TrimSpace(a))
	y, err2 := strconv.Atoi(strings.TrimSpace(b))
	if err1 != nil || err2 != nil || x < 0 || y < x {
		return 0, 0, false
	}
	return time.Duration(x) * time.Second, time.Duration(y) * time.Second, true
}

// ImageInfo describes an uploaded image: its name as the client sent it,
// its size in bytes and its type as detected from its bytes.
type ImageInfo struct {
	OriginalName string `json:"originalName"`
	Size         int64  `json:"size"`
	MimeType     string `json:"mimeType"`
}
