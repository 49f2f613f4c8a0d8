package omni

import (
	"fmt"
	"net/http"
	"os"

	"github.com/genvideo/gen/shared/provider"
	"github.com/genvideo/gen/shared/provider/omni/omnimodels"
	"github.com/genvideo/gen/shared/task"
)

// Request is a create interaction's body, the fields Omni's video takes
// (omnimodels [sdk]).
type Request struct {
	Model string    `json:"model"`
	Input []Content `json:"input"`
	// Background: the interaction runs on after the answer, which
	// carries its id; without, the request would wait for the video.
	Background       bool             `json:"background"`
	GenerationConfig GenerationConfig `json:"generation_config"`
	ResponseFormat   ResponseFormat   `json:"response_format"`
}

// Content is one content block: text, an image or a video.
type Content struct {
	Type     string `json:"type"`
	Text     string `json:"text,omitempty"`
	Data     string `json:"data,omitempty"`
	URI      string `json:"uri,omitempty"`
	MimeType string `json:"mime_type,omitempty"`
}

// GenerationConfig holds the seed and the video's task.
type GenerationConfig struct {
	Seed        *int64      `json:"seed,omitempty"`
	VideoConfig VideoConfig `json:"video_config"`
}

// VideoConfig names the task, so that the model need not guess it from
// the input.
type VideoConfig struct {
	Task string `json:"task,omitempty"`
}

// ResponseFormat asks for a video of an aspect ratio, resolution and
// duration.
type ResponseFormat struct {
	Type        string `json:"type"`
	AspectRatio string `json:"aspect_ratio,omitempty"`
	Resolution  string `json:"resolution,omitempty"`
	Duration    string `json:"duration,omitempty"`
	Delivery    string `json:"delivery,omitempty"`
}

// NewRequest is the body of a submit of job to model.
func NewRequest(job provider.Job, model string) (Request, error) {
	t, ok := omnimodels.Task(job.Type)
	if !ok {
		return Request{}, fmt.Errorf("omni makes no %s", job.Type)
	}
	par := job.Params
	r := Request{Model: model, Input: []Content{{Type: "text", Text: job.Prompt}}, Background: true,
		GenerationConfig: GenerationConfig{Seed: par.Seed, VideoConfig: VideoConfig{Task: t}},
		ResponseFormat: ResponseFormat{Type: "video", AspectRatio: par.AspectRatio,
			Resolution: omnimodels.Resolution(par.Resolution), Duration: omnimodels.Duration(par.DurationSeconds)}}
	for role, path := range job.Images {
		if role != task.RoleImage && role != task.RoleFirstFrame {
			return Request{}, fmt.Errorf("input image of role %q: omni takes one starting image here", role)
		}
		img, err := image(path)
		if err != nil {
			return Request{}, err
		}
		r.Input = append(r.Input, img)
	}
	return r, nil
}

// image is an image content block of the file at path.
func image(path string) (Content, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Content{}, fmt.Errorf("read input image: %w", err)
	}
	mime := http.DetectContentType(b)
	if mime != "image/png" && mime != "image/jpeg" {
		return Content{}, fmt.Errorf("input image is %s, want image/png or image/jpeg", mime)
	}
	return Content{Type: "image", Data: encode(b), MimeType: mime}, nil
}

// Interaction is the API's Interaction, the fields read here.
type Interaction struct {
	ID     string     `json:"id"`
	Status string     `json:"status"`
	Steps  []Step     `json:"steps,omitempty"`
	Errors []JobError `json:"errors,omitempty"`
}

// Step is one step of an interaction: the user's input, or the model's
// output.
type Step struct {
	Type    string    `json:"type"`
	Content []Content `json:"content,omitempty"`
}

// JobError is one of an interaction's errors: its code is a URI naming
// the error type.
type JobError struct {
	Code    string `json:"code,omitempty"`
	Message string `json:"message,omitempty"`
}

// Video is the interaction's video: the last video of the model's
// output after the last user input, as Google's SDK reads output_video.
func (in Interaction) Video() (Content, bool) {
	for i := len(in.Steps) - 1; i >= 0; i-- {
		s := in.Steps[i]
		if s.Type == "user_input" {
			break
		}
		if s.Type != "model_output" {
			continue
		}
		for j := len(s.Content) - 1; j >= 0; j-- {
			if c := s.Content[j]; c.Type == "video" && (c.Data != "" || c.URI != "") {
				return c, true
			}
		}
	}
	return Content{}, false
}
