package veomodels_test

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/genvideo/gen/shared/catalog"
	"github.com/genvideo/gen/shared/provider/veo"
	"github.com/genvideo/gen/shared/provider/veo/veomodels"
	"github.com/genvideo/gen/shared/settings"
)

// TestLiteRunsOnLite: by default each tier runs on its own Veo model on
// both APIs, Lite on Veo 3.1 Lite, and no default is a retired id.
func TestLiteRunsOnLite(t *testing.T) {
	for _, api := range []string{settings.GeneratorVertex, settings.GeneratorGemini} {
		m := veomodels.DefaultModels(api)
		want := map[string]string{"gen-3.1-generate-001": "veo-3.1-generate-001",
			"gen-3.1-fast-generate-001": "veo-3.1-fast-generate-001", "gen-3.1-lite-generate-001": "veo-3.1-lite-generate-001"}
		if !maps.Equal(m, want) {
			t.Errorf("%s defaults %v, want %v", api, m, want)
		}
		for ours, theirs := range m {
			if _, ok, retired := veomodels.Lookup(api, theirs); !ok || retired {
				t.Errorf("%s: %s maps to %s, known %v, retired %v", api, ours, theirs, ok, retired)
			}
		}
	}
}

// TestPrices: at the default credit price no model sells any start it
// can be asked for below its cost at Google on either API; a remap that
// would (Lite on a Fast or Quality model), or a credit price too low,
// is caught, and stops the stack at start-up.
func TestPrices(t *testing.T) {
	for _, api := range []string{settings.GeneratorVertex, settings.GeneratorGemini} {
		t.Run(api, func(t *testing.T) {
			if err := veomodels.CheckPrices(api, veomodels.DefaultModels(api), settings.DefaultCreditUSD); err != nil {
				t.Errorf("default mapping at the default credit price: %v", err)
			}
			for _, tt := range []struct {
				name      string
				overrides map[string]string
				credit    float64
				want      string
			}{
				{"lite on fast", map[string]string{"gen-3.1-lite-generate-001": "veo-3.1-fast-generate-001"}, 0, "gen-3.1-lite-generate-001 on veo-3.1-fast-generate-001"},
				{"lite on quality", map[string]string{"gen-3.1-lite-generate-001": "veo-3.1-generate-001"}, 0, "gen-3.1-lite-generate-001 on veo-3.1-generate-001"},
				{"fast on quality", map[string]string{"gen-3.1-fast-generate-001": "veo-3.1-generate-001"}, 0, "gen-3.1-fast-generate-001 on veo-3.1-generate-001"},
				{"credits too cheap", nil, 0.005, "gen-3.1-generate-001 on veo-3.1-generate-001"},
			} {
				t.Run(tt.name, func(t *testing.T) {
					credit := tt.credit
					if credit == 0 {
						credit = settings.DefaultCreditUSD
					}
					err := veomodels.CheckPrices(api, veomodels.WithDefaults(api, tt.overrides), credit)
					if err == nil || !strings.Contains(err.Error(), tt.want) {
						t.Errorf("CheckPrices = %v, want a loss on %s", err, tt.want)
					}
					var pairs []string
					for k, v := range tt.overrides {
						pairs = append(pairs, k+"="+v)
					}
					p := providerSettings(t, api, strings.Join(pairs, ","), fmt.Sprint(credit))
					if _, err := veo.FromSettings(t.Context(), p, ""); err == nil {
						t.Errorf("FromSettings accepted a mapping that sells below cost")
					}
				})
			}
		})
	}
}

// TestUnknownProviderModel: a mapping to a model the tables do not know
// stops the stack at start-up, naming the models they know.
func TestUnknownProviderModel(t *testing.T) {
	p := providerSettings(t, settings.GeneratorGemini, "gen-3.1-lite-generate-001=veo-3.1-lite-generate-preview", "")
	_, err := veomodels.Capabilities(p)
	if err == nil || !strings.Contains(err.Error(), "veo-3.1-lite-generate-preview") || !strings.Contains(err.Error(), "veo-3.1-lite-generate-001") {
		t.Errorf("Capabilities = %v, want an error naming the unknown model and the known ones", err)
	}
}

