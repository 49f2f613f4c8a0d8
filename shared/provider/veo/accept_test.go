package veo_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/genvideo/gen/shared/catalog"
	"github.com/genvideo/gen/shared/params"
	"github.com/genvideo/gen/shared/provider"
	"github.com/genvideo/gen/shared/task"
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
		// A text-to-video start with reference images (issue 37).
		catalog.ReferenceImages: {task.ReferenceRole(0): first, task.ReferenceRole(1): last},
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
						for _, res := range []string{"", "720p", "1080p", "4k"} {
							for _, person := range append(params.PersonGenerations(), "") {
								for _, samples := range []int{1, 2} {
									for _, seed := range []*int64{nil, new(int64(7))} {
										typ, refs := kind, 0
										if kind == catalog.ReferenceImages {
											typ, refs = catalog.TextToVideo, len(imgs)
										}
										aspect := "9:16"
										if d == 8 {
											aspect = "16:9" // the Gemini API's reference images take no other
										}
										r := params.Request{Type: typ, References: refs, Model: model, Params: params.Parameters{
											SampleCount: samples, DurationSeconds: d, AspectRatio: aspect, Resolution: res,
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
										job := provider.Job{TaskID: "gen_1_x", Type: typ, Model: model, Prompt: name, Params: r.Params, Images: imgs}
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
