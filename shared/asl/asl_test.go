package asl

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeClock records every timer and fires it at once, advancing Now.
type fakeClock struct {
	mu    sync.Mutex
	now   time.Time
	slept []time.Duration
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) AfterFunc(d time.Duration, f func()) func() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.slept = append(c.slept, d)
	c.now = c.now.Add(d)
	go f()
	return func() bool { return false }
}

func (c *fakeClock) sleeps() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.slept...)
}

// withClock replaces the system clock. A clock whose timers fire at
// once runs Retry intervals and Wait states without waiting, but also
// fires every timeout at once; tests that need timeouts can keep the
// system clock and run in a testing/synctest bubble, where time is virtual.
func withClock(c clock) Option { return func(e *Executor) { e.clock = c } }

// mustParse parses an inline definition with no substitutions.
func mustParse(t testing.TB, def string) *StateMachine {
	t.Helper()
	sm, err := Parse([]byte(def), nil)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return sm
}

func mustExecutor(t *testing.T, def string, tasks map[string]TaskFunc, opts ...Option) *Executor {
	t.Helper()
	e, err := NewExecutor(mustParse(t, def), tasks, opts...)
	if err != nil {
		t.Fatalf("NewExecutor: %v", err)
	}
	t.Cleanup(e.Close)
	return e
}

// runDef runs def once on input and returns the execution.
func runDef(t *testing.T, def string, tasks map[string]TaskFunc, input string, opts ...Option) (Execution, error) {
	t.Helper()
	e := mustExecutor(t, def, tasks, append([]Option{withClock(newFakeClock())}, opts...)...)
	return e.Run(context.Background(), "test", json.RawMessage(input))
}

// jsonEqual reports whether two JSON texts hold the same value.
func jsonEqual(t *testing.T, got []byte, want string) bool {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("output %s is not JSON: %v", got, err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("want %s is not JSON: %v", want, err)
	}
	return reflect.DeepEqual(g, w)
}

// echo returns its input, recording it.
type recorder struct {
	mu     sync.Mutex
	inputs []string
}

func (r *recorder) echo(_ context.Context, in json.RawMessage) (json.RawMessage, error) {
	r.mu.Lock()
	r.inputs = append(r.inputs, string(in))
	r.mu.Unlock()
	return in, nil
}

func (r *recorder) calls() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.inputs)
}

func returning(out string) TaskFunc {
	return func(context.Context, json.RawMessage) (json.RawMessage, error) {
		return json.RawMessage(out), nil
	}
}

func TestParseSubstitutions(t *testing.T) {
	def := `{"StartAt":"A","States":{"A":{"Type":"Task","Resource":"${Fn}","Parameters":{"name":"x-${Stage}"},"End":true}}}`
	sm, err := Parse([]byte(def), map[string]string{"Fn": "arn:aws:lambda:eu-west-1:1:function:a", "Stage": "dev", "Unused": "u"})
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if got, want := sm.Resources(), []string{"arn:aws:lambda:eu-west-1:1:function:a"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Resources() = %v, want %v", got, want)
	}
	e, err := NewExecutor(sm, map[string]TaskFunc{"arn:aws:lambda:eu-west-1:1:function:a": (&recorder{}).echo})
	if err != nil {
		t.Fatalf("NewExecutor: %v", err)
	}
	exec, err := e.Run(context.Background(), "x", map[string]any{})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if !jsonEqual(t, exec.Output, `{"name":"x-dev"}`) {
		t.Errorf("output = %s, want the placeholder in Parameters filled", exec.Output)
	}

	if _, err := Parse([]byte(def), map[string]string{"Fn": "f"}); err == nil || !strings.Contains(err.Error(), "${Stage}") {
		t.Errorf("Parse with ${Stage} unset: err = %v, want it to name ${Stage}", err)
	}
	if _, err := NewExecutor(sm, map[string]TaskFunc{}); err == nil {
		t.Errorf("NewExecutor with no function for the resource: err = nil, want an error")
	}
}

