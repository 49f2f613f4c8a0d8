package omni

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/genvideo/gen/shared/provider"
	"github.com/genvideo/gen/shared/provider/providerhttp"
)

func encode(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// Error is a refusal or a failure the API reported: an HTTP error
// answer, or an interaction that ended without a video. Its message is
// for the operator's logs; the client only ever sees the failure code
// it maps to.
type Error struct {
	// HTTPStatus is the answer's status, 0 for an interaction's end.
	HTTPStatus int
	// Status is the interaction's status, or the answer's google.rpc
	// status name (INVALID_ARGUMENT).
	Status        string
	Code, Message string
	// policy: a safety refusal.
	policy bool
	// retired: the API does not serve the model.
	retired bool
}

func (e *Error) Error() string {
	if e.HTTPStatus != 0 {
		return fmt.Sprintf("provider answered %d %s %s: %s", e.HTTPStatus, e.Status, e.Code, e.Message)
	}
	return fmt.Sprintf("interaction %s %s: %s", e.Status, e.Code, e.Message)
}

// Classify is what the answer means to gen: a safety refusal, a model
// the API does not serve, the key refused (401, 403, or the Gemini API's
// 400 "API key not valid"), a request refused as malformed, or any other
// failure. A poll never answers the key refused:
// providerhttp.RefusedWhileRunning makes that a wait.
func (e *Error) Classify() provider.Answer {
	switch {
	case e.policy:
		return provider.Answer{Class: provider.Refused, Category: "other"}
	case e.retired:
		return provider.Answer{Class: provider.ModelRetired}
	case e.HTTPStatus == http.StatusUnauthorized || e.HTTPStatus == http.StatusForbidden ||
		e.HTTPStatus == http.StatusBadRequest && strings.Contains(e.Message, "API key not valid"):
		return provider.Answer{Class: provider.CredentialsRefused}
	case e.HTTPStatus == http.StatusBadRequest:
		return provider.Answer{Class: provider.Invalid}
	}
	return provider.Answer{Class: provider.Failed}
}

// safety is how Google names a safety refusal: Veo's "Support codes"
// (the same API family), or an error naming safety, a block, prohibited
// content or a policy. Google documents no refusal shape of Omni's own
// (infra/docs/providers.md): this errs towards telling the customer
// their prompt was refused, which is refunded like any failure.
var safety = regexp.MustCompile(`(?i)support codes?:\s*\d{8}|safety|blocked|prohibited|content.?policy|responsible.?ai`)

func refusal(texts ...string) bool {
	for _, t := range texts {
		if safety.MatchString(t) {
			return true
		}
	}
	return false
}

// status is an HTTP error's body: the Interactions API's {"error":
// {code, message}} (its code a string, omnimodels [sdk]), or a
// google.rpc.Status (its code a number, its status a name, its details
// Google's RetryInfo); both are read.
type status struct {
	Code    json.RawMessage `json:"code"`
	Message string          `json:"message"`
	Status  string          `json:"status"`
	Details []struct {
		Type       string `json:"@type"`
		RetryDelay string `json:"retryDelay"`
	} `json:"details"`
}

// code is the error's code as text, a number's digits or a string's.
func (s status) code() string {
	var str string
	if json.Unmarshal(s.Code, &str) == nil {
		return str
	}
	return strings.Trim(string(s.Code), `"`)
}

// retryDelay is the wait Google's RetryInfo asks for, 0 without one.
func (s status) retryDelay() time.Duration {
	for _, d := range s.Details {
		if d.Type != "type.googleapis.com/google.rpc.RetryInfo" {
			continue
		}
		if wait, err := time.ParseDuration(d.RetryDelay); err == nil && wait > 0 {
			return wait
		}
	}
	return 0
}

// answerError reads a non-2xx answer. 429 and 5xx are waited out after
// Google's RetryInfo, else Retry-After; 504, a gateway that gave up
// waiting for the API, had passed the request on.
func answerError(resp *http.Response) error {
	var body struct {
		Error status `json:"error"`
	}
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if json.Unmarshal(raw, &body) != nil || body.Error.Message == "" {
		body.Error.Message = strings.TrimSpace(string(raw))
	}
	e := &Error{HTTPStatus: resp.StatusCode, Status: body.Error.Status, Code: body.Error.code(), Message: body.Error.Message}
	if resp.StatusCode == http.StatusBadRequest && refusal(e.Code, e.Message) {
		e.policy = true
		return e
	}
	if busy := providerhttp.Busy(resp, e, body.Error.retryDelay()); busy != nil {
		return busy
	}
	return e
}

// jobError is an interaction that ended without a video: a safety
// refusal when its errors say so, else a failure.
func jobError(in Interaction) *Error {
	e := &Error{Status: in.Status}
	var texts []string
	for _, je := range in.Errors {
		if e.Code == "" {
			e.Code = je.Code
		}
		texts = append(texts, je.Code, je.Message)
		e.Message = strings.TrimSpace(e.Message + " " + je.Message)
	}
	e.policy = refusal(texts...)
	return e
}

// submitError classifies what a submit's send returned: no readable
// answer to a request that went out is an *OutcomeUnknownError; a model
// the API does not serve (404, or Google's "no longer available") is
// MODEL_UNAVAILABLE; the rest as send says.
func submitError(err error) error {
	if unknown := providerhttp.SubmitOutcome(err); unknown != err {
		return unknown
	}
	var e *Error
	if errors.As(err, &e) && !e.policy &&
		(e.HTTPStatus == http.StatusNotFound || strings.Contains(strings.ToLower(e.Message), "no longer available")) {
		e.retired = true
	}
	return err
}

// StatusCode is the HTTP status the API answered, which
// providerhttp.RefusedWhileRunning reads of a poll's error.
func (e *Error) StatusCode() int { return e.HTTPStatus }
