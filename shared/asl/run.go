package asl

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strconv"
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

// run is one execution in progress.
type run struct {
	e     *Executor
	name  string
	input any // the execution input, for $$.Execution.Input
	start time.Time
	log   *slog.Logger
}

// execute runs the state machine to its end. ctx cancelled means aborted.
func (e *Executor) execute(ctx context.Context, name string, input any) Execution {
	r := &run{e: e, name: name, input: input, start: e.clock.Now(), log: e.logger.With("execution", name)}
	exec := Execution{Name: name, StartTime: r.start}

	ctx, cancel := context.WithCancelCause(ctx)
	timerDone := make(chan struct{})
	if d := time.Duration(e.sm.timeoutSeconds) * time.Second; d > 0 {
		go func() {
			defer close(timerDone)
			if e.clock.Sleep(ctx, d) == nil {
				cancel(errExecutionTimeout)
			}
		}()
	} else {
		close(timerDone)
	}
	defer func() {
		cancel(nil)
		<-timerDone
	}()

	r.log.Debug("execution started")
	current, doc := e.sm.startAt, input
	for {
		st := e.sm.states[current]
		r.log.Debug("state entered", "state", st.name, "type", st.typ)
		next, out, ferr := r.state(ctx, st, doc)
		if ctx.Err() != nil {
			break
		}
		if ferr != nil {
			exec.Status, exec.Error = Failed, ferr
			exec.StopTime = e.clock.Now()
			r.log.Warn("execution failed", "state", st.name, "error", ferr.Name, "cause", ferr.Cause)
			return exec
		}
		r.log.Debug("state exited", "state", st.name, "next", next)
		if next == "" {
			exec.Status = Succeeded
			exec.Output, _ = json.Marshal(out) // values come from decoded JSON
			exec.StopTime = e.clock.Now()
			r.log.Debug("execution succeeded")
			return exec
		}
		current, doc = next, out
	}
	exec.StopTime = e.clock.Now()
	if errors.Is(context.Cause(ctx), errExecutionTimeout) {
		exec.Status = TimedOut
		exec.Error = &Error{Name: ErrorTimeout, Cause: fmt.Sprintf("the execution ran longer than %d seconds", e.sm.timeoutSeconds)}
		r.log.Warn("execution timed out", "state", current)
		return exec
	}
	exec.Status = Aborted
	r.log.Info("execution aborted", "state", current, "reason", context.Cause(ctx))
	return exec
}

// state runs one state on its raw input. It returns the next state ("" at
// the end) and the output, or the error that fails the execution. When
// ctx is done the results mean nothing: the caller checks ctx first.
func (r *run) state(ctx context.Context, st *state, raw any) (string, any, *Error) {
	entered := r.e.clock.Now()
	switch st.typ {
	case "Task":
		return r.task(ctx, st, raw, entered)
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
	case "Wait":
		effective, err := applyPath("InputPath", st.inputPath, raw)
		if err != nil {
			return "", nil, err
		}
		d, err := r.waitDuration(st, effective)
		if err != nil {
			return "", nil, err
		}
		if err := r.e.clock.Sleep(ctx, d); err != nil {
			return "", nil, nil // aborted; the caller sees ctx
		}
		out, err := applyPath("OutputPath", st.outputPath, effective)
		return st.next, out, err
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

// task runs a Task state: the call, its timeout, Retry and Catch.
func (r *run) task(ctx context.Context, st *state, raw any, entered time.Time) (string, any, *Error) {
	fn := r.e.tasks[st.resource]
	attempts := make([]int, len(st.retry)) // retries used, per retrier
	retries := 0
	for {
		effective, ferr := r.effectiveInput(st, raw, entered, retries)
		if ferr != nil {
			return "", nil, ferr
		}
		timeout, ferr := taskTimeout(st, effective)
		if ferr != nil {
			return "", nil, ferr
		}
		payload, _ := json.Marshal(effective) // values come from decoded JSON
		out, ferr := r.invoke(ctx, fn, payload, timeout)
		if ctx.Err() != nil {
			return "", nil, nil
		}
		if ferr == nil {
			var next string
			var output any
			next, output, ferr = r.taskResult(st, raw, out, entered, retries)
			if ferr == nil {
				return next, output, nil
			}
		}
		if uncatchable(ferr.Name) {
			return "", nil, ferr
		}

		if i := findRetrier(st.retry, ferr.Name); i >= 0 && attempts[i] < st.retry[i].maxAttempts {
			rt := st.retry[i]
			secs := rt.delay(attempts[i])
			if rt.fullJitter {
				secs = rand.Float64() * secs
			}
			attempts[i]++
			retries++
			d := time.Duration(secs * float64(time.Second))
			r.log.Warn("task failed, retrying", "state", st.name, "error", ferr.Name, "cause", ferr.Cause,
				"attempt", attempts[i], "maxAttempts", rt.maxAttempts, "delay", d)
			if err := r.e.clock.Sleep(ctx, d); err != nil {
				return "", nil, nil
			}
			continue
		}
		for _, c := range st.catch {
			if !matches(c.errorEquals, ferr.Name) {
				continue
			}
			r.log.Warn("task failed, caught", "state", st.name, "error", ferr.Name, "cause", ferr.Cause, "next", c.next)
			out, err := applyResultPath(c.resultPath, raw, map[string]any{"Error": ferr.Name, "Cause": ferr.Cause})
			if err != nil {
				return "", nil, err
			}
			return c.next, out, nil
		}
		return "", nil, ferr
	}
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

// invoke calls a task function with a timeout (0: none). A panic becomes
// an error; a timeout is States.Timeout and leaves the function to finish
// on its own, its context cancelled, as a Lambda keeps running after Step
// Functions has given up on it.
func (r *run) invoke(ctx context.Context, fn TaskFunc, payload json.RawMessage, timeout time.Duration) (json.RawMessage, *Error) {
	tctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type result struct {
		out json.RawMessage
		err error
	}
	done := make(chan result, 1)
	r.e.acquire()
	go func() {
		defer r.e.release()
		out, err := call(tctx, fn, payload)
		done <- result{out, err}
	}()
	var expired chan struct{}
	if timeout > 0 {
		expired = make(chan struct{})
		go func() {
			if r.e.clock.Sleep(tctx, timeout) == nil {
				close(expired)
			}
		}()
	}
	select {
	case res := <-done:
		if res.err != nil {
			return nil, taskError(res.err)
		}
		return res.out, nil
	case <-expired:
		return nil, &Error{Name: ErrorTimeout, Cause: fmt.Sprintf("the task did not finish within %s", timeout)}
	case <-ctx.Done():
		return nil, nil
	}
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
