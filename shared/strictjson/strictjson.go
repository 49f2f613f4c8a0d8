// Package strictjson decodes JSON that means one thing: every body a
// client sends gen and every JSON setting an operator gives it is read
// here (issue 31). encoding/json alone matches a member's name without
// regard to case ("MaxCreditsPerDay" sets maxCreditsPerDay), keeps the
// last of two equal names, takes null as "leave the field as it is" and,
// through a Decoder, stops at the end of the first value. Each of those
// lets one document mean two things, to the client and to gen, or to two
// versions of a schema; Unmarshal refuses them all:
//
//   - a member whose name is not exactly a field of the target (unknown,
//     or known in another case);
//   - a member given twice in one object, at any depth (names compared as
//     decoded: "mod\u0065l" is "model");
//   - null, except where the target is json.RawMessage or an interface
//     (any): there the caller reads the raw value and decides what null
//     means, as the start parameters do (a null parameter is absent);
//   - anything but white space after the value.
//
// An Error names the member at fault by its path and never quotes a
// value: a setting may hold a secret.
package strictjson

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
	"sync"
)

// Kind is what was wrong with a document.
type Kind int

const (
	// Syntax: the document is not JSON (Offset is where it stops being).
	Syntax Kind = iota + 1
	// Trailing: more than white space follows the value.
	Trailing
	// Unknown: a member the target has no field for (in this case).
	Unknown
	// Repeated: a member given twice in one object.
	Repeated
	// Null: null where the target takes none.
	Null
	// Type: a value of the wrong JSON type, or a number out of range.
	Type
)

// Error is why a document was refused.
type Error struct {
	Kind Kind
	// Path is the member at fault, outermost first: object member names
	// and "[i]" for array elements; empty for the document itself.
	Path []string
	// Offset is the byte a Syntax or Trailing error is at.
	Offset int64
	// Want is what the member must be, for Null and Type ("an integer").
	Want string
	// Suggest is the field a member of Unknown differs from in case only.
	Suggest string
}

// Field is the top-level member the error is in ("" for the document):
// an API error names the body's field, however deep the fault.
func (e *Error) Field() string {
	if len(e.Path) == 0 {
		return ""
	}
	return e.Path[0]
}

// Member is the path as one string: routes[2].name.
func (e *Error) Member() string {
	var b strings.Builder
	for _, p := range e.Path {
		if b.Len() > 0 && !strings.HasPrefix(p, "[") {
			b.WriteByte('.')
		}
		b.WriteString(p)
	}
	return b.String()
}

func (e *Error) Error() string {
	m := e.Member()
	switch e.Kind {
	case Syntax:
		return fmt.Sprintf("not JSON at byte %d", e.Offset)
	case Trailing:
		return fmt.Sprintf("more data after the JSON value at byte %d; send one value", e.Offset)
	case Unknown:
		if e.Suggest != "" {
			return fmt.Sprintf("unknown field %q: field names are case-sensitive; did you mean %q?", m, e.Suggest)
		}
		return fmt.Sprintf("unknown field %q", m)
	case Repeated:
		if n := len(e.Path); n > 1 {
			parent := &Error{Path: e.Path[:n-1]}
			return fmt.Sprintf("field %q holds the key %q more than once; send it once", parent.Member(), e.Path[n-1])
		}
		return fmt.Sprintf("field %q is given more than once; send it once", m)
	case Null:
		if m == "" {
			return "the document is null; want " + e.Want
		}
		return fmt.Sprintf("field %q is null; leave it out, or give %s", m, e.Want)
	case Type:
		if m == "" {
			return "want " + e.Want
		}
		return fmt.Sprintf("field %q must be %s", m, e.Want)
	}
	return "invalid JSON"
}

// Unmarshal decodes data into v (a pointer) after checking that it means
// one thing (the package comment). On an error v may be partly written;
// the caller discards it.
func Unmarshal(data []byte, v any) error {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return fmt.Errorf("strictjson: Unmarshal needs a non-nil pointer, not %T", v)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber() // a number too large for a float64 is a type error, found below
	w := walker{dec: dec}
	if err := w.value(rv.Type().Elem()); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return &Error{Kind: Trailing, Offset: dec.InputOffset()}
	}
	if err := json.Unmarshal(data, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return &Error{Kind: Type, Path: members(rv.Type().Elem(), te.Field), Want: want(te.Type)}
		}
		// A json.Unmarshaler of the target refused its value; its
		// message is its own and may quote the value.
		return &Error{Kind: Type, Want: want(rv.Type().Elem())}
	}
	return nil
}

// members is encoding/json's dotted field path of a value of type t as
// the document's members: encoding/json names a field promoted from an
// embedded struct after the embedded struct's Go name
// ("embedded.extra"), which is no member of the document.
func members(t reflect.Type, field string) []string {
	if field == "" {
		return nil
	}
	var path []string
	for _, seg := range strings.Split(field, ".") {
		for t != nil && t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		for t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map) {
			t = t.Elem()
		}
		if t == nil || t.Kind() != reflect.Struct {
			path, t = append(path, seg), nil
			continue
		}
		if ft, ok := fieldsOf(t)[seg]; ok {
			path, t = append(path, seg), ft
			continue
		}
		if sf, ok := t.FieldByName(seg); ok && sf.Anonymous {
			t = sf.Type // its fields are the struct's own members
			continue
		}
		path, t = append(path, seg), nil
	}
	return path
}

