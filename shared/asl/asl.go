// Package asl runs Amazon States Language state machines locally, so that
// one definition of a workflow (a .asl.json file deployed to AWS Step
// Functions) is also what runs on a developer's machine, with no Go copy
// of its control flow to drift from it.
//
// It interprets the JSONPath dialect of the subset a Lambda-driven workflow
// uses: Task (Resource, Parameters, InputPath, ResultSelector, ResultPath,
// OutputPath, TimeoutSeconds(Path), Retry, Catch), Pass, Choice, Wait,
// Succeed and Fail. Parse rejects everything else (Parallel, Map,
// intrinsic functions, JSONata, heartbeats) loudly rather than ignore it.
// Task resources are Go functions with the shape of a Lambda handler,
// JSON in and JSON out, and their errors are named the way aws-lambda-go
// names them (see ErrorName), so Retry and Catch match the same errors
// locally as on AWS.
package asl

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strings"
)

// StateMachine is a parsed, validated definition.
type StateMachine struct {
	startAt        string
	states         map[string]*state
	timeoutSeconds int // whole-execution timeout; 0 means none
}

// state is one compiled state. Fields not used by its Type are zero.
type state struct {
	name string
	typ  string
	next string
	end  bool

	inputPath, outputPath, resultPath optionalPath
	parameters, resultSelector        *template
	result                            any
	hasResult                         bool

	// Task
	resource           string
	timeoutSeconds     int
	timeoutSecondsPath *path
	retry              []retrier
	catch              []catcher

	// Choice
	choices []*rule
	deflt   string

	// Wait
	seconds       int
	hasSeconds    bool
	secondsPath   *path
	timestamp     string
	timestampPath *path

	// Fail
	errorName, cause     string
	errorPath, causePath *path
}

type retrier struct {
	errorEquals []string
	interval    float64 // seconds
	maxAttempts int
	backoffRate float64
	maxDelay    float64 // seconds; 0 means no cap
	fullJitter  bool
}

type catcher struct {
	errorEquals []string
	next        string
	resultPath  optionalPath
}

// rawMachine and rawState mirror the JSON; unknown fields are rejected so
// that an unsupported feature fails at Parse, not silently at run time.
type rawMachine struct {
	Comment        string               `json:"Comment"`
	StartAt        string               `json:"StartAt"`
	States         map[string]*rawState `json:"States"`
	TimeoutSeconds *int                 `json:"TimeoutSeconds"`
	Version        string               `json:"Version"`
	QueryLanguage  string               `json:"QueryLanguage"`
}

type rawState struct {
	Type    string `json:"Type"`
	Comment string `json:"Comment"`
	Next    string `json:"Next"`
	End     bool   `json:"End"`

	InputPath      json.RawMessage `json:"InputPath"`
	OutputPath     json.RawMessage `json:"OutputPath"`
	ResultPath     json.RawMessage `json:"ResultPath"`
	Parameters     json.RawMessage `json:"Parameters"`
	ResultSelector json.RawMessage `json:"ResultSelector"`
	Result         json.RawMessage `json:"Result"`

	Resource           string       `json:"Resource"`
	TimeoutSeconds     *int         `json:"TimeoutSeconds"`
	TimeoutSecondsPath string       `json:"TimeoutSecondsPath"`
	Retry              []rawRetrier `json:"Retry"`
	Catch              []rawCatcher `json:"Catch"`

	Choices []json.RawMessage `json:"Choices"`
	Default string            `json:"Default"`

	Seconds       *int   `json:"Seconds"`
	SecondsPath   string `json:"SecondsPath"`
	Timestamp     string `json:"Timestamp"`
	TimestampPath string `json:"TimestampPath"`

	Error     string `json:"Error"`
	Cause     string `json:"Cause"`
	ErrorPath string `json:"ErrorPath"`
	CausePath string `json:"CausePath"`
}

type rawRetrier struct {
	ErrorEquals     []string `json:"ErrorEquals"`
	Comment         string   `json:"Comment"`
	IntervalSeconds *int     `json:"IntervalSeconds"`
	MaxAttempts     *int     `json:"MaxAttempts"`
	BackoffRate     *float64 `json:"BackoffRate"`
	MaxDelaySeconds *int     `json:"MaxDelaySeconds"`
	JitterStrategy  string   `json:"JitterStrategy"`
}

