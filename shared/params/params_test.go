package params

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/genvideo/gen/shared/catalog"
)

func TestParseJSONDefaults(t *testing.T) {
	r, err := ParseJSON(catalog.TextToVideo, []byte(`{"prompt":"a red fox","seed":7}`))
	if err != nil {
		t.Fatalf("ParseJSON: %v", err)
	}
	want := Parameters{SampleCount: 1, DurationSeconds: 8, AspectRatio: "16:9", Resolution: "1080p",
		GenerateAudio: true, EnhancePrompt: true, Seed: new(int64(7)), PersonGeneration: "allow_adult"}
	if !reflect.DeepEqual(r.Params, want) {
		t.Errorf("Params = %+v, want %+v", r.Params, want)
	}
	if r.Model != catalog.DefaultModel || r.Prompt != "a red fox" || r.Type != catalog.TextToVideo {
		t.Errorf("Request = %+v, want default model and the prompt as sent", r)
	}
	if got := r.Cost(); got != 190 {
		t.Errorf("Cost() = %d, want 190", got)
	}
}

func TestParseJSONLiteDefaultsTo720p(t *testing.T) {
	r, err := ParseJSON(catalog.TextToVideo, []byte(`{"prompt":"x","model":"gen-3.1-lite-generate-001"}`))
	if err != nil {
		t.Fatalf("ParseJSON: %v", err)
	}
	if r.Params.Resolution != "720p" {
		t.Errorf("Resolution = %q, want 720p", r.Params.Resolution)
	}
}

func TestRandomSeedWhenAbsent(t *testing.T) {
	seen := map[int64]bool{}
	for i := 0; i < 20; i++ {
		r, err := ParseJSON(catalog.TextToVideo, []byte(`{"prompt":"x"}`))
		if err != nil {
			t.Fatal(err)
		}
		if r.Params.Seed == nil || *r.Params.Seed < 0 || *r.Params.Seed > MaxSeed {
			t.Fatalf("Seed = %v, want one in 0..MaxSeed", r.Params.Seed)
		}
		seen[*r.Params.Seed] = true
	}
	if len(seen) < 2 {
		t.Errorf("20 requests without a seed got %d distinct seeds, want random seeds", len(seen))
	}
}

func TestCost(t *testing.T) {
	tests := []struct {
		body string
		want int
	}{
		{`{"prompt":"x","model":"gen-3.1-generate-001","sampleCount":2}`, 1000},
		{`{"prompt":"x","model":"gen-3.1-generate-001","generateAudio":false}`, 250},
		{`{"prompt":"x","model":"gen-3.1-lite-generate-001","sampleCount":2,"generateAudio":false}`, 70},
		{`{"prompt":"x","sampleCount":2,"generateAudio":true}`, 380},
	}
	for _, tt := range tests {
		r, err := ParseJSON(catalog.TextToVideo, []byte(tt.body))
		if err != nil {
			t.Fatalf("ParseJSON(%s): %v", tt.body, err)
		}
		if got := r.Cost(); got != tt.want {
			t.Errorf("Cost(%s) = %d, want %d", tt.body, got, tt.want)
		}
	}
}

