// Package capability is what a backend accepts for each of our models:
// durations, resolutions per duration, aspect ratios, samples per
// request, personGeneration per mode, and which parameters it takes at
// all. The contract's validator (shared/params) checks the contract's
// widest range; a Table narrows a valid start to what the configured
// backend can honour, before anything is charged, and fills the
// defaults the contract leaves to the backend (personGeneration,
// resolution). The same Table is what GET /api/gen/models shows, and,
// for Veo, what its fake refuses (shared/provider/veo).
package capability

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/genvideo/gen/shared/catalog"
	"github.com/genvideo/gen/shared/params"
)

// Limits are what a backend accepts for one of our models.
type Limits struct {
	// Modes are the task types (catalog.TextToVideo, ...) it makes.
	Modes []string
	// Durations are the values of durationSeconds it takes.
	Durations []int
	// ModeDurations narrows Durations for a mode that takes fewer of
	// them (the Gemini API's first and last frame: 8 seconds only); a
	// mode it does not name takes every one of Durations.
	ModeDurations map[string][]int
	// Resolutions are the resolutions it renders at each duration.
	Resolutions map[int][]string
	// AspectRatios are the values of aspectRatio it takes.
	AspectRatios []string
	// MaxSampleCount is the most videos one request makes.
	MaxSampleCount int
	// PersonGeneration are the values it takes per mode; the first is
	// the mode's default.
	PersonGeneration map[string][]string
	// Seed: it takes a seed. Without, none is sent, chosen or echoed.
	Seed bool
	// EnhancePromptOff: it can leave the prompt as it is
	// (enhancePrompt false); without, only true is taken.
	EnhancePromptOff bool
	// NegativePrompt: it takes a negative prompt.
	NegativePrompt bool
	// ModeResolutions narrows Resolutions for a mode that renders fewer
	// of them (an extension: 720p only); ModeAspectRatios narrows
	// AspectRatios likewise. A mode they do not name takes them all.
	ModeResolutions  map[string][]string
	ModeAspectRatios map[string][]string
	// MaxExtendSeconds is the longest video it extends (mode
	// catalog.VideoExtension): an extension adds about 7 seconds to it;
	// ExtendResolutions the resolutions of the videos it extends.
	MaxExtendSeconds  int
	ExtendResolutions []string
	// ExtendWithin, when set, is how long after a video was made the
	// route still extends it (the Gemini API keeps its videos 2 days).
	ExtendWithin time.Duration
	// Audio is whether its videos have audio: AudioOptional (the zero
	// value) as generateAudio asks, AudioAlways whatever is asked,
	// AudioNever never. Apply refuses what it cannot honour, so that no
	// start is charged the audio price for a silent video, or the silent
	// price for one with audio.
	Audio Audio
}

// Audio is a backend's rule for the audio of a model's videos.
type Audio string

// The audio rules. Names are what GET /api/gen/models shows.
const (
	AudioOptional Audio = ""
	AudioAlways   Audio = "always"
	AudioNever    Audio = "never"
)

// AudioChoices are the values of generateAudio the rule takes, the
// default (what a start that leaves it out gets) first.
func (a Audio) AudioChoices() []bool {
	switch a {
	case AudioAlways:
		return []bool{true}
	case AudioNever:
		return []bool{false}
	}
	return []bool{true, false}
}

// Table is a backend's Limits for each of our models.
type Table struct {
	// Backend names the backend in messages ("the Gemini API").
	Backend string
	// Name is the route name of a table of one backend: the name its
	// done jobs record (task.Billing.Route: vertex, gemini, openai,
	// builtin), which an extension of their videos must go back to.
	Name   string
	Models map[string]Limits
	// Routes, when set (Routed), are the routes of each model, whose
	// Models entry is their union: Apply takes what one route honours.
	Routes map[string][]RouteLimits
}