// walker reads one document's tokens beside the type they decode into.
type walker struct {
	dec  *json.Decoder
	path []string
}

var (
	rawType         = reflect.TypeFor[json.RawMessage]()
	unmarshalerType = reflect.TypeFor[json.Unmarshaler]()
	textType        = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// raw reports whether t takes any JSON as it is, null included: nil (a
// value inside one of those), an interface, json.RawMessage. The caller
// of Unmarshal reads it and says what null means there.
func raw(t reflect.Type) bool {
	return t == nil || t.Kind() == reflect.Interface || t == rawType
}

// free reports whether t's members are not for this package to name:
// raw, or a type that decodes itself (time.Time). They are checked for
// repeats only.
func free(t reflect.Type) bool {
	return raw(t) || reflect.PointerTo(t).Implements(unmarshalerType) || reflect.PointerTo(t).Implements(textType)
}

func (w *walker) fail(k Kind, t reflect.Type) error {
	return &Error{Kind: k, Path: append([]string(nil), w.path...), Want: want(t)}
}

func (w *walker) token() (json.Token, error) {
	tok, err := w.dec.Token()
	if err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, &Error{Kind: Syntax, Offset: se.Offset}
		}
		return nil, &Error{Kind: Syntax, Offset: w.dec.InputOffset()}
	}
	return tok, nil
}

// value reads one value that decodes into t.
func (w *walker) value(t reflect.Type) error {
	for t != nil && t.Kind() == reflect.Pointer && t != rawType {
		t = t.Elem()
	}
	tok, err := w.token()
	if err != nil {
		return err
	}
	switch tok {
	case json.Delim('{'):
		return w.object(t)
	case json.Delim('['):
		var elem reflect.Type
		if !free(t) && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			elem = t.Elem()
		}
		for i := 0; w.dec.More(); i++ {
			w.path = append(w.path, "["+strconv.Itoa(i)+"]")
			if err := w.value(elem); err != nil {
				return err
			}
			w.path = w.path[:len(w.path)-1]
		}
		_, err := w.token()
		return err
	case nil:
		if !raw(t) {
			return w.fail(Null, t)
		}
	}
	return nil // a scalar: its type is encoding/json's to check
}

// object reads the members of an object that decodes into t, the '{'
// read.
func (w *walker) object(t reflect.Type) error {
	var fields map[string]reflect.Type
	strict := !free(t) && t.Kind() == reflect.Struct
	if strict {
		fields = fieldsOf(t)
	}
	var elem reflect.Type
	if !free(t) && t.Kind() == reflect.Map {
		elem = t.Elem()
	}
	seen := map[string]bool{}
	for w.dec.More() {
		tok, err := w.token()
		if err != nil {
			return err
		}
		name, _ := tok.(string)
		w.path = append(w.path, name)
		if seen[name] {
			return w.fail(Repeated, nil)
		}
		seen[name] = true
		ft := elem
		if strict {
			var ok bool
			if ft, ok = fields[name]; !ok {
				e := w.fail(Unknown, nil).(*Error)
				for f := range fields {
					if strings.EqualFold(f, name) {
						e.Suggest = f
					}
				}
				return e
			}
		}
		if err := w.value(ft); err != nil {
			return err
		}
		w.path = w.path[:len(w.path)-1]
	}
	_, err := w.token()
	return err
}

var fieldCache sync.Map // reflect.Type -> map[string]reflect.Type

// fieldsOf is the JSON members of struct type t by their exact names, as
// encoding/json names them: the tag's name, else the Go name; embedded
// structs without a tag give theirs; "-" and unexported fields none.
func fieldsOf(t reflect.Type) map[string]reflect.Type {
	if f, ok := fieldCache.Load(t); ok {
		return f.(map[string]reflect.Type)
	}
	out := map[string]reflect.Type{}
	for i := range t.NumField() {
		sf := t.Field(i)
		tag := sf.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if sf.Anonymous && name == "" {
			et := sf.Type
			if et.Kind() == reflect.Pointer {
				et = et.Elem()
			}
			if et.Kind() == reflect.Struct {
				for n, ft := range fieldsOf(et) {
					if _, ok := out[n]; !ok {
						out[n] = ft
					}
				}
				continue
			}
		}
		if !sf.IsExported() {
			continue
		}
		if name == "" {
			name = sf.Name
		}
		out[name] = sf.Type
	}
	fieldCache.Store(t, out)
	return out
}

// want is what a value decoding into t must be, in words.
func want(t reflect.Type) string {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil {
		return "a value"
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer in range"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return "a value of another type"
}
