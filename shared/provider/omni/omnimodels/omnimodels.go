// Package omnimodels is what Gemini Omni Flash accepts on the
// Interactions API, on the Gemini API and on Vertex AI alike, and what a
// second of its video costs, as data. The service validates starts with it (Capabilities,
// RouteLimits), shared/provider/omni maps a start to the API's fields
// with it (Duration, Task), and the fake (testing/omnitest) refuses what
// it refuses. Like veomodels it links no client.
package omnimodels

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/genvideo/gen/shared/catalog"
	"github.com/genvideo/gen/shared/provider/capability"
	"github.com/genvideo/gen/shared/settings"
)

// Every rule names its source and the day it was read. Google's own
// sources first; [secondary-*] are resellers' and gateways' pages, used
// only where Google's could not be read, and say so.
//
//	[sdk]        Google's python-genai SDK, github.com/googleapis/python-genai
//	             google/genai/_gaos (commit 6680718, 2026-08-21, read 2026-11-28):
//	             POST /{version}/interactions and GET /{version}/interactions/{id}
//	             (interactions.py); a create takes model, input (text, or content
//	             blocks: {"type":"text","text"}, {"type":"image","data" base64,
//	             "mime_type"}), background ("run the model interaction in the
//	             background"), generation_config {seed, video_config {task:
//	             text_to_video | image_to_video | reference_to_video | edit | extend}},
//	             response_format {"type":"video", aspect_ratio "16:9" | "9:16",
//	             resolution "360p" | "720p" | "1080p" | "4k" (default 720p), duration
//	             (a string), delivery "inline" | "uri", gcs_uri (Vertex only)}
//	             (types/interactions/createmodelinteraction.py, generationconfig.py,
//	             videoconfig.py, videoresponseformat.py). An Interaction answers id,
//	             status (queued | in_progress | requires_action | completed | failed |
//	             cancelled | incomplete | budget_exceeded), steps (a "model_output"
//	             step's content holds {"type":"video","data" base64 | "uri",
//	             "mime_type"}: google_genai.py _output_properties_from_steps) and
//	             errors [{code, message}] (interaction.py, error.py); an HTTP error
//	             answers {"error": {code, message}} (errors/createinteraction.py).
//	             No negative prompt, no sample count, no person generation field.
//	[gemini-video] "Video generation", https://ai.google.dev/gemini-api/docs/video
//	             (read 2026-11-28): Gemini Omni Flash is the default video model, on
//	             the Interactions API; Veo 3.1 for extension and last-frame control.
//	[gemini-omni] "Generate and edit videos with Gemini Omni Flash",
//	             https://ai.google.dev/gemini-api/docs/omni (read 2026-11-28, the
//	             zh-cn edition): model gemini-omni-1.1-flash, interactions.create with
//	             model and input, the video in output_video.data (base64); videos
//	             have audio.
//	[vertex-text] "Generate videos from text prompts", https://docs.cloud.google.com/
//	             gemini-enterprise-agent-platform/models/video/generate-videos-from-text
//	             (read 2026-11-28): gemini-omni-1.2-flash, gemini-omni-1.1-flash-preview
//	             and gemini-omni-flash-preview make video from text on Vertex AI (Agent
//	             Platform); the image and first-and-last-frame pages list
//	             gemini-omni-1.2-flash too. The omni-flash-preview page: deprecated
//	             2026-11-06, "Migrate to Gemini Omni 1.2 Flash"; 16:9 and 9:16.
//	[vertex-sdk] the same SDK and commit, read 2026-11-28: on Vertex AI the
//	             Interactions API is {base}/v1beta1/projects/{project}/locations/
//	             {location}/interactions[/{id}] (_gaos/google_genai.py
//	             get_google_genai_api_version; tests/interactions/test_paths.py
//	             expects https://{location}-aiplatform.googleapis.com/v1beta1/projects/
//	             {p}/locations/{l}/interactions/{id}, aiplatform.googleapis.com for
//	             global), the base being https://aiplatform.googleapis.com for global,
//	             aiplatform.{us|eu}.rep.googleapis.com for the multi-regions, else
//	             https://{location}-aiplatform.googleapis.com, and location "global"
//	             when none is given (_api_client.py); requests carry "Authorization:
//	             Bearer {token}" of Google OAuth, not x-goog-api-key
//	             (_hooks/google_genai_auth.py; tests/interactions/test_auth.py
//	             test_interactions_vertex_auth_header). response_format.gcs_uri is
//	             "Required for Vertex if delivery mode is URI"
//	             (videoresponseformat.py); nothing else in a request or an answer
//	             differs by API in the SDK's types.
//	[vertex-key] Vertex AI refuses an API key on a project's path: 401
//	             UNAUTHENTICATED "API keys are not supported by this API. Expected
//	             OAuth2 access token or other authentication credentials that assert
//	             a principal." (a google.rpc.Status, its code a number), reported in
//	             https://github.com/google-gemini/gemini-cli/issues/5739 (2025-08-07,
//	             read 2026-11-28): a user's report, not Google's documentation.
//	[secondary-1.2] no Google page on Omni 1.2's limits could be read. Vercel's
//	             changelog, https://vercel.com/changelog/gemini-omni-1-2-flash-now-available-on-ai-gateway,
//	             and Civitai's recipe, https://developer.civitai.com/orchestration/recipes/gemini-omni
//	             (both read 2026-11-28): 3 to 15 s (10 at most with first and last
//	             frames), 360p, 720p, 1080p and 4K, 16:9 and 9:16, native audio,
//	             billed per second delivered; GA 2026-11-05 (LaoZhang,
//	             https://docs.laozhang.ai/en/announcements/gemini-omni-1-2-flash-2026-11.md).
//	[secondary-price] Google's price page for Omni could not be read. MuAPI,
//	             https://muapi.ai/zh/gemini-omni-1.2-flash, and LaoZhang,
//	             https://docs.laozhang.ai/en/api-capabilities/gemini-omni-video-generation
//	             (its per-video price "about 43% of Google's list price", checked
//	             2026-11-11), both read 2026-11-28, agree on 1.2 at $0.023 (360p),
//	             $0.07 (720p), $0.105 (1080p), $0.21 (4K) a second; MuAPI's 1.1 at
//	             $0.039, $0.13, $0.195, $0.39 (https://muapi.ai/zh/playground/gemini-omni-text-to-video).
//	             Vercel's token price ($9 per million output tokens) comes to less;
//	             the table takes the higher, so that it errs towards Google's bill.
//	             Vertex AI's price for Omni could not be read either: its table is
//	             this one, an assumption.
//
// Our durations (4, 6, 8) are within 3 to 15 [secondary-1.2]; our
// resolutions 720p and 1080p are two of its four [sdk]. One video a
// request [sdk]. A first and a last frame: Google's Vertex page lists it
// [vertex-text], but the SDK's tasks name no such mode and no wire shape
// for the last frame could be read, so it is not offered (a start asking
// for it is refused before it is charged). Audio: its videos always have
// it [gemini-omni] and no field turns it off [sdk]. The API takes no
// personGeneration; Google's policy stands, which allow_adult describes
// best (as for Sora, openaimodels).
//
// On Vertex AI: the same model id [vertex-text] and the same request
// [vertex-sdk]; whether Vertex's limits or prices differ from the Gemini
// API's is not known, so the table is one. Which locations serve Omni is
// not known either: a route's location defaults to the SDK's, global.