// Builtin is the built-in generator's table: the contract's whole range
// for each model of the catalog.
func Builtin() Table {
	t := Table{Backend: "the built-in generator", Name: "builtin", Models: map[string]Limits{}}
	for _, m := range catalog.All() {
		l := Limits{Durations: params.Durations(), Resolutions: map[int][]string{},
			AspectRatios: params.AspectRatios(), MaxSampleCount: params.MaxSampleCount,
			PersonGeneration: map[string][]string{}, Seed: true, EnhancePromptOff: true, NegativePrompt: true}
		// It renders the contract's modes; reference images and
		// extensions are Veo's alone.
		for _, c := range catalog.Modes {
			if !m.Supports(c) {
				continue
			}
			l.Modes = append(l.Modes, c)
			l.PersonGeneration[c] = params.PersonGenerations()
		}
		// It renders the contract's resolutions, not 4K.
		res := slices.DeleteFunc(slices.Clone(m.Resolutions), func(r string) bool { return r == catalog.Resolution4K })
		for _, d := range l.Durations {
			l.Resolutions[d] = res
		}
		t.Models[m.ID] = l
	}
	return t
}

// Apply narrows a request the contract's validator accepted to what the
// backend takes: a value the backend cannot honour is a
// *params.Error (VALIDATION_ERROR, or INVALID_MODEL for a mode) naming
// the field and what the backend accepts; a field the client did not
// send gets the backend's default for the mode and model (a request with
// no Sent, not made by the validator, counts as sending every field). It
// changes r only when it returns nil.
func (t Table) Apply(r *params.Request) error {
	sent := func(field string) bool { return r.Sent == nil || r.Sent[field] }
	if r.Extends != nil {
		return t.applyExtension(r)
	}
	if routes := t.Routes[r.Model]; len(routes) > 0 {
		return t.applyRouted(r, routes)
	}
	l, ok := t.Models[r.Model]
	if !ok {
		return &params.Error{Code: params.CodeInvalidModel, Field: "model", Value: r.Model,
			Message: fmt.Sprintf("model %q is not available on %s", r.Model, t.Backend)}
	}
	m, _ := catalog.Lookup(r.Model)
	p := r.Params
	mode := r.Mode()
	if !slices.Contains(l.Modes, mode) {
		if mode == catalog.ReferenceImages {
			return &params.Error{Code: params.CodeValidation, Field: "referenceImages",
				Message: fmt.Sprintf("reference images are not available for %s on %s; leave referenceImages out", r.Model, t.Backend)}
		}
		return &params.Error{Code: params.CodeInvalidModel, Field: "model", Value: r.Model,
			Message: fmt.Sprintf("model %q does not support %s on %s", r.Model, mode, t.Backend)}
	}
	if p.SampleCount > l.MaxSampleCount {
		return t.refuse("sampleCount", p.SampleCount, r.Model, "", ints(1, l.MaxSampleCount))
	}
	if ds := l.DurationsOf(mode); !slices.Contains(ds, p.DurationSeconds) {
		where := ""
		if _, narrowed := l.ModeDurations[mode]; narrowed {
			where = " for " + mode
		}
		return t.refuse("durationSeconds", p.DurationSeconds, r.Model, where, quoteInts(ds))
	}
	if as := l.AspectRatiosOf(mode); !slices.Contains(as, p.AspectRatio) {
		where := ""
		if _, narrowed := l.ModeAspectRatios[mode]; narrowed {
			where = " for " + mode
		}
		return t.refuse("aspectRatio", p.AspectRatio, r.Model, where, quote(as))
	}
	res := l.modeResolutions(m, mode, p.DurationSeconds)
	switch {
	case slices.Contains(res, p.Resolution):
	case !sent("resolution") && len(res) > 0:
		// The contract's default is not rendered at this duration here.
		p.Resolution = res[0]
	default:
		where := fmt.Sprintf(" at %d seconds", p.DurationSeconds)
		if _, narrowed := l.ModeResolutions[mode]; narrowed {
			where += " for " + mode
		}
		return t.refuse("resolution", p.Resolution, r.Model, where, quote(res))
	}
	persons := l.PersonGeneration[mode]
	switch {
	case !sent("personGeneration") && len(persons) > 0:
		p.PersonGeneration = persons[0]
	case slices.Contains(persons, p.PersonGeneration):
	default:
		return t.refuse("personGeneration", p.PersonGeneration, r.Model, " for "+mode, quote(persons))
	}
	if !l.Seed {
		if sent("seed") && p.Seed != nil {
			return &params.Error{Code: params.CodeValidation, Field: "seed", Value: p.SeedValue(),
				Message: fmt.Sprintf("seed is not available on %s, which takes no seed; leave it out", t.Backend)}
		}
		p.Seed = nil
	}
	if !l.EnhancePromptOff && !p.EnhancePrompt {
		return t.refuse("enhancePrompt", false, r.Model, "", "true")
	}
	audio := l.Audio.AudioChoices()
	switch {
	case !sent("generateAudio"):
		p.GenerateAudio = audio[0]
	case !slices.Contains(audio, p.GenerateAudio):
		return &params.Error{Code: params.CodeValidation, Field: "generateAudio", Value: p.GenerateAudio,
			Message: fmt.Sprintf("generateAudio %v is not available for %s on %s, whose videos %s audio; allowed: %v",
				p.GenerateAudio, r.Model, t.Backend, audioVerb(l.Audio), audio[0])}
	}
	if !l.NegativePrompt && p.NegativePrompt != "" {
		return &params.Error{Code: params.CodeValidation, Field: "negativePrompt",
			Message: fmt.Sprintf("negativePrompt is not available for %s on %s; leave it out", r.Model, t.Backend)}
	}
	r.Params = p
	return nil
}

