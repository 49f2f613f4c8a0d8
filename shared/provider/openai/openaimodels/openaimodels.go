// Package openaimodels is what the hosts of OpenAI's videos shape
// accept, as data: OpenAI's own Sora models, and a self-hosted
// vLLM-Omni serving one model. The service validates starts with it
// (Capabilities), shared/provider/openai maps a start to the host's fields
// with it (Size, Seconds), and the fake (testing/openaitest) refuses
// what it refuses. Like veomodels it links no client.
package openaimodels

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/genvideo/gen/shared/catalog"
	"github.com/genvideo/gen/shared/provider/capability"
	"github.com/genvideo/gen/shared/settings"
)

// Every rule names its source and the day it was read:
//
//	[openai-ref]  OpenAI's API reference, "Create video" (POST /v1/videos, multipart):
//	              https://platform.openai.com/docs/api-reference/videos/create, as the
//	              openai-node SDK encodes it (github.com/openai/openai-node
//	              src/resources/videos.ts, commit 7b7d6ca, 2026-08-21, read 2026-11-26):
//	              model sora-2 | sora-2-pro (and dated snapshots); seconds "4" | "8" | "12"
//	              (default "4"); size "720x1280" | "1280x720" | "1024x1792" | "1792x1024"
//	              (default "720x1280"); input_reference an image upload; one video a job;
//	              status queued | in_progress | completed | failed with progress (0-100);
//	              error {code, message} on a failed job. No seed, no negative prompt.
//	              The same file marks every call "@deprecated The Sora API is scheduled to
//	              permanently shut down on September 24, 2026" (commit 4424b40, 2026-08-13):
//	              the openai profile's OpenAI rows are a historical record since that day.
//	[openai-price] OpenAI's price of a second of Sora video, https://platform.openai.com/docs/pricing
//	              (Video): sora-2 $0.10; sora-2-pro $0.30 at 720x1280 and 1280x720 ($0.50 at
//	              1024x1792, 1792x1024, which this table does not offer). NOT read first-hand: no
//	              stored copy of OpenAI's page exists here (2026-11-28); the figures are as two
//	              resellers quote OpenAI's list, and agree: https://help.apiyi.com/sora-2-api-official-release-en.html
//	              (launch, 2025-10-07) and https://www.cometapi.com/sora-api-access-in-2026-pricing-rate-limits-and-what-s-actually-available-through-aggregators/
//	              (2026, which also names the snapshot sora-2-2025-12-08), both read 2026-11-28.
//	              That a dated snapshot costs what its model costs is this table's assumption.
//	[openai-audio] Sora 2's videos always carry audio. Inferred, not stated in a sentence read
//	              first-hand: the create call takes prompt, input_reference, model, seconds and size
//	              only, nothing that asks for silence (openai-node src/resources/videos.ts
//	              VideoCreateParams, commit 7b7d6ca, read 2026-11-28), and OpenAI's "Sora 2: Prompting
//	              Guide" (github.com/openai/openai-cookbook examples/sora/sora2_prompting_guide.ipynb,
//	              commit 1398f49, read 2026-11-28) names model, size and seconds as the only API
//	              parameters and writes dialogue and background sound into the prompt.
//	[openai-sizes] the same sizes per model, 1024x1792 and 1792x1024 for sora-2-pro only
//	              (n8n's OpenAI node, https://docs.n8n.io/integrations/builtin/app-nodes/n8n-nodes-langchain.openai/video-operations.md,
//	              and ComfyUI's OpenAIVideoSora2 node, https://docs.comfy.org/built-in-nodes/OpenAIVideoSora2,
//	              both read 2026-11-26: "sora-2 supports only 720x1280 and 1280x720").
//	[vllm-omni]   vLLM-Omni's Videos API, https://docs.vllm.ai/projects/vllm-omni/en/stable/serving/videos_api/
//	              (read 2026-11-26): POST /v1/videos multipart with prompt, model (default the
//	              served model), seconds, size (WIDTHxHEIGHT), input_reference (an image, for
//	              image-to-video); one model per server ("vllm serve <model> --omni"); and its
//	              text-to-video example (vllm-project/vllm-omni
//	              examples/online_serving/text_to_video/README.md, read 2026-11-26), which sends
//	              negative_prompt and seed as extra form fields. Wan 2.2 renders 720p
//	              (Wan-AI/Wan2.2-TI2V-5B: 1280x704 / 704x1280).
//
// The contract's durations are 4, 6 and 8 seconds: OpenAI takes 4 and 8
// of them; its 1024x1792 is no contract resolution (neither 720p nor
// 1080p), so only 720p is offered there. Neither host makes a video
// from a first and a last frame (input_reference is one image).
//
// Audio: Sora always makes it [openai-audio] and this backend removes
// none, so a start asking for none is refused (it would be charged the
// silent price for a video with audio, and Lite's silent price, 35
// credits, is below an 8-second sora-2 video's $0.80); vLLM-Omni's
// videos have none [vllm-omni], so its starts are silent by default and
// one asking for audio is refused. Each then pays for what it gets.

