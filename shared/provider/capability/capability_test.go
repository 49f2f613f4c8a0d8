package capability_test

import (
	"cmp"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/genvideo/gen/shared/catalog"
	"github.com/genvideo/gen/shared/params"
	"github.com/genvideo/gen/shared/provider/capability"
)

// narrow is a backend like Veo 3.1 on the Gemini API: 1080p at 8 s
// only, one video, no seed, personGeneration by mode.
var narrow = capability.Table{Backend: "a narrow backend", Models: map[string]capability.Limits{
	"gen-3.1-fast-generate-001": {
		Modes:          []string{catalog.TextToVideo, catalog.ImageToVideo},
		Durations:      []int{4, 6, 8},
		Resolutions:    map[int][]string{4: {"720p"}, 6: {"720p"}, 8: {"720p", "1080p"}},
		AspectRatios:   []string{"16:9", "9:16"},
		MaxSampleCount: 1,
		PersonGeneration: map[string][]string{catalog.TextToVideo: {"allow_all"},
			catalog.ImageToVideo: {"allow_adult"}},
		NegativePrompt: true,
	},
}}

// withAudio is table t with audio rule a for every model.
func withAudio(t capability.Table, a capability.Audio) capability.Table {
	out := capability.Table{Backend: t.Backend, Models: map[string]capability.Limits{}}
	for id, l := range t.Models {
		l.Audio = a
		out.Models[id] = l
	}
	return out
}

func parse(t *testing.T, kind, body string) params.Request {
	t.Helper()
	r, err := params.ParseJSON(kind, []byte(body))
	if err != nil {
		t.Fatalf("ParseJSON(%s): %v", body, err)
	}
	return r
}

