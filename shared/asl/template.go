package asl

import (
	"fmt"
	"strings"
)

// template is a compiled Parameters or ResultSelector value: a JSON value
// whose object fields named "<key>.$" take the value a path selects.
type template struct {
	static any                  // a literal value (when fields and items are nil)
	fields map[string]*template // an object, keys without the ".$" suffix
	items  []*template          // an array
	path   *path                // a "<key>.$" reference
}

// compileTemplate compiles a decoded JSON value.
func compileTemplate(v any) (*template, error) {
	switch v := v.(type) {
	case map[string]any:
		t := &template{fields: make(map[string]*template, len(v))}
		for k, val := range v {
			name, dynamic := strings.CutSuffix(k, ".$")
			if !dynamic {
				sub, err := compileTemplate(val)
				if err != nil {
					return nil, err
				}
				t.fields[k] = sub
				continue
			}
			s, ok := val.(string)
			if !ok {
				return nil, fmt.Errorf("field %q: the value of a \".$\" field must be a path string", k)
			}
			if strings.HasPrefix(s, "States.") {
				return nil, fmt.Errorf("field %q: intrinsic functions (%s) are not supported", k, s)
			}
			p, err := parsePath(s)
			if err != nil {
				return nil, fmt.Errorf("field %q: %w", k, err)
			}
			if _, dup := t.fields[name]; dup {
				return nil, fmt.Errorf("field %q is given twice", name)
			}
			t.fields[name] = &template{path: p}
		}
		return t, nil
	case []any:
		t := &template{items: make([]*template, len(v))}
		for i, val := range v {
			sub, err := compileTemplate(val)
			if err != nil {
				return nil, err
			}
			t.items[i] = sub
		}
		return t, nil
	default:
		return &template{static: v}, nil
	}
}

// eval builds the value from the state's effective input and the context
// object. A path that selects nothing is a States.Runtime error, as on AWS.
func (t *template) eval(input, ctxObj any) (any, error) {
	switch {
	case t.path != nil:
		doc := input
		if t.path.context {
			doc = ctxObj
		}
		v, ok := t.path.get(doc)
		if !ok {
			return nil, runtimeError("the path %s selects nothing in the %s", t.path, docName(t.path))
		}
		return v, nil
	case t.fields != nil:
		out := make(map[string]any, len(t.fields))
		for k, sub := range t.fields {
			v, err := sub.eval(input, ctxObj)
			if err != nil {
				return nil, err
			}
			out[k] = v
		}
		return out, nil
	case t.items != nil:
		out := make([]any, len(t.items))
		for i, sub := range t.items {
			v, err := sub.eval(input, ctxObj)
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		return out, nil
	default:
		return t.static, nil
	}
}

func docName(p *path) string {
	if p.context {
		return "context object"
	}
	return "input"
}
