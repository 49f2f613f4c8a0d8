// Package veomodels is what Google documents of its Veo models on each
// API, as data: what a request may carry, which models exist and which
// were retired, and what a second of video costs. The service validates
// starts with it (Capabilities, through shared/provider/tables), the
// adapter (shared/provider/veo) sends only what it allows,
// and the fake (veotest) refuses what it refuses. It links no Google
// client, so that the API's functions can read it.
package veomodels

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/genvideo/gen/shared/catalog"
	"github.com/genvideo/gen/shared/provider/capability"
	"github.com/genvideo/gen/shared/settings"
)

// Every rule names its source and the day it was read; when Google's
// documents change, this file changes, and the tests of the service, of
// the fake and of the margins follow.
//
// Sources, read 2026-11-26 (stored copies; the live pages could not be
// fetched from the build machine):
//
//	[vertex-ref]   https://cloud.google.com/vertex-ai/generative-ai/docs/model-reference/veo-video-generation
//	               and its REST type VideoGenerationModelParams
//	               (https://cloud.google.com/vertex-ai/generative-ai/docs/reference/rest/Shared.Types/VideoGenerationModelParams)
//	[vertex-31]    https://docs.cloud.google.com/gemini-enterprise-agent-platform/models/veo/3-1-generate
//	               (Veo 3.1 model page: ids veo-3.1-generate-001, veo-3.1-fast-generate-001,
//	               veo-3.1-lite-generate-001 (preview); 4, 6 or 8 s; 720p, 1080p; 16:9, 9:16;
//	               at most 4 videos per request). Lite's card: "Video generation: Text to video,
//	               image to video, from first and last frame: Supported" (an earlier layout of the
//	               page: "Generate videos from the first and last frames", Preview), read 2026-11-28
//	               in three stored copies of the page kept in public repositories (search-index
//	               files 55242538494, 55043503195, 70314568304), not the live page. The same card
//	               gives Lite's Image modality as "Not supported", which its capabilities contradict;
//	               image-to-video stays offered, as before.
//	[vertex-30]    https://docs.cloud.google.com/gemini-enterprise-agent-platform/models/veo/3-0-generate
//	               (veo-3.0-generate-001, veo-3.0-fast-generate-001, veo-2.0-generate-001:
//	               retirement date June 30, 2026). Re-read 2026-11-28 in two stored copies of the
//	               page kept in public repositories (search-index files 55176043773, 69460498757):
//	               "Discontinuation date" (later "Retirement date"): June 30, 2026 for both 3.0
//	               ids, veo-2.0-generate-001 in its table of discontinued endpoints ("before June
//	               30, 2026"); and the preview ids veo-2.0-generate-exp, veo-2.0-generate-preview,
//	               veo-3.0-generate-preview, veo-3.0-fast-generate-preview, veo-3.1-generate-preview
//	               and veo-3.1-fast-generate-preview "deprecated and removed on April 2, 2026"
//	[gemini-interp] the same page's durationSeconds: "Must be 8 when using extension or
//	               interpolation" (interpolation is a first and a last frame), as issue 33 quotes it
//	               from the page (read by the reviewer, 2026-11); this session could not read the
//	               page's parameter table first-hand.
//	[gemini-video] https://ai.google.dev/gemini-api/docs/video (Veo 3.1 parameters: personGeneration
//	               "allow_all" only for text-to-video, "allow_adult" only for image-to-video and
//	               interpolation; resolution 720p, or 1080p and 4k at 8 seconds only; durationSeconds
//	               4, 6 or 8; "Videos per request: 1"). The stored copies hold the page's overview
//	               (8-second 720p, 1080p or 4k videos; Gemini Omni Flash now named the default video
//	               model); its parameter table is as quoted by issue 19 and by
//	               https://discuss.ai.google.dev/t/veo-3-1-image-to-video-rejects-documented-persongeneration-allow-adult/181139
//	               (which also quotes the API's 400 "allow_adult for personGeneration is currently
//	               not supported"). One third-party SDK (github.com/gunpal5/Google_GenerativeAI wiki)
//	               says Veo is retired on the Gemini API altogether; Google's own pages still list it.
//	[gemini-lite]  https://ai.google.dev/gemini-api/docs/veo in its Japanese edition (last updated
//	               2026-06-30; a stored copy in a public repository, search-index file 56458182338,
//	               read 2026-11-28): the parameter table's Veo 3.1 Lite column takes lastFrame (an
//	               Image) and gives personGeneration for interpolation as allow_adult only;
//	               extension and reference images are not Lite's
//	[gemini-region] the same page's Limitations, Google's wording in stored copies of it kept in public
//	               repositories (search-index files 49039296640, English; 56458182338, Japanese,
//	               last updated 2026-06-30; read 2026-11-28): "Regional limitations: In EU, UK, CH,
//	               MENA locations, the following are the allowed values for personGeneration: Veo 3:
//	               allow_adult only" (the later edition: "Veo 3 and 3.1"). Google does not say there
//	               what a request with another value gets, nor whose location counts
//	[gemini-depr]  https://ai.google.dev/gemini-api/docs/deprecations, as reported by
//	               https://docs.apiyi.com/en/live/2026-10/veo-3-1-preview-retired.md: veo-3.1-generate-preview,
//	               veo-3.1-fast-generate-preview and veo-3.1-lite-generate-preview shut down on
//	               October 22, 2026 (404 "... is no longer available"); and, as issue 33
//	               reports from the same page (not read first-hand here, 2026-11-28),
//	               veo-2.0-generate-001, veo-3.0-generate-001 and veo-3.0-fast-generate-001
//	               shut down on June 30, 2026
//	[gemini-ids]   the -001 ids on the Gemini API: LiteLLM's model cost map
//	               (gemini/veo-3.1-generate-001, gemini/veo-3.1-fast-generate-001,
//	               gemini/veo-3.1-lite-generate-001), read 2026-11-26
//	[genai-go]     google.golang.org/genai models.go (github.com/googleapis/go-genai, commit of
//	               2026-08-21): generateVideosConfigToMldev refuses seed and generateAudio on the
//	               Gemini API ("only supported in ... Agent Platform mode"), maps numberOfVideos to
//	               parameters.sampleCount, and sends enhancePrompt only when true (types.go: a bool
//	               with omitempty); generateVideosConfigToVertex passes every parameter
//	[enhance]      https://cloud.google.com/vertex-ai/generative-ai/docs/video/turn-the-prompt-rewriter-off:
//	               turning the prompt rewriter off (enhancePrompt false) is documented for
//	               veo-2.0-generate-001 (and a Veo 3.0 preview) only
//	[gemini-price] https://ai.google.dev/gemini-api/docs/pricing (paid tier; Veo 3.1 always makes, and
//	               bills, audio): Veo 3.1 $0.40/s at 720p and 1080p; Fast $0.10/s at 720p, $0.12/s at
//	               1080p; Lite $0.05/s at 720p, $0.08/s at 1080p (Standard as transcribed 2026-10-07 in
//	               api-evangelist/deepmind plans/deepmind-plans-pricing.yml; Fast and Lite as
//	               transcribed 2026-10-04 and in LiteLLM's cost map)
//	[vertex-price] https://cloud.google.com/vertex-ai/generative-ai/pricing (Veo section): Veo 3.1
//	               $0.40/s with audio, $0.20/s without; Fast $0.15/s with audio, $0.10/s without (the
//	               list prices the README quoted before 2026; later resellers' figures are lower, so
//	               these err towards cost); Lite $0.05/s at 720p, $0.08/s at 1080p (LiteLLM's cost
//	               map for vertex_ai/veo-3.1-lite-generate-001; no separate price without audio)
//
// Reference images, extension and 4K (issue 37), read 2026-11-28:
//
//	[gemini-params] the Gemini API page's "Veo API parameters and specifications", in two stored
//	               copies of https://ai.google.dev/gemini-api/docs/video: the English edition
//	               (search-index file 52681388119, undated) and the French one, fetched
//	               2026-06-29 (file 56452251497), which adds a Veo 3.1 Lite column. Veo 3.1 and
//	               3.1 Fast take referenceImages ("Up to three images", VideoGenerationReferenceImage)
//	               and video ("Video object from a previous generation", for extension); Lite takes
//	               neither. durationSeconds "Must be "8" when using extension, reference images or with
//	               1080p and 4k resolutions". personGeneration: "Text-to-video & Extension:
//	               "allow_all" only; Image-to-video, Interpolation, & Reference images: "allow_adult"
//	               only". resolution: "720p" (default), "1080p" and "4k" at 8 seconds only, ""720p"
//	               only for extension"; Lite: 720p, or 1080p at 8 seconds, no 4k
//	[gemini-extend] the same page's "Extending Veo videos": "extend videos that you previously
//	               generated with Veo by 7 seconds and up to 20 times"; "Veo-generated videos only up
//	               to 141 seconds long"; "Gemini API only supports video extensions for Veo-generated
//	               videos"; "The video should come from a previous generation, like
//	               operation.response.generated_videos[0].video"; videos are kept 2 days (a reference
//	               for extension restarts the timer); input 9:16 or 16:9, 720p; "The output of the
//	               extension is a single video combining the user input video and the generated
//	               extended video for up to 148 seconds of video"
//	[gemini-refs-16x9] reference images at 16:9 only on the Gemini API: not on Google's page (neither
//	               copy says so); issue 37 and a third-party guide (search-index file 52716091927:
//	               "9:16 returns INVALID_ARGUMENT") do. Kept as a refusal before the charge, to be safe
//	[genai-video]  google.golang.org/genai models.go (commit 6fd3e65, 2026-08-21): referenceImages go
//	               to instances[0].referenceImages as {image, referenceType} on both APIs, the image as
//	               {bytesBase64Encoded, mimeType}; the video of an extension to instances[0].video, on
//	               the Gemini API as {uri} or {encodedVideo, encoding}, on Vertex AI as {gcsUri} or
//	               {bytesBase64Encoded, mimeType}
//	[vertex-card]  the Veo 3.1 model card ([vertex-31]) in its later layout (search-index file
//	               70314568304, with retirement dates "November 17, 2026 or later"):
//	               veo-3.1-generate-001 extends videos and takes asset reference images ("reference image
//	               to video only supports 8 seconds"), output 720p, 1080p, 4K; veo-3.1-fast-generate-001
//	               the same, output 720p and 1080p; veo-3.1-lite-generate-001 extends videos, takes no
//	               reference images. The earlier layout (file 55242538494) gave 720p and 1080p only
//	[vertex-refs]  https://docs.cloud.google.com/gemini-enterprise-agent-platform/models/video/use-reference-images-to-guide-video-generation
//	               (stored copy, search-index file 55152627590): "up to three images of a single person,
//	               character, or product"; veo-3.1-generate-001 and veo-3.1-fast-generate-001 among the
//	               models; REST instances[0].referenceImages [{image: {bytesBase64Encoded, mimeType},
//	               referenceType: "asset"}], durationSeconds 8, aspectRatio 16:9 or 9:16, sampleCount
//	               1-4, personGeneration allow_adult (default) or not at all, resolution "4k" for "Veo 3.1
//	               Preview models only"
//	[vertex-extend] https://docs.cloud.google.com/gemini-enterprise-agent-platform/models/video/extend-videos
//	               (search excerpts of the English page and its Korean and Chinese editions): "the input
//	               video must be 1 to 30 seconds in length and can be extended by 7 seconds (up to 37
//	               seconds total)"; input MP4, 24 fps, 720p, 1080p or 4k, 9:16 or 16:9; the three -001 ids.
//	               Not known first-hand: whether Vertex AI refuses a video Veo did not make (an older
//	               edition: "extend videos that you previously generated using Veo"), which resolutions
//	               and durationSeconds it takes for an extension (720p and 8 are sent, as on the Gemini
//	               API), and how many videos one extension makes (one is asked)
//	[price-4k]     the Gemini API's Veo 3.1 (Standard) at 4k: $0.60/s (the [gemini-price]
//	               transcription of 2026-10-07: "$0.40 (720p and 1080p)", overage "$0.60 (4k)"). Not
//	               known first-hand: Vertex AI's 4K price, taken as $0.60/s with audio and $0.40 without,
//	               as fal.ai lists Veo 3.1 at 4K (https://fal.ai/models/fal-ai/veo3.1/llms.txt, whose 720p
//	               and 1080p prices are Vertex AI's list prices above); Veo 3.1 Fast's 4K price on either
//	               API, so Fast is not offered at 4K (a resolution without a price would fail the start-up
//	               price check); Google's changelog of 2026-01-13 announcing 4K, known only from
//	               third-party accounts
//	[price-extend] what an extension is billed: Google bills Veo per second of video generated; whether
//	               an extension counts the 7 seconds it adds, the 8 of its durationSeconds, or the whole
//	               video it answers is not known first-hand. The cost recorded is 8 seconds at 720p

