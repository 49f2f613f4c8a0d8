package openaimodels_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/genvideo/gen/shared/catalog"
	"github.com/genvideo/gen/shared/params"
	"github.com/genvideo/gen/shared/provider/openai/openaimodels"
	"github.com/genvideo/gen/shared/settings"
)

// TestStarts: what each profile's table accepts of a valid start, and
// what it refuses before anything is charged, naming the field.
func TestStarts(t *testing.T) {
	openai := settings.ProviderConfig{Generator: settings.GeneratorOpenAI}
	vllm := settings.ProviderConfig{Generator: settings.GeneratorOpenAI, OpenAIProfile: settings.ProfileVLLMOmni, OpenAIEndpoint: "http://gpu:8091"}
	tests := []struct {
		name  string
		p     settings.ProviderConfig
		kind  string
		body  string
		field string // refused naming it; "" accepted
		code  string
		res   string // the resolution filled in when accepted
	}{
		{"sora 8s", openai, catalog.TextToVideo, `{"prompt":"a","durationSeconds":8}`, "", "", "720p"},
		{"sora 6s", openai, catalog.TextToVideo, `{"prompt":"a","durationSeconds":6}`, "durationSeconds", params.CodeValidation, ""},
		{"sora 1080p", openai, catalog.TextToVideo, `{"prompt":"a","durationSeconds":4,"resolution":"1080p"}`, "resolution", params.CodeValidation, ""},
		{"sora two videos", openai, catalog.TextToVideo, `{"prompt":"a","durationSeconds":4,"sampleCount":2}`, "sampleCount", params.CodeValidation, ""},
		{"sora seed", openai, catalog.TextToVideo, `{"prompt":"a","durationSeconds":4,"seed":7}`, "seed", params.CodeValidation, ""},
		{"sora negative prompt", openai, catalog.TextToVideo, `{"prompt":"a","durationSeconds":4,"negativePrompt":"x"}`, "negativePrompt", params.CodeValidation, ""},
		{"sora without audio", openai, catalog.TextToVideo, `{"prompt":"a","durationSeconds":8,"generateAudio":false}`, "generateAudio", params.CodeValidation, ""},
		{"vllm with audio", vllm, catalog.TextToVideo, `{"prompt":"a","durationSeconds":4,"generateAudio":true}`, "generateAudio", params.CodeValidation, ""},
		{"vllm 6s with seed", vllm, catalog.TextToVideo, `{"prompt":"a","durationSeconds":6,"seed":7,"negativePrompt":"x"}`, "", "", "720p"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			table, err := openaimodels.Capabilities(tt.p)
			if err != nil {
				t.Fatal(err)
			}
			r, err := params.ParseJSON(tt.kind, []byte(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			err = table.Apply(&r)
			var pe *params.Error
			switch {
			case tt.field == "" && err != nil:
				t.Errorf("Apply = %v, want accepted", err)
			case tt.field == "" && r.Params.Resolution != tt.res:
				t.Errorf("resolution %q, want %q", r.Params.Resolution, tt.res)
			case tt.field != "" && (!errors.As(err, &pe) || pe.Field != tt.field || pe.Code != tt.code):
				t.Errorf("Apply = %v, want %s naming %s", err, tt.code, tt.field)
			}
		})
	}
	// A start that leaves generateAudio out gets what the host makes,
	// and pays for that: Sora's audio, vLLM-Omni's silence.
	for _, tt := range []struct {
		p     settings.ProviderConfig
		audio bool
	}{{openai, true}, {vllm, false}} {
		table, _ := openaimodels.Capabilities(tt.p)
		r, _ := params.ParseJSON(catalog.TextToVideo, []byte(`{"prompt":"a","durationSeconds":4}`))
		m, _ := catalog.Lookup(r.Model)
		if err := table.Apply(&r); err != nil || r.Params.GenerateAudio != tt.audio || r.Cost() != m.Price(tt.audio) {
			t.Errorf("%s: Apply = %v, generateAudio %v, cost %d; want audio %v at its price", table.Backend, err, r.Params.GenerateAudio, r.Cost(), tt.audio)
		}
	}
	// No first and last frame on either host: one reference image.
	for _, p := range []settings.ProviderConfig{openai, vllm} {
		table, _ := openaimodels.Capabilities(p)
		for id, l := range table.Models {
			for _, m := range l.Modes {
				if m == catalog.FirstLastFrame {
					t.Errorf("%s offers %s on %s", id, m, table.Backend)
				}
			}
		}
	}
}

// TestUnknownModel: a mapping to a model OpenAI does not serve stops the
// stack at start-up.
func TestUnknownModel(t *testing.T) {
	p := settings.ProviderConfig{Generator: settings.GeneratorOpenAI, Models: "gen-3.1-generate-001=sora-3"}
	if _, err := openaimodels.Capabilities(p); err == nil {
		t.Error("a mapping to sora-3 was accepted")
	}
}

// TestSizes: every aspect ratio and resolution a table offers has a
// size, and the size reads back.
func TestSizes(t *testing.T) {
	for _, aspect := range params.AspectRatios() {
		for _, res := range []string{"720p", "1080p", "4k"} {
			size, ok := openaimodels.Size(aspect, res)
			a, r, back := openaimodels.AspectAndResolution(size)
			if !ok || !back || a != aspect || r != res {
				t.Errorf("Size(%s, %s) = %q, %v; read back %s %s", aspect, res, size, ok, a, r)
			}
		}
	}
}

// TestPrices: at the default credit price no default mapping sells a
// start below its cost at OpenAI (Sora's starts all have audio, priced
// as such), nor on a self-hosted host at its operator's cost; a remap,
// a credit price or an operator's cost that would is caught at start-up.
func TestPrices(t *testing.T) {
	for _, tt := range []struct {
		name string
		p    settings.ProviderConfig
		loss string // "" none
	}{
		{"openai defaults", settings.ProviderConfig{Generator: settings.GeneratorOpenAI}, ""},
		{"lite on sora-2-pro", settings.ProviderConfig{Generator: settings.GeneratorOpenAI, Models: "gen-3.1-lite-generate-001=sora-2-pro"},
			"gen-3.1-lite-generate-001 on sora-2-pro: 8 s at 720p with audio costs $2.40"},
		{"credits too cheap", settings.ProviderConfig{Generator: settings.GeneratorOpenAI, CreditUSD: 0.01},
			"gen-3.1-lite-generate-001 on sora-2: 8 s at 720p with audio costs $0.80, sold for 65 credits = $0.65"},
		// infra/docs/providers.md's lowest credit price at the default
		// mapping: $0.80 for 65 credits.
		{"the lowest credit price", settings.ProviderConfig{Generator: settings.GeneratorOpenAI, CreditUSD: 0.01231}, ""},
		{"just below it", settings.ProviderConfig{Generator: settings.GeneratorOpenAI, CreditUSD: 0.0123}, "gen-3.1-lite-generate-001 on sora-2"},
		{"vllm at no cost", settings.ProviderConfig{Generator: settings.GeneratorOpenAI, OpenAIProfile: settings.ProfileVLLMOmni}, ""},
		{"vllm at its operator's cost", settings.ProviderConfig{Generator: settings.GeneratorOpenAI, OpenAIProfile: settings.ProfileVLLMOmni,
			OpenAIUSDPerSecond: 0.065}, ""},
		{"vllm on dear GPUs", settings.ProviderConfig{Generator: settings.GeneratorOpenAI, OpenAIProfile: settings.ProfileVLLMOmni,
			OpenAIUSDPerSecond: 0.066}, "gen-3.1-lite-generate-001 on the served model: 8 s at 720p without audio costs $0.53"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := openaimodels.Capabilities(tt.p)
			switch {
			case tt.loss == "" && err != nil:
				t.Errorf("Capabilities = %v, want no loss", err)
			case tt.loss != "" && (err == nil || !strings.Contains(err.Error(), tt.loss)):
				t.Errorf("Capabilities = %v, want a loss on %s", err, tt.loss)
			}
		})
	}
}
