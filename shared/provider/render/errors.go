package render

import "github.com/genvideo/gen/shared/provider"

// TransientError is a failure that may not happen again: ffmpeg was killed,
// the machine ran out of a resource, or the context ended. The caller
// retries it (after checking its own deadline, since a cancelled context is
// reported this way too and wrapped so that errors.Is finds it).
type TransientError struct {
	Msg string
	Err error
}

func (e *TransientError) Error() string {
	if e.Err != nil {
		return e.Msg + ": " + e.Err.Error()
	}
	return e.Msg
}

func (e *TransientError) Unwrap() error { return e.Err }

// Classify: the failure is worth retrying.
func (e *TransientError) Classify() provider.Answer {
	return provider.Answer{Class: provider.Transient}
}

// GenerationError is a failure that retrying will not fix: a broken input
// image, ffmpeg rejecting the job, or an injected failure. The task fails
// with GENERATION_FAILED.
type GenerationError struct {
	// Msg says what failed in words fit for the client.
	Msg string
	// Err is the detail for the logs (ffmpeg's output, local paths).
	Err error
}

func (e *GenerationError) Error() string {
	if e.Err != nil {
		return e.Msg + ": " + e.Err.Error()
	}
	return e.Msg
}

func (e *GenerationError) Unwrap() error { return e.Err }

// Classify: the task fails GENERATION_FAILED.
func (e *GenerationError) Classify() provider.Answer { return provider.Answer{Class: provider.Failed} }

// ContentPolicyError is a refusal of the prompt or inputs by the safety
// checks. The task fails with CONTENT_POLICY_VIOLATION.
type ContentPolicyError struct {
	Msg string
}

func (e *ContentPolicyError) Error() string { return e.Msg }

// Classify: the task fails CONTENT_POLICY_VIOLATION.
func (e *ContentPolicyError) Classify() provider.Answer {
	return provider.Answer{Class: provider.Refused}
}
