package asl

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"
)

// rule is a compiled Choice rule: a comparison of Variable against an
// operand (a literal, or a path when the operator ends in "Path"), or a
// boolean combination of nested rules.
type rule struct {
	next string // only on top-level rules

	and, or []*rule
	not     *rule

	variable *path
	op       string // operator name without the "Path" suffix
	operand  any    // literal operand
	opPath   *path  // operand path, for the "...Path" operators
}

// comparison kinds and operations of the value operators.
type opSpec struct {
	kind string // "string", "numeric", "boolean", "timestamp", "matches", "type"
	cmp  string // "eq", "lt", "gt", "le", "ge"; for "type", the type test
}

var operators = map[string]opSpec{
	"StringEquals":               {"string", "eq"},
	"StringLessThan":             {"string", "lt"},
	"StringGreaterThan":          {"string", "gt"},
	"StringLessThanEquals":       {"string", "le"},
	"StringGreaterThanEquals":    {"string", "ge"},
	"StringMatches":              {"matches", ""},
	"NumericEquals":              {"numeric", "eq"},
	"NumericLessThan":            {"numeric", "lt"},
	"NumericGreaterThan":         {"numeric", "gt"},
	"NumericLessThanEquals":      {"numeric", "le"},
	"NumericGreaterThanEquals":   {"numeric", "ge"},
	"BooleanEquals":              {"boolean", "eq"},
	"TimestampEquals":            {"timestamp", "eq"},
	"TimestampLessThan":          {"timestamp", "lt"},
	"TimestampGreaterThan":       {"timestamp", "gt"},
	"TimestampLessThanEquals":    {"timestamp", "le"},
	"TimestampGreaterThanEquals": {"timestamp", "ge"},
	"IsPresent":                  {"type", "present"},
	"IsNull":                     {"type", "null"},
	"IsString":                   {"type", "string"},
	"IsNumeric":                  {"type", "numeric"},
	"IsBoolean":                  {"type", "boolean"},
	"IsTimestamp":                {"type", "timestamp"},
}

// hasPathForm lists the operators that also exist as "<op>Path".
func hasPathForm(op string) bool {
	s := operators[op]
	return s.kind == "string" || s.kind == "numeric" || s.kind == "boolean" || s.kind == "timestamp"
}

// compileRule compiles one Choice rule; top says whether it is an element
// of Choices (which must carry Next) or nested in And/Or/Not (which must not).
func compileRule(raw map[string]any, top bool) (*rule, error) {
	r := &rule{}
	var keys []string
	for k := range raw {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var ops []string
	for _, k := range keys {
		v := raw[k]
		switch k {
		case "Comment":
		case "Next":
			s, ok := v.(string)
			if !ok || s == "" {
				return nil, fmt.Errorf("Next must be a state name")
			}
			r.next = s
		case "Variable":
			s, ok := v.(string)
			if !ok {
				return nil, fmt.Errorf("Variable must be a path string")
			}
			p, err := parsePath(s)
			if err != nil {
				return nil, fmt.Errorf("Variable: %w", err)
			}
			r.variable = p
		case "And", "Or":
			list, ok := v.([]any)
			if !ok || len(list) == 0 {
				return nil, fmt.Errorf("%s must be a non-empty array of rules", k)
			}
			for i, item := range list {
				obj, ok := item.(map[string]any)
				if !ok {
					return nil, fmt.Errorf("%s[%d] is not a rule object", k, i)
				}
				sub, err := compileRule(obj, false)
				if err != nil {
					return nil, fmt.Errorf("%s[%d]: %w", k, i, err)
				}
				if k == "And" {
					r.and = append(r.and, sub)
				} else {
					r.or = append(r.or, sub)
				}
			}
			ops = append(ops, k)
		case "Not":
			obj, ok := v.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("Not must be a rule object")
			}
			sub, err := compileRule(obj, false)
			if err != nil {
				return nil, fmt.Errorf("Not: %w", err)
			}
			r.not = sub
			ops = append(ops, k)
		default:
			if err := r.setOperator(k, v); err != nil {
				return nil, err
			}
			ops = append(ops, k)
		}
	}
	switch {
	case len(ops) != 1:
		return nil, fmt.Errorf("a rule needs exactly one operator, got %d (%s)", len(ops), strings.Join(ops, ", "))
	case top && r.next == "":
		return nil, fmt.Errorf("a Choices rule needs Next")
	case !top && r.next != "":
		return nil, fmt.Errorf("a nested rule cannot have Next")
	case r.op != "" && r.variable == nil:
		return nil, fmt.Errorf("%s needs Variable", r.op)
	case r.op == "" && r.variable != nil:
		return nil, fmt.Errorf("And, Or and Not take no Variable")
	}
	return r, nil
}

func (r *rule) setOperator(k string, v any) error {
	if base, ok := strings.CutSuffix(k, "Path"); ok && hasPathForm(base) {
		s, ok := v.(string)
		if !ok {
			return fmt.Errorf("%s must be a path string", k)
		}
		p, err := parsePath(s)
		if err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
		r.op, r.opPath = base, p
		return nil
	}
	spec, ok := operators[k]
	if !ok {
		return fmt.Errorf("unsupported field or operator %q", k)
	}
	var valid bool
	switch spec.kind {
	case "string", "matches":
		_, valid = v.(string)
	case "numeric":
		_, valid = v.(json.Number)
	case "boolean", "type":
		_, valid = v.(bool)
	case "timestamp":
		if s, ok := v.(string); ok {
			_, err := parseTimestamp(s)
			valid = err == nil
		}
	}
	if !valid {
		return fmt.Errorf("%s has an operand of the wrong type: %v", k, v)
	}
	r.op, r.operand = k, v
	return nil
}