// TestRetiredIDsStopStartUp: the ids Google shut down are retired on each
// API (the Veo 2.0 and 3.0 ids on 2026-06-30 on both, issue 33), and a
// mapping to one, of the generator or of a route, stops the stack at
// start-up with an error that says it was retired.
func TestRetiredIDsStopStartUp(t *testing.T) {
	veo2and3 := []string{"veo-2.0-generate-001", "veo-3.0-generate-001", "veo-3.0-fast-generate-001"}
	for api, ids := range map[string][]string{
		settings.GeneratorVertex: slices.Concat(veo2and3, []string{"veo-3.1-generate-preview", "veo-3.1-fast-generate-preview"}),
		settings.GeneratorGemini: slices.Concat(veo2and3, []string{"veo-3.1-generate-preview", "veo-3.1-lite-generate-preview"}),
	} {
		for _, id := range ids {
			t.Run(api+"/"+id, func(t *testing.T) {
				if _, ok, retired := veomodels.Lookup(api, id); ok || !retired {
					t.Errorf("Lookup: known %v, retired %v; want unknown and retired", ok, retired)
				}
				p := providerSettings(t, api, "gen-3.1-fast-generate-001="+id, "")
				if _, err := veomodels.Capabilities(p); err == nil || !strings.Contains(err.Error(), id) || !strings.Contains(err.Error(), "retired") {
					t.Errorf("Capabilities = %v, want an error naming %s as retired", err, id)
				}
				if _, err := veo.FromSettings(t.Context(), p, ""); err == nil {
					t.Error("FromSettings accepted a mapping to a retired model")
				}
				if _, _, err := veomodels.RouteLimits(p, []string{"gen-3.1-fast-generate-001"}); err == nil || !strings.Contains(err.Error(), id) {
					t.Errorf("RouteLimits = %v, want an error naming %s", err, id)
				}
			})
		}
	}
}

