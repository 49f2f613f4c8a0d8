// Package catalog is the one definition of the models the service offers:
// their ids, capabilities, resolutions and credit prices.
package catalog

// Capabilities a model may have. The first three are also the task types a
// start endpoint creates.
const (
	TextToVideo     = "text-to-video"
	ImageToVideo    = "image-to-video"
	FirstLastFrame  = "first-last-frame"
	AudioGeneration = "audio-generation"
)

// DefaultModel is used when a start request names no model.
const DefaultModel = "gen-3.1-fast-generate-001"

// Model is one entry of the catalog.
type Model struct {
	ID           string
	Name         string
	Description  string
	Capabilities []string
	// CreditsPerVideo is the price of one video with audio,
	// CreditsPerVideoNoAudio the price without.
	CreditsPerVideo        int
	CreditsPerVideoNoAudio int
	// Resolutions lists what the model renders; the first is its default.
	Resolutions []string
}

var models = []Model{
	{
		ID:                     "gen-3.1-generate-001",
		Name:                   "Gen 3.1 Quality",
		Description:            "Highest quality video generation with optional audio, up to 1080p.",
		Capabilities:           []string{TextToVideo, ImageToVideo, FirstLastFrame, AudioGeneration},
		CreditsPerVideo:        500,
		CreditsPerVideoNoAudio: 250,
		Resolutions:            []string{"1080p", "720p"},
	},
	{
		ID:                     "gen-3.1-fast-generate-001",
		Name:                   "Gen 3.1 Fast",
		Description:            "Fast video generation with optional audio, up to 1080p.",
		Capabilities:           []string{TextToVideo, ImageToVideo, FirstLastFrame, AudioGeneration},
		CreditsPerVideo:        190,
		CreditsPerVideoNoAudio: 120,
		Resolutions:            []string{"1080p", "720p"},
	},
	{
		ID:                     "gen-3.1-lite-generate-001",
		Name:                   "Gen 3.1 Lite (720p)",
		Description:            "Low-cost 720p video generation with optional audio.",
		Capabilities:           []string{TextToVideo, ImageToVideo, AudioGeneration},
		CreditsPerVideo:        65,
		CreditsPerVideoNoAudio: 35,
		Resolutions:            []string{"720p"},
	},
}

// All returns every model, in the order the models endpoint lists them.
// The slice is a copy: callers may not change the catalog.
func All() []Model {
	out := make([]Model, len(models))
	for i, m := range models {
		m.Capabilities = append([]string(nil), m.Capabilities...)
		m.Resolutions = append([]string(nil), m.Resolutions...)
		out[i] = m
	}
	return out
}

// Lookup returns the model with the given id.
func Lookup(id string) (Model, bool) {
	for _, m := range All() {
		if m.ID == id {
			return m, true
		}
	}
	return Model{}, false
}

// IDs returns the ids of every model, for error messages that list them.
func IDs() []string {
	ids := make([]string, len(models))
	for i, m := range models {
		ids[i] = m.ID
	}
	return ids
}

// Price is the cost in credits of one video from m.
func (m Model) Price(audio bool) int {
	if audio {
		return m.CreditsPerVideo
	}
	return m.CreditsPerVideoNoAudio
}

// Supports reports whether m has the capability c.
func (m Model) Supports(c string) bool {
	for _, have := range m.Capabilities {
		if have == c {
			return true
		}
	}
	return false
}

// DefaultResolution is the resolution m renders when a request names none.
func (m Model) DefaultResolution() string { return m.Resolutions[0] }

// SupportsResolution reports whether m renders at r.
func (m Model) SupportsResolution(r string) bool {
	for _, have := range m.Resolutions {
		if have == r {
			return true
		}
	}
	return false
}
