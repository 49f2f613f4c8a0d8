package httpapi

import (
	"maps"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/genvideo/gen/shared/catalog"
	"github.com/genvideo/gen/shared/provider/capability"
	"github.com/genvideo/gen/shared/service"
	"github.com/genvideo/gen/shared/wire"
)

// limitsOf is model m's capability.Limits as a client reads them
// (wire.Limits): every list's first value is the default where the client
// leaves the field out.
func limitsOf(t capability.Table, m catalog.Model) *wire.Limits {
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
		l.MaxExtendSeconds, l.ExtendResolutions, l.ExtendWithin = 0, nil, 0
	}
	id := m.ID
	out := &wire.Limits{Backend: t.Backend, Modes: l.Modes, Durations: l.Durations, DurationsByMode: l.ModeDurations, Resolutions: map[string][]string{},
		AspectRatios: l.AspectRatios, MaxSampleCount: l.SampleCounts(), PersonGeneration: l.PersonGeneration,
		Seed: l.Seed, EnhancePrompt: []bool{true}, NegativePrompt: l.NegativePrompt, GenerateAudio: l.Audio.AudioChoices(),
		ResolutionsByMode: l.ModeResolutions, AspectRatiosByMode: l.ModeAspectRatios, MaxExtendSeconds: l.MaxExtendSeconds,
		ExtendResolutions: l.ExtendResolutions, ExtendWithinSeconds: int(l.ExtendWithin / time.Second)}
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

func (a *API) models(w http.ResponseWriter, r *http.Request, c *service.Caller) error {
	all, def := a.svc.Models()
	caps := a.svc.Capabilities()
	gone := a.svc.Unavailable(r.Context())
	resp := wire.ModelList{Success: true, DefaultModel: def}
	for _, m := range all {
		resp.Models = append(resp.Models, wire.Model{
			ID:           m.ID,
			Name:         m.Name,
			Description:  m.Description,
			Capabilities: m.Capabilities,
			Pricing:      wire.Pricing{CreditsPerVideo: m.CreditsPerVideo, CreditsPerVideoNoAudio: m.CreditsPerVideoNoAudio, ByResolution: resolutionPrices(m)},
			Available:    new(!gone[m.ID]),
			Limits:       limitsOf(caps, m),
		})
	}
	writeJSON(w, http.StatusOK, resp)
	return nil
}

// resolutionPrices is m's prices of the resolutions it prices apart.
func resolutionPrices(m catalog.Model) map[string]wire.ResolutionPrice {
	if len(m.ResolutionCredits) == 0 {
		return nil
	}
	out := make(map[string]wire.ResolutionPrice, len(m.ResolutionCredits))
	for res, c := range m.ResolutionCredits {
		out[res] = wire.ResolutionPrice{CreditsPerVideo: c.PerVideo, CreditsPerVideoNoAudio: c.PerVideoNoAudio}
	}
	return out
}
