package omnimodels_test

import (
	"strings"
	"testing"

	"github.com/genvideo/gen/shared/catalog"
	"github.com/genvideo/gen/shared/params"
	"github.com/genvideo/gen/shared/provider/omni/omnimodels"
	"github.com/genvideo/gen/shared/settings"
)

// TestStarts: what a start on Omni may ask, as its table says; a start
// it cannot honour is refused before it is charged, naming the field.
func TestStarts(t *testing.T) {
	caps, err := omnimodels.Capabilities(settings.ProviderConfig{Generator: settings.GeneratorOmni})
	if err != nil {
		t.Fatal(err)
	}
	seed := int64(7)
	ok := params.Parameters{SampleCount: 1, DurationSeconds: 8, AspectRatio: "9:16", Resolution: "1080p",
		GenerateAudio: true, EnhancePrompt: true, Seed: &seed, PersonGeneration: "allow_adult"}
	tests := []struct {
		name  string
		typ   string
		edit  func(*params.Parameters)
		field string // "" when taken
	}{
		{"text to video, a seed, 1080p portrait", catalog.TextToVideo, func(*params.Parameters) {}, ""},
		{"image to video", catalog.ImageToVideo, func(*params.Parameters) {}, ""},
		{"first and last frame", catalog.FirstLastFrame, func(*params.Parameters) {}, "model"},
		{"two samples", catalog.TextToVideo, func(p *params.Parameters) { p.SampleCount = 2 }, "sampleCount"},
		{"silent", catalog.TextToVideo, func(p *params.Parameters) { p.GenerateAudio = false }, "generateAudio"},
		{"a negative prompt", catalog.TextToVideo, func(p *params.Parameters) { p.NegativePrompt = "blur" }, "negativePrompt"},
		{"enhancePrompt off", catalog.TextToVideo, func(p *params.Parameters) { p.EnhancePrompt = false }, "enhancePrompt"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := ok
			tt.edit(&p)
			r := params.Request{Model: "gen-3.1-fast-generate-001", Type: tt.typ, Params: p}
			err := caps.Apply(&r)
			var field string
			if e, ok := err.(*params.Error); ok {
				field = e.Field
			} else if err != nil {
				t.Fatalf("Apply = %v, want a *params.Error", err)
			}
			if field != tt.field {
				t.Errorf("Apply refused field %q (%v), want %q", field, err, tt.field)
			}
		})
	}
}

// TestPrices: every start of ours on Omni sells above its cost at the
// default credit price, and the start-up check stops a price below it.
func TestPrices(t *testing.T) {
	tests := []struct {
		name   string
		p      settings.ProviderConfig
		errHas string
	}{
		{"default: 1.2 for every model", settings.ProviderConfig{}, ""},
		{"an unknown model", settings.ProviderConfig{Models: "gen-3.1-fast-generate-001=gemini-omni-9"}, `"gemini-omni-9"`},
		{"Lite on 1.1 sells below cost", settings.ProviderConfig{Models: "gen-3.1-lite-generate-001=gemini-omni-1.1-flash"}, "sells below cost"},
		{"credits too cheap", settings.ProviderConfig{CreditUSD: 0.001}, "sells below cost"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := omnimodels.Capabilities(tt.p)
			_, _, rerr := omnimodels.RouteLimits(tt.p, catalog.IDs())
			for _, err := range []error{err, rerr} {
				switch {
				case tt.errHas == "" && err != nil:
					t.Errorf("err = %v, want none", err)
				case tt.errHas != "" && (err == nil || !strings.Contains(err.Error(), tt.errHas)):
					t.Errorf("err = %v, want one saying %q", err, tt.errHas)
				}
			}
		})
	}
}

func TestDuration(t *testing.T) {
	for _, d := range []int{3, 8, 15} {
		if got, ok := omnimodels.Seconds(omnimodels.Duration(d)); !ok || got != d {
			t.Errorf("Seconds(Duration(%d)) = %d, %v", d, got, ok)
		}
	}
	if _, ok := omnimodels.Seconds("8"); ok {
		t.Errorf(`Seconds("8") read a duration without its unit`)
	}
}