func TestParseRejects(t *testing.T) {
	tests := []struct {
		name, def, want string
	}{
		{"not JSON", `{"StartAt": ${X}}`, "invalid character"},
		{"StartAt unknown", `{"StartAt":"B","States":{"A":{"Type":"Succeed"}}}`, `StartAt "B"`},
		{"Next unknown", `{"StartAt":"A","States":{"A":{"Type":"Pass","Next":"B"}}}`, `unknown state "B"`},
		{"unreachable", `{"StartAt":"A","States":{"A":{"Type":"Succeed"},"B":{"Type":"Succeed"}}}`, `"B" is not reachable`},
		{"Next and End", `{"StartAt":"A","States":{"A":{"Type":"Pass","Next":"B","End":true},"B":{"Type":"Succeed"}}}`, "exactly one of Next and End"},
		{"neither Next nor End", `{"StartAt":"A","States":{"A":{"Type":"Pass"}}}`, "exactly one of Next and End"},
		{"Map", `{"StartAt":"A","States":{"A":{"Type":"Map","End":true}}}`, `Type "Map" is not supported`},
		{"unknown field", `{"StartAt":"A","States":{"A":{"Type":"Task","Resource":"r","HeartbeatSeconds":5,"End":true}}}`, "HeartbeatSeconds"},
		{"field of another type", `{"StartAt":"A","States":{"A":{"Type":"Pass","Resource":"r","End":true}}}`, "a Pass state cannot have Resource"},
		{"intrinsic", `{"StartAt":"A","States":{"A":{"Type":"Pass","Parameters":{"s.$":"States.Format('{}', $.a)"},"End":true}}}`, "intrinsic functions"},
		{"wildcard path", `{"StartAt":"A","States":{"A":{"Type":"Pass","InputPath":"$.a[*]","End":true}}}`, "unsupported selector"},
		{"States.ALL not last", `{"StartAt":"A","States":{"A":{"Type":"Task","Resource":"r","Retry":[{"ErrorEquals":["States.ALL"]},{"ErrorEquals":["X"]}],"End":true}}}`, "States.ALL must appear alone"},
		{"States.ALL with others", `{"StartAt":"A","States":{"A":{"Type":"Task","Resource":"r","Catch":[{"ErrorEquals":["X","States.ALL"],"Next":"A"}],"End":true}}}`, "States.ALL must appear alone"},
		{"both timeouts", `{"StartAt":"A","States":{"A":{"Type":"Task","Resource":"r","TimeoutSeconds":3,"TimeoutSecondsPath":"$.t","End":true}}}`, "exclusive"},
		{"BackoffRate below 1", `{"StartAt":"A","States":{"A":{"Type":"Task","Resource":"r","Retry":[{"ErrorEquals":["X"],"BackoffRate":0.5}],"End":true}}}`, "BackoffRate"},
		{"Choice rule without Next", `{"StartAt":"A","States":{"A":{"Type":"Choice","Choices":[{"Variable":"$.a","IsPresent":true}],"Default":"B"},"B":{"Type":"Succeed"}}}`, "needs Next"},
		{"Choice two operators", `{"StartAt":"A","States":{"A":{"Type":"Choice","Choices":[{"Variable":"$.a","IsPresent":true,"IsNull":true,"Next":"B"}]},"B":{"Type":"Succeed"}}}`, "exactly one operator"},
		{"Choice operand type", `{"StartAt":"A","States":{"A":{"Type":"Choice","Choices":[{"Variable":"$.a","NumericEquals":"1","Next":"B"}]},"B":{"Type":"Succeed"}}}`, "wrong type"},
		{"Wait two fields", `{"StartAt":"A","States":{"A":{"Type":"Wait","Seconds":1,"SecondsPath":"$.s","End":true}}}`, "exactly one of Seconds"},
		{"ResultPath into an array", `{"StartAt":"A","States":{"A":{"Type":"Pass","ResultPath":"$.a[0]","End":true}}}`, "only object fields"},
		{"JSONata", `{"QueryLanguage":"JSONata","StartAt":"A","States":{"A":{"Type":"Succeed"}}}`, "JSONata"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.def), map[string]string{"X": "x"})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Parse: err = %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

type namedError struct{}

func (namedError) Error() string { return "value receiver" }

type pointerError struct{ msg string }

func (e *pointerError) Error() string { return e.msg }

func TestErrorName(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{&pointerError{"x"}, "pointerError"},
		{namedError{}, "namedError"},
		{errors.New("x"), "errorString"},
		{fmt.Errorf("wrapped: %w", &pointerError{"x"}), "wrapError"},
		{fmt.Errorf("a: %w, b: %w", errors.New("a"), errors.New("b")), "wrapErrors"},
		{fmt.Errorf("no wrap %d", 1), "errorString"},
		{&Error{Name: "Custom"}, "Error"},
		{context.Canceled, "errorString"},
		{json.Unmarshal([]byte("{"), new(any)), "SyntaxError"},
	}
	for _, tt := range tests {
		if got := ErrorName(tt.err); got != tt.want {
			t.Errorf("ErrorName(%#v) = %q, want %q", tt.err, got, tt.want)
		}
	}
}