// A ProviderModel is one of Google's models on one API: what it accepts
// and what a second of its video costs (the Gemini API bills audio
// always, so there both prices are the same).
type ProviderModel = capability.Priced

var (
	veo31Durations = []int{4, 6, 8}           // [vertex-31], [gemini-video]
	veo31Aspects   = []string{"16:9", "9:16"} // [vertex-31], [gemini-video]
	// Every Veo 3.1 model, Lite too, makes a video from text, from an image
	// and from a first and a last frame [vertex-31], [gemini-lite]. The
	// contract offers no first-last-frame on our Lite model (catalog); a
	// Quality or Fast model remapped to Veo 3.1 Lite keeps it.
	allModes = []string{catalog.TextToVideo, catalog.ImageToVideo, catalog.FirstLastFrame}
	// Veo 3.1 and 3.1 Fast also take reference images and extend videos
	// [gemini-params], [vertex-card]; Lite extends them on Vertex AI alone
	// [vertex-card] (our Lite model offers neither: catalog).
	fullModes       = append(slices.Clone(allModes), catalog.ReferenceImages, catalog.VideoExtension)
	vertexLiteModes = append(slices.Clone(allModes), catalog.VideoExtension)
)

// Extension limits: the longest video each API extends, and at which
// resolutions (the Gemini API: 720p [gemini-extend]; Vertex AI: 720p,
// 1080p or 4K [vertex-extend]); an extension is made at 720p
// [gemini-params] and 8 seconds [gemini-interp], [gemini-params]
// (Vertex AI: as sent to the Gemini API, [vertex-extend]).
const (
	geminiMaxExtend = 141
	vertexMaxExtend = 30
	// The Gemini API keeps a video 2 days [gemini-extend]; gen counts
	// from when its task completed (a later reference, which restarts
	// Google's timer, is not counted: a refusal at start is the safe
	// side). Vertex AI extends what gen sends it, its own copy.
	geminiKept = 48 * time.Hour
)