// eval evaluates the rule against the state's effective input.
func (r *rule) eval(input, ctxObj any) (bool, error) {
	switch {
	case r.and != nil:
		for _, sub := range r.and {
			ok, err := sub.eval(input, ctxObj)
			if err != nil || !ok {
				return false, err
			}
		}
		return true, nil
	case r.or != nil:
		for _, sub := range r.or {
			ok, err := sub.eval(input, ctxObj)
			if err != nil || ok {
				return ok, err
			}
		}
		return false, nil
	case r.not != nil:
		ok, err := r.not.eval(input, ctxObj)
		return !ok && err == nil, err
	}

	spec := operators[r.op]
	value, present := lookup(r.variable, input, ctxObj)
	if spec.cmp == "present" {
		return present == r.operand.(bool), nil
	}
	if !present {
		return false, runtimeError("Choice: %s selects nothing in the %s", r.variable, docName(r.variable))
	}
	operand := r.operand
	if r.opPath != nil {
		v, ok := lookup(r.opPath, input, ctxObj)
		if !ok {
			return false, runtimeError("Choice: %sPath %s selects nothing in the %s", r.op, r.opPath, docName(r.opPath))
		}
		operand = v
	}

	switch spec.kind {
	case "type":
		want := r.operand.(bool)
		return isType(value, spec.cmp) == want, nil
	case "boolean":
		a, ok1 := value.(bool)
		b, ok2 := operand.(bool)
		return ok1 && ok2 && a == b, nil
	case "string":
		a, ok1 := value.(string)
		b, ok2 := operand.(string)
		return ok1 && ok2 && compare(strings.Compare(a, b), spec.cmp), nil
	case "matches":
		a, ok := value.(string)
		return ok && wildcardMatch(operand.(string), a), nil
	case "numeric":
		a, ok1 := number(value)
		b, ok2 := number(operand)
		if !ok1 || !ok2 {
			return false, nil
		}
		c := 0
		if a < b {
			c = -1
		} else if a > b {
			c = 1
		}
		return compare(c, spec.cmp), nil
	case "timestamp":
		as, ok1 := value.(string)
		bs, ok2 := operand.(string)
		if !ok1 || !ok2 {
			return false, nil
		}
		a, err1 := parseTimestamp(as)
		b, err2 := parseTimestamp(bs)
		if err1 != nil || err2 != nil {
			return false, nil
		}
		return compare(a.Compare(b), spec.cmp), nil
	}
	return false, fmt.Errorf("operator %s not implemented", r.op)
}

func lookup(p *path, input, ctxObj any) (any, bool) {
	if p.context {
		return p.get(ctxObj)
	}
	return p.get(input)
}

func compare(c int, cmp string) bool {
	switch cmp {
	case "eq":
		return c == 0
	case "lt":
		return c < 0
	case "gt":
		return c > 0
	case "le":
		return c <= 0
	default: // "ge"
		return c >= 0
	}
}

func number(v any) (float64, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	f, err := n.Float64()
	return f, err == nil
}

func isType(v any, typ string) bool {
	switch typ {
	case "null":
		return v == nil
	case "string":
		_, ok := v.(string)
		return ok
	case "numeric":
		_, ok := v.(json.Number)
		return ok
	case "boolean":
		_, ok := v.(bool)
		return ok
	default: // "timestamp"
		s, ok := v.(string)
		if !ok {
			return false
		}
		_, err := parseTimestamp(s)
		return err == nil
	}
}

func parseTimestamp(s string) (time.Time, error) {
	return time.Parse(time.RFC3339Nano, s)
}

// wildcardMatch implements StringMatches: "*" matches any run of
// characters, "\*" a literal star and "\\" a literal backslash.
func wildcardMatch(pattern, s string) bool {
	type tok struct {
		lit  rune
		star bool
	}
	var toks []tok
	rs := []rune(pattern)
	for i := 0; i < len(rs); i++ {
		switch {
		case rs[i] == '\\' && i+1 < len(rs):
			i++
			toks = append(toks, tok{lit: rs[i]})
		case rs[i] == '*':
			toks = append(toks, tok{star: true})
		default:
			toks = append(toks, tok{lit: rs[i]})
		}
	}
	in := []rune(s)
	// Classic greedy match with backtracking to the last star.
	ti, si, starT, starS := 0, 0, -1, 0
	for si < len(in) {
		switch {
		case ti < len(toks) && !toks[ti].star && toks[ti].lit == in[si]:
			ti++
			si++
		case ti < len(toks) && toks[ti].star:
			starT, starS = ti, si
			ti++
		case starT >= 0:
			starS++
			ti, si = starT+1, starS
		default:
			return false
		}
	}
	for ti < len(toks) && toks[ti].star {
		ti++
	}
	return ti == len(toks)
}
