package provider

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/genvideo/gen/shared/settings"
	"github.com/genvideo/gen/shared/task"
)

// Class is what a provider's answer means to gen: whether a job runs
// (and is paid for), whether another route may have it, and how the
// task ends. Each adapter classifies its provider's answers once, in an
// *Error; infra/docs/providers.md's outcome table says what each class
// does to the task and its credits.
type Class int

const (
	// Accepted: the provider took the job (no error).
	Accepted Class = iota
	// Busy: refused before acceptance for now (429, 5xx, no connection),
	// or a poll that got no answer. Wait Error.After and call again
	// within the deadline; another route may take a submit meanwhile.
	Busy
	// Transient: the built-in renderer failed in a way that may not
	// happen again; the workflow's definition retries the step a few
	// times, then fails the task.
	Transient
	// CredentialsRefused: the route's credentials were refused at
	// submit (401, 403, a key the API does not take). Nothing runs; the
	// next route may take the job.
	CredentialsRefused
	// ModelRetired: the provider no longer serves the model the route
	// maps ours to. Nothing runs; the next route may take the job, or
	// the task fails MODEL_UNAVAILABLE.
	ModelRetired
	// Refused: the customer's request was refused by the provider's
	// content policy, at submit or when done (Error.Category). No route
	// would take it; the task fails CONTENT_POLICY_VIOLATION.
	Refused
	// Invalid: the provider refused the request as malformed (400).
	// The task fails GENERATION_FAILED; no route moves on.
	Invalid
	// OutcomeUnknown: the request went out whole and no readable answer
	// came back. The job may run, and bill: it is never submitted again,
	// and the task fails PROVIDER_OUTCOME_UNKNOWN.
	OutcomeUnknown
	// Failed: anything else, a job done with an error included. The
	// task fails GENERATION_FAILED.
	Failed
)

var classNames = [...]string{"accepted", "busy", "transient", "credentials refused", "model retired",
	"refused", "invalid", "outcome unknown", "failed"}

func (c Class) String() string {
	if c < 0 || int(c) >= len(classNames) {
		return fmt.Sprintf("Class(%d)", int(c))
	}
	return classNames[c]
}

// Answer is a provider's answer as its adapter classified it.
type Answer struct {
	Class Class
	// After is a Busy answer's hint of the wait, 0 without one.
	After time.Duration
	// Operator: a Busy wait only an operator can end (credentials
	// refused while a paid job runs); it is logged as an error.
	Operator bool
	// Category is a Refused answer's client-safe category, "" when the
	// provider gave none.
	Category string
}

// Classifier is an error that says what it means as an Answer: every
// error type an adapter answers with implements it, so that its reading
// of its provider's answers is written once, beside the answers.
type Classifier interface {
	error
	Classify() Answer
}

// Classify is the one reading of what a Provider or a Generator
// answered: Accepted for no error, the Answer of the outermost
// Classifier in err's chain, else Failed (an error no adapter named: a
// local file, a bug).
func Classify(err error) Answer {
	if err == nil {
		return Answer{Class: Accepted}
	}
	var c Classifier
	if errors.As(err, &c) {
		return c.Classify()
	}
	return Answer{Class: Failed}
}

// Error is an error of a given Answer, for an adapter (or a test's
// fake) whose own error types say nothing more. Its message is Err's,
// for the operator's logs: the client sees only the failure code its
// class maps to (and a Refused's Category).
type Error struct {
	Answer
	Err error
}

func (e *Error) Error() string    { return e.Err.Error() }
func (e *Error) Unwrap() error    { return e.Err }
func (e *Error) Classify() Answer { return e.Answer }

// FailureCode is the task failure code a job that ended with c records
// (task.Fail*); Busy and Transient end so once their waits or retries
// run out.
func (c Class) FailureCode() string {
	switch c {
	case Refused:
		return task.FailContentPolicy
	case ModelRetired:
		return task.FailModelUnavailable
	case OutcomeUnknown:
		return task.FailProviderOutcomeUnknown
	}
	return task.FailGeneration
}

// MovesOn reports whether a submit refused with c may go to the next
// route: the route refused it for a reason of its own, and nothing runs.
func (c Class) MovesOn() bool {
	return c == Busy || c == CredentialsRefused || c == ModelRetired
}

// AlarmModelUnavailable is the ERROR log line of a task, or a start-up
// check, that found a provider model unavailable: the operator remaps
// the model. A metric filter of template.yaml counts it.
const AlarmModelUnavailable = "provider model unavailable: remap the model"

// UnavailableModelsError is a start-up check that found models the API
// does not serve (retired, or a remap to a model that does not exist).
// The service can still run the others: Verify logs it as the operator's
// alarm and goes on, and those models' tasks fail MODEL_UNAVAILABLE,
// refunded.
type UnavailableModelsError struct {
	API    string
	Models []string
}

func (e *UnavailableModelsError) Error() string {
	return fmt.Sprintf("%s: models %s not found: remap them (%s)", e.API, strings.Join(e.Models, ", "), settings.ProviderModels)
}

// Verify runs the start-up check of p (a Checker): an error stops the
// start-up, naming the setting to fix. Models the API does not serve
// (*UnavailableModelsError) do not: they are logged as the operator's
// alarm (AlarmModelUnavailable), and their tasks fail MODEL_UNAVAILABLE.
// A provider without a check (the built-in generator) passes.
func Verify(ctx context.Context, p Provider, logger *slog.Logger) error {
	c, ok := p.(Checker)
	if !ok {
		return nil
	}
	err := c.Check(ctx)
	var unavailable *UnavailableModelsError
	if errors.As(err, &unavailable) {
		if logger == nil {
			logger = slog.Default()
		}
		logger.Error(AlarmModelUnavailable, "api", unavailable.API, "models", unavailable.Models,
			"remedy", "remap them with "+settings.ProviderModels)
		return nil
	}
	return err
}
