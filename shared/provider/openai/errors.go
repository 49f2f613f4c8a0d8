package openai

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/genvideo/gen/shared/provider"
	"github.com/genvideo/gen/shared/provider/providerhttp"
	"github.com/genvideo/gen/shared/task"
)

// apiError is OpenAI's error body, {"error": {message, type, param,
// code}} (https://platform.openai.com/docs/guides/error-codes, and the
// openai-node SDK's APIError, read 2026-11-26).
type apiError struct {
	Message string    `json:"message"`
	Type    string    `json:"type"`
	Param   string    `json:"param"`
	Code    errorCode `json:"code"`
}

// errorCode is an error's code: a string on OpenAI, and on vLLM-Omni a
// string or an integer (its VideoError.code is `int | str`,
// vllm_omni/entrypoints/openai/protocol/videos.py, read 2026-11-28). An
// integer is taken as its text: read as a string it failed the decode
// of a failed job's answer, which was then taken for a busy host and
// polled until the task's deadline (issue 33).
type errorCode string

func (c *errorCode) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*c = errorCode(s)
		return nil
	}
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("error code %s is neither a string nor a number", b)
	}
	*c = errorCode(n.String())
	return nil
}

// Error is a refusal or a failure the host reported: an HTTP error
// answer, or a job that failed. Its message is for the operator's logs;
// the client only ever sees the failure code it maps to.
type Error struct {
	// HTTPStatus is the answer's status, 0 for a failed job.
	HTTPStatus          int
	Type, Code, Message string
	// policy: a content-policy refusal (moderation).
	policy bool
	// code, when set, is the failure code of a refusal that is neither
	// a content-policy one nor GENERATION_FAILED (a model not served).
	code string
}

func (e *Error) Error() string {
	if e.HTTPStatus != 0 {
		return fmt.Sprintf("host answered %d %s %s: %s", e.HTTPStatus, e.Type, e.Code, e.Message)
	}
	return fmt.Sprintf("video job failed with code %q: %s", e.Code, e.Message)
}

// Classify is what the answer means to gen: a moderation refusal, a
// model the host does not serve, the key refused (401, 403), a request
// refused as malformed, or any other failure. A poll never answers the
// key refused: providerhttp.RefusedWhileRunning makes that a wait.
func (e *Error) Classify() provider.Answer {
	switch {
	case e.policy:
		return provider.Answer{Class: provider.Refused, Category: e.PolicyCategory()}
	case e.code == task.FailModelUnavailable:
		return provider.Answer{Class: provider.ModelRetired}
	case e.HTTPStatus == http.StatusUnauthorized || e.HTTPStatus == http.StatusForbidden:
		return provider.Answer{Class: provider.CredentialsRefused}
	case e.HTTPStatus == http.StatusBadRequest:
		return provider.Answer{Class: provider.Invalid}
	}
	return provider.Answer{Class: provider.Failed}
}

// FailureCode is the failure code of the task the answer ends.
func (e *Error) FailureCode() string { return e.Classify().Class.FailureCode() }

// PolicyCategory is the client-safe category of a content-policy
// refusal: the host names none beyond its moderation.
func (e *Error) PolicyCategory() string {
	if e.policy {
		return "other"
	}
	return ""
}

// refusal reports whether an error code is a moderation refusal:
// OpenAI's moderation_blocked (the code of a blocked video job or
// request) and content_policy_violation (its image API's), or any code
// that names moderation.
func refusal(code string) bool {
	c := strings.ToLower(code)
	return strings.Contains(c, "moderation") || strings.Contains(c, "content_policy")
}

// OutcomeUnknownError is a submit that went out whole with no readable
// answer: POST /v1/videos takes no idempotency key, so the workflow
// never submits such a job again.
type OutcomeUnknownError = providerhttp.OutcomeUnknownError

// answerError reads a non-2xx answer. 429 and 5xx are waited out after
// the Retry-After header (seconds); 504, a gateway that gave up waiting
// for the host, had passed the request on.
func answerError(resp *http.Response) error {
	var body struct {
		Error apiError `json:"error"`
	}
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if json.Unmarshal(raw, &body) != nil || body.Error.Message == "" {
		body.Error.Message = strings.TrimSpace(string(raw))
	}
	e := &Error{HTTPStatus: resp.StatusCode, Type: body.Error.Type, Code: string(body.Error.Code), Message: body.Error.Message}
	if refusal(e.Code) {
		e.policy = true
		return e
	}
	if busy := providerhttp.Busy(resp, e, 0); busy != nil {
		return busy
	}
	return e
}

// submitError classifies what a submit's send returned: no readable
// answer to a request that went out is an *OutcomeUnknownError; a model
// the host does not serve (404, or code model_not_found) is
// MODEL_UNAVAILABLE; the rest as send says.
func submitError(err error) error {
	if unknown := providerhttp.SubmitOutcome(err); unknown != err {
		return unknown
	}
	var e *Error
	if errors.As(err, &e) && !e.policy && (e.HTTPStatus == http.StatusNotFound || e.Code == "model_not_found") {
		e.code = task.FailModelUnavailable
	}
	return err
}

// StatusCode is the HTTP status the API answered, which
// providerhttp.RefusedWhileRunning reads of a poll's error.
func (e *Error) StatusCode() int { return e.HTTPStatus }