var (
	geminiExtendRes = []string{"720p"}
	vertexExtendRes = []string{"720p", "1080p", catalog.Resolution4K}
)

// extensionLimits narrows l for the modes it makes: reference images and
// extensions at 8 seconds [gemini-params], [vertex-refs], extensions at
// 720p; reference images not at 4K on Vertex AI [vertex-refs].
func extensionLimits(l *capability.Limits, maxExtend int, within time.Duration, extendRes, refsRes []string) {
	if slices.Contains(l.Modes, catalog.ReferenceImages) {
		l.ModeDurations[catalog.ReferenceImages] = []int{8}
		if refsRes != nil {
			l.ModeResolutions[catalog.ReferenceImages] = refsRes
		}
	}
	if slices.Contains(l.Modes, catalog.VideoExtension) {
		l.ModeDurations[catalog.VideoExtension] = []int{8}
		l.ModeResolutions[catalog.VideoExtension] = []string{"720p"}
		l.MaxExtendSeconds, l.ExtendResolutions, l.ExtendWithin = maxExtend, extendRes, within
	}
}

// vertexLimits are Veo 3.1 on Vertex AI: every duration at 720p and
// 1080p, up to 4 videos a request [vertex-31]; personGeneration
// allow_adult (the default) or dont_allow in every mode, allow_all only
// for projects Google approved [vertex-ref]; a seed [vertex-ref],
// [genai-go]; enhancePrompt false is not documented for Veo 3.1
// [enhance].
//
// Veo 3.1 renders 4K (at 8 seconds, as on the Gemini API [gemini-params]:
// Vertex AI's card gives no duration) where res4k [vertex-card]; it takes
// reference images at 8 seconds, not at 4K [vertex-refs], and extends
// videos of up to 30 seconds [vertex-extend].
func vertexLimits(modes []string, res4k bool) capability.Limits {
	l := capability.Limits{Modes: modes, Durations: veo31Durations, Resolutions: map[int][]string{},
		AspectRatios: veo31Aspects, MaxSampleCount: 4, PersonGeneration: map[string][]string{},
		ModeDurations: map[string][]int{}, ModeResolutions: map[string][]string{},
		Seed: true, NegativePrompt: true}
	for _, d := range veo31Durations {
		l.Resolutions[d] = []string{"720p", "1080p"}
	}
	if res4k {
		l.Resolutions[8] = append(l.Resolutions[8], catalog.Resolution4K)
	}
	for _, m := range modes {
		l.PersonGeneration[m] = []string{"allow_adult", "dont_allow"}
	}
	extensionLimits(&l, vertexMaxExtend, 0, vertexExtendRes, []string{"720p", "1080p"})
	return l
}

