package openapitest

import (
	"encoding/json"
	"maps"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/genvideo/gen/shared/wire"
)

// TestEveryDocumentedAnswerDecodes builds, from the document, the
// fullest answer each operation may give at each status (every property
// present, optional ones too, the first of each set of alternatives
// merged with the others) and decodes it into the answer's Go type with
// every member known. The same for each JSON request body the Go client
// sends. A property the document adds that the Go type lacks (as
// limits.generateAudio was missing from the client's Limits) fails here,
// before any server answers with it.
func TestEveryDocumentedAnswerDecodes(t *testing.T) {
	doc, err := Doc()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			seen[op.OperationID] = true
			if _, ok := answers[op.OperationID]; !ok {
				t.Errorf("%s %s: operation %q has no Go types in answers", method, path, op.OperationID)
			}
			for code, resp := range op.Responses.Map() {
				status, err := strconv.Atoi(code)
				if err != nil {
					t.Errorf("%s %s: response %q: want a status", method, path, code)
					continue
				}
				target, ok := answerType(op.OperationID, path, status)
				if !ok {
					t.Errorf("%s %s -> %d: no Go type (answers)", method, path, status)
					continue
				}
				media := resp.Value.Content.Get("application/json")
				if media != nil && target == nil && op.OperationID != "getOpenAPI" {
					t.Errorf("%s %s -> %d: a JSON body without a Go type", method, path, status)
				}
				if target != nil && media == nil && resp.Value.Content.Get("text/event-stream") == nil {
					t.Errorf("%s %s -> %d: a Go type %T, but no JSON body", method, path, status, target)
				}
				if media == nil || target == nil {
					continue
				}
				body, err := json.Marshal(sample(media.Schema, 0))
				if err != nil {
					t.Fatal(err)
				}
				if err := decode(body, target); err != nil {
					t.Errorf("%s %s -> %d: the documented answer does not decode into %T: %v\n%s", method, path, status, target, err, body)
				}
			}
			if op.RequestBody == nil {
				continue
			}
			media := op.RequestBody.Value.Content.Get("application/json")
			newReq, ok := requests[op.OperationID]
			if media == nil || strings.HasPrefix(path, "/openai/") {
				if ok {
					t.Errorf("%s %s: requests lists a type, but the operation takes no JSON body of the contract", method, path)
				}
				continue
			}
			if !ok {
				t.Errorf("%s %s: the JSON body has no Go type (requests)", method, path)
				continue
			}
			body, _ := json.Marshal(sample(media.Schema, 0))
			if err := decode(body, newReq()); err != nil {
				t.Errorf("%s %s: the documented request does not decode into its Go type: %v\n%s", method, path, err, body)
			}
		}
	}
	for op := range answers {
		if !seen[op] {
			t.Errorf("answers lists %q, which the document does not have", op)
		}
	}
}

// TestGoTypesAreTheDocumentsShapes is the other way round: every member
// the Go type of an answer or request can hold is one the document
// describes there, so that the Go client waits for nothing the service
// never sends.
func TestGoTypesAreTheDocumentsShapes(t *testing.T) {
	doc, err := Doc()
	if err != nil {
		t.Fatal(err)
	}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			for code, resp := range op.Responses.Map() {
				status, _ := strconv.Atoi(code)
				target, _ := answerType(op.OperationID, path, status)
				media := resp.Value.Content.Get("application/json")
				if target == nil || media == nil {
					continue
				}
				for _, m := range undocumented(reflect.TypeOf(target).Elem(), []*openapi3.SchemaRef{media.Schema}, "", 0) {
					t.Errorf("%s %s -> %d: %T has %s, which the document does not describe", method, path, status, target, m)
				}
			}
			if newReq, ok := requests[op.OperationID]; ok && op.RequestBody != nil {
				media := op.RequestBody.Value.Content.Get("application/json")
				for _, m := range undocumented(reflect.TypeOf(newReq()).Elem(), []*openapi3.SchemaRef{media.Schema}, "", 0) {
					t.Errorf("%s %s: the request's Go type has %s, which the document does not describe", method, path, m)
				}
			}
		}
	}
}

