package params_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/genvideo/gen/shared/catalog"
	"github.com/genvideo/gen/shared/params"
)

// The fuzz targets here run their seed corpus (the f.Add calls and
// testdata/fuzz/<FuzzName>/) as ordinary tests; `go test -fuzz=FuzzParseJSON`
// explores further. Their properties: the validator never panics; a
// refusal is a *params.Error with one of the contract's 400 codes that
// the API can echo; an accepted request is within every bound of the
// contract, whatever the input; and the JSON and form parsers agree.

var kinds = []string{catalog.TextToVideo, catalog.ImageToVideo, catalog.FirstLastFrame}

func FuzzParseJSON(f *testing.F) {
	f.Add(uint8(0), []byte(`{"prompt":"a heron at dawn","seed":7}`))
	f.Add(uint8(2), []byte(`{"prompt":"x","model":"gen-3.1-lite-generate-001"}`))
	f.Add(uint8(1), []byte("{\"prompt\":\"\xff\"}"))
	f.Add(uint8(0), []byte(`{"prompt":"x","model":"gen-3.1-lite-generate-001","mod\u0065l":"gen-3.1-generate-001"}`))
	f.Add(uint8(0), []byte(`{"prompt":"x","seed":{"a":1,"a":2}}`))
	f.Add(uint8(0), []byte(`{"prompt":"x"}]`))
	f.Fuzz(func(t *testing.T, k uint8, body []byte) {
		kind := kinds[int(k)%len(kinds)]
		r, err := params.ParseJSON(kind, body)
		checkParsed(t, kind, r, err)
		if err != nil {
			return
		}
		// Invalid UTF-8 outside a string is not JSON, and inside one it
		// is not text: either way, no request.
		if !utf8.Valid(body) {
			t.Errorf("ParseJSON accepted a body that is not UTF-8: %q", body)
		}
		// Each key once, and nothing after the object.
		if key, ok := repeatsKey(body); ok {
			t.Errorf("ParseJSON accepted %q, which gives the key %q twice", body, key)
		}
		if !json.Valid(body) {
			t.Errorf("ParseJSON accepted %q, which is not one JSON value", body)
		}
		// The same values as a form mean the same request.
		form := map[string][]string{
			"prompt":           {r.Prompt},
			"model":            {r.Model},
			"sampleCount":      {strconv.Itoa(r.Params.SampleCount)},
			"durationSeconds":  {strconv.Itoa(r.Params.DurationSeconds)},
			"aspectRatio":      {r.Params.AspectRatio},
			"resolution":       {r.Params.Resolution},
			"generateAudio":    {strconv.FormatBool(r.Params.GenerateAudio)},
			"enhancePrompt":    {strconv.FormatBool(r.Params.EnhancePrompt)},
			"negativePrompt":   {r.Params.NegativePrompt},
			"seed":             {strconv.FormatInt(r.Params.SeedValue(), 10)},
			"personGeneration": {r.Params.PersonGeneration},
		}
		fr, err := params.ParseForm(kind, form)
		if err != nil {
			t.Fatalf("ParseForm refused what ParseJSON accepted (%q): %v", body, err)
		}
		// The form sends every field; the JSON body may have sent fewer.
		fr.Sent, r.Sent = nil, nil
		if !reflect.DeepEqual(fr, r) {
			t.Errorf("ParseForm = %+v, ParseJSON = %+v for the same values", fr, r)
		}
	})
}

func FuzzParseForm(f *testing.F) {
	f.Add(uint8(1), "prompt=a+cat&sampleCount=2&generateAudio=false&seed=42")
	f.Add(uint8(2), "prompt=x&prompt=y")
	f.Add(uint8(0), "prompt=%FF")
	f.Fuzz(func(t *testing.T, k uint8, query string) {
		kind := kinds[int(k)%len(kinds)]
		form, err := url.ParseQuery(query)
		if err != nil {
			return // not a form; what is left of it is not worth a look
		}
		r, err := params.ParseForm(kind, form)
		checkParsed(t, kind, r, err)
		if err != nil {
			return
		}
		for name, vals := range form {
			if len(vals) != 1 || !slices.Contains(params.Fields, name) {
				t.Errorf("ParseForm accepted field %q with %d values", name, len(vals))
			}
		}
	})
}

