package params

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/genvideo/gen/shared/catalog"
	"github.com/genvideo/gen/shared/strictjson"
)

// ParseJSON validates the JSON body of a start request of the given type.
// The body is one JSON object and nothing after it, read by the one
// strict decoder (strictjson): a key given twice in any object of it is
// refused, as a form field given twice is. A null parameter counts as
// absent, as the OpenAPI document says (x-null-means-absent).
func ParseJSON(kind string, body []byte) (Request, error) {
	present, err := jsonFields(body)
	if err != nil {
		return Request{}, err
	}
	return validate(kind, present, "")
}

// jsonFields reads a start's JSON body, one object and nothing after it,
// with the one strict decoder: its members by name, a null one left out.
func jsonFields(body []byte) (map[string]value, error) {
	var fields map[string]json.RawMessage
	if err := strictjson.Unmarshal(body, &fields); err != nil {
		return nil, JSONError(err, "request body must be a JSON object", "request body must hold a single JSON object")
	}
	present := make(map[string]value, len(fields))
	for name, raw := range fields {
		if string(bytes.TrimSpace(raw)) == "null" {
			continue
		}
		present[name] = jsonValue(raw)
	}
	return present, nil
}

// CheckExtensionJSON checks what ParseExtensionJSON checks of an
// extension's body without knowing its model: one JSON object, each key
// once, no field unknown or not taken by an extension. The extension's
// endpoint asks it before it looks up the task, so that a body that can
// mean two things is refused as such whatever the task.
func CheckExtensionJSON(body []byte) error {
	var fields map[string]json.RawMessage
	if err := strictjson.Unmarshal(body, &fields); err != nil {
		return JSONError(err, "request body must be a JSON object", "request body must hold a single JSON object")
	}
	present := map[string]value{}
	for name := range fields {
		present[name] = jsonValue(fields[name])
	}
	if err := checkFields(catalog.VideoExtension, present); err != nil {
		return err
	}
	return nil
}

// ParseExtensionJSON validates the JSON body of an extension
// (POST /api/gen/extend/{taskId}) of a video made by model: the body of
// a start without model, aspectRatio, sampleCount or referenceImages.
func ParseExtensionJSON(model string, body []byte) (Request, error) {
	present, err := jsonFields(body)
	if err != nil {
		return Request{}, err
	}
	return validate(catalog.VideoExtension, present, model)
}

// JSONError is the VALIDATION_ERROR of a body strictjson refused:
// shape is the message of a body that is not the JSON object it must be,
// single that of an object followed by more; a fault inside the object
// names its top-level field, never quoting a value.
func JSONError(err error, shape, single string) *Error {
	var se *strictjson.Error
	if !errors.As(err, &se) {
		return &Error{Code: CodeValidation, Message: shape}
	}
	switch {
	case se.Kind == strictjson.Trailing:
		return &Error{Code: CodeValidation, Message: single}
	case se.Kind == strictjson.Syntax, se.Field() == "":
		return &Error{Code: CodeValidation, Message: shape}
	}
	return &Error{Code: CodeValidation, Field: se.Field(), Message: se.Error()}
}

// ParseForm validates the non-file fields of a multipart start request.
// Every value is a string and must parse by the same rules as JSON fields.
func ParseForm(kind string, form map[string][]string) (Request, error) {
	present, err := formFields(form)
	if err != nil {
		return Request{}, err
	}
	return validate(kind, present, "")
}

// ParseExtensionForm is ParseExtensionJSON for fields given as a form's
// strings (the OpenAI-compatible extension, shared/openaiapi), by the
// same rules.
func ParseExtensionForm(model string, form map[string][]string) (Request, error) {
	present, err := formFields(form)
	if err != nil {
		return Request{}, err
	}
	return validate(catalog.VideoExtension, present, model)
}

func formFields(form map[string][]string) (map[string]value, error) {
	present := make(map[string]value, len(form))
	for name, vals := range form {
		if len(vals) != 1 {
			return nil, &Error{Code: CodeValidation, Field: name,
				Message: fmt.Sprintf("field %q is given %d times; send it once", name, len(vals))}
		}
		present[name] = formValue(vals[0])
	}
	return present, nil
}

type jsonValue json.RawMessage

func (v jsonValue) raw() any {
	var out any
	dec := json.NewDecoder(bytes.NewReader(v))
	dec.UseNumber()
	if dec.Decode(&out) != nil {
		return nil
	}
	return echoable(out)
}

