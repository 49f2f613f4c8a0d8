package strictjson

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

type inner struct {
	Name string `json:"name"`
	N    int    `json:"n,omitempty"`
}

type embedded struct {
	Extra string `json:"extra"`
}

type doc struct {
	embedded
	Day    *int64                     `json:"maxCreditsPerDay"`
	Items  []inner                    `json:"items"`
	ByName map[string][]string        `json:"byName"`
	Raw    map[string]json.RawMessage `json:"raw"`
	Any    any                        `json:"any"`
	When   time.Time                  `json:"when"`
	Untag  string
	Skip   string `json:"-"`
	hidden string
}

func TestUnmarshal(t *testing.T) {
	tests := []struct {
		name string
		in   string
		kind Kind   // 0: accepted
		path string // the member at fault (Error.Member)
	}{
		{"every field", `{"extra":"e","maxCreditsPerDay":5,"items":[{"name":"a","n":1}],"byName":{"x":["y"]},` +
			`"raw":{"a":null},"any":null,"when":"2026-01-02T03:04:05Z","Untag":"u"}`, 0, ""},
		{"white space after", "{} \r\n\t", 0, ""},
		{"the exact name only", `{"maxcreditsperday":5}`, Unknown, "maxcreditsperday"},
		{"the exact name only, upper", `{"MaxCreditsPerDay":5}`, Unknown, "MaxCreditsPerDay"},
		{"an untagged field by its Go name only", `{"untag":"u"}`, Unknown, "untag"},
		{"an unknown field", `{"other":1}`, Unknown, "other"},
		{"a field tagged -", `{"Skip":"x"}`, Unknown, "Skip"},
		{"an unexported field", `{"hidden":"x"}`, Unknown, "hidden"},
		{"an unknown field deeper", `{"items":[{"name":"a"},{"nme":"b"}]}`, Unknown, "items[1].nme"},
		{"repeated", `{"maxCreditsPerDay":500,"maxCreditsPerDay":5}`, Repeated, "maxCreditsPerDay"},
		{"repeated, escaped", `{"maxCreditsPerDay":500,"maxCreditsPerD\u0061y":5}`, Repeated, "maxCreditsPerDay"},
		{"repeated in a case", `{"maxCreditsPerDay":500,"MAXCREDITSPERDAY":5}`, Unknown, "MAXCREDITSPERDAY"},
		{"repeated in a map", `{"byName":{"a":[],"a":["b"]}}`, Repeated, "byName.a"},
		{"repeated in raw", `{"raw":{"a":{"b":1,"b":2}}}`, Repeated, "raw.a.b"},
		{"repeated in any", `{"any":[{"b":1,"b":2}]}`, Repeated, "any[0].b"},
		{"sibling objects share a key", `{"items":[{"name":"a"},{"name":"b"}]}`, 0, ""},
		{"null for a pointer", `{"maxCreditsPerDay":null}`, Null, "maxCreditsPerDay"},
		{"null for a string", `{"extra":null}`, Null, "extra"},
		{"null for a slice", `{"items":null}`, Null, "items"},
		{"null in a slice", `{"items":[null]}`, Null, "items[0]"},
		{"null for a map value", `{"byName":{"a":null}}`, Null, "byName.a"},
		{"null for a time", `{"when":null}`, Null, "when"},
		{"null document", `null`, Null, ""},
		{"trailing object", `{}{}`, Trailing, ""},
		{"trailing brace", `{}}`, Trailing, ""},
		{"trailing number", `{} 1`, Trailing, ""},
		{"not JSON", `{"extra":}`, Syntax, ""},
		{"empty", ``, Syntax, ""},
		{"cut short", `{"items":[`, Syntax, ""},
		{"a string for an integer", `{"maxCreditsPerDay":"5"}`, Type, "maxCreditsPerDay"},
		{"a fraction for an integer", `{"maxCreditsPerDay":5.5}`, Type, "maxCreditsPerDay"},
		{"a wrong type in an embedded struct's field", `{"extra":5}`, Type, "extra"},
		{"a wrong type deeper", `{"items":[{"name":"a","n":"1"}]}`, Type, "items.n"},
		{"out of range", `{"maxCreditsPerDay":1e400}`, Type, "maxCreditsPerDay"},
		{"an array document", `[]`, Type, ""},
		{"a bad time", `{"when":"yesterday"}`, Type, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var d doc
			err := Unmarshal([]byte(tt.in), &d)
			if tt.kind == 0 {
				if err != nil {
					t.Fatalf("Unmarshal(%s) = %v, want it accepted", tt.in, err)
				}
				return
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Unmarshal(%s) = %v, want a refusal", tt.in, err)
			}
			if e.Kind != tt.kind || e.Member() != tt.path {
				t.Errorf("Unmarshal(%s) = kind %d at %q (%v), want kind %d at %q", tt.in, e.Kind, e.Member(), e, tt.kind, tt.path)
			}
		})
	}
}

// What is accepted decodes as encoding/json decodes it.
func TestUnmarshalDecodes(t *testing.T) {
	in := `{"extra":"e","maxCreditsPerDay":5,"items":[{"name":"a","n":1}],"byName":{"x":["y"]},"raw":{"a":null},"Untag":"u"}`
	var got, want doc
	if err := Unmarshal([]byte(in), &got); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(in), &want); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Unmarshal = %+v, want %+v", got, want)
	}
}

// An error never quotes a value: a setting may hold a secret.
func TestErrorsQuoteNoValue(t *testing.T) {
	const secret = "sk-SECRET"
	for _, in := range []string{
		`{"extra":"` + secret + `"} x`,
		`{"extra":"` + secret + `","extra":"` + secret + `"}`,
		`{"maxCreditsPerDay":"` + secret + `"}`,
		`{"extra":"` + secret + `` + "\x01" + `"}`,
		`{"items":[{"name":"` + secret + `","n":"` + secret + `"}]}`,
		`{"when":"` + secret + `"}`,
		`{"maxCreditsPerDay":1e400` + strings.Repeat("0", 3) + `}`,
	} {
		var d doc
		err := Unmarshal([]byte(in), &d)
		if err == nil {
			t.Fatalf("Unmarshal(%s) accepted", in)
		}
		if strings.Contains(err.Error(), "SECRET") || strings.Contains(err.Error(), "1e400") {
			t.Errorf("Unmarshal(%s) = %q, which quotes the value", in, err)
		}
	}
}

// The case hint names the field a member differs from in case only.
func TestUnknownSuggests(t *testing.T) {
	var d doc
	err := Unmarshal([]byte(`{"MAXCREDITSPERDAY":5}`), &d)
	if err == nil || !strings.Contains(err.Error(), `did you mean "maxCreditsPerDay"`) {
		t.Errorf("Unmarshal = %v, want a hint naming maxCreditsPerDay", err)
	}
}