func TestParseJSONErrors(t *testing.T) {
	long := strings.Repeat("é", MaxPromptChars+1)
	tests := []struct {
		name, kind, body string
		code, field      string
	}{
		{"not json", catalog.TextToVideo, `prompt=x`, CodeValidation, ""},
		{"array", catalog.TextToVideo, `["x"]`, CodeValidation, ""},
		{"empty body", catalog.TextToVideo, ``, CodeValidation, ""},
		{"two objects", catalog.TextToVideo, `{"prompt":"x"}{"prompt":"y"}`, CodeValidation, ""},
		{"unknown field", catalog.TextToVideo, `{"prompt":"x","sampleCnt":2}`, CodeValidation, "sampleCnt"},
		{"missing prompt", catalog.TextToVideo, `{"model":"gen-3.1-generate-001"}`, CodeInvalidPrompt, "prompt"},
		{"null prompt", catalog.TextToVideo, `{"prompt":null}`, CodeInvalidPrompt, "prompt"},
		{"blank prompt", catalog.TextToVideo, `{"prompt":"  \n\t "}`, CodeInvalidPrompt, "prompt"},
		{"prompt not string", catalog.TextToVideo, `{"prompt":42}`, CodeInvalidPrompt, "prompt"},
		{"prompt too long", catalog.TextToVideo, `{"prompt":"` + long + `"}`, CodeInvalidPrompt, "prompt"},
		{"prompt control char", catalog.TextToVideo, `{"prompt":"a\u0000b"}`, CodeInvalidPrompt, "prompt"},
		{"prompt escape char", catalog.TextToVideo, `{"prompt":"a\u001bb"}`, CodeInvalidPrompt, "prompt"},
		{"unknown model", catalog.TextToVideo, `{"prompt":"x","model":"gen-9"}`, CodeInvalidModel, "model"},
		{"model not string", catalog.TextToVideo, `{"prompt":"x","model":1}`, CodeInvalidModel, "model"},
		{"lite first-last", catalog.FirstLastFrame, `{"prompt":"x","model":"gen-3.1-lite-generate-001"}`, CodeInvalidModel, "model"},
		{"sampleCount 0", catalog.TextToVideo, `{"prompt":"x","sampleCount":0}`, CodeValidation, "sampleCount"},
		{"sampleCount 3", catalog.TextToVideo, `{"prompt":"x","sampleCount":3}`, CodeValidation, "sampleCount"},
		{"sampleCount fraction", catalog.TextToVideo, `{"prompt":"x","sampleCount":1.5}`, CodeValidation, "sampleCount"},
		{"sampleCount string", catalog.TextToVideo, `{"prompt":"x","sampleCount":"2"}`, CodeValidation, "sampleCount"},
		{"sampleCount huge", catalog.TextToVideo, `{"prompt":"x","sampleCount":1e400}`, CodeValidation, "sampleCount"},
		{"duration 5", catalog.TextToVideo, `{"prompt":"x","durationSeconds":5}`, CodeValidation, "durationSeconds"},
		{"duration bool", catalog.TextToVideo, `{"prompt":"x","durationSeconds":true}`, CodeValidation, "durationSeconds"},
		{"aspect 1:1", catalog.TextToVideo, `{"prompt":"x","aspectRatio":"1:1"}`, CodeValidation, "aspectRatio"},
		{"resolution 4k", catalog.TextToVideo, `{"prompt":"x","resolution":"4k"}`, CodeValidation, "resolution"},
		{"lite 1080p", catalog.TextToVideo, `{"prompt":"x","model":"gen-3.1-lite-generate-001","resolution":"1080p"}`, CodeValidation, "resolution"},
		{"audio string", catalog.TextToVideo, `{"prompt":"x","generateAudio":"yes"}`, CodeValidation, "generateAudio"},
		{"enhance number", catalog.TextToVideo, `{"prompt":"x","enhancePrompt":1}`, CodeValidation, "enhancePrompt"},
		{"negative too long", catalog.TextToVideo, `{"prompt":"x","negativePrompt":"` + strings.Repeat("n", MaxNegativePromptChars+1) + `"}`, CodeValidation, "negativePrompt"},
		{"seed negative", catalog.TextToVideo, `{"prompt":"x","seed":-1}`, CodeValidation, "seed"},
		{"seed too big", catalog.TextToVideo, `{"prompt":"x","seed":4294967296}`, CodeValidation, "seed"},
		{"person", catalog.TextToVideo, `{"prompt":"x","personGeneration":"allow_children"}`, CodeValidation, "personGeneration"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseJSON(tt.kind, []byte(tt.body))
			var perr *Error
			if !errors.As(err, &perr) {
				t.Fatalf("ParseJSON(%s) error = %v, want *Error", tt.body, err)
			}
			if perr.Code != tt.code || perr.Field != tt.field {
				t.Errorf("ParseJSON(%s) = code %s field %q, want code %s field %q (%s)",
					tt.body, perr.Code, perr.Field, tt.code, tt.field, perr.Message)
			}
			if perr.Message == "" {
				t.Error("error has no message")
			}
		})
	}
}