type rawCatcher struct {
	ErrorEquals []string        `json:"ErrorEquals"`
	Comment     string          `json:"Comment"`
	Next        string          `json:"Next"`
	ResultPath  json.RawMessage `json:"ResultPath"`
}

// placeholder is a SAM DefinitionSubstitutions reference.
var placeholder = regexp.MustCompile(`\$\{([A-Za-z0-9_]+)\}`)

// Parse validates a definition and compiles it. Before anything else,
// every ${Name} in the definition's strings is replaced by
// substitutions[Name], as SAM's DefinitionSubstitutions does on deploy; a
// placeholder with no substitution is an error. The definition must be
// valid JSON before substitution, so placeholders can only stand for
// strings (or parts of strings).
func Parse(definition []byte, substitutions map[string]string) (*StateMachine, error) {
	dec := json.NewDecoder(bytes.NewReader(definition))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("parse state machine: %w", err)
	}
	var missing []string
	doc = substitute(doc, substitutions, &missing)
	if len(missing) > 0 {
		sort.Strings(missing)
		return nil, fmt.Errorf("parse state machine: no substitution for %s", strings.Join(dedupe(missing), ", "))
	}
	filled, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("parse state machine: %w", err)
	}

	var raw rawMachine
	dec = json.NewDecoder(bytes.NewReader(filled))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("parse state machine: %w", err)
	}
	sm, err := compile(&raw)
	if err != nil {
		return nil, fmt.Errorf("parse state machine: %w", err)
	}
	return sm, nil
}

