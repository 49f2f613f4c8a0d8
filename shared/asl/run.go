package asl

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strconv"
	"sync"
	"time"
)

// Status is how an execution ended, named as Step Functions names it.
type Status string

// The end states of an execution.
const (
	Succeeded Status = "SUCCEEDED"
	Failed    Status = "FAILED"
	TimedOut  Status = "TIMED_OUT"
	Aborted   Status = "ABORTED"
)

// Execution is the record of a finished execution.
type Execution struct {
	Name      string
	Status    Status
	Output    json.RawMessage // the final output, when Succeeded
	Error     *Error          // why it failed, when Failed or TimedOut
	StartTime time.Time
	StopTime  time.Time
}

// errExecutionTimeout is the cancel cause of an execution that ran past
// the state machine's TimeoutSeconds.
var errExecutionTimeout = errors.New("execution timed out")

// run is one execution in progress. It holds no goroutine while it
// waits: a task call runs in a goroutine of its own, which carries the
// execution on to its next task call or wait once the call returns; a
// Wait state, a retry's interval and the timeouts are timers. Thousands
// of executions waiting on their generations then hold one goroutine
// each (the call's), not three, and none while in a Wait state.
type run struct {
	e     *Executor
	name  string
	input any // the execution input, for $$.Execution.Input
	start time.Time
	log   *slog.Logger

	ctx    context.Context // done: aborted, or timed out (its cause)
	cancel context.CancelCauseFunc
	// stopTimeout stops the execution's TimeoutSeconds timer.
	stopTimeout func() bool
	// current is the state the execution is in.
	current string
	exec    Execution
	// done receives the record once, at the end.
	done func(Execution)
}

// begin starts an execution and runs it until it first waits (a task
// call or a timer); done is called with its record once it has ended,
// from whichever goroutine ended it. ctx cancelled means aborted.
func (e *Executor) begin(ctx context.Context, name string, input any, done func(Execution)) {
	r := &run{e: e, name: name, input: input, start: e.clock.Now(), log: e.logger.With("execution", name), done: done}
	r.exec = Execution{Name: name, StartTime: r.start}
	r.ctx, r.cancel = context.WithCancelCause(ctx)
	if d := time.Duration(e.sm.timeoutSeconds) * time.Second; d > 0 {
		r.stopTimeout = e.clock.AfterFunc(d, func() { r.cancel(errExecutionTimeout) })
	}
	r.log.Debug("execution started")
	r.advance(e.sm.startAt, input)
}

// advance runs states from name on doc until one waits (it then carries
// on from its callback) or the execution ends.
func (r *run) advance(name string, doc any) {
	for {
		if r.ctx.Err() != nil {
			r.stopped()
			return
		}
		st := r.e.sm.states[name]
		r.current = name
		entered := r.e.clock.Now()
		r.log.Debug("state entered", "state", st.name, "type", st.typ)
		switch st.typ {
		case "Task":
			r.task(st, doc, entered)
			return
		case "Wait":
			r.wait(st, doc)
			return
		}
		next, out, ferr := r.state(st, doc, entered)
		if !r.settle(st, next, out, ferr) {
			return
		}
		name, doc = next, out
	}
}

// settle ends the execution after state st when it was aborted, failed
// (ferr) or reached its end (next ""), and reports whether it goes on to
// next with out instead.
func (r *run) settle(st *state, next string, out any, ferr *Error) bool {
	switch {
	case r.ctx.Err() != nil:
		r.stopped()
		return false
	case ferr != nil:
		r.exec.Status, r.exec.Error = Failed, ferr
		r.log.Warn("execution failed", "state", st.name, "error", ferr.Name, "cause", ferr.Cause)
		r.finish()
		return false
	}
	r.log.Debug("state exited", "state", st.name, "next", next)
	if next == "" {
		r.succeeded(out)
		return false
	}
	return true
}

// then carries the execution on after the asynchronous end of state st.
func (r *run) then(st *state, next string, out any, ferr *Error) {
	if r.settle(st, next, out, ferr) {
		r.advance(next, out)
	}
}

func (r *run) succeeded(out any) {
	r.exec.Status = Succeeded
	r.exec.Output, _ = json.Marshal(out) // values come from decoded JSON
	r.log.Debug("execution succeeded")
	r.finish()
}

// stopped ends an execution whose context is done: timed out or aborted.
func (r *run) stopped() {
	if errors.Is(context.Cause(r.ctx), errExecutionTimeout) {
		r.exec.Status = TimedOut
		r.exec.Error = &Error{Name: ErrorTimeout, Cause: fmt.Sprintf("the execution ran longer than %d seconds", r.e.sm.timeoutSeconds)}
		r.log.Warn("execution timed out", "state", r.current)
	} else {
		r.exec.Status = Aborted
		r.log.Info("execution aborted", "state", r.current, "reason", context.Cause(r.ctx))
	}
	r.finish()
}