// The live check refuses an answer with a member its Go type lacks, and
// would have refused the service's models answer against the client's
// Limits of before (no generateAudio).
func TestDecodeAnswerRefusesDrift(t *testing.T) {
	v, err := NewValidator()
	if err != nil {
		t.Fatal(err)
	}
	doc, _ := Doc()
	models, _ := json.Marshal(sample(doc.Components.Schemas["ModelsResponse"], 0))
	jsonHeader := http.Header{"Content-Type": {"application/json; charset=utf-8"}}
	req := httptest.NewRequest(http.MethodGet, "/api/gen/models", nil)
	if err := v.decodeAnswer(req, http.StatusOK, jsonHeader, models); err != nil {
		t.Errorf("decodeAnswer(the documented models answer) = %v, want nil", err)
	}
	extra := strings.Replace(string(models), `"backend":`, `"future":1,"backend":`, 1)
	if err := v.decodeAnswer(req, http.StatusOK, jsonHeader, []byte(extra)); err == nil || !strings.Contains(err.Error(), "future") {
		t.Errorf("decodeAnswer(a model's limits with a member more) = %v, want an error naming it", err)
	}
	// The client's Limits before issue 35.
	type oldLimits struct {
		Backend          string              `json:"backend"`
		Modes            []string            `json:"modes"`
		Durations        []int               `json:"durations"`
		DurationsByMode  map[string][]int    `json:"durationsByMode,omitempty"`
		Resolutions      map[string][]string `json:"resolutions"`
		AspectRatios     []string            `json:"aspectRatios"`
		MaxSampleCount   int                 `json:"maxSampleCount"`
		PersonGeneration map[string][]string `json:"personGeneration"`
		Seed             bool                `json:"seed"`
		EnhancePrompt    []bool              `json:"enhancePrompt"`
		NegativePrompt   bool                `json:"negativePrompt"`
		// What came after it (issue 37), so that generateAudio alone is
		// missing.
		ResolutionsByMode   map[string][]string `json:"resolutionsByMode,omitempty"`
		AspectRatiosByMode  map[string][]string `json:"aspectRatiosByMode,omitempty"`
		MaxExtendSeconds    int                 `json:"maxExtendSeconds,omitempty"`
		ExtendResolutions   []string            `json:"extendResolutions,omitempty"`
		ExtendWithinSeconds int                 `json:"extendWithinSeconds,omitempty"`
	}
	limits, _ := json.Marshal(sample(doc.Components.Schemas["ModelLimits"], 0))
	if err := decode(limits, new(oldLimits)); err == nil || !strings.Contains(err.Error(), "generateAudio") {
		t.Errorf("decode(the documented limits) into the old Limits = %v, want generateAudio refused", err)
	}
	if err := decode(limits, new(wire.Limits)); err != nil {
		t.Errorf("decode(the documented limits) into wire.Limits = %v", err)
	}
	// Each event of a stream is a task.
	ev := httptest.NewRequest(http.MethodGet, "/api/gen/status/gen_1_a/events", nil)
	stream := http.Header{"Content-Type": {"text/event-stream"}}
	task, _ := json.Marshal(sample(doc.Components.Schemas["Task"], 0))
	good := "retry: 2000\n\nid: 1000\nevent: pending\ndata: " + string(task) + "\n\n: heartbeat\n\n"
	if err := v.decodeAnswer(ev, http.StatusOK, stream, []byte(good)); err != nil {
		t.Errorf("decodeAnswer(a stream of tasks) = %v, want nil", err)
	}
	bad := good + "id: 3000\nevent: completed\ndata: {\"taskId\":\"gen_1_a\",\"stage\":3}\n\n"
	if err := v.decodeAnswer(ev, http.StatusOK, stream, []byte(bad)); err == nil || !strings.Contains(err.Error(), "stage") {
		t.Errorf("decodeAnswer(a stream with an unknown member) = %v, want an error naming it", err)
	}
}