// repeatsKey reports a key that some object of the JSON text b gives
// twice, reading b with its own walk rather than the validator's.
func repeatsKey(b []byte) (string, bool) {
	dec := json.NewDecoder(bytes.NewReader(b))
	// Each object is read as its list of keys; a decoded map would have
	// merged them already.
	var object func() (string, bool)
	var value func() (string, bool)
	value = func() (string, bool) {
		tok, err := dec.Token()
		if err != nil {
			return "", false
		}
		switch tok {
		case json.Delim('{'):
			return object()
		case json.Delim('['):
			for dec.More() {
				if k, ok := value(); ok {
					return k, true
				}
			}
			dec.Token()
		}
		return "", false
	}
	object = func() (string, bool) {
		seen := map[string]bool{}
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				return "", false
			}
			k, _ := tok.(string)
			if seen[k] {
				return k, true
			}
			seen[k] = true
			if k, ok := value(); ok {
				return k, true
			}
		}
		dec.Token()
		return "", false
	}
	return value()
}

// checkParsed fails the test unless (r, err) is a refusal of the
// contract's form or a request within every bound.
func checkParsed(t *testing.T, kind string, r params.Request, err error) {
	t.Helper()
	if err != nil {
		var pe *params.Error
		if !errors.As(err, &pe) {
			t.Fatalf("error %v (%T), want a *params.Error", err, err)
		}
		switch pe.Code {
		case params.CodeValidation:
		case params.CodeInvalidPrompt:
			if pe.Field != "prompt" {
				t.Errorf("INVALID_PROMPT on field %q, want prompt", pe.Field)
			}
		case params.CodeInvalidModel:
			if pe.Field != "model" {
				t.Errorf("INVALID_MODEL on field %q, want model", pe.Field)
			}
		default:
			t.Errorf("code %q is not a validation code of the contract", pe.Code)
		}
		if pe.Message == "" {
			t.Error("refusal without a message")
		}
		// The API echoes the value: any JSON client must read it back.
		b, jerr := json.Marshal(pe.Value)
		var back any
		if jerr == nil {
			jerr = json.Unmarshal(b, &back)
		}
		if jerr != nil {
			t.Errorf("value %#v cannot be echoed as JSON a client can read: %v", pe.Value, jerr)
		}
		return
	}
	if r.Type != kind {
		t.Errorf("Type = %q, want %q", r.Type, kind)
	}
	checkText(t, "prompt", r.Prompt, 1, params.MaxPromptChars)
	checkText(t, "negativePrompt", r.Params.NegativePrompt, 0, params.MaxNegativePromptChars)
	m, ok := catalog.Lookup(r.Model)
	if !ok || !m.Supports(kind) {
		t.Fatalf("model %q accepted for %s", r.Model, kind)
	}
	p := r.Params
	if p.SampleCount < 1 || p.SampleCount > params.MaxSampleCount {
		t.Errorf("sampleCount %d accepted", p.SampleCount)
	}
	if !slices.Contains([]int{4, 6, 8}, p.DurationSeconds) {
		t.Errorf("durationSeconds %d accepted", p.DurationSeconds)
	}
	if !slices.Contains([]string{"16:9", "9:16"}, p.AspectRatio) {
		t.Errorf("aspectRatio %q accepted", p.AspectRatio)
	}
	if !m.SupportsResolution(p.Resolution) {
		t.Errorf("resolution %q accepted for %s", p.Resolution, r.Model)
	}
	if !slices.Contains([]string{"allow_adult", "dont_allow", "allow_all"}, p.PersonGeneration) {
		t.Errorf("personGeneration %q accepted", p.PersonGeneration)
	}
	if p.Seed == nil || *p.Seed < 0 || *p.Seed > params.MaxSeed {
		t.Errorf("seed %v accepted", p.Seed)
	}
	if r.Cost() <= 0 {
		t.Errorf("cost %d, want > 0", r.Cost())
	}
}

// checkText fails the test unless s is valid UTF-8 without control
// characters but newline and tab, of min to max characters once trimmed.
func checkText(t *testing.T, field, s string, min, max int) {
	t.Helper()
	if !utf8.ValidString(s) {
		t.Errorf("%s %q accepted: not UTF-8", field, s)
	}
	for _, c := range s {
		if unicode.IsControl(c) && c != '\n' && c != '\t' {
			t.Errorf("%s %q accepted with the control character %U", field, s, c)
		}
	}
	if n := utf8.RuneCountInString(strings.TrimSpace(s)); n < min || n > max {
		t.Errorf("%s of %d characters accepted, want %d..%d", field, n, min, max)
	}
}