// geminiLimits are Veo 3.1 on the Gemini API: 1080p at 8 seconds only,
// one video a request, personGeneration allow_all for text-to-video and
// allow_adult for image inputs [gemini-video]; a video from a first and a
// last frame 8 seconds only [gemini-interp]; no seed [genai-go];
// enhancePrompt false is not documented for Veo 3.1 [enhance].
//
// In the EU, the UK, Switzerland and MENA the Gemini API takes
// allow_adult only [gemini-region], so text-to-video's only value,
// allow_all, is not allowed there. The table keeps allow_all and has no
// setting for the region: gen cannot know where Google places a request,
// and allow_adult would be refused everywhere else. There a text-to-video
// start is refused by Google at submit (a 400: GENERATION_FAILED, refunded,
// no job); image starts already send allow_adult. Operators there serve
// text-to-video from Vertex AI (infra/docs/providers.md).
//
// Veo 3.1 and 3.1 Fast render 4K at 8 seconds [gemini-params], offered
// where res4k (a model whose 4K price is known, [price-4k]); they take
// reference images at 8 seconds and allow_adult, 16:9 only
// [gemini-refs-16x9], and extend videos of up to 141 seconds at 720p,
// allow_all, 8 seconds [gemini-params], [gemini-extend].
func geminiLimits(modes []string, res4k bool) capability.Limits {
	l := capability.Limits{Modes: modes, Durations: veo31Durations,
		Resolutions:  map[int][]string{4: {"720p"}, 6: {"720p"}, 8: {"720p", "1080p"}},
		AspectRatios: veo31Aspects, MaxSampleCount: 1, PersonGeneration: map[string][]string{},
		ModeDurations: map[string][]int{}, ModeResolutions: map[string][]string{},
		NegativePrompt: true}
	if res4k {
		l.Resolutions[8] = append(l.Resolutions[8], catalog.Resolution4K)
	}
	for _, m := range modes {
		l.PersonGeneration[m] = []string{"allow_adult"}
	}
	for _, m := range []string{catalog.TextToVideo, catalog.VideoExtension} {
		if slices.Contains(modes, m) {
			l.PersonGeneration[m] = []string{"allow_all"}
		}
	}
	if slices.Contains(modes, catalog.FirstLastFrame) {
		l.ModeDurations[catalog.FirstLastFrame] = []int{8}
	}
	extensionLimits(&l, geminiMaxExtend, geminiKept, geminiExtendRes, nil)
	if slices.Contains(modes, catalog.ReferenceImages) {
		l.ModeAspectRatios = map[string][]string{catalog.ReferenceImages: {"16:9"}}
	}
	return l
}