// echoable replaces in v each number that a float64 cannot hold (1e400)
// by its text: an error response echoes the value, and a client must be
// able to decode that response.
func echoable(v any) any {
	switch x := v.(type) {
	case json.Number:
		if _, err := strconv.ParseFloat(x.String(), 64); err != nil {
			return x.String()
		}
	case []any:
		for i := range x {
			x[i] = echoable(x[i])
		}
	case map[string]any:
		for k := range x {
			x[k] = echoable(x[k])
		}
	}
	return v
}

func (v jsonValue) asString(field string) (string, *Error) {
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return "", &Error{Code: CodeValidation, Field: field, Value: v.raw(), Message: field + " must be a string"}
	}
	// encoding/json turns bytes that are not UTF-8, and escapes of lone
	// surrogates, into U+FFFD without a word. A form field with those
	// bytes is refused, so a JSON one is too: a field means the same
	// thing in both.
	if !jsonText(v) {
		return "", &Error{Code: CodeValidation, Field: field, Message: field + " is not valid UTF-8"}
	}
	return s, nil
}

// jsonText reports whether a valid JSON string token spells text: its
// bytes are UTF-8, and each \u escape of a UTF-16 surrogate is one half of
// a pair.
func jsonText(tok []byte) bool {
	if !utf8.Valid(tok) {
		return false
	}
	high := false // the last escape was a high surrogate
	for i := 0; i < len(tok); i++ {
		if tok[i] != '\\' || i+1 == len(tok) || tok[i+1] != 'u' {
			if high {
				return false
			}
			if tok[i] == '\\' {
				i++ // the escaped character
			}
			continue
		}
		if i+6 > len(tok) {
			return false
		}
		n, err := strconv.ParseUint(string(tok[i+2:i+6]), 16, 32)
		if err != nil {
			return false
		}
		i += 5
		switch {
		case n >= 0xD800 && n < 0xDC00:
			if high {
				return false
			}
			high = true
		case n >= 0xDC00 && n < 0xE000:
			if !high {
				return false
			}
			high = false
		case high:
			return false
		}
	}
	return !high
}

func (v jsonValue) asInt(field string) (int64, *Error) {
	// A JSON string holding digits would decode into json.Number too: only
	// a bare number token is an integer field.
	t := bytes.TrimSpace(v)
	if len(t) == 0 || (t[0] != '-' && (t[0] < '0' || t[0] > '9')) {
		return 0, &Error{Code: CodeValidation, Field: field, Value: v.raw(), Message: field + " must be an integer"}
	}
	var n json.Number
	if err := json.Unmarshal(t, &n); err != nil {
		return 0, &Error{Code: CodeValidation, Field: field, Value: v.raw(), Message: field + " must be an integer"}
	}
	i, err := strconv.ParseInt(n.String(), 10, 64)
	if err != nil {
		return 0, &Error{Code: CodeValidation, Field: field, Value: v.raw(), Message: field + " must be an integer"}
	}
	return i, nil
}

func (v jsonValue) asStrings(field string) ([]string, *Error) {
	var raw []json.RawMessage
	if err := json.Unmarshal(v, &raw); err != nil {
		return nil, &Error{Code: CodeValidation, Field: field, Value: v.raw(), Message: field + " must be an array of strings"}
	}
	out := make([]string, len(raw))
	for i, r := range raw {
		s, err := jsonValue(r).asString(field)
		if err != nil {
			err.Message = field + " must be an array of strings"
			return nil, err
		}
		out[i] = s
	}
	return out, nil
}

func (v jsonValue) asBool(field string) (bool, *Error) {
	var b bool
	if err := json.Unmarshal(v, &b); err != nil {
		return false, &Error{Code: CodeValidation, Field: field, Value: v.raw(), Message: field + " must be true or false"}
	}
	return b, nil
}

type formValue string

func (v formValue) raw() any { return string(v) }

func (v formValue) asString(string) (string, *Error) { return string(v), nil }

func (v formValue) asInt(field string) (int64, *Error) {
	s := strings.TrimSpace(string(v))
	i, err := strconv.ParseInt(s, 10, 64)
	if err != nil || strings.HasPrefix(s, "+") {
		return 0, &Error{Code: CodeValidation, Field: field, Value: string(v), Message: field + " must be a decimal integer"}
	}
	return i, nil
}

func (v formValue) asStrings(field string) ([]string, *Error) {
	return nil, &Error{Code: CodeValidation, Field: field,
		Message: field + " is sent in a form as files (up to three file fields named " + field + "), or as upload ids in a JSON body"}
}

func (v formValue) asBool(field string) (bool, *Error) {
	switch strings.TrimSpace(string(v)) {
	case "true":
		return true, nil
	case "false":
		return false, nil
	}
	return false, &Error{Code: CodeValidation, Field: field, Value: string(v), Message: field + ` must be "true" or "false"`}
}