func (r *run) finish() {
	r.exec.StopTime = r.e.clock.Now()
	if r.stopTimeout != nil {
		r.stopTimeout()
	}
	r.cancel(nil)
	r.done(r.exec)
}

// pending is one wait of an execution (a timer, a task call), which
// ends once, by whichever of its events comes first: the others are
// stopped.
type pending struct {
	mu    sync.Mutex
	ended bool
	stops []func() bool
}

// onEnd stops stop once the wait has ended (at once if it has).
func (p *pending) onEnd(stop func() bool) {
	p.mu.Lock()
	if p.ended {
		p.mu.Unlock()
		stop()
		return
	}
	p.stops = append(p.stops, stop)
	p.mu.Unlock()
}

// isEnded reports whether the wait has ended.
func (p *pending) isEnded() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.ended
}

// end reports whether the caller's event is the first, and then stops
// the others.
func (p *pending) end() bool {
	p.mu.Lock()
	if p.ended {
		p.mu.Unlock()
		return false
	}
	p.ended = true
	stops := p.stops
	p.stops = nil
	p.mu.Unlock()
	for _, stop := range stops {
		stop()
	}
	return true
}

// after calls f once d has passed, or ends the execution as stopped if
// its context is done first.
func (r *run) after(d time.Duration, f func()) {
	p := new(pending)
	p.onEnd(context.AfterFunc(r.ctx, func() {
		if p.end() {
			r.stopped()
		}
	}))
	p.onEnd(r.e.clock.AfterFunc(d, func() {
		if p.end() {
			f()
		}
	}))
}

// state runs one state that does not wait on its raw input. It returns
// the next state ("" at the end) and the output, or the error that fails
// the execution.
func (r *run) state(st *state, raw any, entered time.Time) (string, any, *Error) {
	switch st.typ {
	case "Pass":
		effective, err := r.effectiveInput(st, raw, entered, 0)
		if err != nil {
			return "", nil, err
		}
		result := effective
		if st.hasResult {
			result = st.result
		}
		merged, err := applyResultPath(st.resultPath, raw, result)
		if err != nil {
			return "", nil, err
		}
		out, err := applyPath("OutputPath", st.outputPath, merged)
		return st.next, out, err
	case "Choice":
		effective, err := applyPath("InputPath", st.inputPath, raw)
		if err != nil {
			return "", nil, err
		}
		ctxObj := r.contextObject(st, entered, 0)
		next := ""
		for _, rule := range st.choices {
			ok, err := rule.eval(effective, ctxObj)
			if err != nil {
				return "", nil, asError(err)
			}
			if ok {
				next = rule.next
				break
			}
		}
		if next == "" {
			next = st.deflt
		}
		if next == "" {
			return "", nil, &Error{Name: ErrorNoChoiceMatched, Cause: fmt.Sprintf("no rule of the Choice state %q matched and it has no Default", st.name)}
		}
		out, err := applyPath("OutputPath", st.outputPath, effective)
		return next, out, err
	case "Succeed":
		effective, err := applyPath("InputPath", st.inputPath, raw)
		if err != nil {
			return "", nil, err
		}
		out, err := applyPath("OutputPath", st.outputPath, effective)
		return "", out, err
	default: // "Fail"
		fe := &Error{Name: st.errorName, Cause: st.cause}
		if st.errorPath != nil {
			s, err := stringAt(st.errorPath, raw, "ErrorPath")
			if err != nil {
				return "", nil, err
			}
			fe.Name = s
		}
		if st.causePath != nil {
			s, err := stringAt(st.causePath, raw, "CausePath")
			if err != nil {
				return "", nil, err
			}
			fe.Cause = s
		}
		return "", nil, fe
	}
}

// wait runs a Wait state: a timer, then the next state.
func (r *run) wait(st *state, raw any) {
	effective, ferr := applyPath("InputPath", st.inputPath, raw)
	var d time.Duration
	if ferr == nil {
		d, ferr = r.waitDuration(st, effective)
	}
	if ferr != nil {
		r.then(st, "", nil, ferr)
		return
	}
	r.after(d, func() {
		out, ferr := applyPath("OutputPath", st.outputPath, effective)
		r.then(st, st.next, out, ferr)
	})
}

// taskRun is a Task state in progress: its attempts so far.
type taskRun struct {
	st       *state
	raw      any
	entered  time.Time
	attempts []int // retries used, per retrier
	retries  int
}

// task runs a Task state: the call, its timeout, Retry and Catch.
func (r *run) task(st *state, raw any, entered time.Time) {
	r.try(&taskRun{st: st, raw: raw, entered: entered, attempts: make([]int, len(st.retry))})
}

