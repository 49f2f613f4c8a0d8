package asl

import (
	"fmt"
	"reflect"
)

// Predefined error names of the States Language.
const (
	ErrorAll               = "States.ALL"
	ErrorTaskFailed        = "States.TaskFailed"
	ErrorTimeout           = "States.Timeout"
	ErrorRuntime           = "States.Runtime"
	ErrorNoChoiceMatched   = "States.NoChoiceMatched"
	ErrorResultPathFailure = "States.ResultPathMatchFailure"
	ErrorDataLimitExceeded = "States.DataLimitExceeded"
)

// Error is an ASL error: Name is what Retry and Catch match in their
// ErrorEquals, Cause the human-readable detail. It marshals to the object
// a Catch hands to its next state: {"Error": name, "Cause": cause}.
//
// The interpreter uses Error for the errors it raises itself (States.*,
// Fail states) and to report a failed execution. A task function that
// returns an *Error is named "Error" like any other Go type (see
// ErrorName): names come from types, exactly as on AWS Lambda.
type Error struct {
	Name  string `json:"Error"`
	Cause string `json:"Cause"`
}

func (e *Error) Error() string {
	if e.Cause == "" {
		return e.Name
	}
	return e.Name + ": " + e.Cause
}

func runtimeError(format string, args ...any) *Error {
	return &Error{Name: ErrorRuntime, Cause: fmt.Sprintf(format, args...)}
}

// ErrorName returns the error name Step Functions sees when a Go Lambda
// handler (github.com/aws/aws-lambda-go) returns err: the name of err's
// dynamic type, or of the type it points to (lambda/errors.go,
// getErrorType). Wrapping is not looked through, so
//
//	fmt.Errorf("generate: %w", &GenerationFailed{})   // "wrapError"
//	errors.New("boom")                                 // "errorString"
//	&GenerationFailed{}                                // "GenerationFailed"
//
// which is why a task that wants to be matched by name in Retry or Catch
// must return its named error type unwrapped. The package path is not part
// of the name.
func ErrorName(err error) string {
	return typeName(err)
}

// typeName names a value the way aws-lambda-go names an error or a
// recovered panic value.
func typeName(v any) string {
	t := reflect.TypeOf(v)
	if t == nil {
		return "nil"
	}
	if t.Kind() == reflect.Pointer {
		return t.Elem().Name()
	}
	return t.Name()
}

// taskPanic is how a panic in a task function is reported: named after
// the panic value's type and described by its %v, as aws-lambda-go does
// (lambda/panic.go). It is unexported so that no task function can
// return one.
type taskPanic struct {
	name  string
	value string
}

func (p *taskPanic) Error() string { return "panic: " + p.value }

// NamedError is an error named by its Name rather than its Go type: what a
// task function returns for a Lambda that ran elsewhere (its own process,
// as in infra/aws-local), whose error type came back by name over the
// Lambda Runtime API.
type NamedError struct {
	Name  string
	Cause string
}

func (e *NamedError) Error() string { return e.Name + ": " + e.Cause }

// taskError converts what a task function returned into an ASL error.
func taskError(err error) *Error {
	if p, ok := err.(*taskPanic); ok {
		return &Error{Name: p.name, Cause: p.value}
	}
	if n, ok := err.(*NamedError); ok {
		return &Error{Name: n.Name, Cause: n.Cause}
	}
	return &Error{Name: ErrorName(err), Cause: err.Error()}
}

// matches reports whether a retrier's or catcher's ErrorEquals list
// matches the error name, with the wildcards of the specification:
// States.ALL matches every name, States.TaskFailed every name but
// States.Timeout. (States.Runtime and States.DataLimitExceeded never reach
// a retrier or catcher: they end the execution.)
func matches(errorEquals []string, name string) bool {
	for _, e := range errorEquals {
		switch e {
		case name, ErrorAll:
			return true
		case ErrorTaskFailed:
			if name != ErrorTimeout {
				return true
			}
		}
	}
	return false
}

// uncatchable reports whether an error ends the execution whatever the
// state's Retry and Catch say.
func uncatchable(name string) bool {
	return name == ErrorRuntime || name == ErrorDataLimitExceeded
}
