// Package catalog is the one definition of the models the service offers:
// their ids, capabilities, resolutions and credit prices.
//
// The catalog is the process's: the contract's three models unless the
// operator declares others (GEN_MODELS, read by shared/settings), which
// the stack installs once at start-up, before it serves (Install). Like
// the environment it is read from, it does not change while the process
// serves, so every reader (the validator, GET /api/gen/models, quotes,
// the playground, the provider tables) reads the same models without
// being handed them.
package catalog

import (
	"maps"
	"slices"
	"sync/atomic"
)

// Capabilities a model may have. The first three are also the task types a
// start endpoint creates.
const (
	TextToVideo     = "text-to-video"
	ImageToVideo    = "image-to-video"
	FirstLastFrame  = "first-last-frame"
	AudioGeneration = "audio-generation"
)

// The extensions' capabilities (infra/docs/contract.md, "Reference
// images, extension and 4K"). ReferenceImages is a text-to-video start
// with up to three asset images the video keeps; it is a mode of the
// capability tables (its own durations, aspect ratios and
// personGeneration), never a task type. VideoExtension is both: the
// type of the task POST /api/gen/extend/{taskId} creates, and its mode.
const (
	ReferenceImages = "reference-images"
	VideoExtension  = "video-extension"
)

// Modes are the task types, in the contract's order.
var Modes = []string{TextToVideo, ImageToVideo, FirstLastFrame}

// TableModes are the modes a capability table may list for a model: the
// contract's task types, then the extensions'.
var TableModes = []string{TextToVideo, ImageToVideo, FirstLastFrame, ReferenceImages, VideoExtension}

// Resolution4K is the extension resolution "4k", dearer than the
// contract's two (Model.ResolutionCredits).
const Resolution4K = "4k"

// DefaultModel is the contract's default: the model a start naming none
// gets, unless the operator's catalog names another (Default).
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
	// ResolutionCredits prices a resolution that costs more than the
	// rest ("4k"): a video at it is charged these instead of
	// CreditsPerVideo and CreditsPerVideoNoAudio.
	ResolutionCredits map[string]Credits
	// Provider is what the operator declared of the provider model
	// behind a declared model, for a provider whose table gen does not
	// have (nil for the contract's models and for declared models routed
	// to a provider gen knows).
	Provider *ProviderModel
}

// Credits is the price of one video, with audio and without.
type Credits struct {
	PerVideo        int `json:"creditsPerVideo"`
	PerVideoNoAudio int `json:"creditsPerVideoNoAudio"`
}

// ProviderModel is an operator's statement of what the provider model
// behind one of our models accepts and costs, where gen has no table
// of its own: the start-up price check and the start's validation read
// it as they read gen's tables.
type ProviderModel struct {
	// Durations are the values of durationSeconds it takes.
	Durations []int
	// AspectRatios are the values of aspectRatio it takes.
	AspectRatios []string
	// Audio is its audio rule: "optional", "always" or "never".
	Audio string
	// Seed: it takes a seed.
	Seed bool
	// USDPerSecond is what a second of its video costs the operator.
	USDPerSecond float64
}

// Catalog is a set of models and the default one.
type Catalog struct {
	models       []Model
	defaultModel string
}