// try makes one attempt of a Task state's call.
func (r *run) try(t *taskRun) {
	effective, ferr := r.effectiveInput(t.st, t.raw, t.entered, t.retries)
	if ferr != nil {
		r.then(t.st, "", nil, ferr)
		return
	}
	timeout, ferr := taskTimeout(t.st, effective)
	if ferr != nil {
		r.then(t.st, "", nil, ferr)
		return
	}
	payload, _ := json.Marshal(effective) // values come from decoded JSON
	r.invoke(r.e.tasks[t.st.resource], payload, timeout, func(out json.RawMessage, ferr *Error) { r.tried(t, out, ferr) })
}

// tried goes on from an attempt's result: the next state, a retry after
// its interval, a Catch, or the execution's failure.
func (r *run) tried(t *taskRun, out json.RawMessage, ferr *Error) {
	st := t.st
	if r.ctx.Err() != nil {
		r.stopped()
		return
	}
	if ferr == nil {
		next, output, rerr := r.taskResult(st, t.raw, out, t.entered, t.retries)
		if rerr == nil {
			r.then(st, next, output, nil)
			return
		}
		ferr = rerr
	}
	if uncatchable(ferr.Name) {
		r.then(st, "", nil, ferr)
		return
	}
	if i := findRetrier(st.retry, ferr.Name); i >= 0 && t.attempts[i] < st.retry[i].maxAttempts {
		rt := st.retry[i]
		secs := rt.delay(t.attempts[i])
		if rt.fullJitter {
			secs = rand.Float64() * secs
		}
		t.attempts[i]++
		t.retries++
		d := time.Duration(secs * float64(time.Second))
		r.log.Warn("task failed, retrying", "state", st.name, "error", ferr.Name, "cause", ferr.Cause,
			"attempt", t.attempts[i], "maxAttempts", rt.maxAttempts, "delay", d)
		r.after(d, func() { r.try(t) })
		return
	}
	for _, c := range st.catch {
		if !matches(c.errorEquals, ferr.Name) {
			continue
		}
		r.log.Warn("task failed, caught", "state", st.name, "error", ferr.Name, "cause", ferr.Cause, "next", c.next)
		out, err := applyResultPath(c.resultPath, t.raw, map[string]any{"Error": ferr.Name, "Cause": ferr.Cause})
		r.then(st, c.next, out, err)
		return
	}
	r.then(st, "", nil, ferr)
}

// taskResult turns a task function's output into the state's output.
func (r *run) taskResult(st *state, raw any, out json.RawMessage, entered time.Time, retries int) (string, any, *Error) {
	if len(out) == 0 {
		out = json.RawMessage("null")
	}
	result, err := decode(out)
	if err != nil {
		return "", nil, runtimeError("the task %s returned invalid JSON: %v", st.resource, err)
	}
	if st.resultSelector != nil {
		if result, err = st.resultSelector.eval(result, r.contextObject(st, entered, retries)); err != nil {
			return "", nil, asError(err)
		}
	}
	merged, ferr := applyResultPath(st.resultPath, raw, result)
	if ferr != nil {
		return "", nil, ferr
	}
	output, ferr := applyPath("OutputPath", st.outputPath, merged)
	return st.next, output, ferr
}

// invoke calls a task function in a goroutine of its own, with a timeout
// (0: none), and then calls then with its result from that goroutine;
// the execution goes on there. A panic becomes an error; a timeout is
// States.Timeout, then called from the timer, and leaves the function to
// finish on its own, its context cancelled, as a Lambda keeps running
// after Step Functions has given up on it. When the execution's context
// is done first, the execution ends as stopped and then is not called.
func (r *run) invoke(fn TaskFunc, payload json.RawMessage, timeout time.Duration, then func(json.RawMessage, *Error)) {
	tctx, cancel := context.WithCancel(r.ctx)
	p := new(pending)
	p.onEnd(func() bool { cancel(); return true })
	p.onEnd(context.AfterFunc(r.ctx, func() {
		if p.end() {
			r.stopped()
		}
	}))
	if timeout > 0 {
		p.onEnd(r.e.clock.AfterFunc(timeout, func() {
			if p.end() {
				then(nil, &Error{Name: ErrorTimeout, Cause: fmt.Sprintf("the task did not finish within %s", timeout)})
			}
		}))
	}
	r.e.acquire()
	r.e.spawn(func() {
		defer r.e.release()
		if p.isEnded() {
			return // timed out or stopped while it waited for a slot
		}
		out, err := call(tctx, fn, payload)
		if !p.end() {
			return
		}
		if err != nil {
			then(nil, taskError(err))
			return
		}
		then(out, nil)
	})
}

