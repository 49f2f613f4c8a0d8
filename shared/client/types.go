package client

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Model ids.
const (
	ModelQuality = "gen-3.1-generate-001"
	ModelFast    = "gen-3.1-fast-generate-001"
	ModelLite    = "gen-3.1-lite-generate-001"
)

// Status is where a task is in its lifecycle.
type Status string

// The four statuses.
const (
	StatusPending    Status = "pending"
	StatusProcessing Status = "processing"
	StatusCompleted  Status = "completed"
	StatusFailed     Status = "failed"
)

// Terminal reports whether s never changes again: completed or failed.
func (s Status) Terminal() bool { return s == StatusCompleted || s == StatusFailed }

// Request is what a start call sends: a prompt and optional parameters.
// A zero field (a nil pointer) is left to the service's default.
type Request struct {
	Prompt string `json:"prompt"`
	// Model is ModelFast (the default), ModelQuality or ModelLite.
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
	// extension of the contract), signed with the account's secret
	// (WebhookSigningSecret).
	WebhookURL string `json:"webhookUrl,omitempty"`
	// MaxCredits bounds what the start may be charged (an extension): a
	// start that costs more is refused, an *Error with Code
	// CodeMaxCreditsExceeded, and nothing is charged; 0 is no bound.
	MaxCredits int `json:"maxCredits,omitempty"`
}

// formFields is r as the text fields of a multipart start.
func (r Request) formFields() [][2]string {
	f := [][2]string{{"prompt", r.Prompt}}
	add := func(name, v string) {
		if v != "" {
			f = append(f, [2]string{name, v})
		}
	}
	add("model", r.Model)
	if r.SampleCount != 0 {
		add("sampleCount", strconv.Itoa(r.SampleCount))
	}
	if r.DurationSeconds != 0 {
		add("durationSeconds", strconv.Itoa(r.DurationSeconds))
	}
	add("aspectRatio", r.AspectRatio)
	add("resolution", r.Resolution)
	if r.GenerateAudio != nil {
		add("generateAudio", strconv.FormatBool(*r.GenerateAudio))
	}
	if r.EnhancePrompt != nil {
		add("enhancePrompt", strconv.FormatBool(*r.EnhancePrompt))
	}
	add("negativePrompt", r.NegativePrompt)
	if r.Seed != nil {
		add("seed", strconv.FormatInt(*r.Seed, 10))
	}
	add("personGeneration", r.PersonGeneration)
	add("webhookUrl", r.WebhookURL)
	if r.MaxCredits != 0 {
		add("maxCredits", strconv.Itoa(r.MaxCredits))
	}
	return f
}

// ImageInfo describes an uploaded image as the service received it.
type ImageInfo struct {
	OriginalName string `json:"originalName"`
	Size         int64  `json:"size"`
	MimeType     string `json:"mimeType"`
}

// Started is the answer to a start call.
type Started struct {
	TaskID            string `json:"taskId"`
	Status            Status `json:"status"`
	Message           string `json:"message"`
	EstimatedWaitTime string `json:"estimatedWaitTime"`
	// CreditsUsed is what the start cost. Some deployments name it
	// creditsCost; both are read.
	CreditsUsed      int        `json:"creditsUsed"`
	RemainingCredits int64      `json:"remainingCredits"`
	StatusURL        string     `json:"statusUrl"`
	DownloadURL      string     `json:"downloadUrl"`
	ImageInfo        *ImageInfo `json:"imageInfo,omitempty"`
	FirstFrame       *ImageInfo `json:"firstFrame,omitempty"`
	LastFrame        *ImageInfo `json:"lastFrame,omitempty"`
	// IdempotencyKey is the key the start was sent with, if any: send the
	// same request with it again to get this answer again.
	IdempotencyKey string `json:"idempotencyKey,omitempty"`
}

