package params

import (
	"errors"
	"testing"

	"github.com/genvideo/gen/shared/catalog"
)

// TestJSONShapes: a body is one JSON object, each of whose keys is given
// once (issue 10, item 3). encoding/json alone keeps the last of two
// equal keys, so that a request naming two models was charged for the
// second; and it stops at the end of the first value, so that a stray
// bracket after the object went unseen.
func TestJSONShapes(t *testing.T) {
	const lite, quality = `"gen-3.1-lite-generate-001"`, `"gen-3.1-generate-001"`
	tests := []struct {
		name  string
		body  string
		field string // of the refusal; "-" when the body is accepted
	}{
		{"two models", `{"prompt":"x","model":` + lite + `,"model":` + quality + `}`, "model"},
		{"two prompts", `{"prompt":"x","prompt":"y"}`, "prompt"},
		{"the same value twice", `{"prompt":"x","seed":1,"seed":1}`, "seed"},
		{"a null and a value", `{"prompt":"x","model":null,"model":` + quality + `}`, "model"},
		{"two nulls", `{"prompt":"x","seed":null,"seed":null}`, "seed"},
		{"the second key escaped", `{"prompt":"x","model":` + lite + `,"mod\u0065l":` + quality + `}`, "model"},
		{"both keys escaped", `{"\u0070rompt":"x","pr\u006fmpt":"y"}`, "prompt"},
		{"an escaped slash", `{"prompt":"x","seed":1,"se\/ed":2,"seed":3}`, "seed"},
		{"repeated far apart", `{"prompt":"x","model":` + lite + `,"seed":1,"sampleCount":1,"durationSeconds":4,"model":` + quality + `}`, "model"},
		{"repeated in a nested object", `{"prompt":"x","seed":{"a":1,"a":2}}`, "seed"},
		{"repeated deeper", `{"prompt":"x","seed":[{"a":{"b":1,"b":2}}]}`, "seed"},
		{"sibling objects may share a key (refused as a wrong type)", `{"prompt":"x","seed":[{"a":1},{"a":2}]}`, "seed"},
		{"keys differing in case", `{"prompt":"x","model":` + lite + `,"Model":` + quality + `}`, "Model"},
		{"keys differing by a space", `{"prompt":"x","model ":` + quality + `}`, "model "},
		{"a string value equal to a key", `{"prompt":"model","model":` + lite + `}`, "-"},
		{"a stray closing brace after the object", `{"prompt":"x"}}`, ""},
		{"a stray closing bracket after the object", `{"prompt":"x"}]`, ""},
		{"two objects", `{"prompt":"x"}{"prompt":"y"}`, ""},
		{"an object and a number", `{"prompt":"x"} 1`, ""},
		{"a top-level array", `[{"prompt":"x"}]`, ""},
		{"a top-level string", `"{\"prompt\":\"x\"}"`, ""},
		{"white space after the object", "{\"prompt\":\"x\"}\r\n\t ", "-"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := ParseJSON(catalog.TextToVideo, []byte(tt.body))
			if tt.field == "-" {
				if err != nil {
					t.Fatalf("ParseJSON(%s) = %v, want it accepted", tt.body, err)
				}
				return
			}
			var pe *Error
			if !errors.As(err, &pe) {
				t.Fatalf("ParseJSON(%s) = %+v, %v; want a refusal", tt.body, r, err)
			}
			if pe.Code != CodeValidation || pe.Field != tt.field {
				t.Errorf("ParseJSON(%s) refused with %s on field %q (%s), want %s on %q",
					tt.body, pe.Code, pe.Field, pe.Message, CodeValidation, tt.field)
			}
		})
	}
}