func TestDataFlow(t *testing.T) {
	tests := []struct {
		name, def, input, want string
	}{
		{
			name:  "Pass Result at ResultPath",
			def:   `{"StartAt":"A","States":{"A":{"Type":"Pass","Result":{"x":1},"ResultPath":"$.r.s","End":true}}}`,
			input: `{"a":1,"r":{"keep":true}}`,
			want:  `{"a":1,"r":{"keep":true,"s":{"x":1}}}`,
		},
		{
			name:  "Pass without Result passes its effective input",
			def:   `{"StartAt":"A","States":{"A":{"Type":"Pass","InputPath":"$.in","ResultPath":"$.copy","End":true}}}`,
			input: `{"in":{"v":2}}`,
			want:  `{"in":{"v":2},"copy":{"v":2}}`,
		},
		{
			name:  "ResultPath $ replaces the input",
			def:   `{"StartAt":"A","States":{"A":{"Type":"Pass","Result":"r","ResultPath":"$","End":true}}}`,
			input: `{"a":1}`,
			want:  `"r"`,
		},
		{
			name:  "ResultPath null keeps the input",
			def:   `{"StartAt":"A","States":{"A":{"Type":"Pass","Result":"r","ResultPath":null,"End":true}}}`,
			input: `{"a":1}`,
			want:  `{"a":1}`,
		},
		{
			name:  "Parameters with nested paths, literals and the context object",
			def:   `{"StartAt":"A","States":{"A":{"Type":"Pass","Parameters":{"id.$":"$.task.id","lit":[1,"two",{"deep.$":"$.n[1]"}],"nested":{"name.$":"$$.Execution.Name","in.$":"$$.Execution.Input.task","state.$":"$$.State.Name"}},"End":true}}}`,
			input: `{"task":{"id":"t1"},"n":[10,20]}`,
			want:  `{"id":"t1","lit":[1,"two",{"deep":20}],"nested":{"name":"test","in":{"id":"t1"},"state":"A"}}`,
		},
		{
			name:  "bracket field names",
			def:   `{"StartAt":"A","States":{"A":{"Type":"Pass","InputPath":"$['a b']","End":true}}}`,
			input: `{"a b":{"c":3}}`,
			want:  `{"c":3}`,
		},
		{
			name:  "OutputPath selects, null empties",
			def:   `{"StartAt":"A","States":{"A":{"Type":"Pass","OutputPath":"$.keep","Next":"B"},"B":{"Type":"Pass","ResultPath":"$.x","OutputPath":null,"End":true}}}`,
			input: `{"keep":{"k":1},"drop":2}`,
			want:  `{}`,
		},
		{
			name:  "big integers survive",
			def:   `{"StartAt":"A","States":{"A":{"Type":"Pass","Parameters":{"seed.$":"$.seed"},"End":true}}}`,
			input: `{"seed":9007199254740993}`,
			want:  `{"seed":9007199254740993}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			exec, err := runDef(t, tt.def, nil, tt.input)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if tt.name == "big integers survive" {
				if string(exec.Output) != tt.want {
					t.Errorf("output = %s, want %s exactly", exec.Output, tt.want)
				}
				return
			}
			if !jsonEqual(t, exec.Output, tt.want) {
				t.Errorf("output = %s, want %s", exec.Output, tt.want)
			}
		})
	}
}

func TestTaskDataFlow(t *testing.T) {
	def := `{"StartAt":"T","States":{"T":{
		"Type":"Task","Resource":"fn",
		"InputPath":"$.job",
		"Parameters":{"id.$":"$.id","exec.$":"$$.Execution.Name","fixed":true},
		"ResultSelector":{"answer.$":"$.payload.value","echo.$":"$.got"},
		"ResultPath":"$.out.result",
		"OutputPath":"$.out",
		"End":true}}}`
	var rec recorder
	tasks := map[string]TaskFunc{"fn": func(ctx context.Context, in json.RawMessage) (json.RawMessage, error) {
		rec.echo(ctx, in)
		return json.RawMessage(fmt.Sprintf(`{"payload":{"value":42,"noise":1},"got":%s}`, in)), nil
	}}
	exec, err := runDef(t, def, tasks, `{"job":{"id":"j1"},"out":{"prior":1}}`)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if len(rec.inputs) != 1 || !jsonEqual(t, []byte(rec.inputs[0]), `{"id":"j1","exec":"test","fixed":true}`) {
		t.Errorf("task input = %v, want the Parameters built from InputPath", rec.inputs)
	}
	want := `{"prior":1,"result":{"answer":42,"echo":{"id":"j1","exec":"test","fixed":true}}}`
	if !jsonEqual(t, exec.Output, want) {
		t.Errorf("output = %s, want %s", exec.Output, want)
	}
}

func TestRuntimeErrorsFailTheExecution(t *testing.T) {
	tests := []struct{ name, def string }{
		{"Parameters path missing", `{"StartAt":"A","States":{"A":{"Type":"Task","Resource":"fn","Parameters":{"x.$":"$.missing"},"Catch":[{"ErrorEquals":["States.ALL"],"Next":"B"}],"End":true},"B":{"Type":"Succeed"}}}`},
		{"InputPath missing", `{"StartAt":"A","States":{"A":{"Type":"Task","Resource":"fn","InputPath":"$.missing","Catch":[{"ErrorEquals":["States.ALL"],"Next":"B"}],"End":true},"B":{"Type":"Succeed"}}}`},
		{"TimeoutSecondsPath not a number", `{"StartAt":"A","States":{"A":{"Type":"Task","Resource":"fn","TimeoutSecondsPath":"$.t","Catch":[{"ErrorEquals":["States.ALL"],"Next":"B"}],"End":true},"B":{"Type":"Succeed"}}}`},
		{"Choice variable missing", `{"StartAt":"A","States":{"A":{"Type":"Choice","Choices":[{"Variable":"$.missing","StringEquals":"x","Next":"B"}],"Default":"B"},"B":{"Type":"Succeed"}}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var rec recorder
			exec, err := runDef(t, tt.def, map[string]TaskFunc{"fn": rec.echo}, `{"t":"soon"}`)
			var fe *Error
			if !errors.As(err, &fe) || fe.Name != ErrorRuntime {
				t.Fatalf("Run: err = %v, want %s (not caught by States.ALL)", err, ErrorRuntime)
			}
			if exec.Status != Failed {
				t.Errorf("status = %s, want %s", exec.Status, Failed)
			}
			if rec.calls() != 0 {
				t.Errorf("task called %d times, want 0", rec.calls())
			}
		})
	}
}

