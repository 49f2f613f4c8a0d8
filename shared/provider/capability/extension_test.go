package capability_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/genvideo/gen/shared/catalog"
	"github.com/genvideo/gen/shared/params"
	"github.com/genvideo/gen/shared/provider/capability"
)

const quality = "gen-3.1-generate-001"

// veoLike is a backend like Veo 3.1 on the Gemini API with the
// extensions: reference images at 8 s and 16:9 with allow_adult,
// extensions of up to 141 s at 8 s and 720p with allow_all, 4K at 8 s.
func veoLike(extend bool) capability.Limits {
	l := capability.Limits{
		Modes:          []string{catalog.TextToVideo, catalog.ReferenceImages},
		Durations:      []int{4, 6, 8},
		Resolutions:    map[int][]string{4: {"720p"}, 6: {"720p"}, 8: {"720p", "1080p", "4k"}},
		AspectRatios:   []string{"16:9", "9:16"},
		MaxSampleCount: 1,
		PersonGeneration: map[string][]string{catalog.TextToVideo: {"allow_all"}, catalog.ReferenceImages: {"allow_adult"},
			catalog.VideoExtension: {"allow_all"}},
		ModeDurations:    map[string][]int{catalog.ReferenceImages: {8}, catalog.VideoExtension: {8}},
		ModeResolutions:  map[string][]string{catalog.VideoExtension: {"720p"}},
		ModeAspectRatios: map[string][]string{catalog.ReferenceImages: {"16:9"}},
	}
	if extend {
		l.Modes = append(l.Modes, catalog.VideoExtension)
		l.MaxExtendSeconds, l.ExtendResolutions, l.ExtendWithin = 141, []string{"720p"}, 48*time.Hour
	}
	return l
}

// TestReferenceImages: a start with reference images is checked as its
// own mode, and one the backend cannot honour is refused naming the
// field, before any charge.
func TestReferenceImages(t *testing.T) {
	table := capability.Table{Backend: "Veo-like", Name: "veo", Models: map[string]capability.Limits{quality: veoLike(false)}}
	bare := veoLike(false)
	bare.Modes = []string{catalog.TextToVideo}
	without := capability.Table{Backend: "refless", Models: map[string]capability.Limits{quality: bare}}
	for _, tt := range []struct {
		name   string
		table  capability.Table
		body   string
		field  string // refused naming it, or "" for taken
		person string // personGeneration filled in when taken
	}{
		{"taken, allow_adult filled in", table, `{"prompt":"x","model":"gen-3.1-generate-001","resolution":"720p"}`, "", "allow_adult"},
		{"6 seconds", table, `{"prompt":"x","model":"gen-3.1-generate-001","durationSeconds":6,"resolution":"720p"}`, "durationSeconds", ""},
		{"9:16", table, `{"prompt":"x","model":"gen-3.1-generate-001","aspectRatio":"9:16","resolution":"720p"}`, "aspectRatio", ""},
		{"allow_all", table, `{"prompt":"x","model":"gen-3.1-generate-001","personGeneration":"allow_all","resolution":"720p"}`, "personGeneration", ""},
		{"a backend without them", without, `{"prompt":"x","model":"gen-3.1-generate-001","resolution":"720p"}`, "referenceImages", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := parse(t, catalog.TextToVideo, tt.body)
			r.References = 2
			before := r.Params
			err := tt.table.Apply(&r)
			if tt.field != "" {
				var pe *params.Error
				if !errors.As(err, &pe) || pe.Field != tt.field {
					t.Fatalf("Apply = %v, want a refusal naming %s", err, tt.field)
				}
				if r.Params != before {
					t.Errorf("a refused request was changed")
				}
				return
			}
			if err != nil {
				t.Fatalf("Apply: %v", err)
			}
			if r.Params.PersonGeneration != tt.person {
				t.Errorf("personGeneration %q, want %q", r.Params.PersonGeneration, tt.person)
			}
		})
	}
}