// substitute replaces placeholders in every string and object key of v.
func substitute(v any, subs map[string]string, missing *[]string) any {
	replace := func(s string) string {
		return placeholder.ReplaceAllStringFunc(s, func(m string) string {
			name := m[2 : len(m)-1]
			val, ok := subs[name]
			if !ok {
				*missing = append(*missing, m)
				return m
			}
			return val
		})
	}
	switch v := v.(type) {
	case string:
		return replace(v)
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, val := range v {
			out[replace(k)] = substitute(val, subs, missing)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, val := range v {
			out[i] = substitute(val, subs, missing)
		}
		return out
	default:
		return v
	}
}

func dedupe(sorted []string) []string {
	var out []string
	for i, s := range sorted {
		if i == 0 || s != sorted[i-1] {
			out = append(out, s)
		}
	}
	return out
}

func compile(raw *rawMachine) (*StateMachine, error) {
	if raw.QueryLanguage != "" && raw.QueryLanguage != "JSONPath" {
		return nil, fmt.Errorf("QueryLanguage %q is not supported (only JSONPath)", raw.QueryLanguage)
	}
	if len(raw.States) == 0 {
		return nil, errors.New("no States")
	}
	if _, ok := raw.States[raw.StartAt]; !ok {
		return nil, fmt.Errorf("StartAt %q is not a state", raw.StartAt)
	}
	sm := &StateMachine{startAt: raw.StartAt, states: make(map[string]*state, len(raw.States))}
	if raw.TimeoutSeconds != nil {
		if *raw.TimeoutSeconds <= 0 {
			return nil, errors.New("TimeoutSeconds must be positive")
		}
		sm.timeoutSeconds = *raw.TimeoutSeconds
	}
	for name, rs := range raw.States {
		if rs == nil {
			return nil, fmt.Errorf("state %q is null", name)
		}
		st, err := compileState(name, rs)
		if err != nil {
			return nil, fmt.Errorf("state %q: %w", name, err)
		}
		sm.states[name] = st
	}
	if err := sm.checkTransitions(); err != nil {
		return nil, err
	}
	return sm, nil
}

// fields lists which optional fields each state type accepts.
var fields = map[string][]string{
	"Task":    {"Next", "End", "InputPath", "OutputPath", "ResultPath", "Parameters", "ResultSelector", "Resource", "TimeoutSeconds", "TimeoutSecondsPath", "Retry", "Catch"},
	"Pass":    {"Next", "End", "InputPath", "OutputPath", "ResultPath", "Parameters", "Result"},
	"Choice":  {"InputPath", "OutputPath", "Choices", "Default"},
	"Wait":    {"Next", "End", "InputPath", "OutputPath", "Seconds", "SecondsPath", "Timestamp", "TimestampPath"},
	"Succeed": {"InputPath", "OutputPath"},
	"Fail":    {"Error", "Cause", "ErrorPath", "CausePath"},
}

// present lists the optional fields a raw state sets.
func (rs *rawState) present() []string {
	var out []string
	add := func(name string, set bool) {
		if set {
			out = append(out, name)
		}
	}
	add("Next", rs.Next != "")
	add("End", rs.End)
	add("InputPath", rs.InputPath != nil)
	add("OutputPath", rs.OutputPath != nil)
	add("ResultPath", rs.ResultPath != nil)
	add("Parameters", rs.Parameters != nil)
	add("ResultSelector", rs.ResultSelector != nil)
	add("Result", rs.Result != nil)
	add("Resource", rs.Resource != "")
	add("TimeoutSeconds", rs.TimeoutSeconds != nil)
	add("TimeoutSecondsPath", rs.TimeoutSecondsPath != "")
	add("Retry", rs.Retry != nil)
	add("Catch", rs.Catch != nil)
	add("Choices", rs.Choices != nil)
	add("Default", rs.Default != "")
	add("Seconds", rs.Seconds != nil)
	add("SecondsPath", rs.SecondsPath != "")
	add("Timestamp", rs.Timestamp != "")
	add("TimestampPath", rs.TimestampPath != "")
	add("Error", rs.Error != "")
	add("Cause", rs.Cause != "")
	add("ErrorPath", rs.ErrorPath != "")
	add("CausePath", rs.CausePath != "")
	return out
}

func compileState(name string, rs *rawState) (*state, error) {
	allowed, ok := fields[rs.Type]
	if !ok {
		return nil, fmt.Errorf("Type %q is not supported (Task, Pass, Choice, Wait, Succeed, Fail)", rs.Type)
	}
	for _, f := range rs.present() {
		if !contains(allowed, f) {
			return nil, fmt.Errorf("a %s state cannot have %s", rs.Type, f)
		}
	}
	st := &state{name: name, typ: rs.Type, next: rs.Next, end: rs.End}
	if contains(allowed, "Next") && (rs.Next == "") == !rs.End {
		return nil, errors.New("exactly one of Next and End (true) is required")
	}

	var err error
	if st.inputPath, err = compileOptionalPath("InputPath", rs.InputPath); err != nil {
		return nil, err
	}
	if st.outputPath, err = compileOptionalPath("OutputPath", rs.OutputPath); err != nil {
		return nil, err
	}
	if st.resultPath, err = compileResultPath(rs.ResultPath); err != nil {
		return nil, err
	}
	if st.parameters, err = compileRawTemplate("Parameters", rs.Parameters); err != nil {
		return nil, err
	}
	if st.resultSelector, err = compileRawTemplate("ResultSelector", rs.ResultSelector); err != nil {
		return nil, err
	}
	if rs.Result != nil {
		if st.result, err = decode(rs.Result); err != nil {
			return nil, fmt.Errorf("Result: %w", err)
		}
		st.hasResult = true
	}

	switch rs.Type {
	case "Task":
		err = compileTask(st, rs)
	case "Choice":
		err = compileChoice(st, rs)
	case "Wait":
		err = compileWait(st, rs)
	case "Fail":
		err = compileFail(st, rs)
	}
	return st, err
}

func compileTask(st *state, rs *rawState) error {
	if rs.Resource == "" {
		return errors.New("a Task needs Resource")
	}
	st.resource = rs.Resource
	if rs.TimeoutSeconds != nil && rs.TimeoutSecondsPath != "" {
		return errors.New("TimeoutSeconds and TimeoutSecondsPath are exclusive")
	}
	if rs.TimeoutSeconds != nil {
		if *rs.TimeoutSeconds <= 0 {
			return errors.New("TimeoutSeconds must be positive")
		}
		st.timeoutSeconds = *rs.TimeoutSeconds
	}
	if rs.TimeoutSecondsPath != "" {
		p, err := parsePath(rs.TimeoutSecondsPath)
		if err != nil {
			return fmt.Errorf("TimeoutSecondsPath: %w", err)
		}
		st.timeoutSecondsPath = p
	}
	for i, r := range rs.Retry {
		rt, err := compileRetrier(r)
		if err != nil {
			return fmt.Errorf("Retry[%d]: %w", i, err)
		}
		if err := checkErrorEquals(r.ErrorEquals, i == len(rs.Retry)-1); err != nil {
			return fmt.Errorf("Retry[%d]: %w", i, err)
		}
		st.retry = append(st.retry, rt)
	}
	for i, c := range rs.Catch {
		if err := checkErrorEquals(c.ErrorEquals, i == len(rs.Catch)-1); err != nil {
			return fmt.Errorf("Catch[%d]: %w", i, err)
		}
		if c.Next == "" {
			return fmt.Errorf("Catch[%d]: Next is required", i)
		}
		rp, err := compileResultPath(c.ResultPath)
		if err != nil {
			return fmt.Errorf("Catch[%d]: %w", i, err)
		}
		st.catch = append(st.catch, catcher{errorEquals: c.ErrorEquals, next: c.Next, resultPath: rp})
	}
	return nil
}

// checkErrorEquals enforces the specification's rule that States.ALL
// stands alone, in the last retrier or catcher.
func checkErrorEquals(names []string, last bool) error {
	if len(names) == 0 {
		return errors.New("ErrorEquals must not be empty")
	}
	if contains(names, ErrorAll) && (len(names) > 1 || !last) {
		return errors.New("States.ALL must appear alone in the last retrier or catcher")
	}
	return nil
}

func compileRetrier(r rawRetrier) (retrier, error) {
	rt := retrier{errorEquals: r.ErrorEquals, interval: 1, maxAttempts: 3, backoffRate: 2}
	if r.IntervalSeconds != nil {
		if *r.IntervalSeconds < 1 {
			return rt, errors.New("IntervalSeconds must be at least 1")
		}
		rt.interval = float64(*r.IntervalSeconds)
	}
	if r.MaxAttempts != nil {
		if *r.MaxAttempts < 0 {
			return rt, errors.New("MaxAttempts must not be negative")
		}
		rt.maxAttempts = *r.MaxAttempts
	}
	if r.BackoffRate != nil {
		if *r.BackoffRate < 1 {
			return rt, errors.New("BackoffRate must be at least 1.0")
		}
		rt.backoffRate = *r.BackoffRate
	}
	if r.MaxDelaySeconds != nil {
		if *r.MaxDelaySeconds < 1 {
			return rt, errors.New("MaxDelaySeconds must be at least 1")
		}
		rt.maxDelay = float64(*r.MaxDelaySeconds)
	}
	switch r.JitterStrategy {
	case "", "NONE":
	case "FULL":
		rt.fullJitter = true
	default:
		return rt, fmt.Errorf("JitterStrategy %q is not FULL or NONE", r.JitterStrategy)
	}
	return rt, nil
}

// delay is how long to wait before retry number attempt (0-based).
func (r retrier) delay(attempt int) float64 {
	d := r.interval * math.Pow(r.backoffRate, float64(attempt))
	if r.maxDelay > 0 && d > r.maxDelay {
		d = r.maxDelay
	}
	return d
}

func compileChoice(st *state, rs *rawState) error {
	if len(rs.Choices) == 0 {
		return errors.New("a Choice needs at least one rule in Choices")
	}
	for i, raw := range rs.Choices {
		v, err := decode(raw)
		if err != nil {
			return fmt.Errorf("Choices[%d]: %w", i, err)
		}
		obj, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("Choices[%d] is not an object", i)
		}
		r, err := compileRule(obj, true)
		if err != nil {
			return fmt.Errorf("Choices[%d]: %w", i, err)
		}
		st.choices = append(st.choices, r)
	}
	st.deflt = rs.Default
	return nil
}

