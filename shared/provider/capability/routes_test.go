package capability_test

import (
	"errors"
	"maps"
	"reflect"
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
	table := capability.Routed(map[string][]capability.RouteLimits{fast: {
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

// Issue 33: a mode may take fewer durations than the model (the Gemini
// API's first and last frame: 8 seconds only). A start of that mode at
// another duration is refused naming the mode and what it takes; other
// modes keep every duration. In a model of two routes the mode is
// narrowed only where every route that makes it narrows it.
func TestModeDurations(t *testing.T) {
	everyFLF := wide
	everyFLF.Modes = append([]string{catalog.FirstLastFrame}, wide.Modes...)
	everyFLF.PersonGeneration = maps.Clone(wide.PersonGeneration)
	everyFLF.PersonGeneration[catalog.FirstLastFrame] = []string{"allow_adult"}
	narrowFLF := everyFLF
	narrowFLF.ModeDurations = map[string][]int{catalog.FirstLastFrame: {8}}

	start := func(table capability.Table, kind string, seconds int) error {
		req := params.Request{Model: fast, Type: kind, Params: params.Parameters{SampleCount: 1, DurationSeconds: seconds,
			AspectRatio: "16:9", Resolution: "720p", EnhancePrompt: true, PersonGeneration: "allow_adult"}}
		return table.Apply(&req)
	}
	one := capability.Table{Backend: "the Gemini API", Models: map[string]capability.Limits{fast: narrowFLF}}
	var pe *params.Error
	if err := start(one, catalog.FirstLastFrame, 4); !errors.As(err, &pe) || pe.Field != "durationSeconds" ||
		!strings.Contains(pe.Message, catalog.FirstLastFrame) || !strings.HasSuffix(pe.Message, "allowed: 8") {
		t.Errorf("first-last-frame at 4 s = %v, want a refusal naming durationSeconds, the mode and 8", err)
	}
	for _, tt := range []struct {
		kind    string
		seconds int
	}{{catalog.FirstLastFrame, 8}, {catalog.ImageToVideo, 4}} {
		if err := start(one, tt.kind, tt.seconds); err != nil {
			t.Errorf("%s at %d s = %v, want it taken", tt.kind, tt.seconds, err)
		}
	}

	for _, tt := range []struct {
		name   string
		second capability.Limits
		want   map[string][]int
	}{
		{"the other route makes it at every duration", everyFLF, nil},
		{"the other route does not make it", wide, map[string][]int{catalog.FirstLastFrame: {8}}},
		{"both narrow it", narrowFLF, map[string][]int{catalog.FirstLastFrame: {8}}},
	} {
		table := capability.Routed(map[string][]capability.RouteLimits{fast: {
			{Name: "gemini", Backend: "the Gemini API", Limits: narrowFLF},
			{Name: "other", Backend: "Vertex AI", Limits: tt.second},
		}})
		if got := table.Models[fast].ModeDurations; !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: the union narrows %v, want %v", tt.name, got, tt.want)
		}
		err := start(table, catalog.FirstLastFrame, 4)
		if (err == nil) != (tt.want == nil) {
			t.Errorf("%s: first-last-frame at 4 s = %v, want taken %v", tt.name, err, tt.want == nil)
		}
	}
}
