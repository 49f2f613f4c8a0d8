package httpapi

import (
	"maps"
	"net/http"
	"slices"
	"strconv"

	"github.com/genvideo/gen/shared/catalog"
	"github.com/genvideo/gen/shared/provider/capability"
	"github.com/genvideo/gen/shared/service"
)

type modelsResponse struct {
	Success      bool    `json:"success"`
	Models       []model `json:"models"`
	DefaultModel string  `json:"defaultModel"`
}

type model struct {
	ModelID      string   `json:"modelId"`
	Name         string   `json:"name"`
	Description  string   `json:"description"`
	Capabilities []string `json:"capabilities"`
	Pricing      pricing  `json:"pricing"`
	// Available is an extension of the contract: false while none of
	// the model's provider routes serves it (its starts are refused
	// MODEL_UNAVAILABLE, before any charge).
	Available bool `json:"available"`
	// Limits is an extension of the contract: what the backend in use
	// accepts for the model (shared/provider/capability).
	Limits *limits `json:"limits,omitempty"`
}

// limits are a model's capability.Limits as a client reads them; every
// list's first value is the default where the client leaves the field
// out (personGeneration per mode, resolution per duration).
type limits struct {
	Backend   string   `json:"backend"`
	Modes     []string `json:"modes"`
	Durations []int    `json:"durations"`
	// DurationsByMode narrows durations for a mode that takes fewer
	// (an extension; absent where none does).
	DurationsByMode  map[string][]int    `json:"durationsByMode,omitempty"`
	Resolutions      map[string][]string `json:"resolutions"`
	AspectRatios     []string            `json:"aspectRatios"`
	MaxSampleCount   int                 `json:"maxSampleCount"`
	PersonGeneration map[string][]string `json:"personGeneration"`
	Seed             bool                `json:"seed"`
	EnhancePrompt    []bool              `json:"enhancePrompt"`
	NegativePrompt   bool                `json:"negativePrompt"`
	// GenerateAudio are the values generateAudio takes, its default
	// first: [true] where the videos always have audio, [false] where
	// they never do.
	GenerateAudio []bool `json:"generateAudio"`
	// ResolutionsByMode and AspectRatiosByMode narrow resolutions and
	// aspectRatios for a mode that takes fewer (extensions; absent where
	// none does); MaxExtendSeconds is the longest video the backend
	// extends (absent where it extends none).
	ResolutionsByMode  map[string][]string `json:"resolutionsByMode,omitempty"`
	AspectRatiosByMode map[string][]string `json:"aspectRatiosByMode,omitempty"`
	MaxExtendSeconds   int                 `json:"maxExtendSeconds,omitempty"`
	ExtendResolutions  []string            `json:"extendResolutions,omitempty"`
}

func limitsOf(t capability.Table, m catalog.Model) *limits {
	l, ok := t.Models[m.ID]
	if !ok {
		return nil
	}
	// A route may make modes the model does not offer (a host that
	// takes images, a text-only model on it): the model's own
	// capabilities bound what is shown, as they bound what starts.
	l.Modes = slices.DeleteFunc(slices.Clone(l.Modes), func(mode string) bool { return !m.Supports(mode) })
	l.PersonGeneration = maps.Clone(l.PersonGeneration)
	maps.DeleteFunc(l.PersonGeneration, func(mode string, _ []string) bool { return !m.Supports(mode) })
	l.ModeDurations = maps.Clone(l.ModeDurations)
	maps.DeleteFunc(l.ModeDurations, func(mode string, _ []int) bool { return !m.Supports(mode) })
	if len(l.ModeDurations) == 0 {
		l.ModeDurations = nil
	}
	l.ModeResolutions = supported(m, l.ModeResolutions)
	l.ModeAspectRatios = supported(m, l.ModeAspectRatios)
	if !m.Supports(catalog.VideoExtension) || !slices.Contains(l.Modes, catalog.VideoExtension) {
		l.MaxExtendSeconds, l.ExtendResolutions = 0, nil
	}
	id := m.ID
	out := &limits{Backend: t.Backend, Modes: l.Modes, Durations: l.Durations, DurationsByMode: l.ModeDurations, Resolutions: map[string][]string{},
		AspectRatios: l.AspectRatios, MaxSampleCount: l.SampleCounts(), PersonGeneration: l.PersonGeneration,
		Seed: l.Seed, EnhancePrompt: []bool{true}, NegativePrompt: l.NegativePrompt, GenerateAudio: l.Audio.AudioChoices(),
		ResolutionsByMode: l.ModeResolutions, AspectRatiosByMode: l.ModeAspectRatios, MaxExtendSeconds: l.MaxExtendSeconds,
		ExtendResolutions: l.ExtendResolutions}
	for d, res := range l.ResolutionsOf(id) {
		out.Resolutions[strconv.Itoa(d)] = res
	}
	if l.EnhancePromptOff {
		out.EnhancePrompt = append(out.EnhancePrompt, false)
	}
	return out
}

// supported is by, a narrowing per mode, for the modes m supports; nil
// when none is left.
func supported(m catalog.Model, by map[string][]string) map[string][]string {
	by = maps.Clone(by)
	maps.DeleteFunc(by, func(mode string, _ []string) bool { return !m.Supports(mode) })
	if len(by) == 0 {
		return nil
	}
	return by
}

type pricing struct {
	CreditsPerVideo        int `json:"creditsPerVideo"`
	CreditsPerVideoNoAudio int `json:"creditsPerVideoNoAudio"`
	// ByResolution prices a resolution dearer than the rest ("4k"), an
	// extension; absent where every resolution costs the same.
	ByResolution map[string]catalog.Credits `json:"byResolution,omitempty"`
}

func (a *API) models(w http.ResponseWriter, r *http.Request, c *service.Caller) error {
	all, def := a.svc.Models()
	caps := a.svc.Capabilities()
	gone := a.svc.Unavailable(r.Context())
	resp := modelsResponse{Success: true, DefaultModel: def}
	for _, m := range all {
		resp.Models = append(resp.Models, model{
			ModelID:      m.ID,
			Name:         m.Name,
			Description:  m.Description,
			Capabilities: m.Capabilities,
			Pricing:      pricing{CreditsPerVideo: m.CreditsPerVideo, CreditsPerVideoNoAudio: m.CreditsPerVideoNoAudio, ByResolution: m.ResolutionCredits},
			Available:    !gone[m.ID],
			Limits:       limitsOf(caps, m),
		})
	}
	writeJSON(w, http.StatusOK, resp)
	return nil
}