// UnmarshalJSON reads the cost from creditsUsed or creditsCost.
func (s *Started) UnmarshalJSON(b []byte) error {
	type plain Started
	var v struct {
		plain
		CreditsCost *int `json:"creditsCost"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*s = Started(v.plain)
	if v.CreditsCost != nil && s.CreditsUsed == 0 {
		s.CreditsUsed = *v.CreditsCost
	}
	return nil
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

// Parameters are the parameters a task runs with, defaults filled in.
type Parameters struct {
	SampleCount     int    `json:"sampleCount"`
	DurationSeconds int    `json:"durationSeconds"`
	AspectRatio     string `json:"aspectRatio"`
	Resolution      string `json:"resolution,omitempty"`
	GenerateAudio   bool   `json:"generateAudio"`
	EnhancePrompt   bool   `json:"enhancePrompt"`
	NegativePrompt  string `json:"negativePrompt,omitempty"`
	// Seed is nil when the backend takes no seed (the Gemini API).
	Seed             *int64 `json:"seed,omitempty"`
	PersonGeneration string `json:"personGeneration"`
}

// Video is one signed download of a completed task.
type Video struct {
	// URL works until ExpiresAt; it needs no API key.
	URL       string    `json:"url"`
	MimeType  string    `json:"mimeType"`
	ExpiresAt time.Time `json:"expiresAt"`
	// PosterURL is its poster frame, a JPEG of the video's size, signed
	// like URL (an extension); empty when the video has none.
	PosterURL string `json:"posterUrl,omitempty"`
}

// Failure says why a task failed.
type Failure struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Task is a task as the status endpoint shows it.
type Task struct {
	TaskID     string     `json:"taskId"`
	Status     Status     `json:"status"`
	Type       string     `json:"type"`
	Model      string     `json:"model"`
	Prompt     string     `json:"prompt"`
	Parameters Parameters `json:"parameters"`
	// CreditsCost is what the task was charged (creditsUsed is read too).
	CreditsCost int       `json:"creditsCost"`
	CreatedAt   time.Time `json:"createdAt"`
	// CompletedAt, ProcessingTime (whole seconds) and Videos are set once
	// the task completed.
	CompletedAt    time.Time `json:"completedAt,omitzero"`
	ProcessingTime int       `json:"processingTime,omitempty"`
	Videos         []Video   `json:"videos,omitempty"`
	// Progress is the percentage done the provider reported while the
	// task is processing, 0 when it reports none (an extension).
	Progress int `json:"progress,omitempty"`
	// Route and ProviderModel name, once the task completed, the
	// provider route that made its videos and the provider's model id
	// (extensions; see infra/docs/providers.md, "Routes and failover").
	Route         string `json:"route,omitempty"`
	ProviderModel string `json:"providerModel,omitempty"`
	// Error and CreditsRefunded are set for a failed task; CreditsRefunded
	// also for one that completed with fewer videos than requested.
	Error           *Failure `json:"error,omitempty"`
	CreditsRefunded int      `json:"creditsRefunded,omitempty"`
	DownloadURL     string   `json:"downloadUrl"`
	// RetryAfter is the service's hint, for an unfinished task, of when to
	// poll again (its Retry-After header).
	RetryAfter time.Duration `json:"-"`
}

// UnmarshalJSON reads the cost from creditsCost or creditsUsed.
func (t *Task) UnmarshalJSON(b []byte) error {
	type plain Task
	var v struct {
		plain
		CreditsUsed *int `json:"creditsUsed"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*t = Task(v.plain)
	if v.CreditsUsed != nil && t.CreditsCost == 0 {
		t.CreditsCost = *v.CreditsUsed
	}
	return nil
}

// Download is the answer of the download endpoint.
type Download struct {
	TaskID      string  `json:"taskId"`
	Videos      []Video `json:"videos"`
	TotalVideos int     `json:"totalVideos"`
}

// HistoryQuery selects a page of the history. Zero fields take the
// service's defaults (20 newest tasks of any status).
type HistoryQuery struct {
	// Status keeps only tasks in this status.
	Status Status
	// Limit is the page size, 1..100.
	Limit int
	Skip  int
	// Cursor is a HistoryPage.NextCursor: the page starts right after
	// the page that returned it, at the cost of the first page however
	// deep it is. Skip counts from it.
	Cursor string
}

// HistoryItem is one task of the history.
type HistoryItem struct {
	TaskID string `json:"taskId"`
	Type   string `json:"type"`
	Model  string `json:"model"`
	Prompt string `json:"prompt"`
	Status Status `json:"status"`
	// CreditsCost is what the task was charged (creditsUsed is read too).
	CreditsCost    int       `json:"creditsCost"`
	CreatedAt      time.Time `json:"createdAt"`
	CompletedAt    time.Time `json:"completedAt,omitzero"`
	ProcessingTime int       `json:"processingTime,omitempty"`
	VideoCount     int       `json:"videoCount"`
	// APIKey is the name of the key that started the task.
	APIKey          string   `json:"apiKey"`
	HasImage        bool     `json:"hasImage"`
	Error           *Failure `json:"error,omitempty"`
	CreditsRefunded int      `json:"creditsRefunded,omitempty"`
}

// UnmarshalJSON reads the cost from creditsCost or creditsUsed.
func (h *HistoryItem) UnmarshalJSON(b []byte) error {
	type plain HistoryItem
	var v struct {
		plain
		CreditsUsed *int `json:"creditsUsed"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*h = HistoryItem(v.plain)
	if v.CreditsUsed != nil && h.CreditsCost == 0 {
		h.CreditsCost = *v.CreditsUsed
	}
	return nil
}

// HistoryPage is one page of the history, newest first.
type HistoryPage struct {
	Items []HistoryItem `json:"videos"`
	// Total counts every task that matches the query.
	Total   int  `json:"total"`
	Limit   int  `json:"limit"`
	Skip    int  `json:"skip"`
	HasMore bool `json:"hasMore"`
	// NextCursor gets the next page as HistoryQuery.Cursor; empty on the
	// last page.
	NextCursor string `json:"nextCursor,omitempty"`
}

// Pricing is a model's price in credits per video.
type Pricing struct {
	CreditsPerVideo        int `json:"creditsPerVideo"`
	CreditsPerVideoNoAudio int `json:"creditsPerVideoNoAudio"`
}

// Price is the credits of one video with or without audio.
func (p Pricing) Price(audio bool) int {
	if audio {
		return p.CreditsPerVideo
	}
	return p.CreditsPerVideoNoAudio
}

// Model is one model the service offers.
type Model struct {
	// ID is read from modelId or, in one variant of the answer, id.
	ID           string   `json:"modelId"`
	Name         string   `json:"name"`
	Description  string   `json:"description"`
	Capabilities []string `json:"capabilities"`
	Pricing      Pricing  `json:"pricing"`
	// Available is false while no provider serves the model: its starts
	// are refused CodeModelUnavailable, nothing charged (an extension of
	// the contract); nil from a service that does not say. Sells reads it.
	Available *bool `json:"available,omitempty"`
	// Limits are what the service's backend accepts for the model (an
	// extension of the contract); nil from a service that does not say.
	Limits *Limits `json:"limits,omitempty"`
}

// Sells reports whether the service sells m now: true unless it says
// no provider serves it (Available false).
func (m Model) Sells() bool { return m.Available == nil || *m.Available }

// Limits are what a backend accepts for a model. In each list the first
// value is the default of a field a start leaves out.
type Limits struct {
	Backend   string   `json:"backend"`
	Modes     []string `json:"modes"`
	Durations []int    `json:"durations"`
	// DurationsByMode narrows Durations for a mode that takes fewer,
	// keyed by mode; absent where none does.
	DurationsByMode map[string][]int `json:"durationsByMode,omitempty"`
	// Resolutions are keyed by durationSeconds ("4", "6", "8").
	Resolutions    map[string][]string `json:"resolutions"`
	AspectRatios   []string            `json:"aspectRatios"`
	MaxSampleCount int                 `json:"maxSampleCount"`
	// PersonGeneration is keyed by mode ("text-to-video", ...).
	PersonGeneration map[string][]string `json:"personGeneration"`
	// Seed tells whether a seed is taken (the Gemini API takes none).
	Seed           bool   `json:"seed"`
	EnhancePrompt  []bool `json:"enhancePrompt"`
	NegativePrompt bool   `json:"negativePrompt"`
}

// UnmarshalJSON reads the id from modelId or id.
func (m *Model) UnmarshalJSON(b []byte) error {
	type plain Model
	var v struct {
		plain
		ID string `json:"id"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*m = Model(v.plain)
	if m.ID == "" {
		m.ID = v.ID
	}
	if m.ID == "" {
		return fmt.Errorf("model %q has neither modelId nor id", m.Name)
	}
	return nil
}

// Supports reports whether m has a capability ("text-to-video",
// "image-to-video", "first-last-frame", "audio-generation").
func (m Model) Supports(capability string) bool {
	for _, c := range m.Capabilities {
		if c == capability {
			return true
		}
	}
	return false
}

// ModelList is the answer of the models endpoint.
type ModelList struct {
	// Models has one entry per id. One variant of the answer lists a
	// model twice with differing descriptions and capabilities: the
	// entries are merged (the first description, every capability).
	Models []Model `json:"models"`
	// DefaultModel is the model a request that names none gets.
	DefaultModel string `json:"defaultModel,omitempty"`
}

// Find returns the model with the given id.
func (l *ModelList) Find(id string) (Model, bool) {
	for _, m := range l.Models {
		if m.ID == id {
			return m, true
		}
	}
	return Model{}, false
}

// merge folds entries with the same id into the first of them.
func merge(models []Model) []Model {
	var out []Model
	at := map[string]int{}
	for _, m := range models {
		i, seen := at[m.ID]
		if !seen {
			at[m.ID] = len(out)
			m.Capabilities = append([]string(nil), m.Capabilities...)
			out = append(out, m)
			continue
		}
		first := &out[i]
		if first.Name == "" {
			first.Name = m.Name
		}
		if first.Description == "" {
			first.Description = m.Description
		}
		if first.Pricing == (Pricing{}) {
			first.Pricing = m.Pricing
		}
		for _, c := range m.Capabilities {
			if !first.Supports(c) {
				first.Capabilities = append(first.Capabilities, c)
			}
		}
	}
	return out
}