// resolutions are what the model renders at d on the backend, in the
// catalog's order (its default first).
func (l Limits) resolutions(m catalog.Model, d int) []string {
	var out []string
	for _, r := range m.Resolutions {
		if slices.Contains(l.Resolutions[d], r) {
			out = append(out, r)
		}
	}
	return out
}

// modeResolutions are what the model renders at d in mode, in the
// catalog's order: resolutions, narrowed by ModeResolutions.
func (l Limits) modeResolutions(m catalog.Model, mode string, d int) []string {
	res := l.resolutions(m, d)
	if only, ok := l.ModeResolutions[mode]; ok {
		res = slices.DeleteFunc(res, func(r string) bool { return !slices.Contains(only, r) })
	}
	return res
}

// AspectRatiosOf is the aspect ratios a start of mode takes.
func (l Limits) AspectRatiosOf(mode string) []string {
	if as, ok := l.ModeAspectRatios[mode]; ok {
		return as
	}
	return l.AspectRatios
}

// DurationsOf is the durations a start of mode takes.
func (l Limits) DurationsOf(mode string) []int {
	if ds, ok := l.ModeDurations[mode]; ok {
		return ds
	}
	return l.Durations
}

// SampleCounts is the most samples a start may ask for: the backend's
// limit within the contract's.
func (l Limits) SampleCounts() int { return min(l.MaxSampleCount, params.MaxSampleCount) }

// ResolutionsOf is what model renders at each duration on the backend,
// within the catalog's resolutions of the model.
func (l Limits) ResolutionsOf(model string) map[int][]string {
	m, _ := catalog.Lookup(model)
	out := map[int][]string{}
	for _, d := range l.Durations {
		out[d] = l.resolutions(m, d)
	}
	return out
}

func audioVerb(a Audio) string {
	if a == AudioNever {
		return "never have"
	}
	return "always have"
}

func (t Table) refuse(field string, value any, model, where, allowed string) error {
	return &params.Error{Code: params.CodeValidation, Field: field, Value: value,
		Message: fmt.Sprintf("%s %v is not available for %s%s on %s; allowed: %s", field, value, model, where, t.Backend, allowed)}
}

func quote(list []string) string {
	if len(list) == 0 {
		return "none"
	}
	q := make([]string, len(list))
	for i, s := range list {
		q[i] = strconv.Quote(s)
	}
	return strings.Join(q, ", ")
}

func quoteInts(list []int) string {
	q := make([]string, len(list))
	for i, n := range list {
		q[i] = strconv.Itoa(n)
	}
	return strings.Join(q, ", ")
}

// ints spells the range lo..hi.
func ints(lo, hi int) string {
	if lo == hi {
		return strconv.Itoa(lo)
	}
	return fmt.Sprintf("%d to %d", lo, hi)
}