func compileWait(st *state, rs *rawState) error {
	n := 0
	if rs.Seconds != nil {
		n++
		if *rs.Seconds < 0 {
			return errors.New("Seconds must not be negative")
		}
		st.seconds, st.hasSeconds = *rs.Seconds, true
	}
	if rs.SecondsPath != "" {
		n++
		p, err := parsePath(rs.SecondsPath)
		if err != nil {
			return fmt.Errorf("SecondsPath: %w", err)
		}
		st.secondsPath = p
	}
	if rs.Timestamp != "" {
		n++
		if _, err := parseTimestamp(rs.Timestamp); err != nil {
			return fmt.Errorf("Timestamp: %w", err)
		}
		st.timestamp = rs.Timestamp
	}
	if rs.TimestampPath != "" {
		n++
		p, err := parsePath(rs.TimestampPath)
		if err != nil {
			return fmt.Errorf("TimestampPath: %w", err)
		}
		st.timestampPath = p
	}
	if n != 1 {
		return errors.New("a Wait needs exactly one of Seconds, SecondsPath, Timestamp and TimestampPath")
	}
	return nil
}

func compileFail(st *state, rs *rawState) error {
	if rs.Error != "" && rs.ErrorPath != "" || rs.Cause != "" && rs.CausePath != "" {
		return errors.New("Error/ErrorPath and Cause/CausePath are exclusive")
	}
	st.errorName, st.cause = rs.Error, rs.Cause
	var err error
	if rs.ErrorPath != "" {
		if st.errorPath, err = parsePath(rs.ErrorPath); err != nil {
			return fmt.Errorf("ErrorPath: %w", err)
		}
	}
	if rs.CausePath != "" {
		if st.causePath, err = parsePath(rs.CausePath); err != nil {
			return fmt.Errorf("CausePath: %w", err)
		}
	}
	return nil
}

