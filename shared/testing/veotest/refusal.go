package veotest

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	"github.com/genvideo/gen/shared/catalog"
	"github.com/genvideo/gen/shared/provider/veo/veomodels"
	"github.com/genvideo/gen/shared/settings"
)

// Refusal is the HTTP status and google.rpc.Status message with which
// api ("vertex" or "gemini") refuses a predictLongRunning of model with
// this instance and these parameters, or 0 when it accepts it. The rules
// are veo's capability tables, each cited there; a parameter left out
// takes Google's default. project and location name a Vertex model in
// its 404.
func Refusal(api, project, location, model string, instance, parameters json.RawMessage) (int, string) {
	m, ok, retired := veomodels.Lookup(api, model)
	if !ok {
		return notFound(api, project, location, model, retired)
	}
	var in struct {
		Image, LastFrame, Video json.RawMessage
		ReferenceImages         []struct {
			Image         json.RawMessage
			ReferenceType string
		}
	}
	var p struct {
		SampleCount      *int
		DurationSeconds  *int
		AspectRatio      *string
		Resolution       *string
		PersonGeneration *string
		Seed             *json.Number
		GenerateAudio    *bool
		EnhancePrompt    *bool
		NegativePrompt   *string
	}
	if json.Unmarshal(instance, &in) != nil || json.Unmarshal(parameters, &p) != nil {
		return 400, "Invalid JSON payload received."
	}
	mode := catalog.TextToVideo
	switch {
	case in.LastFrame != nil && in.Image == nil:
		return 400, "lastFrame needs image: a last frame is only supported with a first frame."
	case in.ReferenceImages != nil && (in.Image != nil || in.LastFrame != nil || in.Video != nil):
		// "The image, video, or last_frame field are not supported" with
		// reference images (google.golang.org/genai's
		// GenerateVideosConfig.ReferenceImages, as its Java twin documents
		// it: https://googleapis.github.io/java-genai/javadoc/google-genai/com.google.genai.types/-generate-videos-config/reference-images.html,
		// read 2026-11-28). Google's own message is not known first-hand.
		return 400, "referenceImages is not supported with image, lastFrame or video."
	case in.Video != nil && (in.Image != nil || in.LastFrame != nil):
		return 400, "video is not supported with image or lastFrame."
	case in.ReferenceImages != nil:
		mode = catalog.ReferenceImages
		if n := len(in.ReferenceImages); n < 1 || n > 3 {
			return 400, fmt.Sprintf("referenceImages takes 1 to 3 images, got %d.", n)
		}
		for _, r := range in.ReferenceImages {
			// Veo 3.1 takes asset images, no style image (veomodels
			// [vertex-card], [gemini-params]).
			if r.ReferenceType != "asset" || r.Image == nil {
				return 400, fmt.Sprintf("referenceType %q is not supported by %s; use asset.", r.ReferenceType, model)
			}
		}
	case in.Video != nil:
		mode = catalog.VideoExtension
	case in.LastFrame != nil:
		mode = catalog.FirstLastFrame
	case in.Image != nil:
		mode = catalog.ImageToVideo
	}
	l := m.Limits
	if !slices.Contains(l.Modes, mode) {
		return 400, fmt.Sprintf("%s is not supported by %s.", mode, model)
	}
	samples, duration, aspect, res := 1, 8, "16:9", "720p" // Google's defaults
	person := ""
	if ps := l.PersonGeneration[mode]; len(ps) > 0 {
		person = ps[0]
	}
	for _, v := range []struct {
		dst *int
		src *int
	}{{&samples, p.SampleCount}, {&duration, p.DurationSeconds}} {
		if v.src != nil {
			*v.dst = *v.src
		}
	}
	for _, v := range []struct {
		dst *string
		src *string
	}{{&aspect, p.AspectRatio}, {&res, p.Resolution}, {&person, p.PersonGeneration}} {
		if v.src != nil {
			*v.dst = *v.src
		}
	}
	switch {
	case samples < 1 || samples > l.MaxSampleCount:
		return 400, fmt.Sprintf("sampleCount must be between 1 and %d for %s, got %d.", l.MaxSampleCount, model, samples)
	case !slices.Contains(l.Durations, duration):
		return 400, fmt.Sprintf("durationSeconds %d is not supported; supported durations are %v.", duration, l.Durations)
	case !slices.Contains(l.DurationsOf(mode), duration):
		// veomodels [gemini-interp]: "Must be 8 when using extension or
		// interpolation".
		return 400, fmt.Sprintf("durationSeconds %d is not supported for %s; it must be %v.", duration, mode, l.DurationsOf(mode))
	case !slices.Contains(l.AspectRatiosOf(mode), aspect):
		return 400, fmt.Sprintf("aspectRatio %s is not supported for %s.", aspect, mode)
	case !slices.Contains(l.Resolutions[duration], res):
		// 4k and 1080p at 8 seconds only, 4k not on Lite (veomodels
		// [gemini-params], [vertex-card]).
		return 400, fmt.Sprintf("resolution %s is not supported for %s second videos.", res, strconv.Itoa(duration))
	case l.ModeResolutions[mode] != nil && !slices.Contains(l.ModeResolutions[mode], res):
		// "720p" only for extension (veomodels [gemini-params]).
		return 400, fmt.Sprintf("resolution %s is not supported for %s.", res, mode)
	case !slices.Contains(l.PersonGeneration[mode], person):
		// The Gemini API's own words (discuss.ai.google.dev thread 181139).
		return 400, fmt.Sprintf("%s for personGeneration is currently not supported.", person)
	case p.Seed != nil && !l.Seed:
		return 400, "seed isn't supported by this model."
	case p.GenerateAudio != nil && api == settings.GeneratorGemini:
		return 400, "generateAudio isn't supported by this model."
	case p.EnhancePrompt != nil && !*p.EnhancePrompt && !l.EnhancePromptOff:
		return 400, "enhancePrompt false isn't supported by this model."
	case p.NegativePrompt != nil && !l.NegativePrompt:
		return 400, "negativePrompt isn't supported by this model."
	}
	return 0, ""
}

// notFound is the 404 of a model the API does not serve, in each API's
// words; a retired Gemini model says so.
func notFound(api, project, location, model string, retired bool) (int, string) {
	switch {
	case api == settings.GeneratorVertex:
		return 404, fmt.Sprintf("Publisher Model `projects/%s/locations/%s/publishers/google/models/%s` was not found or your project does not have access to it.",
			project, location, model)
	case retired:
		return 404, fmt.Sprintf("models/%s is no longer available. Please switch to a supported model.", model)
	}
	return 404, fmt.Sprintf("models/%s is not found for API version v1beta, or is not supported for predictLongRunning. Call ListModels to see the list of available models and their supported methods.", model)
}
