package client

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/genvideo/gen/shared/wire"
)

// Error codes of the contract, in Error.Code (shared/wire has them all).
const (
	CodeValidation    = wire.CodeValidation
	CodeInvalidModel  = wire.CodeInvalidModel
	CodeInvalidPrompt = wire.CodeInvalidPrompt
	// CodeModelUnavailable: no provider serves the model right now (400,
	// nothing charged); Model.Available is false until one does.
	CodeModelUnavailable    = wire.CodeModelUnavailable
	CodeMissingImage        = wire.CodeMissingImage
	CodeInvalidImageType    = wire.CodeInvalidImageType
	CodeVideoNotReady       = wire.CodeVideoNotReady
	CodeUnauthorized        = wire.CodeUnauthorized
	CodeInsufficientCredits = wire.CodeInsufficient
	// CodeSpendingCap: the start would pass a spending cap of the key
	// (402); Details name the cap, its limit, what is left, the reset.
	CodeSpendingCap         = wire.CodeSpendingCap
	CodeTaskNotFound        = wire.CodeTaskNotFound
	CodeNotFound            = wire.CodeNotFound
	CodeMethodNotAllowed    = wire.CodeMethodNotAllowed
	CodeIdempotencyConflict = wire.CodeIdempotencyConflict
	CodeFileTooLarge        = wire.CodeFileTooLarge
	CodeRateLimit           = wire.CodeRateLimit
	CodeDailyLimit          = wire.CodeDailyLimit
	CodeConcurrencyLimit    = wire.CodeConcurrencyLimit
	CodeInternal            = wire.CodeInternal
	CodeUnavailable         = wire.CodeUnavailable
)

// Error is an error answer of the service. Use errors.As to get it:
//
//	var apiErr *client.Error
//	if errors.As(err, &apiErr) && apiErr.Code == client.CodeInsufficientCredits {
//		fmt.Println("need", apiErr.Required, "have", apiErr.Available)
//	}
type Error struct {
	// Status is the HTTP status.
	Status int
	// Code is the contract's error code (CodeValidation, ...); empty when
	// the answer did not come from the service (a proxy's HTML page, say).
	Code    string
	Message string
	// Field and Value name the request field at fault (validation errors).
	Field string
	Value any
	// Required and Available are the credits the request costs and the
	// balance (INSUFFICIENT_CREDITS).
	Required  int64
	Available int64
	// Details says more, e.g. "maxBytes" (FILE_TOO_LARGE) or "status"
	// (VIDEO_NOT_READY).
	Details map[string]any
	// RateLimit describes the exhausted window of a 429.
	RateLimit *RateLimit
	// RetryAfter is the wait the service asked for (Retry-After), if any.
	RetryAfter time.Duration
}

// RateLimit is the window a 429 refers to.
type RateLimit struct {
	Limit     int
	Remaining int
	// Reset is when the window ends.
	Reset time.Time
	// RetryAfter is how long to wait before retrying.
	RetryAfter time.Duration
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "gen: %d", e.Status)
	if e.Code != "" {
		b.WriteString(" " + e.Code)
	}
	if e.Message != "" {
		b.WriteString(": " + e.Message)
	}
	if e.Field != "" {
		fmt.Fprintf(&b, " (field %s)", e.Field)
	}
	return b.String()
}

// Temporary reports whether the same request may succeed later: a 429 or
// a server error.
func (e *Error) Temporary() bool {
	return e.Status == http.StatusTooManyRequests || e.Status >= 500
}

// parseError makes an *Error of an error answer: the flat body, the
// nested 429 body, or anything else (then Code is empty).
func parseError(res *http.Response, body []byte, now time.Time) *Error {
	e := &Error{Status: res.StatusCode, RetryAfter: retryAfter(res.Header, now)}
	var raw map[string]json.RawMessage
	if json.Unmarshal(body, &raw) == nil {
		if len(raw["error"]) > 0 && raw["error"][0] == '{' {
			var n wire.RateLimitBody
			if json.Unmarshal(body, &n) == nil {
				d := n.Error.Details
				e.Code, e.Message = n.Error.Code, n.Error.Message
				e.RateLimit = &RateLimit{Limit: d.Limit, Remaining: d.Remaining,
					Reset: time.Unix(d.Reset, 0), RetryAfter: time.Duration(d.RetryAfter) * time.Second}
				if e.RetryAfter == 0 {
					e.RetryAfter = e.RateLimit.RetryAfter
				}
				if e.RateLimit.RetryAfter == 0 {
					e.RateLimit.RetryAfter = e.RetryAfter
				}
				return e
			}
		}
		var f wire.ErrorBody
		if json.Unmarshal(body, &f) == nil && f.Error != "" {
			e.Code, e.Message, e.Field, e.Value = f.Error, f.Message, f.Field, f.Value
			e.Details = f.Details
			if f.Required != nil {
				e.Required = *f.Required
			}
			if f.Available != nil {
				e.Available = *f.Available
			}
			return e
		}
	}
	e.Message = http.StatusText(res.StatusCode)
	if s := strings.TrimSpace(string(body)); s != "" {
		if len(s) > 200 {
			s = s[:200] + "..."
		}
		e.Message += ": " + s
	}
	return e
}

// retryAfter reads a Retry-After header: seconds, or an HTTP date.
func retryAfter(h http.Header, now time.Time) time.Duration {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if n, err := strconv.Atoi(v); err == nil && n >= 0 {
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// WaitTimeoutError is what Wait returns when the task did not finish in
// time. The task goes on: poll it later with its TaskID.
type WaitTimeoutError struct {
	TaskID string
	// Status is the last status seen ("" if no poll succeeded).
	Status Status
	Waited time.Duration
}

func (e *WaitTimeoutError) Error() string {
	status := string(e.Status)
	if status == "" {
		status = "unfinished"
	}
	return fmt.Sprintf("gen: task %s still %s after waiting %s", e.TaskID, status, e.Waited.Round(time.Second))
}

// Unwrap makes errors.Is(err, context.DeadlineExceeded) hold.
func (e *WaitTimeoutError) Unwrap() error { return errDeadline }

// GenerationError is what Wait returns for a task that failed. Its
// credits were refunded.
type GenerationError struct {
	TaskID string
	// Code is the failure code: GENERATION_FAILED,
	// CONTENT_POLICY_VIOLATION, TIMEOUT, INTERNAL_ERROR, or another.
	Code            string
	Message         string
	CreditsRefunded int
}

func (e *GenerationError) Error() string {
	return fmt.Sprintf("gen: task %s failed: %s: %s (%d credits refunded)", e.TaskID, e.Code, e.Message, e.CreditsRefunded)
}
