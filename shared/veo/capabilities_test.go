package veo_test

import (
	"errors"
	"fmt"
	"maps"
	"strings"
	"testing"

	"github.com/genvideo/gen/shared/catalog"
	"github.com/genvideo/gen/shared/params"
	"github.com/genvideo/gen/shared/settings"
	"github.com/genvideo/gen/shared/task"
	"github.com/genvideo/gen/shared/veo"
	"github.com/genvideo/gen/shared/workflow"
)

// TestServiceAcceptsOnlyWhatTheFakeAccepts tries every combination of
// the contract's values of the fields the backends restrict, on every
// model and mode: each one the service accepts at start on a backend
// (and so charges for) is one the strict fake of that backend accepts
// too. No start is charged and then refused by the provider.
func TestServiceAcceptsOnlyWhatTheFakeAccepts(t *testing.T) {
	first := writeImage(t, "first.png", png)
	last := writeImage(t, "last.jpg", jpeg)
	images := map[string]map[string]string{
		catalog.TextToVideo:    nil,
		catalog.ImageToVideo:   {task.RoleImage: first},
		catalog.FirstLastFrame: {task.RoleFirstFrame: first, task.RoleLastFrame: last},
	}
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			fake, url := newFake(t)
			p := b.provider(t, url)
			caps := b.caps(t)
			accepted, refused := 0, 0
			for _, model := range catalog.IDs() {
				for kind, imgs := range images {
					for _, d := range params.Durations() {
						for _, res := range []string{"", "720p", "1080p"} {
							for _, person := range append(params.PersonGenerations(), "") {
								for _, samples := range []int{1, 2} {
									for _, seed := range []*int64{nil, new(int64(7))} {
										r := params.Request{Type: kind, Model: model, Params: params.Parameters{
											SampleCount: samples, DurationSeconds: d, AspectRatio: "9:16", Resolution: res,
											GenerateAudio: true, EnhancePrompt: true, Seed: seed, PersonGeneration: person},
											Sent: map[string]bool{"resolution": res != "", "personGeneration": person != "", "seed": seed != nil}}
										if res == "" {
											m, _ := catalog.Lookup(model)
											r.Params.Resolution = m.DefaultResolution()
										}
										if person == "" {
											r.Params.PersonGeneration = "allow_adult"
										}
										if err := caps.Apply(&r); err != nil {
											var pe *params.Error
											if !errors.As(err, &pe) || pe.Field == "" {
												t.Fatalf("Apply(%+v) = %v, want a *params.Error naming a field", r, err)
											}
											refused++
											continue
										}
										name := fmt.Sprintf("%s %s %ds %s %s x%d seed %v", model, kind, d, res, person, samples, seed != nil)
										job := workflow.Job{TaskID: "gen_1_x", Model: model, Prompt: name, Params: r.Params, Images: imgs}
										if _, err := p.Submit(t.Context(), job); err != nil {
											t.Errorf("%s: accepted at start, refused by the provider: %v", name, err)
										}
										accepted++
									}
								}
							}
						}
					}
				}
			}
			if accepted == 0 || refused == 0 {
				t.Errorf("%d accepted, %d refused: the combinations do not exercise the table", accepted, refused)
			}
			if n := len(fake.Submits()); n != accepted {
				t.Errorf("the fake saw %d submits for %d accepted starts", n, accepted)
			}
		})
	}
}

// TestLiteRunsOnLite: by default each tier runs on its own Veo model on
// both APIs, Lite on Veo 3.1 Lite, and no default is a retired id.
func TestLiteRunsOnLite(t *testing.T) {
	for _, api := range []string{settings.GeneratorVertex, settings.GeneratorGemini} {
		m := veo.DefaultModels(api)
		want := map[string]string{"gen-3.1-generate-001": "veo-3.1-generate-001",
			"gen-3.1-fast-generate-001": "veo-3.1-fast-generate-001", "gen-3.1-lite-generate-001": "veo-3.1-lite-generate-001"}
		if !maps.Equal(m, want) {
			t.Errorf("%s defaults %v, want %v", api, m, want)
		}
		for ours, theirs := range m {
			if _, ok, retired := veo.Lookup(api, theirs); !ok || retired {
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
			if err := veo.CheckPrices(api, veo.DefaultModels(api), settings.DefaultCreditUSD); err != nil {
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
					err := veo.CheckPrices(api, veo.WithDefaults(api, tt.overrides), credit)
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
	_, err := veo.Capabilities(p)
	if err == nil || !strings.Contains(err.Error(), "veo-3.1-lite-generate-preview") || !strings.Contains(err.Error(), "veo-3.1-lite-generate-001") {
		t.Errorf("Capabilities = %v, want an error naming the unknown model and the known ones", err)
	}
}

// providerSettings are the generator settings as the server reads them.
func providerSettings(t *testing.T, api, models, credit string) settings.Provider {
	t.Helper()
	r := settings.NewReader(settings.Vars{settings.Generator: api, settings.VertexProject: "p",
		settings.VertexAccessToken: token, settings.GeminiAPIKey: key, settings.ProviderModels: models,
		settings.CreditUSD: credit}.Lookup)
	p := r.Provider()
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	return p
}