func flat(usd float64) map[string]float64 { return map[string]float64{"720p": usd, "1080p": usd} }

// with4K is prices with a 4K price [price-4k].
func with4K(prices map[string]float64, usd float64) map[string]float64 {
	out := maps.Clone(prices)
	out[catalog.Resolution4K] = usd
	return out
}

// vertexModels are the Veo models of Vertex AI [vertex-31], [vertex-card],
// priced [vertex-price], [price-4k].
var vertexModels = map[string]ProviderModel{
	"veo-3.1-generate-001": {Limits: vertexLimits(fullModes, true),
		Audio: with4K(flat(0.40), 0.60), Silent: with4K(flat(0.20), 0.40)},
	"veo-3.1-fast-generate-001": {Limits: vertexLimits(fullModes, false), Audio: flat(0.15), Silent: flat(0.10)},
	"veo-3.1-lite-generate-001": {Limits: vertexLimits(vertexLiteModes, false),
		Audio: map[string]float64{"720p": 0.05, "1080p": 0.08}, Silent: map[string]float64{"720p": 0.05, "1080p": 0.08}},
}

// geminiModels are the Veo models of the Gemini API [gemini-ids],
// [gemini-params], priced [gemini-price], [price-4k].
var geminiModels = map[string]ProviderModel{
	"veo-3.1-generate-001": {Limits: geminiLimits(fullModes, true),
		Audio: with4K(flat(0.40), 0.60), Silent: with4K(flat(0.40), 0.60)},
	"veo-3.1-fast-generate-001": {Limits: geminiLimits(fullModes, false),
		Audio: map[string]float64{"720p": 0.10, "1080p": 0.12}, Silent: map[string]float64{"720p": 0.10, "1080p": 0.12}},
	"veo-3.1-lite-generate-001": {Limits: geminiLimits(allModes, false),
		Audio: map[string]float64{"720p": 0.05, "1080p": 0.08}, Silent: map[string]float64{"720p": 0.05, "1080p": 0.08}},
}