// modes Omni makes here: the prompt, or an image with it [sdk].
var modes = []string{catalog.TextToVideo, catalog.ImageToVideo}

// limits are Omni's for our models: every duration and resolution of
// ours [secondary-1.2], one video, a seed [sdk], audio always.
func limits() capability.Limits {
	l := capability.Limits{Modes: modes, Durations: []int{4, 6, 8}, Resolutions: map[int][]string{},
		AspectRatios: []string{"16:9", "9:16"}, MaxSampleCount: 1, PersonGeneration: map[string][]string{},
		Seed: true, Audio: capability.AudioAlways}
	for _, d := range l.Durations {
		l.Resolutions[d] = []string{"720p", "1080p"}
	}
	for _, m := range modes {
		l.PersonGeneration[m] = []string{"allow_adult"}
	}
	return l
}

// prices are a second of video by resolution, by model id
// [secondary-price]; the key set is the models this service knows.
var prices = map[string]map[string]float64{
	"gemini-omni-1.2-flash": {"360p": 0.023, "720p": 0.07, "1080p": 0.105, "4k": 0.21},
	"gemini-omni-1.1-flash": {"360p": 0.039, "720p": 0.13, "1080p": 0.195, "4k": 0.39},
}

// Known are the model ids this service knows, for messages.
var Known = slices.Sorted(maps.Keys(prices))

// DefaultModel is the model our models map to by default: the GA one
// Google names in its Vertex pages [vertex-text].
const DefaultModel = "gemini-omni-1.2-flash"

