package asl

import (
	"fmt"
	"strconv"
	"strings"
)

// path is a compiled JsonPath of the subset ASL reference paths use:
// "$", "$.a.b", "$.a[0]", "$['a b']", and the same rooted at "$$" for
// the context object. Wildcards, filters and slices are not supported.
type path struct {
	text    string
	context bool // rooted at $$ (the context object)
	steps   []step
}

// step is one hop: an object field, or an array index when isIndex.
type step struct {
	field   string
	index   int
	isIndex bool
}

func (p *path) String() string { return p.text }

// parsePath compiles s, which must start with "$" (or "$$").
func parsePath(s string) (*path, error) {
	p := &path{text: s}
	rest, ok := strings.CutPrefix(s, "$")
	if !ok {
		return nil, fmt.Errorf("path %q does not start with $", s)
	}
	if r, ok := strings.CutPrefix(rest, "$"); ok {
		p.context = true
		rest = r
	}
	for rest != "" {
		switch rest[0] {
		case '.':
			rest = rest[1:]
			end := strings.IndexAny(rest, ".[")
			if end < 0 {
				end = len(rest)
			}
			name := rest[:end]
			if name == "" || name == "*" || strings.ContainsAny(name, "]'\"") {
				return nil, fmt.Errorf("path %q: unsupported field %q", s, name)
			}
			p.steps = append(p.steps, step{field: name})
			rest = rest[end:]
		case '[':
			end := strings.IndexByte(rest, ']')
			if end < 0 {
				return nil, fmt.Errorf("path %q: unclosed [", s)
			}
			inner := rest[1:end]
			rest = rest[end+1:]
			if len(inner) >= 2 && inner[0] == '\'' && inner[len(inner)-1] == '\'' {
				p.steps = append(p.steps, step{field: inner[1 : len(inner)-1]})
				continue
			}
			n, err := strconv.Atoi(inner)
			if err != nil || n < 0 {
				return nil, fmt.Errorf("path %q: unsupported selector [%s] (only field names and non-negative indexes)", s, inner)
			}
			p.steps = append(p.steps, step{index: n, isIndex: true})
		default:
			return nil, fmt.Errorf("path %q: unexpected %q", s, rest[0])
		}
	}
	return p, nil
}

// get returns the value at p in doc, and whether it exists.
func (p *path) get(doc any) (any, bool) {
	v := doc
	for _, st := range p.steps {
		if st.isIndex {
			arr, ok := v.([]any)
			if !ok || st.index >= len(arr) {
				return nil, false
			}
			v = arr[st.index]
			continue
		}
		obj, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = obj[st.field]; !ok {
			return nil, false
		}
	}
	return v, true
}

// set returns a copy of doc with value placed at p, creating the objects
// on the way. doc itself is never modified: only the objects along the
// path are copied, everything else is shared (values are never mutated).
// It fails when something on the way is not an object.
func (p *path) set(doc, value any) (any, error) {
	if len(p.steps) == 0 {
		return value, nil
	}
	obj, ok := doc.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("cannot set %s: the input is not an object", p.text)
	}
	out := make(map[string]any, len(obj)+1)
	for k, v := range obj {
		out[k] = v
	}
	st := p.steps[0]
	child, exists := out[st.field]
	if !exists {
		child = map[string]any{}
	}
	rest := &path{text: p.text, steps: p.steps[1:]}
	nv, err := rest.set(child, value)
	if err != nil {
		return nil, err
	}
	out[st.field] = nv
	return out, nil
}

// optionalPath is an InputPath, OutputPath or ResultPath: absent means
// "$", JSON null means "nothing" (an empty object for InputPath and
// OutputPath, discard the result for ResultPath).
type optionalPath struct {
	null bool
	p    *path
}
