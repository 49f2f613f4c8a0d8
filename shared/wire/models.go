package wire

import "slices"

// ModelList is the 200 of GET /api/gen/models.
type ModelList struct {
	Success bool    `json:"success"`
	Models  []Model `json:"models"`
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

// Model is one model the service offers.
type Model struct {
	// ID is the model id (some deployments of the contract name it id;
	// the Go client reads either).
	ID           string   `json:"modelId"`
	Name         string   `json:"name"`
	Description  string   `json:"description"`
	Capabilities []string `json:"capabilities"`
	Pricing      Pricing  `json:"pricing"`
	// Available (an extension) is false while none of the model's
	// provider routes serves it: its starts are refused
	// MODEL_UNAVAILABLE before any charge. This service always sends it;
	// nil from one that does not say. Sells reads it.
	Available *bool `json:"available,omitempty"`
	// Limits (an extension) are what the backend in use accepts for the
	// model; nil from a service that does not say.
	Limits *Limits `json:"limits,omitempty"`
}

// Sells reports whether the service sells m now: true unless it says no
// provider serves it (Available false).
func (m Model) Sells() bool { return m.Available == nil || *m.Available }

// Supports reports whether m has a capability ("text-to-video",
// "image-to-video", "first-last-frame", "audio-generation").
func (m Model) Supports(capability string) bool { return slices.Contains(m.Capabilities, capability) }

// Pricing is a model's price in credits per video.
type Pricing struct {
	CreditsPerVideo        int `json:"creditsPerVideo"`
	CreditsPerVideoNoAudio int `json:"creditsPerVideoNoAudio"`
	// ByResolution prices a resolution dearer than the rest ("4k"), an
	// extension; absent where every resolution costs the same.
	ByResolution map[string]ResolutionPrice `json:"byResolution,omitempty"`
}

// ResolutionPrice is the credits of one video at a resolution priced
// apart, with and without audio.
type ResolutionPrice struct {
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

// Limits are what a backend accepts for a model. In each list the first
// value is the default of a field a start leaves out (personGeneration
// per mode, resolution per duration).
type Limits struct {
	// Backend is the backend in use, in words.
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
	// GenerateAudio are the values generateAudio takes, its default
	// first: [true] where the videos always have audio, [false] where
	// they never do.
	GenerateAudio []bool `json:"generateAudio"`
	// ResolutionsByMode and AspectRatiosByMode narrow Resolutions and
	// AspectRatios for a mode that takes fewer (extensions; absent where
	// none does); MaxExtendSeconds is the longest video the backend
	// extends, ExtendResolutions what it extends, and
	// ExtendWithinSeconds how long after its task completed a video may
	// still be extended (the Gemini API keeps a video two days; absent
	// where it extends none, or has no such limit).
	ResolutionsByMode   map[string][]string `json:"resolutionsByMode,omitempty"`
	AspectRatiosByMode  map[string][]string `json:"aspectRatiosByMode,omitempty"`
	MaxExtendSeconds    int                 `json:"maxExtendSeconds,omitempty"`
	ExtendResolutions   []string            `json:"extendResolutions,omitempty"`
	ExtendWithinSeconds int                 `json:"extendWithinSeconds,omitempty"`
}