// modes both hosts make: input_reference is the first frame.
var modes = []string{catalog.TextToVideo, catalog.ImageToVideo}

// sora are OpenAI's Sora models [openai-ref]: 4 or 8 of our durations,
// 720p [openai-sizes], 16:9 and 9:16, one video a job, no seed and no
// negative prompt, audio always [openai-audio]. The API takes no
// personGeneration: its own policy (no real people) stands, which
// allow_adult describes best.
func sora() capability.Limits {
	l := capability.Limits{Modes: modes, Durations: []int{4, 8},
		Resolutions:  map[int][]string{4: {"720p"}, 8: {"720p"}},
		AspectRatios: []string{"16:9", "9:16"}, MaxSampleCount: 1, PersonGeneration: map[string][]string{},
		Audio: capability.AudioAlways}
	for _, m := range modes {
		l.PersonGeneration[m] = []string{"allow_adult"}
	}
	return l
}

// vllmOmni is a self-hosted vLLM-Omni [vllm-omni]: seconds is free, so
// every duration of ours; 720p; one video a job; seed and negative
// prompt as extra fields; no audio.
func vllmOmni() capability.Limits {
	l := sora()
	l.Durations = []int{4, 6, 8}
	l.Resolutions = map[int][]string{4: {"720p"}, 6: {"720p"}, 8: {"720p"}}
	l.Seed, l.NegativePrompt = true, true
	l.Audio = capability.AudioNever
	return l
}

// soraPrices are OpenAI's prices of a second of video at our
// resolutions, by model id [openai-price]; the key set is the models
// OpenAI serves [openai-ref].
var soraPrices = map[string]float64{
	"sora-2": 0.10, "sora-2-2025-10-06": 0.10, "sora-2-2025-12-08": 0.10,
	"sora-2-pro": 0.30, "sora-2-pro-2025-10-06": 0.30,
}

// soraModels are OpenAI's model ids, for messages.
var soraModels = slices.Sorted(maps.Keys(soraPrices))

// DefaultModels maps the contract's model ids to the host's by default:
// on OpenAI Quality to sora-2-pro, the others to sora-2; on vLLM-Omni
// none (the request leaves model out: the server's own model).
func DefaultModels(profile string) map[string]string {
	if profile == settings.ProfileVLLMOmni {
		return map[string]string{}
	}
	return map[string]string{
		"gen-3.1-generate-001":      "sora-2-pro",
		"gen-3.1-fast-generate-001": "sora-2",
		"gen-3.1-lite-generate-001": "sora-2",
	}
}

// WithDefaults is profile's DefaultModels with the overrides
// (settings.ProviderConfig's Models).
func WithDefaults(profile string, overrides map[string]string) map[string]string {
	m := DefaultModels(profile)
	maps.Copy(m, overrides)
	return m
}

// Lookup is what the host of profile accepts for its model id.
func Lookup(profile, model string) (capability.Limits, bool) {
	m, ok := Priced(settings.ProviderConfig{OpenAIProfile: profile}, model)
	return m.Limits, ok
}

