package params

import (
	"errors"
	"net/url"
	"slices"
	"testing"

	"github.com/genvideo/gen/shared/catalog"
)

// TestReferenceImagesField: referenceImages is one to three upload ids of
// a JSON text-to-video start of a model that takes them; anything else
// is refused naming the field.
func TestReferenceImagesField(t *testing.T) {
	for _, tt := range []struct {
		name, kind, body string
		want             []string // the ids, or nil for a refusal
	}{
		{"three", catalog.TextToVideo, `{"prompt":"x","model":"gen-3.1-generate-001","referenceImages":["a","b","c"]}`, []string{"a", "b", "c"}},
		{"the default model", catalog.TextToVideo, `{"prompt":"x","referenceImages":["a"]}`, []string{"a"}},
		{"four", catalog.TextToVideo, `{"prompt":"x","referenceImages":["a","b","c","d"]}`, nil},
		{"none", catalog.TextToVideo, `{"prompt":"x","referenceImages":[]}`, nil},
		{"twice the same", catalog.TextToVideo, `{"prompt":"x","referenceImages":["a","a"]}`, nil},
		{"an empty id", catalog.TextToVideo, `{"prompt":"x","referenceImages":[""]}`, nil},
		{"not an array", catalog.TextToVideo, `{"prompt":"x","referenceImages":"a"}`, nil},
		{"not strings", catalog.TextToVideo, `{"prompt":"x","referenceImages":[1]}`, nil},
		{"Lite takes none", catalog.TextToVideo, `{"prompt":"x","model":"gen-3.1-lite-generate-001","referenceImages":["a"]}`, nil},
		{"with a first and a last frame", catalog.FirstLastFrame, `{"prompt":"x","referenceImages":["a"]}`, nil},
		{"with an image", catalog.ImageToVideo, `{"prompt":"x","referenceImages":["a"]}`, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r, err := ParseJSON(tt.kind, []byte(tt.body))
			if tt.want == nil {
				var pe *Error
				if !errors.As(err, &pe) || pe.Field != "referenceImages" {
					t.Fatalf("ParseJSON = %v, want a refusal naming referenceImages", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(r.ReferenceUploads, tt.want) || r.References != len(tt.want) || r.Mode() != catalog.ReferenceImages {
				t.Errorf("uploads %v (%d), mode %s; want %v", r.ReferenceUploads, r.References, r.Mode(), tt.want)
			}
		})
	}
	// A form sends them as files: a text field of that name is refused.
	form := url.Values{"prompt": {"x"}, "referenceImages": {"a"}}
	var pe *Error
	if _, err := ParseForm(catalog.TextToVideo, form); !errors.As(err, &pe) || pe.Field != "referenceImages" {
		t.Errorf("ParseForm with a referenceImages text field = %v, want a refusal naming it", err)
	}
}

// TestFourK: 4k is a resolution of the Quality model alone, at its own
// price.
func TestFourK(t *testing.T) {
	r, err := ParseJSON(catalog.TextToVideo, []byte(`{"prompt":"x","model":"gen-3.1-generate-001","resolution":"4k","sampleCount":2}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Cost(); got != 1500 {
		t.Errorf("Cost() = %d, want 2 x 750", got)
	}
	var pe *Error
	if _, err := ParseJSON(catalog.TextToVideo, []byte(`{"prompt":"x","resolution":"4k"}`)); !errors.As(err, &pe) || pe.Field != "resolution" {
		t.Errorf("4k on Fast = %v, want a refusal naming resolution", err)
	}
}

// TestExtensionFields: an extension takes its model from its task, and
// no model, aspect ratio, sample count or reference images of its own.
func TestExtensionFields(t *testing.T) {
	r, err := ParseExtensionJSON("gen-3.1-generate-001", []byte(`{"prompt":"and then","negativePrompt":"rain"}`))
	if err != nil {
		t.Fatal(err)
	}
	if r.Type != catalog.VideoExtension || r.Model != "gen-3.1-generate-001" || r.Params.SampleCount != 1 || r.Params.NegativePrompt != "rain" {
		t.Errorf("Request = %+v, want an extension of the Quality model, one video", r)
	}
	for _, field := range []string{"model", "aspectRatio", "sampleCount", "referenceImages"} {
		body := `{"prompt":"x","` + field + `":` + map[string]string{"model": `"gen-3.1-generate-001"`, "aspectRatio": `"16:9"`,
			"sampleCount": `1`, "referenceImages": `["a"]`}[field] + `}`
		var pe *Error
		if _, err := ParseExtensionJSON("gen-3.1-generate-001", []byte(body)); !errors.As(err, &pe) || pe.Field != field {
			t.Errorf("%s: ParseExtensionJSON = %v, want a refusal naming it", body, err)
		}
	}
	var pe *Error
	if _, err := ParseExtensionJSON("gen-3.1-lite-generate-001", []byte(`{"prompt":"x"}`)); !errors.As(err, &pe) || pe.Field != "model" {
		t.Errorf("an extension of Lite = %v, want INVALID_MODEL", err)
	}
}