func TestApply(t *testing.T) {
	tests := []struct {
		name  string
		table capability.Table
		kind  string
		body  string
		// want: the parameters after Apply, or field: the field a
		// refusal names and allowed: what its message lists.
		want           func(p *params.Parameters)
		field, allowed string
	}{
		{"builtin keeps the contract's defaults", capability.Builtin(), catalog.TextToVideo, `{"prompt":"x","seed":3}`,
			func(p *params.Parameters) {}, "", ""},
		{"builtin takes allow_all", capability.Builtin(), catalog.ImageToVideo, `{"prompt":"x","seed":3,"personGeneration":"allow_all"}`,
			func(p *params.Parameters) { p.PersonGeneration = "allow_all" }, "", ""},
		{"builtin takes enhancePrompt false", capability.Builtin(), catalog.TextToVideo, `{"prompt":"x","seed":3,"enhancePrompt":false}`,
			func(p *params.Parameters) { p.EnhancePrompt = false }, "", ""},
		{"default person per mode", narrow, catalog.TextToVideo, `{"prompt":"x"}`,
			func(p *params.Parameters) { p.PersonGeneration, p.Seed = "allow_all", nil }, "", ""},
		{"default person for an image", narrow, catalog.ImageToVideo, `{"prompt":"x"}`,
			func(p *params.Parameters) { p.PersonGeneration, p.Seed = "allow_adult", nil }, "", ""},
		{"default resolution at 4 s", narrow, catalog.TextToVideo, `{"prompt":"x","durationSeconds":4}`,
			func(p *params.Parameters) {
				p.DurationSeconds, p.Resolution, p.PersonGeneration, p.Seed = 4, "720p", "allow_all", nil
			}, "", ""},
		{"1080p at 4 s", narrow, catalog.TextToVideo, `{"prompt":"x","durationSeconds":4,"resolution":"1080p"}`,
			nil, "resolution", `"720p"`},
		{"a person value of another mode", narrow, catalog.TextToVideo, `{"prompt":"x","personGeneration":"allow_adult"}`,
			nil, "personGeneration", `"allow_all"`},
		{"two videos", narrow, catalog.TextToVideo, `{"prompt":"x","sampleCount":2}`, nil, "sampleCount", "allowed: 1"},
		{"a seed", narrow, catalog.TextToVideo, `{"prompt":"x","seed":42}`, nil, "seed", "takes no seed"},
		{"no enhancement", narrow, catalog.TextToVideo, `{"prompt":"x","enhancePrompt":false}`, nil, "enhancePrompt", "allowed: true"},
		{"a mode it does not make", narrow, catalog.FirstLastFrame, `{"prompt":"x"}`, nil, "model", "first-last-frame"},
		{"audio always: no audio", withAudio(narrow, capability.AudioAlways), catalog.TextToVideo,
			`{"prompt":"x","generateAudio":false}`, nil, "generateAudio", "allowed: true"},
		{"audio always: audio by default", withAudio(narrow, capability.AudioAlways), catalog.TextToVideo, `{"prompt":"x"}`,
			func(p *params.Parameters) { p.PersonGeneration, p.Seed = "allow_all", nil }, "", ""},
		{"audio never: silent by default", withAudio(narrow, capability.AudioNever), catalog.TextToVideo, `{"prompt":"x"}`,
			func(p *params.Parameters) { p.PersonGeneration, p.Seed, p.GenerateAudio = "allow_all", nil, false }, "", ""},
		{"audio never: audio asked", withAudio(narrow, capability.AudioNever), catalog.TextToVideo,
			`{"prompt":"x","generateAudio":true}`, nil, "generateAudio", "allowed: false"},
		{"audio optional: no audio", narrow, catalog.TextToVideo, `{"prompt":"x","generateAudio":false}`,
			func(p *params.Parameters) { p.PersonGeneration, p.Seed = "allow_all", nil }, "", ""},
		{"a model it does not serve", narrow, catalog.TextToVideo, `{"prompt":"x","model":"gen-3.1-generate-001"}`, nil, "model", "not available"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := parse(t, tt.kind, tt.body)
			before := r.Params
			err := tt.table.Apply(&r)
			if tt.field != "" {
				var pe *params.Error
				if !errors.As(err, &pe) || pe.Field != tt.field || !strings.Contains(pe.Message, tt.allowed) ||
					!strings.Contains(pe.Message, tt.table.Backend) && pe.Field != "seed" {
					t.Fatalf("Apply = %v, want a refusal naming %s and %q", err, tt.field, tt.allowed)
				}
				if !reflect.DeepEqual(r.Params, before) {
					t.Errorf("a refused request was changed: %+v, was %+v", r.Params, before)
				}
				return
			}
			if err != nil {
				t.Fatalf("Apply: %v", err)
			}
			want := before
			tt.want(&want)
			if !reflect.DeepEqual(r.Params, want) {
				t.Errorf("Params = %+v (seed %v), want %+v (seed %v)", r.Params, r.Params.Seed, want, want.Seed)
			}
		})
	}
}

// TestBuiltinTakesTheContract: the built-in generator accepts every
// value of the contract, for every model and mode the catalog has; the
// extensions (4K, reference images, extension) are Veo's, and it
// refuses them before any charge.
func TestBuiltinTakesTheContract(t *testing.T) {
	b := capability.Builtin()
	for _, m := range catalog.All() {
		if m.SupportsResolution(catalog.Resolution4K) {
			r := params.Request{Type: catalog.TextToVideo, Model: m.ID, Params: params.Parameters{SampleCount: 1,
				DurationSeconds: 8, AspectRatio: "16:9", Resolution: catalog.Resolution4K, PersonGeneration: "allow_adult"},
				Sent: map[string]bool{"resolution": true}}
			if err := b.Apply(&r); err == nil {
				t.Errorf("%s: the built-in generator took 4k", m.ID)
			}
		}
		if m.Supports(catalog.ReferenceImages) {
			r := params.Request{Type: catalog.TextToVideo, Model: m.ID, References: 1, Params: params.Parameters{SampleCount: 1,
				DurationSeconds: 8, AspectRatio: "16:9", Resolution: "720p", PersonGeneration: "allow_adult"}}
			var pe *params.Error
			if err := b.Apply(&r); !errors.As(err, &pe) || pe.Field != "referenceImages" {
				t.Errorf("%s: the built-in generator answered %v to reference images, want a refusal naming referenceImages", m.ID, err)
			}
		}
		for _, kind := range []string{catalog.TextToVideo, catalog.ImageToVideo, catalog.FirstLastFrame} {
			if !m.Supports(kind) {
				continue
			}
			for _, d := range params.Durations() {
				for _, res := range m.Resolutions {
					if res == catalog.Resolution4K {
						continue
					}
					for _, person := range params.PersonGenerations() {
						for n := 1; n <= params.MaxSampleCount; n++ {
							r := params.Request{Type: kind, Model: m.ID, Params: params.Parameters{SampleCount: n,
								DurationSeconds: d, AspectRatio: "9:16", Resolution: res, PersonGeneration: person},
								Sent: map[string]bool{"resolution": true, "personGeneration": true}}
							if err := b.Apply(&r); err != nil {
								t.Errorf("%s %s %d s %s %s x%d: %v", m.ID, kind, d, res, person, n, err)
							}
						}
					}
				}
			}
		}
	}
}