// TestExtension: an extension is checked against the route that made
// its video alone, whatever the model's other routes take: a route
// that is gone, one that extends nothing, and a video too long are
// refused naming taskId; the mode's narrowings apply.
func TestExtension(t *testing.T) {
	routed := capability.Routed(map[string][]capability.RouteLimits{quality: {
		{Name: "first", Backend: "A", Limits: veoLike(false)},
		{Name: "second", Backend: "B", Limits: veoLike(true)},
	}})
	single := capability.Table{Backend: "the Gemini API", Name: "gemini", Models: map[string]capability.Limits{quality: veoLike(true)}}
	for _, tt := range []struct {
		name    string
		table   capability.Table
		route   string
		seconds int
		body    string
		field   string
	}{
		{"its route", routed, "second", 8, `{"prompt":"x"}`, ""},
		{"the one backend", single, "gemini", 141, `{"prompt":"x"}`, ""},
		{"a route that extends nothing", routed, "first", 8, `{"prompt":"x"}`, "taskId"},
		{"a route gone", routed, "third", 8, `{"prompt":"x"}`, "taskId"},
		{"another backend", single, "vertex", 8, `{"prompt":"x"}`, "taskId"},
		{"too long", single, "gemini", 148, `{"prompt":"x"}`, "taskId"},
		{"a 1080p video", single, "gemini", 8, `{"prompt":"x"}`, "taskId"},
		{"a video past its 2 days", single, "gemini", 8, `{"prompt":"x"}`, "taskId"},
		{"1080p", single, "gemini", 8, `{"prompt":"x","resolution":"1080p"}`, "resolution"},
		{"6 seconds", single, "gemini", 8, `{"prompt":"x","durationSeconds":6}`, "durationSeconds"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r, err := params.ParseExtensionJSON(quality, []byte(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			src := &params.Source{TaskID: "gen_1", Route: tt.route, Seconds: tt.seconds, Resolution: "720p"}
			switch tt.name {
			case "a 1080p video":
				src.Resolution = "1080p"
			case "a video past its 2 days":
				src.Age = 49 * time.Hour
			}
			r.Extends = src
			err = tt.table.Apply(&r)
			if tt.field != "" {
				var pe *params.Error
				if !errors.As(err, &pe) || pe.Field != tt.field {
					t.Fatalf("Apply = %v, want a refusal naming %s", err, tt.field)
				}
				return
			}
			if err != nil {
				t.Fatalf("Apply: %v", err)
			}
			if r.Extends != src || r.Params.Resolution != "720p" || r.Params.PersonGeneration != "allow_all" || r.Params.DurationSeconds != 8 {
				t.Errorf("Apply left %+v, extends %v; want 8 s at 720p, allow_all, the source kept", r.Params, r.Extends)
			}
		})
	}
	if _, err := params.ParseExtensionJSON(quality, []byte(`{"prompt":"x","aspectRatio":"9:16"}`)); err == nil || !strings.Contains(err.Error(), "aspectRatio") {
		t.Errorf("an extension's aspectRatio: %v, want a refusal", err)
	}
}

// TestHonoursMode: a router asks a route about a job's mode, so that a
// job with reference images skips a route that takes none.
func TestHonoursMode(t *testing.T) {
	bare := veoLike(false)
	bare.Modes = []string{catalog.TextToVideo}
	p := params.Parameters{SampleCount: 1, DurationSeconds: 8, AspectRatio: "16:9", Resolution: "720p", PersonGeneration: "allow_adult",
		EnhancePrompt: true}
	if (capability.RouteLimits{Backend: "bare", Limits: bare}).Honours(quality, catalog.ReferenceImages, p) {
		t.Error("a route without reference images honours a job with them")
	}
	if !(capability.RouteLimits{Backend: "veo", Limits: veoLike(false)}).Honours(quality, catalog.ReferenceImages, p) {
		t.Error("a route with reference images refuses a job with them")
	}
}