// sample is the fullest instance of s: every property, one entry of each
// map (under the first name propertyNames allows) and array, the const,
// first enum value, example or a value of the format; the properties of
// every allOf, oneOf and anyOf branch merged into one object. It is what
// a Go type must read, not necessarily a valid instance.
func sample(ref *openapi3.SchemaRef, depth int) any {
	if ref == nil || ref.Value == nil || depth > 32 {
		return nil
	}
	s := ref.Value
	if s.Const != nil {
		return s.Const
	}
	for _, e := range s.Enum {
		if e != nil {
			return e
		}
	}
	typ := ""
	if s.Type != nil {
		for _, t := range *s.Type {
			if t != openapi3.TypeNull {
				typ = t
				break
			}
		}
		if typ == "" {
			return nil // null only
		}
	}
	var obj map[string]any
	var other any // a branch's value that is not an object
	for _, sub := range slices.Concat(s.AllOf, s.OneOf, s.AnyOf) {
		switch v := sample(sub, depth+1).(type) {
		case map[string]any:
			if obj == nil {
				obj = map[string]any{}
			}
			merge(obj, v)
		case nil:
		default:
			if other == nil {
				other = v
			}
		}
	}
	if obj == nil && other != nil && typ == "" && s.Properties == nil {
		return other
	}
	if typ == openapi3.TypeObject || s.Properties != nil || s.AdditionalProperties.Schema != nil || obj != nil {
		if obj == nil {
			obj = map[string]any{}
		}
		props := map[string]any{}
		for name, p := range s.Properties {
			props[name] = sample(p, depth+1)
		}
		merge(obj, props)
		if ap := s.AdditionalProperties.Schema; ap != nil {
			key := "key"
			if pn := s.PropertyNames; pn != nil && pn.Value != nil && len(pn.Value.Enum) > 0 {
				key, _ = pn.Value.Enum[0].(string)
			}
			if _, ok := obj[key]; !ok {
				obj[key] = sample(ap, depth+1)
			}
		}
		return obj
	}
	if s.Example != nil {
		return s.Example
	}
	if len(s.Examples) > 0 {
		return s.Examples[0]
	}
	switch typ {
	case openapi3.TypeArray:
		if s.Items == nil {
			return []any{}
		}
		return []any{sample(s.Items, depth+1)}
	case openapi3.TypeString:
		switch s.Format {
		case "date-time":
			return "2030-01-02T03:04:05.678Z"
		case "uri":
			return "https://example.test/x"
		}
		return "text"
	case openapi3.TypeInteger:
		if s.Min != nil && *s.Min > 1 {
			return int64(*s.Min)
		}
		return 1
	case openapi3.TypeNumber:
		return 1.5
	case openapi3.TypeBoolean:
		return true
	}
	return "any" // a schema that takes any value
}

// merge adds src's members to dst, merging the objects both have.
func merge(dst, src map[string]any) {
	for k, v := range src {
		a, aok := dst[k].(map[string]any)
		b, bok := v.(map[string]any)
		if aok && bok {
			merge(a, b)
			continue
		}
		if _, ok := dst[k]; !ok || v != nil {
			dst[k] = v
		}
	}
}

// undocumented are the members of Go type t (by path below at) that none
// of the schemas describes (each schema with its allOf, oneOf and anyOf
// branches: a response may narrow a shared schema's property).
func undocumented(t reflect.Type, schemas []*openapi3.SchemaRef, at string, depth int) []string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	all := flatten(schemas, 0)
	if len(all) == 0 || depth > 32 {
		return nil
	}
	var out []string
	switch {
	case t == reflect.TypeFor[wire.Time]() || t == reflect.TypeFor[time.Time]():
	case t.Kind() == reflect.Struct:
		for name, ft := range jsonFields(t) {
			var props []*openapi3.SchemaRef
			for _, s := range all {
				if p, ok := s.Properties[name]; ok {
					props = append(props, p)
				}
			}
			if len(props) == 0 {
				out = append(out, at+name)
				continue
			}
			out = append(out, undocumented(ft, props, at+name+".", depth+1)...)
		}
	case t.Kind() == reflect.Slice:
		var items []*openapi3.SchemaRef
		for _, s := range all {
			if s.Items != nil {
				items = append(items, s.Items)
			}
		}
		out = undocumented(t.Elem(), items, at+"[].", depth+1)
	case t.Kind() == reflect.Map:
		var values []*openapi3.SchemaRef
		for _, s := range all {
			if s.AdditionalProperties.Schema != nil {
				values = append(values, s.AdditionalProperties.Schema)
			}
		}
		out = undocumented(t.Elem(), values, at+"*.", depth+1)
	}
	slices.Sort(out)
	return out
}

// flatten is the schemas with every allOf, oneOf and anyOf branch in
// them.
func flatten(schemas []*openapi3.SchemaRef, depth int) []*openapi3.Schema {
	var out []*openapi3.Schema
	for _, s := range schemas {
		if s == nil || s.Value == nil || depth > 32 {
			continue
		}
		out = append(out, s.Value)
		out = append(out, flatten(slices.Concat(s.Value.AllOf, s.Value.OneOf, s.Value.AnyOf), depth+1)...)
	}
	return out
}

// jsonFields are the JSON members of struct type t and their types, as
// encoding/json names them (the fields of an untagged embedded struct are
// t's own; json:"-" and unexported fields are none).
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
			maps.Copy(out, jsonFields(f.Type))
			continue
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}