// retired are the ids Google shut down, which answer 404: on Vertex AI
// [vertex-30], on the Gemini API [gemini-depr].
var retired = map[string][]string{
	settings.GeneratorVertex: {"veo-2.0-generate-001", "veo-3.0-generate-001", "veo-3.0-fast-generate-001",
		"veo-2.0-generate-exp", "veo-2.0-generate-preview", "veo-3.0-generate-preview", "veo-3.0-fast-generate-preview",
		"veo-3.1-generate-preview", "veo-3.1-fast-generate-preview"},
	settings.GeneratorGemini: {"veo-3.1-generate-preview", "veo-3.1-fast-generate-preview", "veo-3.1-lite-generate-preview",
		"veo-2.0-generate-001", "veo-3.0-generate-001", "veo-3.0-fast-generate-001"},
}

// VertexModels and GeminiModels map the contract's model ids to each
// API's by default: each tier on its own Veo 3.1 model, Lite on Veo 3.1
// Lite. GEN_PROVIDER_MODELS overrides them (WithDefaults).
var (
	VertexModels = map[string]string{
		"gen-3.1-generate-001":      "veo-3.1-generate-001",
		"gen-3.1-fast-generate-001": "veo-3.1-fast-generate-001",
		"gen-3.1-lite-generate-001": "veo-3.1-lite-generate-001",
	}
	GeminiModels = map[string]string{
		"gen-3.1-generate-001":      "veo-3.1-generate-001",
		"gen-3.1-fast-generate-001": "veo-3.1-fast-generate-001",
		"gen-3.1-lite-generate-001": "veo-3.1-lite-generate-001",
	}
)

