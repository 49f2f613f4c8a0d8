package httpapi

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/genvideo/gen/shared/domain"
	"github.com/genvideo/gen/shared/params"
	"github.com/genvideo/gen/shared/ratelimit"
	"github.com/genvideo/gen/shared/service"
	"github.com/genvideo/gen/shared/store"
	"github.com/genvideo/gen/shared/task"
	"github.com/genvideo/gen/shared/wire"
)

// The messages of the two 401s, which the spec fixes.
const (
	MessageKeyMissing = "API key missing or invalid"
	MessageKeyInvalid = "Invalid API key"
)

// concurrencyRetryAfter is the retry hint of CONCURRENCY_LIMIT_EXCEEDED:
// a slot frees when some generation ends, which no window predicts.
const concurrencyRetryAfter = 5 * time.Second

// Error is an error response. WriteError renders it: every status but 429
// as {"success": false, "error": Code, "message": Message} plus field and
// value, required and available, details where set; 429 in the spec's
// nested form from RateLimit.
type Error struct {
	Status  int
	Code    string
	Message string
	Field   string
	Value   any // echoed only with Field
	// Required and Available are set together, for INSUFFICIENT_CREDITS.
	Required  *int64
	Available *int64
	Details   map[string]any
	// RateLimit describes the exhausted window of a 429.
	RateLimit *RateLimit
	// Allow lists the methods of a 405.
	Allow string

	cause error // logged, never sent
}

// RateLimit is the window a 429 refers to.
type RateLimit struct {
	Limit     int
	Remaining int
	Reset     time.Time
	// RetryAfter is whole seconds, at least 1.
	RetryAfter int
}

func (e *Error) Error() string {
	if e.cause != nil {
		return fmt.Sprintf("%d %s: %s: %v", e.Status, e.Code, e.Message, e.cause)
	}
	return fmt.Sprintf("%d %s: %s", e.Status, e.Code, e.Message)
}

// Unwrap returns the error the response was made from, if any.
func (e *Error) Unwrap() error { return e.cause }

// WriteError writes e as the response in the contract's shape: the error
// writer of every route but the OpenAI-compatible ones (openai.go writes
// theirs). A 429 also gets Retry-After and X-RateLimit-Retry-After; a 405
// its Allow header.
func WriteError(w http.ResponseWriter, e *Error) {
	setAllow(w, e)
	if e.Status == http.StatusTooManyRequests {
		rl := e.RateLimit
		if rl == nil {
			rl = &RateLimit{Reset: time.Now().Add(time.Second), RetryAfter: 1}
		}
		b := wire.RateLimitBody{Error: wire.RateLimitError{Code: e.Code, Message: e.Message,
			Details: wire.RateLimitDetails{Limit: rl.Limit, Remaining: rl.Remaining, Reset: rl.Reset.Unix(), RetryAfter: max(rl.RetryAfter, 1)}}}
		setRetryAfter(w, b.Error.Details.RetryAfter)
		writeJSON(w, e.Status, b)
		return
	}
	b := wire.ErrorBody{
		Error:     e.Code,
		Message:   e.Message,
		Field:     e.Field,
		Required:  e.Required,
		Available: e.Available,
		Details:   e.Details,
	}
	if e.Field != "" {
		b.Value = e.Value
	}
	writeJSON(w, e.Status, b)
}

// setAllow sets the Allow header of a 405.
func setAllow(w http.ResponseWriter, e *Error) {
	if e.Allow != "" {
		w.Header().Set("Allow", e.Allow)
	}
}

// setRetryAfter sets the retry hint of a 429, in seconds.
func setRetryAfter(w http.ResponseWriter, secs int) {
	v := strconv.Itoa(max(secs, 1))
	w.Header().Set("Retry-After", v)
	w.Header().Set("X-RateLimit-Retry-After", v)
}