// Priced is what the host of p's profile accepts for its model id, and
// what a second of its video costs: OpenAI's price, or on a
// self-hosted vLLM-Omni the operator's own (p.OpenAIUSDPerSecond).
func Priced(p settings.ProviderConfig, model string) (capability.Priced, bool) {
	if Profile(p) == settings.ProfileVLLMOmni {
		// One model per server, whatever its name.
		usd := map[string]float64{"720p": p.OpenAIUSDPerSecond}
		return capability.Priced{ID: cmp.Or(model, "the served model"), Limits: vllmOmni(), Audio: usd, Silent: usd}, true
	}
	usd, ok := soraPrices[model]
	if !ok {
		return capability.Priced{ID: model}, false
	}
	prices := map[string]float64{"720p": usd}
	return capability.Priced{ID: model, Limits: sora(), Audio: prices, Silent: prices}, true
}

// Profile is p's profile, ProfileOpenAI when unset.
func Profile(p settings.ProviderConfig) string {
	if p.OpenAIProfile == "" {
		return settings.ProfileOpenAI
	}
	return p.OpenAIProfile
}

// BackendName is how messages name the host of profile.
func BackendName(profile string) string { return backendName(profile) }

func backendName(profile string) string {
	if profile == settings.ProfileVLLMOmni {
		return "the vLLM-Omni host"
	}
	return "OpenAI"
}

// Capabilities is what the openai generator of p accepts for each of
// our models. A mapping to a model OpenAI does not serve, or one that
// sells a video below its cost at p.Credit() (capability.CheckPrices),
// is an error, so that the stack stops at start-up.
func Capabilities(p settings.ProviderConfig) (capability.Table, error) {
	models := WithDefaults(Profile(p), p.ModelMap())
	return capability.Mapped(backendName(Profile(p)), func(ours string) (capability.Priced, bool) { return Priced(p, models[ours]) }, p.Credit(),
		func(ours string) error {
			return fmt.Errorf("%s maps %s to %q, which is not an OpenAI video model this service knows (known: %s)",
				settings.ProviderModels, ours, models[ours], strings.Join(soraModels, ", "))
		})
}

// RouteLimits is what a route to the host of p (one provider route,
// settings.RouteConfig) accepts for each of the models it serves, and the name
// messages give it (capability.Served).
func RouteLimits(p settings.ProviderConfig, served []string) (string, map[string]capability.Limits, error) {
	profile := Profile(p)
	models := WithDefaults(profile, p.ModelMap())
	backend := backendName(profile)
	out, err := capability.Served(served, backend, func(ours string) (capability.Priced, bool) {
		return Priced(p, models[ours])
	}, p.Credit())
	if err != nil {
		return "", nil, err
	}
	return backend, out, nil
}

// sizes are the host's size for our aspect ratio and resolution. 4k is
// UHD (3840 x 2160), the width x height the OpenAI-compatible facade
// reads as resolution 4k (shared/openaiapi); neither host makes it, and
// that Veo's 4k is exactly these pixels is not known first-hand.
var sizes = map[[2]string]string{
	{"16:9", "720p"}: "1280x720", {"9:16", "720p"}: "720x1280",
	{"16:9", "1080p"}: "1920x1080", {"9:16", "1080p"}: "1080x1920",
	{"16:9", "4k"}: "3840x2160", {"9:16", "4k"}: "2160x3840",
}

// Size is the size field for an aspect ratio and a resolution.
func Size(aspect, resolution string) (string, bool) {
	s, ok := sizes[[2]string{aspect, resolution}]
	return s, ok
}

// AspectAndResolution is Size read back.
func AspectAndResolution(size string) (aspect, resolution string, ok bool) {
	for k, v := range sizes {
		if v == size {
			return k[0], k[1], true
		}
	}
	return "", "", false
}

// Seconds is the seconds field for a duration.
func Seconds(d int) string { return strconv.Itoa(d) }