func TestChoice(t *testing.T) {
	const input = `{"s":"beta","n":5,"f":2.5,"b":true,"z":null,"ts":"2025-03-01T12:00:00Z","other":"beta","limit":5,"list":[1]}`
	tests := []struct {
		rule string
		want bool
	}{
		{`"Variable":"$.s","StringEquals":"beta"`, true},
		{`"Variable":"$.s","StringEquals":"alpha"`, false},
		{`"Variable":"$.n","StringEquals":"5"`, false}, // wrong type is no match, not an error
		{`"Variable":"$.s","StringEqualsPath":"$.other"`, true},
		{`"Variable":"$.s","StringLessThan":"gamma"`, true},
		{`"Variable":"$.s","StringGreaterThanEquals":"beta"`, true},
		{`"Variable":"$.s","StringMatches":"b*a"`, true},
		{`"Variable":"$.s","StringMatches":"b*x"`, false},
		{`"Variable":"$.n","NumericEquals":5`, true},
		{`"Variable":"$.n","NumericEquals":5.0`, true},
		{`"Variable":"$.n","NumericLessThan":5`, false},
		{`"Variable":"$.n","NumericLessThanEquals":5`, true},
		{`"Variable":"$.n","NumericGreaterThan":4`, true},
		{`"Variable":"$.f","NumericGreaterThanEquals":2.5`, true},
		{`"Variable":"$.n","NumericEqualsPath":"$.limit"`, true},
		{`"Variable":"$.s","NumericEquals":5`, false},
		{`"Variable":"$.b","BooleanEquals":true`, true},
		{`"Variable":"$.b","BooleanEquals":false`, false},
		{`"Variable":"$.ts","TimestampEquals":"2025-03-01T13:00:00+01:00"`, true},
		{`"Variable":"$.ts","TimestampLessThan":"2025-03-01T12:00:01Z"`, true},
		{`"Variable":"$.s","IsPresent":true`, true},
		{`"Variable":"$.nope","IsPresent":true`, false},
		{`"Variable":"$.nope","IsPresent":false`, true},
		{`"Variable":"$.z","IsNull":true`, true},
		{`"Variable":"$.s","IsNull":true`, false},
		{`"Variable":"$.s","IsString":true`, true},
		{`"Variable":"$.n","IsNumeric":true`, true},
		{`"Variable":"$.b","IsBoolean":true`, true},
		{`"Variable":"$.ts","IsTimestamp":true`, true},
		{`"Variable":"$.s","IsTimestamp":true`, false},
		{`"Variable":"$.list[0]","NumericEquals":1`, true},
		{`"Variable":"$$.Execution.Name","StringEquals":"test"`, true},
		{`"And":[{"Variable":"$.s","StringEquals":"beta"},{"Variable":"$.n","NumericEquals":5}]`, true},
		{`"And":[{"Variable":"$.s","StringEquals":"beta"},{"Variable":"$.n","NumericEquals":6}]`, false},
		{`"Or":[{"Variable":"$.s","StringEquals":"x"},{"Variable":"$.n","NumericEquals":5}]`, true},
		{`"Or":[{"Variable":"$.s","StringEquals":"x"},{"Variable":"$.n","NumericEquals":6}]`, false},
		{`"Not":{"Variable":"$.s","StringEquals":"x"}`, true},
		{`"Not":{"Variable":"$.s","StringEquals":"beta"}`, false},
		{`"Or":[{"Variable":"$.nope","IsPresent":true},{"Not":{"And":[{"Variable":"$.b","BooleanEquals":true},{"Variable":"$.z","IsNull":false}]}}]`, true},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			def := `{"StartAt":"C","States":{
				"C":{"Type":"Choice","Choices":[{` + tt.rule + `,"Next":"Yes"}],"Default":"No"},
				"Yes":{"Type":"Pass","Result":"yes","End":true},
				"No":{"Type":"Pass","Result":"no","End":true}}}`
			exec, err := runDef(t, def, nil, input)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			want := `"no"`
			if tt.want {
				want = `"yes"`
			}
			if string(exec.Output) != want {
				t.Errorf("took %s, want %s", exec.Output, want)
			}
		})
	}
}