var builtin = []Model{
	{
		ID:                     "gen-3.1-generate-001",
		Name:                   "Gen 3.1 Quality",
		Description:            "Highest quality video generation with optional audio, up to 1080p.",
		Capabilities:           []string{TextToVideo, ImageToVideo, FirstLastFrame, AudioGeneration, ReferenceImages, VideoExtension},
		CreditsPerVideo:        500,
		CreditsPerVideoNoAudio: 250,
		Resolutions:            []string{"1080p", "720p", Resolution4K},
		// 4K costs Google half as much again as 1080p per second (Veo
		// 3.1: $0.60 against $0.40 with audio, $0.40 against $0.20
		// without on Vertex AI; shared/provider/veo/veomodels), and the
		// Gemini API bills audio always: 750 and 500 credits keep 4K's
		// margin at or above the other resolutions' at every credit
		// price the start-up check lets through (capability.CheckPrices).
		ResolutionCredits: map[string]Credits{Resolution4K: {PerVideo: 750, PerVideoNoAudio: 500}},
	},
	{
		ID:                     "gen-3.1-fast-generate-001",
		Name:                   "Gen 3.1 Fast",
		Description:            "Fast video generation with optional audio, up to 1080p.",
		Capabilities:           []string{TextToVideo, ImageToVideo, FirstLastFrame, AudioGeneration, ReferenceImages, VideoExtension},
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

// OmniFlashID is our model of Google's Gemini Omni Flash.
const OmniFlashID = "gen-omni-flash-001"

// OmniFlash is our model of Google's Gemini Omni Flash, offered by a
// stack with a route to it (shared/settings adds it to the catalog):
// its videos always have audio, so both prices are one, and 60 credits
// cover its dearest start, 8 s at 1080p ($0.84 by the table in
// shared/provider/omni/omnimodels), at the default $0.015 a credit.
// Below about $0.014 a credit the start-up price check stops the stack,
// naming it; GEN_MODELS may reprice it under its id.
func OmniFlash() Model {
	return Model{ID: OmniFlashID, Name: "Gen Omni Flash",
		Description:  "Google's Gemini Omni Flash: video with audio from text or an image, up to 1080p.",
		Capabilities: []string{TextToVideo, ImageToVideo, AudioGeneration}, CreditsPerVideo: 60, CreditsPerVideoNoAudio: 60,
		Resolutions: []string{"1080p", "720p"}}
}

// Builtin is the contract's catalog: its three models, DefaultModel
// the default.
func Builtin() *Catalog { return &Catalog{models: builtin, defaultModel: DefaultModel} }

// With is c with the models added: one whose id c has replaces it in
// its place, the others follow in their order. defaultModel, when not
// "", becomes the default. The caller (shared/settings) has checked
// each model.
func (c *Catalog) With(models []Model, defaultModel string) *Catalog {
	out := &Catalog{models: slices.Clone(c.models), defaultModel: c.defaultModel}
	for _, m := range models {
		if i := slices.IndexFunc(out.models, func(have Model) bool { return have.ID == m.ID }); i >= 0 {
			out.models[i] = m
		} else {
			out.models = append(out.models, m)
		}
	}
	if defaultModel != "" {
		out.defaultModel = defaultModel
	}
	return out
}

// All returns every model of c, in the order the models endpoint lists
// them. The slice is a copy: callers may not change the catalog.
func (c *Catalog) All() []Model {
	out := make([]Model, len(c.models))
	for i, m := range c.models {
		m.Capabilities = slices.Clone(m.Capabilities)
		m.Resolutions = slices.Clone(m.Resolutions)
		m.ResolutionCredits = maps.Clone(m.ResolutionCredits)
		if m.Provider != nil {
			p := *m.Provider
			p.Durations, p.AspectRatios = slices.Clone(p.Durations), slices.Clone(p.AspectRatios)
			m.Provider = &p
		}
		out[i] = m
	}
	return out
}

// Lookup returns c's model with the given id.
func (c *Catalog) Lookup(id string) (Model, bool) {
	i := slices.IndexFunc(c.models, func(m Model) bool { return m.ID == id })
	if i < 0 {
		return Model{}, false
	}
	return c.All()[i], true
}

// IDs returns the ids of c's models, for error messages that list them.
func (c *Catalog) IDs() []string {
	ids := make([]string, len(c.models))
	for i, m := range c.models {
		ids[i] = m.ID
	}
	return ids
}

// Default is the model a start naming none gets.
func (c *Catalog) Default() string { return c.defaultModel }

// installed is the process's catalog (Install).
var installed atomic.Pointer[Catalog]

func init() { installed.Store(Builtin()) }

// Install makes c the process's catalog, and answers what puts the
// previous one back (for a test). A stack calls it once, at start-up,
// before it serves.
func Install(c *Catalog) (restore func()) {
	old := installed.Swap(c)
	return func() { installed.Store(old) }
}

// Current is the process's catalog.
func Current() *Catalog { return installed.Load() }

// All returns every model of the process's catalog (Current().All()).
func All() []Model { return Current().All() }

// Lookup returns the process's model with the given id.
func Lookup(id string) (Model, bool) { return Current().Lookup(id) }

// IDs returns the ids of the process's models.
func IDs() []string { return Current().IDs() }

// Default is the process's default model.
func Default() string { return Current().Default() }

// Price is the cost in credits of one video from m at any resolution
// without a price of its own (ResolutionCredits).
func (m Model) Price(audio bool) int {
	if audio {
		return m.CreditsPerVideo
	}
	return m.CreditsPerVideoNoAudio
}

// PriceAt is the cost in credits of one video from m at resolution res.
func (m Model) PriceAt(res string, audio bool) int {
	c, ok := m.ResolutionCredits[res]
	switch {
	case !ok:
		return m.Price(audio)
	case audio:
		return c.PerVideo
	}
	return c.PerVideoNoAudio
}

// Supports reports whether m has the capability c.
func (m Model) Supports(c string) bool { return slices.Contains(m.Capabilities, c) }

// DefaultResolution is the resolution m renders when a request names none.
func (m Model) DefaultResolution() string { return m.Resolutions[0] }

// SupportsResolution reports whether m renders at r.
func (m Model) SupportsResolution(r string) bool { return slices.Contains(m.Resolutions, r) }