func compileOptionalPath(field string, raw json.RawMessage) (optionalPath, error) {
	if raw == nil {
		return optionalPath{p: &path{text: "$"}}, nil
	}
	if string(bytes.TrimSpace(raw)) == "null" {
		return optionalPath{null: true}, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return optionalPath{}, fmt.Errorf("%s must be a path string or null", field)
	}
	p, err := parsePath(s)
	if err != nil {
		return optionalPath{}, fmt.Errorf("%s: %w", field, err)
	}
	return optionalPath{p: p}, nil
}

// compileResultPath also checks that the path can be written: fields
// only, in the state's input (not the context object).
func compileResultPath(raw json.RawMessage) (optionalPath, error) {
	op, err := compileOptionalPath("ResultPath", raw)
	if err != nil || op.null {
		return op, err
	}
	if op.p.context {
		return op, errors.New("ResultPath cannot point into the context object")
	}
	for _, st := range op.p.steps {
		if st.isIndex {
			return op, fmt.Errorf("ResultPath %s: only object fields can be written", op.p)
		}
	}
	return op, nil
}

func compileRawTemplate(field string, raw json.RawMessage) (*template, error) {
	if raw == nil {
		return nil, nil
	}
	v, err := decode(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", field, err)
	}
	t, err := compileTemplate(v)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", field, err)
	}
	return t, nil
}

// checkTransitions verifies that every transition names a state and that
// every state is reachable from StartAt, as AWS validation does.
func (sm *StateMachine) checkTransitions() error {
	var names []string
	for name := range sm.states {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		for _, target := range sm.states[name].targets() {
			if _, ok := sm.states[target]; !ok {
				return fmt.Errorf("state %q: transition to unknown state %q", name, target)
			}
		}
	}
	seen := map[string]bool{sm.startAt: true}
	queue := []string{sm.startAt}
	for len(queue) > 0 {
		name := queue[0]
		queue = queue[1:]
		for _, target := range sm.states[name].targets() {
			if !seen[target] {
				seen[target] = true
				queue = append(queue, target)
			}
		}
	}
	for _, name := range names {
		if !seen[name] {
			return fmt.Errorf("state %q is not reachable from StartAt", name)
		}
	}
	return nil
}

func (st *state) targets() []string {
	var out []string
	if st.next != "" {
		out = append(out, st.next)
	}
	for _, c := range st.catch {
		out = append(out, c.next)
	}
	for _, r := range st.choices {
		out = append(out, r.next)
	}
	if st.deflt != "" {
		out = append(out, st.deflt)
	}
	return out
}

// Resources returns the distinct Resource of every Task state, sorted:
// what an executor must be given a function for.
func (sm *StateMachine) Resources() []string {
	set := map[string]bool{}
	for _, st := range sm.states {
		if st.typ == "Task" {
			set[st.resource] = true
		}
	}
	out := make([]string, 0, len(set))
	for r := range set {
		out = append(out, r)
	}
	sort.Strings(out)
	return out
}

// decode parses JSON keeping numbers exact (json.Number).
func decode(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("trailing data after the JSON value")
	}
	return v, nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