func TestParseJSONAccepts(t *testing.T) {
	tests := []struct{ name, body string }{
		{"max prompt", `{"prompt":"` + strings.Repeat("🎬", MaxPromptChars) + `"}`},
		{"newline and tab", `{"prompt":"line one\n\tline two"}`},
		{"seed bounds", `{"prompt":"x","seed":4294967295}`},
		{"seed zero", `{"prompt":"x","seed":0}`},
		{"plain integer", `{"prompt":"x","durationSeconds":6}`},
		{"null optional", `{"prompt":"x","seed":null,"model":null}`},
		{"every field", `{"prompt":"x","model":"gen-3.1-generate-001","sampleCount":2,"durationSeconds":4,"aspectRatio":"9:16","resolution":"720p","generateAudio":false,"enhancePrompt":false,"negativePrompt":"blur","seed":1,"personGeneration":"dont_allow"}`},
	}
	for _, tt := range tests {
		if _, err := ParseJSON(catalog.TextToVideo, []byte(tt.body)); err != nil {
			t.Errorf("%s: ParseJSON = %v, want success", tt.name, err)
		}
	}
}

func TestParseForm(t *testing.T) {
	r, err := ParseForm(catalog.ImageToVideo, map[string][]string{
		"prompt": {"a cat"}, "sampleCount": {"2"}, "generateAudio": {"false"}, "seed": {"42"},
		"model": {"gen-3.1-lite-generate-001"},
	})
	if err != nil {
		t.Fatalf("ParseForm: %v", err)
	}
	if r.Params.SampleCount != 2 || r.Params.GenerateAudio || r.Params.SeedValue() != 42 || r.Cost() != 70 {
		t.Errorf("ParseForm = %+v (cost %d), want 2 samples, no audio, seed 42, cost 70", r.Params, r.Cost())
	}

	errs := []struct {
		name  string
		form  map[string][]string
		field string
	}{
		{"bool word", map[string][]string{"prompt": {"x"}, "generateAudio": {"yes"}}, "generateAudio"},
		{"int word", map[string][]string{"prompt": {"x"}, "sampleCount": {"two"}}, "sampleCount"},
		{"int plus", map[string][]string{"prompt": {"x"}, "seed": {"+5"}}, "seed"},
		{"duplicate", map[string][]string{"prompt": {"x", "y"}}, "prompt"},
		{"unknown", map[string][]string{"prompt": {"x"}, "colour": {"red"}}, "colour"},
		{"missing prompt", map[string][]string{"model": {"gen-3.1-generate-001"}}, "prompt"},
	}
	for _, tt := range errs {
		_, err := ParseForm(catalog.ImageToVideo, tt.form)
		var perr *Error
		if !errors.As(err, &perr) || perr.Field != tt.field {
			t.Errorf("%s: ParseForm error = %v, want an *Error on field %q", tt.name, err, tt.field)
		}
	}
}

// A model declared without audio-generation (GEN_MODELS) is silent by
// default and charged its silent price; a start asking it for audio is
// refused, naming the field. Not parallel: the catalog is the process's.
func TestSilentModel(t *testing.T) {
	silent := catalog.Model{ID: "wan-2.2-720p", Name: "Wan", Capabilities: []string{catalog.TextToVideo},
		Resolutions: []string{"720p"}, CreditsPerVideo: 40, CreditsPerVideoNoAudio: 30}
	t.Cleanup(catalog.Install(catalog.Builtin().With([]catalog.Model{silent}, "")))
	r, err := ParseJSON(catalog.TextToVideo, []byte(`{"prompt":"x","model":"wan-2.2-720p"}`))
	if err != nil {
		t.Fatal(err)
	}
	if r.Params.GenerateAudio || r.Cost() != 30 {
		t.Errorf("generateAudio %v, cost %d; want false and the silent price, 30", r.Params.GenerateAudio, r.Cost())
	}
	_, err = ParseJSON(catalog.TextToVideo, []byte(`{"prompt":"x","model":"wan-2.2-720p","generateAudio":true}`))
	var e *Error
	if !errors.As(err, &e) || e.Field != "generateAudio" || e.Code != CodeValidation {
		t.Errorf("audio asked of a silent model: %v, want a validation error naming generateAudio", err)
	}
}