func TestChoiceFirstMatchAndNoMatch(t *testing.T) {
	def := `{"StartAt":"C","States":{
		"C":{"Type":"Choice","Choices":[
			{"Variable":"$.n","NumericGreaterThan":1,"Next":"First"},
			{"Variable":"$.n","NumericGreaterThan":0,"Next":"Second"}]},
		"First":{"Type":"Pass","Result":"first","End":true},
		"Second":{"Type":"Pass","Result":"second","End":true}}}`
	for _, tt := range []struct{ input, want string }{{`{"n":2}`, `"first"`}, {`{"n":1}`, `"second"`}} {
		exec, err := runDef(t, def, nil, tt.input)
		if err != nil || string(exec.Output) != tt.want {
			t.Errorf("input %s: output %s, err %v; want %s", tt.input, exec.Output, err, tt.want)
		}
	}
	_, err := runDef(t, def, nil, `{"n":0}`)
	var fe *Error
	if !errors.As(err, &fe) || fe.Name != ErrorNoChoiceMatched {
		t.Errorf("no rule matching and no Default: err = %v, want %s", err, ErrorNoChoiceMatched)
	}
}

func TestWildcardMatch(t *testing.T) {
	tests := []struct {
		pattern, s string
		want       bool
	}{
		{"*", "", true},
		{"log-*.txt", "log-2025.txt", true},
		{"log-*.txt", "log-2025.txt.gz", false},
		{"*a*b", "xxaxxb", true},
		{"*a*b", "xxbxxa", false},
		{`a\*b`, "a*b", true},
		{`a\*b`, "axxb", false},
		{`a\\b`, `a\b`, true},
		{"exact", "exact", true},
	}
	for _, tt := range tests {
		if got := wildcardMatch(tt.pattern, tt.s); got != tt.want {
			t.Errorf("wildcardMatch(%q, %q) = %v, want %v", tt.pattern, tt.s, got, tt.want)
		}
	}
}

