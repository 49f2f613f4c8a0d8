package params_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/genvideo/gen/shared/catalog"
	"github.com/genvideo/gen/shared/params"
)

// unicodeCase is a text field's value, written as a JSON string token
// (between the quotes) and, when it can be sent in a form, as the bytes
// of the form field. want is "" when both accept it, else the error code.
type unicodeCase struct {
	name  string
	json  string // the JSON token's contents
	form  string // the form value; "" when the case has no form spelling
	want  string
	field string // the field the text goes to; "prompt" when empty
}

var (
	emoji  = "🎬"               // 4 bytes, one character
	family = "👨\u200d👩\u200d👧" // 3 emoji joined by zero-width joiners: 5 characters
)

func unicodeCases() []unicodeCase {
	return []unicodeCase{
		{name: "2000 four-byte emoji", json: strings.Repeat(emoji, 2000), form: strings.Repeat(emoji, 2000)},
		{name: "2001 four-byte emoji", json: strings.Repeat(emoji, 2001), form: strings.Repeat(emoji, 2001), want: params.CodeInvalidPrompt},
		{name: "2000 emoji in surrogate escapes", json: strings.Repeat(`\ud83c\udfac`, 2000)},
		{name: "2001 emoji in surrogate escapes", json: strings.Repeat(`\ud83c\udfac`, 2001), want: params.CodeInvalidPrompt},
		{name: "2000 characters and white space around", json: "  " + strings.Repeat("a", 2000) + `\n\t `, form: "  " + strings.Repeat("a", 2000) + "\n\t "},
		{name: "combining accents count as characters", json: strings.Repeat("e\u0301", 1000), form: strings.Repeat("e\u0301", 1000)},
		{name: "one combining accent too many", json: strings.Repeat("e\u0301", 1000) + "\u0301", form: strings.Repeat("e\u0301", 1000) + "\u0301", want: params.CodeInvalidPrompt},
		{name: "zero-width joiner sequences", json: strings.Repeat(family, 400), form: strings.Repeat(family, 400)},
		{name: "zero-width joiner sequences, one over", json: strings.Repeat(family, 400) + "\u200d", form: strings.Repeat(family, 400) + "\u200d", want: params.CodeInvalidPrompt},
		{name: "right-to-left marks and Arabic", json: "\u200fمرحبا\u200e hello \u202bembedded\u202c", form: "\u200fمرحبا\u200e hello \u202bembedded\u202c"},
		{name: "byte order mark inside", json: "\ufeffa prompt", form: "\ufeffa prompt"},
		{name: "line and paragraph separators", json: "one\u2028two\u2029three", form: "one\u2028two\u2029three"},
		{name: "replacement character itself", json: `\ufffd and \\ufffd`, form: "\ufffd and \\ufffd"},
		{name: "escaped backslash before u", json: `\\ud83c is text`, form: `\ud83c is text`},
		{name: "only zero-width characters", json: "\u200b\u200d", form: "\u200b\u200d"},
		{name: "invalid UTF-8 byte", json: "a\xffb", form: "a\xffb", want: params.CodeInvalidPrompt},
		{name: "truncated UTF-8 sequence", json: "a\xf0\x9f\x8e", form: "a\xf0\x9f\x8e", want: params.CodeInvalidPrompt},
		{name: "overlong encoding of slash", json: "a\xc0\xafb", form: "a\xc0\xafb", want: params.CodeInvalidPrompt},
		{name: "surrogate encoded as UTF-8", json: "a\xed\xa0\x80b", form: "a\xed\xa0\x80b", want: params.CodeInvalidPrompt},
		{name: "lone high surrogate escape", json: `a\ud83cb`, want: params.CodeInvalidPrompt},
		{name: "lone high surrogate escape at the end", json: `a\ud83c`, want: params.CodeInvalidPrompt},
		{name: "lone low surrogate escape", json: `\udfaca`, want: params.CodeInvalidPrompt},
		{name: "two high surrogate escapes", json: `\ud83c\ud83c`, want: params.CodeInvalidPrompt},
		{name: "high surrogate before another escape", json: `\ud83c\n`, want: params.CodeInvalidPrompt},
		{name: "NUL", json: `a\u0000b`, form: "a\x00b", want: params.CodeInvalidPrompt},
		{name: "escape", json: `\u001b[31mred`, form: "\x1b[31mred", want: params.CodeInvalidPrompt},
		{name: "carriage return", json: `a\rb`, form: "a\rb", want: params.CodeInvalidPrompt},
		{name: "C1 control NEL", json: "a\u0085b", form: "a\u0085b", want: params.CodeInvalidPrompt},
		{name: "DEL", json: "a\u007fb", form: "a\u007fb", want: params.CodeInvalidPrompt},
		{name: "negative prompt, 1000 emoji", field: "negativePrompt", json: strings.Repeat(emoji, 1000), form: strings.Repeat(emoji, 1000)},
		{name: "negative prompt, 1001 emoji", field: "negativePrompt", json: strings.Repeat(emoji, 1001), form: strings.Repeat(emoji, 1001), want: params.CodeValidation},
		{name: "negative prompt, lone surrogate", field: "negativePrompt", json: `\udc00`, want: params.CodeValidation},
		{name: "negative prompt, invalid byte", field: "negativePrompt", json: "\xfe", form: "\xfe", want: params.CodeValidation},
		{name: "model, invalid byte", field: "model", json: "gen-3.1-generate-001\xff", form: "gen-3.1-generate-001\xff", want: params.CodeInvalidModel},
	}
}

// TestUnicodeEdgeCases: lengths are counted in characters (code points)
// after trimming, format characters are text, control characters and
// anything that is not UTF-8 are refused, and JSON and forms agree.
func TestUnicodeEdgeCases(t *testing.T) {
	for _, tt := range unicodeCases() {
		field := tt.field
		if field == "" {
			field = "prompt"
		}
		t.Run(tt.name, func(t *testing.T) {
			body := `{"prompt":"x","` + field + `":"` + tt.json + `"}`
			if field == "prompt" {
				body = `{"prompt":"` + tt.json + `"}`
			}
			r, err := params.ParseJSON(catalog.ImageToVideo, []byte(body))
			checkUnicode(t, "ParseJSON", r, err, tt.want, field)
			if tt.form == "" {
				return
			}
			form := map[string][]string{"prompt": {"x"}, field: {tt.form}}
			fr, err := params.ParseForm(catalog.ImageToVideo, form)
			checkUnicode(t, "ParseForm", fr, err, tt.want, field)
			if tt.want == "" && fr.Prompt != r.Prompt {
				t.Errorf("ParseForm and ParseJSON read different prompts (%d and %d bytes): want the same text", len(fr.Prompt), len(r.Prompt))
			}
		})
	}
}

func checkUnicode(t *testing.T, call string, r params.Request, err error, want, field string) {
	t.Helper()
	if want == "" {
		if err != nil {
			t.Errorf("%s: %v, want the text accepted", call, err)
		}
		return
	}
	var pe *params.Error
	if !errors.As(err, &pe) {
		t.Fatalf("%s = %+v, %v; want %s on %s", call, r, err, want, field)
	}
	if pe.Code != want || pe.Field != field {
		t.Errorf("%s: %s on %q (%s), want %s on %s", call, pe.Code, pe.Field, pe.Message, want, field)
	}
}
