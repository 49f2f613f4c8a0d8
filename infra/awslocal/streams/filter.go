package streams

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Filter is one FilterCriteria pattern, of the subset of Lambda's event
// filtering the assembly emulates: nested objects whose leaves are lists
// of values (equal to any), {"prefix": "..."} or {"exists": true|false}.
// Any other rule (anything-but, numeric, wildcards) is refused when the
// mapping is read, so that the assembly never passes records AWS would
// drop, or drops records AWS would pass, without saying so.
type Filter struct{ pattern map[string]any }

// ParseFilter reads a pattern and checks that every rule is emulated.
func ParseFilter(s string) (Filter, error) {
	var p map[string]any
	if err := json.Unmarshal([]byte(s), &p); err != nil {
		return Filter{}, fmt.Errorf("filter pattern %s: %w", s, err)
	}
	if err := check(p); err != nil {
		return Filter{}, fmt.Errorf("filter pattern %s: %w", s, err)
	}
	return Filter{pattern: p}, nil
}

func check(p map[string]any) error {
	for k, v := range p {
		switch x := v.(type) {
		case map[string]any:
			if err := check(x); err != nil {
				return err
			}
		case []any:
			for _, r := range x {
				if o, ok := r.(map[string]any); ok {
					if len(o) != 1 {
						return fmt.Errorf("%s: rule %v not emulated", k, o)
					}
					if pre, ok := o["prefix"].(string); ok && pre != "" {
						continue
					}
					if _, ok := o["exists"].(bool); ok {
						continue
					}
					return fmt.Errorf("%s: rule %v not emulated", k, o)
				}
			}
		default:
			return fmt.Errorf("%s: a pattern's leaves are lists, not %v", k, v)
		}
	}
	return nil
}

// Match says whether doc (a record as JSON) matches: every field of the
// pattern.
func (f Filter) Match(doc map[string]any) bool { return match(f.pattern, doc) }

func match(p map[string]any, doc map[string]any) bool {
	for k, v := range p {
		got, present := doc[k]
		switch x := v.(type) {
		case map[string]any:
			sub, ok := got.(map[string]any)
			if !ok || !match(x, sub) {
				return false
			}
		case []any:
			if !anyRule(x, got, present) {
				return false
			}
		}
	}
	return true
}

func anyRule(rules []any, got any, present bool) bool {
	for _, r := range rules {
		switch x := r.(type) {
		case map[string]any:
			if pre, ok := x["prefix"].(string); ok {
				if s, ok := got.(string); ok && strings.HasPrefix(s, pre) {
					return true
				}
			}
			if want, ok := x["exists"].(bool); ok && want == present {
				return true
			}
		default:
			if present && equal(x, got) {
				return true
			}
		}
	}
	return false
}

// equal compares a pattern's value with a field's: strings and booleans
// exactly, numbers by value, null with null.
func equal(want, got any) bool {
	switch w := want.(type) {
	case nil:
		return got == nil
	case string, bool, float64:
		return w == got
	}
	return false
}