// TestApplyWithoutSent: a request the validator did not make (no Sent)
// counts as sending every field: its values are checked, never replaced
// by defaults.
func TestApplyWithoutSent(t *testing.T) {
	r := params.Request{Type: catalog.TextToVideo, Model: "gen-3.1-fast-generate-001", Params: params.Parameters{
		SampleCount: 1, DurationSeconds: 4, AspectRatio: "16:9", Resolution: "720p", PersonGeneration: "dont_allow"}}
	if err := capability.Builtin().Apply(&r); err != nil || r.Params.PersonGeneration != "dont_allow" {
		t.Errorf("Apply = %v, personGeneration %q; want dont_allow kept", err, r.Params.PersonGeneration)
	}
	r.Params.PersonGeneration = "allow_adult"
	var pe *params.Error
	if err := narrow.Apply(&r); !errors.As(err, &pe) || pe.Field != "personGeneration" {
		t.Errorf("Apply on the narrow backend = %v, want a refusal naming personGeneration", err)
	}
}

// TestCheckPrices: a start is a loss when what it sells for at the
// credit price is below what its route costs, for every value of
// generateAudio the route's audio rule takes and none other.
func TestCheckPrices(t *testing.T) {
	// 8 s at $0.10 a second: $0.80. Lite sells for 65 credits with audio
	// and 35 without: $0.975 and $0.525 at $0.015.
	priced := func(a capability.Audio) capability.Priced {
		l := narrow.Models["gen-3.1-fast-generate-001"]
		l.Audio = a
		usd := map[string]float64{"720p": 0.10, "1080p": 0.10}
		return capability.Priced{ID: "host-model", Limits: l, Audio: usd, Silent: usd}
	}
	for _, tt := range []struct {
		audio capability.Audio
		loss  string // "" no loss
	}{
		{capability.AudioOptional, "gen-3.1-lite-generate-001 on host-model: 8 s at 720p without audio"},
		{capability.AudioAlways, ""},
		{capability.AudioNever, "gen-3.1-lite-generate-001 on host-model: 8 s at 720p without audio"},
	} {
		t.Run(cmp.Or(string(tt.audio), "optional"), func(t *testing.T) {
			err := capability.CheckPrices("a host", func(string) (capability.Priced, bool) { return priced(tt.audio), true }, 0.015)
			switch {
			case tt.loss == "" && err != nil:
				t.Errorf("CheckPrices = %v, want no loss", err)
			case tt.loss != "" && (err == nil || !strings.Contains(err.Error(), tt.loss)):
				t.Errorf("CheckPrices = %v, want a loss on %s", err, tt.loss)
			case err != nil && tt.audio == capability.AudioNever && strings.Contains(err.Error(), "with audio"):
				t.Errorf("CheckPrices counts audio starts of a route that makes none: %v", err)
			}
		})
	}
	err := capability.CheckPrices("a host", func(string) (capability.Priced, bool) { return capability.Priced{ID: "gone"}, false }, 0.015)
	if err == nil || !strings.Contains(err.Error(), `"gone" has no price`) {
		t.Errorf("CheckPrices of an unpriced route = %v", err)
	}
}