// DefaultModels is the default mapping of api (settings.GeneratorVertex
// or GeneratorGemini).
func DefaultModels(api string) map[string]string {
	if api == settings.GeneratorGemini {
		return maps.Clone(GeminiModels)
	}
	return maps.Clone(VertexModels)
}

// ProviderModels are the models api serves, by Google's id.
func ProviderModels(api string) map[string]ProviderModel {
	if api == settings.GeneratorGemini {
		return geminiModels
	}
	return vertexModels
}

// Lookup is Google's model id on api, and whether it was retired.
func Lookup(api, id string) (m ProviderModel, ok, wasRetired bool) {
	m, ok = ProviderModels(api)[id]
	m.ID = id
	return m, ok, slices.Contains(retired[api], id)
}

// backendName is how messages name an API.
func backendName(api string) string {
	if api == settings.GeneratorGemini {
		return "the Gemini API"
	}
	return "Vertex AI"
}

// Capabilities is what Veo on the API of p (settings.GeneratorVertex
// or GeneratorGemini) accepts for each of our models: the Veo model each
// is mapped to. A mapping to a model this file does not know, or one
// that sells a video below its cost at p.Credit() (CheckPrices), is an
// error, so that the stack stops at start-up rather than charge for
// starts it cannot honour, or honour at a loss.
func Capabilities(p settings.ProviderConfig) (capability.Table, error) {
	models := WithDefaults(p.Generator, p.ModelMap())
	t, err := capability.Mapped(backendName(p.Generator), func(ours string) (capability.Priced, bool) {
		m, ok, _ := Lookup(p.Generator, models[ours])
		return m, ok
	}, p.Credit(), func(ours string) error {
		what := "not a " + backendName(p.Generator) + " model this service knows"
		if _, _, wasRetired := Lookup(p.Generator, models[ours]); wasRetired {
			what = "a model Google retired on " + backendName(p.Generator)
		}
		return fmt.Errorf("%s maps %s to %q, which is %s (known: %s)",
			settings.ProviderModels, ours, models[ours], what, strings.Join(slices.Sorted(maps.Keys(ProviderModels(p.Generator))), ", "))
	})
	// Its done jobs name their route so (billing, in package veo).
	t.Name = p.Generator
	return t, err
}

// RouteLimits is what a route of Veo on the API of p (one provider
// route, settings.RouteConfig) accepts for each of the models it serves, and
// the name messages give it (capability.Served).
func RouteLimits(p settings.ProviderConfig, served []string) (string, map[string]capability.Limits, error) {
	models := WithDefaults(p.Generator, p.ModelMap())
	backend := backendName(p.Generator)
	out, err := capability.Served(served, backend, func(ours string) (capability.Priced, bool) {
		m, ok, _ := Lookup(p.Generator, models[ours])
		return m, ok
	}, p.Credit())
	if err != nil {
		return "", nil, err
	}
	return backend, out, nil
}

// CheckPrices fails when one of our models, mapped by models, is sold
// below what its provider model costs on api, at creditUSD a credit
// (capability.CheckPrices).
func CheckPrices(api string, models map[string]string, creditUSD float64) error {
	return capability.CheckPrices(backendName(api), func(ours string) (capability.Priced, bool) {
		m, ok, _ := Lookup(api, models[ours])
		return m, ok
	}, creditUSD)
}

// WithDefaults is api's DefaultModels with the overrides
// (settings.ProviderConfig's Models).
func WithDefaults(api string, overrides map[string]string) map[string]string {
	m := DefaultModels(api)
	maps.Copy(m, overrides)
	return m
}