// toError is the one table from errors to responses: each kind of error
// the service (and the validator and store beneath it) returns has its
// row; anything else is a 500 whose cause is logged, never sent. now dates
// the retry hints of 429s.
func toError(err error, now time.Time) *Error {
	var (
		apiErr     *Error
		paramErr   *params.Error
		credits    *domain.InsufficientCreditsError
		inFlight   *domain.InFlightLimitError
		limit      *domain.LimitError
		conflict   *service.IdempotencyConflictError
		notStarted *service.NotStartedError
		notReady   *service.NotReadyError
		blobFault  *service.BlobError
		upload     *service.UploadError
		notCancel  *service.NotCancellableError
		notDelete  *service.NotDeletableError
		deleted    *service.TaskDeletedError
		maxCredits *service.MaxCreditsError
		capped     *domain.SpendingCapError
		gone       *service.ModelUnavailableError
	)
	switch {
	case errors.As(err, &apiErr):
		return apiErr
	case errors.As(err, &paramErr):
		return &Error{Status: http.StatusBadRequest, Code: paramErr.Code, Message: paramErr.Message,
			Field: paramErr.Field, Value: paramErr.Value}
	case errors.As(err, &gone):
		return &Error{Status: http.StatusBadRequest, Code: wire.CodeModelUnavailable, Field: "model", Value: gone.Model,
			Message: fmt.Sprintf("Model %s is not served by its providers right now; nothing was charged. "+
				"Choose another model, or retry later: it sells again once a provider serves it.", gone.Model)}
	case errors.Is(err, service.ErrKeyMissing):
		return &Error{Status: http.StatusUnauthorized, Code: wire.CodeUnauthorized, Message: MessageKeyMissing}
	case errors.Is(err, service.ErrKeyInvalid):
		return &Error{Status: http.StatusUnauthorized, Code: wire.CodeUnauthorized, Message: MessageKeyInvalid}
	case errors.Is(err, service.ErrWebhookNotFound):
		return &Error{Status: http.StatusNotFound, Code: wire.CodeNotFound, Message: "Webhook endpoint or delivery not found."}
	case errors.Is(err, service.ErrTaskNotFound):
		return &Error{Status: http.StatusNotFound, Code: wire.CodeTaskNotFound, Message: "Task not found."}
	case errors.As(err, &notReady):
		msg := fmt.Sprintf("The task is %s; its videos can be downloaded once its status is completed.", notReady.Status)
		if notReady.Status == task.Failed {
			msg = "The task failed; it has no videos to download."
		}
		return &Error{Status: http.StatusBadRequest, Code: wire.CodeVideoNotReady, Message: msg,
			Details: map[string]any{"status": notReady.Status}}
	case errors.As(err, &notCancel):
		return &Error{Status: http.StatusConflict, Code: wire.CodeTaskNotCancellable,
			Message: fmt.Sprintf("The task is already %s; only a pending or processing task can be cancelled.", notCancel.Status),
			Details: map[string]any{"taskId": notCancel.TaskID, "status": notCancel.Status}}
	case errors.As(err, &notDelete):
		return &Error{Status: http.StatusConflict, Code: wire.CodeTaskNotFinished,
			Message: fmt.Sprintf("The task is %s; cancel it first, or delete it once it has finished.", notDelete.Status),
			Details: map[string]any{"taskId": notDelete.TaskID, "status": notDelete.Status}}
	case errors.As(err, &deleted):
		return &Error{Status: http.StatusConflict, Code: wire.CodeTaskDeleted, Field: headerIdempotencyKey,
			Message: "The task this Idempotency-Key started has been deleted; nothing was charged. Use a new key for a new generation.",
			Details: map[string]any{"taskId": deleted.TaskID}}
	case errors.As(err, &conflict):
		return &Error{Status: http.StatusConflict, Code: wire.CodeIdempotencyConflict, Field: headerIdempotencyKey,
			Message: "This Idempotency-Key was used with a different request in the last 24 hours; " +
				"send the same request to get its answer again, or use a new key for a new request.",
			Details: map[string]any{"taskId": conflict.TaskID}}
	case errors.As(err, &notStarted):
		return &Error{Status: http.StatusServiceUnavailable, Code: wire.CodeUnavailable, cause: err,
			Message: "The generation could not be started; its credits were refunded. Please retry shortly."}
	case errors.As(err, &maxCredits):
		return &Error{Status: http.StatusPaymentRequired, Code: wire.CodeMaxCredits, Field: "maxCredits", Value: maxCredits.Max,
			Message: fmt.Sprintf("This generation costs %d credits, more than maxCredits (%d); nothing was charged.", maxCredits.Cost, maxCredits.Max),
			Details: map[string]any{"creditsRequired": maxCredits.Cost, "maxCredits": maxCredits.Max}}
	case errors.As(err, &capped):
		return spendingCapError(capped)
	case errors.As(err, &credits):
		return &Error{Status: http.StatusPaymentRequired, Code: wire.CodeInsufficient,
			Message:  fmt.Sprintf("This generation costs %d credits; the balance is %d.", credits.Required, credits.Available),
			Required: &credits.Required, Available: &credits.Available}
	case errors.As(err, &inFlight):
		return &Error{Status: http.StatusTooManyRequests, Code: wire.CodeConcurrencyLimit,
			Message: fmt.Sprintf("%d generations are already pending or processing; start another when one finishes.", inFlight.Limit),
			RateLimit: &RateLimit{Limit: inFlight.Limit, Reset: now.Add(concurrencyRetryAfter),
				RetryAfter: int(concurrencyRetryAfter / time.Second)}}
	case errors.As(err, &limit):
		c := limit.Window
		rl := &RateLimit{Limit: c.Limit, Reset: c.ExpiresAt, RetryAfter: ratelimit.RetryAfter(c.ExpiresAt, now)}
		switch c.Kind {
		case ratelimit.Day:
			return &Error{Status: http.StatusTooManyRequests, Code: wire.CodeDailyLimit, RateLimit: rl,
				Message: fmt.Sprintf("Daily limit of %d requests exceeded; it resets at 00:00 UTC.", c.Limit)}
		case ratelimit.Streams:
			return &Error{Status: http.StatusTooManyRequests, Code: wire.CodeRateLimit, RateLimit: rl,
				Message: fmt.Sprintf("This key already has %d live event streams open, its limit; "+
					"close one, or poll GET /api/gen/status/{taskId} instead.", c.Limit)}
		case ratelimit.Starts:
			return &Error{Status: http.StatusTooManyRequests, Code: wire.CodeRateLimit, RateLimit: rl,
				Message: fmt.Sprintf("Limit of %d generation starts per minute exceeded.", c.Limit)}
		default:
			return &Error{Status: http.StatusTooManyRequests, Code: wire.CodeRateLimit, RateLimit: rl,
				Message: fmt.Sprintf("Limit of %d requests per minute exceeded.", c.Limit)}
		}
	case errors.As(err, &upload):
		switch upload.Problem {
		case service.UploadBadType, service.UploadNotImage, service.UploadDamaged:
			return &Error{Status: http.StatusBadRequest, Code: wire.CodeInvalidImageType, Field: upload.Field, Message: upload.Message}
		case service.UploadTooLarge:
			return &Error{Status: http.StatusRequestEntityTooLarge, Code: wire.CodeFileTooLarge, Field: upload.Field, Message: upload.Message,
				Details: map[string]any{"maxBytes": upload.Max}}
		case service.UploadUnavailable:
			return &Error{Status: http.StatusServiceUnavailable, Code: wire.CodeUnavailable, Message: upload.Message, cause: err}
		case service.UploadUnreadable:
			return &Error{Status: http.StatusBadRequest, Code: wire.CodeValidation, Field: upload.Field, Message: upload.Message, cause: err}
		case service.UploadCanvas:
			return &Error{Status: http.StatusBadRequest, Code: wire.CodeValidation, Field: upload.Field, Message: upload.Message,
				Details: map[string]any{"width": upload.Width, "height": upload.Height, "maxWidth": upload.MaxSide, "maxHeight": upload.MaxSide}}
		}
		// UploadMissing, UploadEmpty.
		return &Error{Status: http.StatusBadRequest, Code: wire.CodeMissingImage, Field: upload.Field, Message: upload.Message}
	case errors.Is(err, store.ErrUnavailable), errors.As(err, &blobFault):
		return &Error{Status: http.StatusServiceUnavailable, Code: wire.CodeUnavailable, cause: err,
			Message: "The service is temporarily unavailable; nothing was charged. Please retry shortly."}
	}
	return &Error{Status: http.StatusInternalServerError, Code: wire.CodeInternal, cause: err,
		Message: "An internal error occurred. Please retry; if it persists, contact support."}
}

// badRequest is a VALIDATION_ERROR naming field (which may be empty).
func badRequest(field, format string, args ...any) *Error {
	return &Error{Status: http.StatusBadRequest, Code: wire.CodeValidation, Field: field, Message: fmt.Sprintf(format, args...)}
}