// call runs fn, turning a panic into an error named like aws-lambda-go
// names it.
func call(ctx context.Context, fn TaskFunc, payload json.RawMessage) (out json.RawMessage, err error) {
	defer func() {
		if v := recover(); v != nil {
			out, err = nil, &taskPanic{name: typeName(v), value: fmt.Sprintf("%v", v)}
		}
	}()
	return fn(ctx, payload)
}

func findRetrier(retry []retrier, name string) int {
	for i, rt := range retry {
		if matches(rt.errorEquals, name) {
			return i
		}
	}
	return -1
}

// effectiveInput applies InputPath, then Parameters.
func (r *run) effectiveInput(st *state, raw any, entered time.Time, retries int) (any, *Error) {
	v, ferr := applyPath("InputPath", st.inputPath, raw)
	if ferr != nil || st.parameters == nil {
		return v, ferr
	}
	out, err := st.parameters.eval(v, r.contextObject(st, entered, retries))
	if err != nil {
		return nil, asError(err)
	}
	return out, nil
}

// applyPath applies an InputPath or OutputPath: null gives {}, a path
// that selects nothing is a States.Runtime error.
func applyPath(field string, op optionalPath, v any) (any, *Error) {
	if op.null {
		return map[string]any{}, nil
	}
	out, ok := op.p.get(v)
	if !ok {
		return nil, runtimeError("%s %s selects nothing in the state's data", field, op.p)
	}
	return out, nil
}

// applyResultPath places result into the raw input at ResultPath.
func applyResultPath(op optionalPath, raw, result any) (any, *Error) {
	if op.null {
		return raw, nil
	}
	out, err := op.p.set(raw, result)
	if err != nil {
		return nil, &Error{Name: ErrorResultPathFailure, Cause: err.Error()}
	}
	return out, nil
}

// taskTimeout is the state's timeout. TimeoutSecondsPath is resolved
// against the effective input (after InputPath and Parameters), as
// aws-local-stepfunctions does; a definition meant for every interpreter
// keeps the field in both (generation.asl.json passes it in Parameters).
func taskTimeout(st *state, effective any) (time.Duration, *Error) {
	if st.timeoutSecondsPath == nil {
		return time.Duration(st.timeoutSeconds) * time.Second, nil
	}
	n, err := positiveInt(st.timeoutSecondsPath, effective)
	if err != nil || n < 1 {
		return 0, runtimeError("TimeoutSecondsPath %s must select a positive integer", st.timeoutSecondsPath)
	}
	return time.Duration(n) * time.Second, nil
}

func (r *run) waitDuration(st *state, effective any) (time.Duration, *Error) {
	switch {
	case st.hasSeconds:
		return time.Duration(st.seconds) * time.Second, nil
	case st.secondsPath != nil:
		n, err := positiveInt(st.secondsPath, effective)
		if err != nil {
			return 0, runtimeError("SecondsPath %s must select a non-negative integer", st.secondsPath)
		}
		return time.Duration(n) * time.Second, nil
	}
	ts := st.timestamp
	if st.timestampPath != nil {
		s, ferr := stringAt(st.timestampPath, effective, "TimestampPath")
		if ferr != nil {
			return 0, ferr
		}
		ts = s
	}
	at, err := parseTimestamp(ts)
	if err != nil {
		return 0, runtimeError("Wait timestamp %q is not RFC 3339", ts)
	}
	return at.Sub(r.e.clock.Now()), nil
}

// positiveInt reads a non-negative integer at p.
func positiveInt(p *path, doc any) (int64, error) {
	v, ok := p.get(doc)
	if !ok {
		return 0, errors.New("missing")
	}
	n, ok := v.(json.Number)
	if !ok {
		return 0, errors.New("not a number")
	}
	i, err := n.Int64()
	if err != nil || i < 0 {
		return 0, errors.New("not a non-negative integer")
	}
	return i, nil
}

func stringAt(p *path, doc any, field string) (string, *Error) {
	v, ok := p.get(doc)
	s, isString := v.(string)
	if !ok || !isString {
		return "", runtimeError("%s %s must select a string", field, p)
	}
	return s, nil
}

// asError converts an internal error (always an *Error in practice).
func asError(err error) *Error {
	var fe *Error
	if errors.As(err, &fe) {
		return fe
	}
	return runtimeError("%v", err)
}

// contextObject is what "$$" paths read.
func (r *run) contextObject(st *state, entered time.Time, retries int) any {
	return map[string]any{
		"Execution": map[string]any{
			"Id":        r.name,
			"Name":      r.name,
			"Input":     r.input,
			"StartTime": timestamp(r.start),
		},
		"State": map[string]any{
			"Name":        st.name,
			"EnteredTime": timestamp(entered),
			"RetryCount":  json.Number(strconv.Itoa(retries)),
		},
	}
}

func timestamp(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.000Z")
}
