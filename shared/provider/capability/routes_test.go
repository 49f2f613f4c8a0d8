package capability_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/genvideo/gen/shared/catalog"
	"github.com/genvideo/gen/shared/params"
	"github.com/genvideo/gen/shared/provider/capability"
)

const fast = "gen-3.1-fast-generate-001"

// wide is a backend like Veo 3.1 on Vertex AI: 720p and 1080p at every
// duration, four videos, a seed, allow_adult or dont_allow.
var wide = capability.Limits{
	Modes:          []string{catalog.TextToVideo, catalog.ImageToVideo},
	Durations:      []int{4, 6, 8},
	Resolutions:    map[int][]string{4: {"720p", "1080p"}, 6: {"720p", "1080p"}, 8: {"720p", "1080p"}},
	AspectRatios:   []string{"16:9", "9:16"},
	MaxSampleCount: 4,
	PersonGeneration: map[string][]string{catalog.TextToVideo: {"allow_adult", "dont_allow"},
		catalog.ImageToVideo: {"allow_adult", "dont_allow"}},
	Seed: true, NegativePrompt: true,
}

// A model of two routes takes what one of them honours, the first
// route's defaults first; refuses what neither does, naming what some
// route takes; and leaves out a seed the client did not send, so that
// the seedless route can take the task too.
func TestRoutedApply(t *testing.T) {
	table := capability.Routed(map[string][]capability.Route{fast: {
		{Name: "vertex", Backend: "Vertex AI", Limits: wide},
		{Name: "gemini", Backend: "the Gemini API", Limits: narrow.Models[fast]},
	}})
	tests := []struct {
		name, kind, body string
		// routes are the routes that honour the start as Apply leaves
		// it; field is the field of a refusal.
		routes []string
		field  string
	}{
		{"image to video: both routes", catalog.ImageToVideo, `{"prompt":"x","model":"` + fast + `"}`, []string{"vertex", "gemini"}, ""},
		{"two videos: the first route only", catalog.ImageToVideo, `{"prompt":"x","model":"` + fast + `","sampleCount":2}`, []string{"vertex"}, ""},
		{"a seed sent: the first route only", catalog.ImageToVideo, `{"prompt":"x","model":"` + fast + `","seed":7}`, []string{"vertex"}, ""},
		{"allow_all: the second route only", catalog.TextToVideo, `{"prompt":"x","model":"` + fast + `","personGeneration":"allow_all"}`, []string{"gemini"}, ""},
		// The union takes each value; no one route takes both: the first
		// route's refusal.
		{"allow_all and a seed: neither", catalog.TextToVideo, `{"prompt":"x","model":"` + fast + `","personGeneration":"allow_all","seed":1}`, nil, "personGeneration"},
		{"first and last frames: neither", catalog.FirstLastFrame, `{"prompt":"x","model":"` + fast + `"}`, nil, "model"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := parse(t, tt.kind, tt.body)
			err := table.Apply(&r)
			if tt.field != "" {
				var pe *params.Error
				if !errors.As(err, &pe) || pe.Field != tt.field {
					t.Fatalf("Apply = %v, want a refusal of %s", err, tt.field)
				}
				return
			}
			if err != nil {
				t.Fatalf("Apply: %v", err)
			}
			var got []string
			for _, route := range table.Routes[fast] {
				if route.Honours(r.Model, r.Type, r.Params) {
					got = append(got, route.Name)
				}
			}
			if strings.Join(got, ",") != strings.Join(tt.routes, ",") {
				t.Errorf("routes honouring %+v = %v, want %v", r.Params, got, tt.routes)
			}
		})
	}
	// GET /api/gen/models shows the union.
	u := table.Models[fast]
	if u.MaxSampleCount != 4 || !u.Seed || len(u.PersonGeneration[catalog.TextToVideo]) != 3 || len(u.Resolutions[4]) != 2 {
		t.Errorf("union = %+v, want what either route takes", u)
	}
}