// DefaultModels maps each of our models to DefaultModel.
func DefaultModels() map[string]string {
	m := map[string]string{}
	for _, id := range catalog.IDs() {
		m[id] = DefaultModel
	}
	return m
}

// WithDefaults is DefaultModels with the overrides (settings.ProviderConfig's
// Models).
func WithDefaults(overrides map[string]string) map[string]string {
	m := DefaultModels()
	maps.Copy(m, overrides)
	return m
}

// Priced is what Omni accepts for its model id and what a second of its
// video costs; audio always, so both prices are one.
func Priced(model string) (capability.Priced, bool) {
	p, ok := prices[model]
	if !ok {
		return capability.Priced{ID: model}, false
	}
	return capability.Priced{ID: model, Limits: limits(), Audio: p, Silent: p}, true
}

// Lookup is what Omni accepts for its model id.
func Lookup(model string) (capability.Limits, bool) {
	m, ok := Priced(model)
	return m.Limits, ok
}

// Backend and VertexBackend name the APIs in messages.
const (
	Backend       = "Gemini Omni on the Gemini API"
	VertexBackend = "Gemini Omni on Vertex AI"
)

// backend is the API of p's kind (settings.GeneratorOmni or
// settings.GeneratorOmniVertex): one table, two names.
func backend(p settings.ProviderConfig) string {
	if p.Generator == settings.GeneratorOmniVertex {
		return VertexBackend
	}
	return Backend
}

// Capabilities is what the omni or omni-vertex generator of p accepts
// for each of our models. A mapping to a model this service does not know, or one that
// sells a video below its cost at p.Credit() (capability.CheckPrices),
// is an error, so that the stack stops at start-up.
func Capabilities(p settings.ProviderConfig) (capability.Table, error) {
	models := WithDefaults(p.ModelMap())
	return capability.Mapped(backend(p), func(ours string) (capability.Priced, bool) { return Priced(models[ours]) }, p.Credit(),
		func(ours string) error {
			return fmt.Errorf("%s maps %s to %q, which is not a Gemini Omni model this service knows (known: %s)",
				settings.ProviderModels, ours, models[ours], strings.Join(Known, ", "))
		})
}

// RouteLimits is what a route to Omni (one provider route,
// settings.RouteConfig) accepts for each of the models it serves, and the name
// messages give it (capability.Served: an unknown model, or one sold
// below its cost, is an error).
func RouteLimits(p settings.ProviderConfig, served []string) (string, map[string]capability.Limits, error) {
	models := WithDefaults(p.ModelMap())
	name := backend(p)
	out, err := capability.Served(served, name, func(ours string) (capability.Priced, bool) {
		return Priced(models[ours])
	}, p.Credit())
	if err != nil {
		return "", nil, err
	}
	return name, out, nil
}

// Duration is response_format.duration for a duration in seconds: a
// google.protobuf.Duration in its JSON form ("8s"), as Google's SDKs
// write it [sdk].
func Duration(seconds int) string { return strconv.Itoa(seconds) + "s" }

// Seconds is Duration read back; ok is false for anything else.
func Seconds(duration string) (int, bool) {
	s, ok := strings.CutSuffix(duration, "s")
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	return n, err == nil
}

// Resolution is response_format.resolution for one of ours: the same
// words [sdk].
func Resolution(ours string) string { return ours }

// Task is generation_config.video_config.task for a task type [sdk].
func Task(typ string) (string, bool) {
	switch typ {
	case catalog.TextToVideo:
		return "text_to_video", true
	case catalog.ImageToVideo:
		return "image_to_video", true
	}
	return "", false
}

// What the API itself takes, whatever our models ask: the fake refuses
// the rest, as Google does.
var (
	// MinSeconds and MaxSeconds bound response_format.duration
	// [secondary-1.2].
	MinSeconds, MaxSeconds = 3, 15
	// Resolutions are response_format.resolution's values [sdk].
	Resolutions = []string{"360p", "720p", "1080p", "4k"}
	// AspectRatios are response_format.aspect_ratio's values [sdk].
	AspectRatios = []string{"16:9", "9:16"}
	// Tasks are generation_config.video_config.task's values [sdk].
	Tasks = []string{"text_to_video", "image_to_video", "reference_to_video", "edit", "extend"}
	// Deliveries are response_format.delivery's values [sdk]; on Vertex
	// AI "uri" needs gcs_uri [vertex-sdk].
	Deliveries = []string{"inline", "uri"}
)

// DefaultVertexLocation is the location of Omni on Vertex AI when none
// is set: the SDK's [vertex-sdk].
const DefaultVertexLocation = "global"