// providerSettings are the generator settings as the server reads them.
func providerSettings(t *testing.T, api, models, credit string) settings.ProviderConfig {
	t.Helper()
	r := settings.NewReader(settings.Vars{settings.Generator: api, settings.VertexProject: "p",
		settings.VertexAccessToken: "ya29.test", settings.GeminiAPIKey: "AIza-test", settings.ProviderModels: models,
		settings.CreditUSD: credit}.Lookup)
	p := r.ProviderConfig()
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestLowestCreditPrice: the lowest credit price each API starts with
// at the default mapping is the one infra/docs/providers.md gives ("Real
// videos with Veo"): $3.20 for 250 credits on the Gemini API, $0.40 for
// 35 on Vertex AI.
func TestLowestCreditPrice(t *testing.T) {
	for _, tt := range []struct {
		api               string
		loses, breaksEven float64
	}{
		{settings.GeneratorVertex, 0.01142, 0.01143},
		{settings.GeneratorGemini, 0.01279, 0.0128},
	} {
		m := veomodels.DefaultModels(tt.api)
		if err := veomodels.CheckPrices(tt.api, m, tt.loses); err == nil {
			t.Errorf("%s at $%g a credit: no loss found", tt.api, tt.loses)
		}
		if err := veomodels.CheckPrices(tt.api, m, tt.breaksEven); err != nil {
			t.Errorf("%s at $%g a credit: %v", tt.api, tt.breaksEven, err)
		}
	}
}

// TestLiteMakesFirstAndLastFrame: Google's pages give Veo 3.1 Lite a
// first and a last frame on both APIs, so a Fast model remapped to it
// keeps first-last-frame (8 seconds only on the Gemini API).
func TestLiteMakesFirstAndLastFrame(t *testing.T) {
	for _, api := range []string{settings.GeneratorVertex, settings.GeneratorGemini} {
		p := providerSettings(t, api, "gen-3.1-fast-generate-001=veo-3.1-lite-generate-001", "")
		table, err := veomodels.Capabilities(p)
		if err != nil {
			t.Fatalf("%s: %v", api, err)
		}
		l := table.Models["gen-3.1-fast-generate-001"]
		if !slices.Contains(l.Modes, catalog.FirstLastFrame) {
			t.Errorf("%s: Fast on Lite makes %v, want first-last-frame among them", api, l.Modes)
		}
		if got, want := l.ModeDurations[catalog.FirstLastFrame], map[string][]int{settings.GeneratorGemini: {8}}[api]; !slices.Equal(got, want) {
			t.Errorf("%s: first-last-frame durations %v, want %v", api, got, want)
		}
	}
}

// TestReferenceImagesExtensionAnd4K: what each API's Veo models take of
// the extensions, as Google's pages give them (veomodels' sources):
// reference images and extensions on Veo 3.1 and Fast, at 8 seconds,
// extensions at 720p; the Gemini API's reference images at 16:9 only;
// 4K at 8 seconds on Veo 3.1 alone (Fast's 4K price is not known, Lite
// has none); Lite extends videos on Vertex AI only.
func TestReferenceImagesExtensionAnd4K(t *testing.T) {
	for _, tt := range []struct {
		api, model     string
		refs, extend   bool
		maxExtend      int
		res8           []string
		refsAspects    []string
		extendPersons  []string
		refsResolution []string
	}{
		{settings.GeneratorGemini, "veo-3.1-generate-001", true, true, 141, []string{"720p", "1080p", "4k"}, []string{"16:9"}, []string{"allow_all"}, nil},
		{settings.GeneratorGemini, "veo-3.1-fast-generate-001", true, true, 141, []string{"720p", "1080p"}, []string{"16:9"}, []string{"allow_all"}, nil},
		{settings.GeneratorGemini, "veo-3.1-lite-generate-001", false, false, 0, []string{"720p", "1080p"}, nil, nil, nil},
		{settings.GeneratorVertex, "veo-3.1-generate-001", true, true, 30, []string{"720p", "1080p", "4k"}, []string{"16:9", "9:16"}, []string{"allow_adult", "dont_allow"}, []string{"720p", "1080p"}},
		{settings.GeneratorVertex, "veo-3.1-fast-generate-001", true, true, 30, []string{"720p", "1080p"}, []string{"16:9", "9:16"}, []string{"allow_adult", "dont_allow"}, []string{"720p", "1080p"}},
		{settings.GeneratorVertex, "veo-3.1-lite-generate-001", false, true, 30, []string{"720p", "1080p"}, nil, []string{"allow_adult", "dont_allow"}, nil},
	} {
		t.Run(tt.api+"/"+tt.model, func(t *testing.T) {
			m, ok, _ := veomodels.Lookup(tt.api, tt.model)
			if !ok {
				t.Fatal("unknown model")
			}
			l := m.Limits
			if got := slices.Contains(l.Modes, catalog.ReferenceImages); got != tt.refs {
				t.Errorf("reference images %v, want %v", got, tt.refs)
			}
			if got := slices.Contains(l.Modes, catalog.VideoExtension); got != tt.extend {
				t.Errorf("extension %v, want %v", got, tt.extend)
			}
			if l.MaxExtendSeconds != tt.maxExtend {
				t.Errorf("MaxExtendSeconds %d, want %d", l.MaxExtendSeconds, tt.maxExtend)
			}
			wantExtendRes := map[string][]string{settings.GeneratorGemini: {"720p"}, settings.GeneratorVertex: {"720p", "1080p", "4k"}}[tt.api]
			if !tt.extend {
				wantExtendRes = nil
			}
			if !slices.Equal(l.ExtendResolutions, wantExtendRes) {
				t.Errorf("ExtendResolutions %v, want %v", l.ExtendResolutions, wantExtendRes)
			}
			if want := map[bool]time.Duration{true: 48 * time.Hour}[tt.extend && tt.api == settings.GeneratorGemini]; l.ExtendWithin != want {
				t.Errorf("ExtendWithin %v, want %v (the Gemini API keeps its videos 2 days)", l.ExtendWithin, want)
			}
			if !slices.Equal(l.Resolutions[8], tt.res8) {
				t.Errorf("resolutions at 8 s %v, want %v", l.Resolutions[8], tt.res8)
			}
			for _, d := range []int{4, 6} {
				if slices.Contains(l.Resolutions[d], catalog.Resolution4K) {
					t.Errorf("4k at %d s", d)
				}
			}
			if _, priced := m.Audio[catalog.Resolution4K]; priced != slices.Contains(tt.res8, catalog.Resolution4K) {
				t.Errorf("a 4k price %v, want one exactly where 4k is rendered", priced)
			}
			if tt.refs {
				if got := l.AspectRatiosOf(catalog.ReferenceImages); !slices.Equal(got, tt.refsAspects) {
					t.Errorf("reference images' aspect ratios %v, want %v", got, tt.refsAspects)
				}
				if got := l.DurationsOf(catalog.ReferenceImages); !slices.Equal(got, []int{8}) {
					t.Errorf("reference images' durations %v, want [8]", got)
				}
				if got := l.ModeResolutions[catalog.ReferenceImages]; !slices.Equal(got, tt.refsResolution) {
					t.Errorf("reference images' resolutions %v, want %v", got, tt.refsResolution)
				}
			}
			if tt.extend {
				if got := l.ModeResolutions[catalog.VideoExtension]; !slices.Equal(got, []string{"720p"}) {
					t.Errorf("extension's resolutions %v, want [720p]", got)
				}
				if got := l.DurationsOf(catalog.VideoExtension); !slices.Equal(got, []int{8}) {
					t.Errorf("extension's durations %v, want [8]", got)
				}
				if got := l.PersonGeneration[catalog.VideoExtension]; !slices.Equal(got, tt.extendPersons) {
					t.Errorf("extension's personGeneration %v, want %v", got, tt.extendPersons)
				}
			}
		})
	}
}

// TestFourKPrice: 4K is sold at its own price: a Quality model priced
// at its 1080p credits at 4K would sell below cost on both APIs at a
// credit price every other start is sold at a profit, and the start-up
// check says so, naming 4k.
func TestFourKPrice(t *testing.T) {
	credit := map[string]float64{settings.GeneratorVertex: 0.012, settings.GeneratorGemini: settings.DefaultCreditUSD}
	for api, usd := range credit {
		if err := veomodels.CheckPrices(api, veomodels.DefaultModels(api), usd); err != nil {
			t.Errorf("%s at $%g: %v", api, usd, err)
		}
	}
	m, _ := catalog.Lookup("gen-3.1-generate-001")
	m.ResolutionCredits = nil
	defer catalog.Install(catalog.Builtin().With([]catalog.Model{m}, ""))()
	for api, usd := range credit {
		err := veomodels.CheckPrices(api, veomodels.DefaultModels(api), usd)
		if err == nil || !strings.Contains(err.Error(), "8 s at 4k") {
			t.Errorf("%s: CheckPrices = %v, want a loss at 4k", api, err)
		}
	}
}