// failing returns a task that fails with the given errors in turn, then
// succeeds with {"ok":true}.
func failing(errs ...error) (TaskFunc, *int) {
	var mu sync.Mutex
	calls := 0
	return func(context.Context, json.RawMessage) (json.RawMessage, error) {
		mu.Lock()
		defer mu.Unlock()
		calls++
		if calls <= len(errs) {
			return nil, errs[calls-1]
		}
		return json.RawMessage(`{"ok":true}`), nil
	}, &calls
}

type transientError struct{}

func (*transientError) Error() string { return "try again" }

type fatalError struct{}

func (*fatalError) Error() string { return "give up" }

func TestRetry(t *testing.T) {
	const catchAll = `"Catch":[{"ErrorEquals":["States.ALL"],"ResultPath":"$.error","Next":"Caught"}]`
	tests := []struct {
		name       string
		retry      string
		errs       []error
		wantCalls  int
		wantSleeps []time.Duration
		wantOutput string
	}{
		{
			name:       "retried with backoff until success",
			retry:      `[{"ErrorEquals":["transientError"],"IntervalSeconds":2,"MaxAttempts":3,"BackoffRate":3}]`,
			errs:       []error{&transientError{}, &transientError{}},
			wantCalls:  3,
			wantSleeps: []time.Duration{2 * time.Second, 6 * time.Second},
			wantOutput: `{"in":1,"r":{"ok":true}}`,
		},
		{
			name:       "defaults: 1s, backoff 2, 3 attempts, then caught",
			retry:      `[{"ErrorEquals":["transientError"]}]`,
			errs:       []error{&transientError{}, &transientError{}, &transientError{}, &transientError{}},
			wantCalls:  4,
			wantSleeps: []time.Duration{1 * time.Second, 2 * time.Second, 4 * time.Second},
			wantOutput: `{"in":1,"error":{"Error":"transientError","Cause":"try again"},"caught":true}`,
		},
		{
			name:       "MaxDelaySeconds caps the interval",
			retry:      `[{"ErrorEquals":["transientError"],"IntervalSeconds":4,"MaxAttempts":4,"BackoffRate":2,"MaxDelaySeconds":10}]`,
			errs:       []error{&transientError{}, &transientError{}, &transientError{}, &transientError{}},
			wantCalls:  5,
			wantSleeps: []time.Duration{4 * time.Second, 8 * time.Second, 10 * time.Second, 10 * time.Second},
			wantOutput: `{"in":1,"r":{"ok":true}}`,
		},
		{
			name:       "another name is not retried",
			retry:      `[{"ErrorEquals":["transientError"]}]`,
			errs:       []error{&fatalError{}},
			wantCalls:  1,
			wantOutput: `{"in":1,"error":{"Error":"fatalError","Cause":"give up"},"caught":true}`,
		},
		{
			name:       "a wrapped error is named wrapError and not retried",
			retry:      `[{"ErrorEquals":["transientError"]}]`,
			errs:       []error{fmt.Errorf("call: %w", &transientError{})},
			wantCalls:  1,
			wantOutput: `{"in":1,"error":{"Error":"wrapError","Cause":"call: try again"},"caught":true}`,
		},
		{
			name:       "an exhausted retrier does not fall through to the next",
			retry:      `[{"ErrorEquals":["transientError"],"MaxAttempts":1},{"ErrorEquals":["States.ALL"],"MaxAttempts":5}]`,
			errs:       []error{&transientError{}, &transientError{}},
			wantCalls:  2,
			wantSleeps: []time.Duration{time.Second},
			wantOutput: `{"in":1,"error":{"Error":"transientError","Cause":"try again"},"caught":true}`,
		},
		{
			name:       "each retrier counts its own attempts",
			retry:      `[{"ErrorEquals":["transientError"],"MaxAttempts":1},{"ErrorEquals":["fatalError"],"MaxAttempts":1,"IntervalSeconds":5}]`,
			errs:       []error{&transientError{}, &fatalError{}},
			wantCalls:  3,
			wantSleeps: []time.Duration{time.Second, 5 * time.Second},
			wantOutput: `{"in":1,"r":{"ok":true}}`,
		},
		{
			name:       "MaxAttempts 0 never retries",
			retry:      `[{"ErrorEquals":["transientError"],"MaxAttempts":0},{"ErrorEquals":["States.ALL"]}]`,
			errs:       []error{&transientError{}},
			wantCalls:  1,
			wantOutput: `{"in":1,"error":{"Error":"transientError","Cause":"try again"},"caught":true}`,
		},
		{
			name:       "States.TaskFailed matches task errors",
			retry:      `[{"ErrorEquals":["States.TaskFailed"],"MaxAttempts":1}]`,
			errs:       []error{&fatalError{}},
			wantCalls:  2,
			wantSleeps: []time.Duration{time.Second},
			wantOutput: `{"in":1,"r":{"ok":true}}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			def := `{"StartAt":"T","States":{
				"T":{"Type":"Task","Resource":"fn","ResultPath":"$.r","Retry":` + tt.retry + `,` + catchAll + `,"End":true},
				"Caught":{"Type":"Pass","Result":true,"ResultPath":"$.caught","End":true}}}`
			fn, calls := failing(tt.errs...)
			clock := newFakeClock()
			e := mustExecutor(t, def, map[string]TaskFunc{"fn": fn}, withClock(clock))
			exec, err := e.Run(context.Background(), "test", map[string]int{"in": 1})
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if *calls != tt.wantCalls {
				t.Errorf("task called %d times, want %d", *calls, tt.wantCalls)
			}
			if got := clock.sleeps(); !reflect.DeepEqual(got, tt.wantSleeps) {
				t.Errorf("slept %v, want %v", got, tt.wantSleeps)
			}
			if !jsonEqual(t, exec.Output, tt.wantOutput) {
				t.Errorf("output = %s, want %s", exec.Output, tt.wantOutput)
			}
		})
	}
}

func TestRetryCountInContext(t *testing.T) {
	def := `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"fn","Parameters":{"n.$":"$$.State.RetryCount"},"Retry":[{"ErrorEquals":["States.ALL"],"MaxAttempts":2}],"End":true}}}`
	var mu sync.Mutex
	var seen []string
	fn := func(_ context.Context, in json.RawMessage) (json.RawMessage, error) {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, string(in))
		if len(seen) < 3 {
			return nil, &transientError{}
		}
		return in, nil
	}
	if _, err := runDef(t, def, map[string]TaskFunc{"fn": fn}, `{}`); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if want := []string{`{"n":0}`, `{"n":1}`, `{"n":2}`}; !reflect.DeepEqual(seen, want) {
		t.Errorf("inputs = %v, want %v", seen, want)
	}
}

func TestUncaughtTaskErrorFailsExecution(t *testing.T) {
	def := `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"fn","Catch":[{"ErrorEquals":["other"],"Next":"X"}],"End":true},"X":{"Type":"Succeed"}}}`
	fn, _ := failing(&fatalError{})
	exec, err := runDef(t, def, map[string]TaskFunc{"fn": fn}, `{}`)
	var fe *Error
	if !errors.As(err, &fe) || fe.Name != "fatalError" || fe.Cause != "give up" {
		t.Fatalf("Run: err = %v, want fatalError: give up", err)
	}
	if exec.Status != Failed || exec.Error.Name != "fatalError" {
		t.Errorf("execution = %+v, want Failed with fatalError", exec)
	}
}

type panicValue struct{ code int }

func TestPanicBecomesError(t *testing.T) {
	tests := []struct {
		name      string
		panicWith any
		wantName  string
		wantCause string
	}{
		{"string", "boom", "string", "boom"},
		{"struct", panicValue{7}, "panicValue", "{7}"},
		{"error pointer", &pointerError{"bad"}, "pointerError", "bad"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			def := `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"fn","Catch":[{"ErrorEquals":["States.ALL"],"Next":"C"}],"End":true},"C":{"Type":"Pass","End":true}}}`
			fn := func(context.Context, json.RawMessage) (json.RawMessage, error) { panic(tt.panicWith) }
			exec, err := runDef(t, def, map[string]TaskFunc{"fn": fn}, `{}`)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			want := fmt.Sprintf(`{"Error":%q,"Cause":%q}`, tt.wantName, tt.wantCause)
			if !jsonEqual(t, exec.Output, want) {
				t.Errorf("caught %s, want %s", exec.Output, want)
			}
		})
	}
}

func TestHandlerAdapter(t *testing.T) {
	type in struct {
		N int `json:"n"`
	}
	type out struct {
		Double int `json:"double"`
	}
	fn := Handler(func(_ context.Context, i in) (out, error) {
		if i.N < 0 {
			return out{}, &fatalError{}
		}
		return out{Double: 2 * i.N}, nil
	})
	got, err := fn(context.Background(), json.RawMessage(`{"n":21}`))
	if err != nil || string(got) != `{"double":42}` {
		t.Errorf("Handler(...)({n:21}) = %s, %v; want {\"double\":42}", got, err)
	}
	tests := []struct{ input, wantName string }{
		{`{"n":-1}`, "fatalError"},
		{`{"n":"x"}`, "UnmarshalTypeError"},
		{`{`, "SyntaxError"},
	}
	for _, tt := range tests {
		_, err := fn(context.Background(), json.RawMessage(tt.input))
		if err == nil || ErrorName(err) != tt.wantName {
			t.Errorf("Handler(...)(%s) error %v named %q, want %q", tt.input, err, ErrorName(err), tt.wantName)
		}
	}
}

func TestFailState(t *testing.T) {
	tests := []struct {
		name, state, wantName, wantCause string
	}{
		{"static", `{"Type":"Fail","Error":"Broken","Cause":"it broke"}`, "Broken", "it broke"},
		{"paths", `{"Type":"Fail","ErrorPath":"$.e","CausePath":"$.c"}`, "FromInput", "because"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			def := `{"StartAt":"F","States":{"F":` + tt.state + `}}`
			exec, err := runDef(t, def, nil, `{"e":"FromInput","c":"because"}`)
			var fe *Error
			if !errors.As(err, &fe) || fe.Name != tt.wantName || fe.Cause != tt.wantCause {
				t.Fatalf("Run: err = %v, want %s: %s", err, tt.wantName, tt.wantCause)
			}
			if exec.Status != Failed {
				t.Errorf("status = %s, want %s", exec.Status, Failed)
			}
		})
	}
}

func TestWait(t *testing.T) {
	clockStart := newFakeClock().Now()
	tests := []struct {
		name, state string
		want        time.Duration
	}{
		{"Seconds", `"Seconds":7`, 7 * time.Second},
		{"SecondsPath", `"SecondsPath":"$.s"`, 9 * time.Second},
		{"Timestamp", `"Timestamp":"` + clockStart.Add(90*time.Second).Format(time.RFC3339) + `"`, 90 * time.Second},
		{"TimestampPath", `"TimestampPath":"$.at"`, time.Hour},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			def := `{"StartAt":"W","States":{"W":{"Type":"Wait",` + tt.state + `,"Next":"Done"},"Done":{"Type":"Succeed"}}}`
			clock := newFakeClock()
			e := mustExecutor(t, def, nil, withClock(clock))
			input := fmt.Sprintf(`{"s":9,"at":%q}`, clockStart.Add(time.Hour).Format(time.RFC3339))
			exec, err := e.Run(context.Background(), "w", json.RawMessage(input))
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if got := clock.sleeps(); !reflect.DeepEqual(got, []time.Duration{tt.want}) {
				t.Errorf("slept %v, want [%v]", got, tt.want)
			}
			if !jsonEqual(t, exec.Output, input) {
				t.Errorf("output = %s, want the input %s", exec.Output, input)
			}
		})
	}
}

func TestExecutionRecord(t *testing.T) {
	clock := newFakeClock()
	def := `{"StartAt":"W","States":{"W":{"Type":"Wait","Seconds":30,"End":true}}}`
	e := mustExecutor(t, def, nil, withClock(clock))
	start := clock.Now()
	exec, err := e.Run(context.Background(), "rec", map[string]string{"a": "b"})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if exec.Name != "rec" || exec.Status != Succeeded || !exec.StartTime.Equal(start) || exec.StopTime.Sub(exec.StartTime) != 30*time.Second {
		t.Errorf("execution = %+v, want rec, SUCCEEDED, 30s long from %v", exec, start)
	}
}
