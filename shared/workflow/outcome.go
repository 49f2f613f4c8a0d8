package workflow

import (
	"context"
	"errors"
	"reflect"
)

// Outcome is what the Generate and Poll states answer the workflow:
// Generated, or, when the generation ended in one of the ordinary ways a
// generation ends (refused by the content policy, past its deadline,
// failed for good), the failure the task is to record. Such an end is
// answered, not raised: a Lambda that returns an error counts in
// CloudWatch's Errors metric, and the workflow's alarm must page for
// broken steps, not for every refused prompt (issue 24). The definition
// routes an Outcome with a Failure to RecordFailure, as it routes an
// error its Catch caught.
type Outcome struct {
	Generated
	// Failure is the {Error, Cause} a Catch would have caught: Error is
	// the error's name (errorName), Cause its message.
	Failure *CaughtError `json:"failure,omitempty"`
}

// GenerateOutcome is Generate as the workflow's Generate and Poll states
// call it (Poll is the same step in a smaller function: a task with an
// operation handle is polled, never submitted again): the ordinary ends
// of a generation come back as an Outcome's Failure; every other error
// (transient, store or blob failures, which the definition retries, and
// bugs) is returned as it is.
func (s *Steps) GenerateOutcome(ctx context.Context, in TaskRef) (Outcome, error) {
	return outcome(s.Generate(ctx, in))
}

// Marked is what the MarkProcessing state answers the workflow: the
// task's status, or the failure of a task whose execution started past its
// deadline (after an outage, say), which is a timeout like any other and
// no Lambda error (see Outcome).
type Marked struct {
	TaskState
	Failure *CaughtError `json:"failure,omitempty"`
}

// MarkProcessingOutcome is MarkProcessing as the workflow's MarkProcessing
// state calls it: a deadline already passed comes back as a Marked's
// Failure; every other error is returned as it is.
func (s *Steps) MarkProcessingOutcome(ctx context.Context, in TaskRef) (Marked, error) {
	st, err := s.MarkProcessing(ctx, in)
	var deadline *DeadlineExceeded
	if errors.As(err, &deadline) {
		return Marked{TaskState: TaskState{TaskID: in.TaskID}, Failure: &CaughtError{Error: errorName(err), Cause: err.Error()}}, nil
	}
	return Marked{TaskState: st}, err
}

func outcome(g Generated, err error) (Outcome, error) {
	var (
		policy   *ContentPolicyViolation
		deadline *DeadlineExceeded
		failed   *GenerationFailed
	)
	if errors.As(err, &policy) || errors.As(err, &deadline) || errors.As(err, &failed) {
		return Outcome{Generated: g, Failure: &CaughtError{Error: errorName(err), Cause: err.Error()}}, nil
	}
	return Outcome{Generated: g}, err
}

// errorName is the name Step Functions gives an error a Go Lambda
// returns: its type's name, without the package or the pointer, as
// aws-lambda-go reports it. asl.ErrorName names errors the same way for
// the local interpreter (TestErrorNameIsASLs); the steps do not import
// the interpreter, which only the local stack runs.
func errorName(err error) string {
	t := reflect.TypeOf(err)
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t.Name()
}
