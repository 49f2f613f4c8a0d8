package wire

import "time"

// Task is a task as GET /api/gen/status/{taskId} answers it: also the
// answer of a cancel, each event of the live stream and the data of each
// webhook event (without Videos there: their links expire).
type Task struct {
	Success bool   `json:"success"`
	TaskID  string `json:"taskId"`
	Status  Status `json:"status"`
	// Type is text-to-video, image-to-video or first-last-frame.
	Type       string     `json:"type"`
	Model      string     `json:"model"`
	Prompt     string     `json:"prompt"`
	Parameters Parameters `json:"parameters"`
	// CreditsCost is what the task was charged.
	CreditsCost int  `json:"creditsCost"`
	CreatedAt   Time `json:"createdAt"`
	// CompletedAt is set once the task is completed or failed;
	// ProcessingTime (whole seconds) once it completed.
	CompletedAt    Time `json:"completedAt,omitzero"`
	ProcessingTime *int `json:"processingTime,omitempty"`
	// Progress (an extension) is the percentage done the provider
	// reported while the task is processing, 0 when it reports none.
	Progress int `json:"progress,omitempty"`
	// Route and ProviderModel (extensions) name, once the task completed,
	// the provider route that made its videos and the provider's model
	// id. What that cost is the operator's alone.
	Route         string `json:"route,omitempty"`
	ProviderModel string `json:"providerModel,omitempty"`
	// Videos are the signed downloads of a completed task.
	Videos []Video  `json:"videos,omitzero"`
	Error  *Failure `json:"error,omitempty"`
	// CreditsRefunded is set for a failed task, and for a completed one
	// that refunded the samples it could not produce.
	CreditsRefunded *int   `json:"creditsRefunded,omitempty"`
	DownloadURL     string `json:"downloadUrl"`
	// RetryAfter is not in the body: the Go client sets it, for an
	// unfinished task, to the answer's Retry-After, the service's hint of
	// when to poll again.
	RetryAfter time.Duration `json:"-"`
}

// Refunded is CreditsRefunded, 0 when absent.
func (t *Task) Refunded() int { return deref(t.CreditsRefunded) }

// Parameters are the parameters a task runs with, defaults filled in.
type Parameters struct {
	SampleCount     int    `json:"sampleCount"`
	DurationSeconds int    `json:"durationSeconds"`
	AspectRatio     string `json:"aspectRatio"`
	Resolution      string `json:"resolution"`
	GenerateAudio   bool   `json:"generateAudio"`
	EnhancePrompt   bool   `json:"enhancePrompt"`
	NegativePrompt  string `json:"negativePrompt,omitempty"`
	// Seed is nil when the backend takes no seed (the Gemini API): a
	// task echoes only a seed its videos were made with.
	Seed             *int64 `json:"seed,omitempty"`
	PersonGeneration string `json:"personGeneration"`
}

// Failure says why a task failed.
type Failure struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Video is one signed download of a completed task.
type Video struct {
	// URL works until ExpiresAt; it needs no API key.
	URL       string `json:"url"`
	MimeType  string `json:"mimeType"`
	ExpiresAt Time   `json:"expiresAt"`
	// PosterURL (an extension) is its poster frame, a JPEG of the video's
	// size signed like URL; empty when the video has none.
	PosterURL string `json:"posterUrl,omitempty"`
}

// Download is the 200 of GET /api/gen/download/{taskId}.
type Download struct {
	Success     bool    `json:"success"`
	TaskID      string  `json:"taskId"`
	Videos      []Video `json:"videos"`
	TotalVideos int     `json:"totalVideos"`
}

func deref[T any](p *T) T {
	if p == nil {
		var zero T
		return zero
	}
	return *p
}
