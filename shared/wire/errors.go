package wire

// Error codes: the error member of ErrorBody, the code of a 429's
// RateLimitBody, the code of a QuoteRefusal. The spec names UNAUTHORIZED
// and RATE_LIMIT_EXCEEDED; the others are this service's
// (infra/docs/contract.md), those marked so extensions of the contract.
const (
	CodeValidation    = "VALIDATION_ERROR"
	CodeInvalidModel  = "INVALID_MODEL"
	CodeInvalidPrompt = "INVALID_PROMPT"
	// CodeModelUnavailable: no provider route serves the model right now
	// (400, nothing charged; an extension).
	CodeModelUnavailable = "MODEL_UNAVAILABLE"
	CodeMissingImage     = "MISSING_IMAGE"
	CodeInvalidImageType = "INVALID_IMAGE_TYPE"
	CodeVideoNotReady    = "VIDEO_NOT_READY"
	CodeUnauthorized     = "UNAUTHORIZED"
	CodeInsufficient     = "INSUFFICIENT_CREDITS"
	// CodeMaxCredits: a start that costs more than its maxCredits (402;
	// an extension).
	CodeMaxCredits = "MAX_CREDITS_EXCEEDED"
	// CodeSpendingCap: a start that would take its key past a spending
	// cap (402; an extension); details name the cap, its limit, what is
	// left and when it resets.
	CodeSpendingCap      = "SPENDING_CAP_EXCEEDED"
	CodeTaskNotFound     = "TASK_NOT_FOUND"
	CodeNotFound         = "NOT_FOUND"
	CodeMethodNotAllowed = "METHOD_NOT_ALLOWED"
	CodeFileTooLarge     = "FILE_TOO_LARGE"
	// CodeIdempotencyConflict: an Idempotency-Key reused with another
	// request (409; an extension).
	CodeIdempotencyConflict = "IDEMPOTENCY_CONFLICT"
	CodeRateLimit           = "RATE_LIMIT_EXCEEDED"
	CodeDailyLimit          = "DAILY_LIMIT_EXCEEDED"
	CodeConcurrencyLimit    = "CONCURRENCY_LIMIT_EXCEEDED"
	CodeInternal            = "INTERNAL_ERROR"
	CodeUnavailable         = "SERVICE_UNAVAILABLE"
	// Cancel and delete (409s; extensions): a finished task cannot be
	// cancelled, one in flight cannot be deleted, and an Idempotency-Key
	// cannot replay the start of a deleted task.
	CodeTaskNotCancellable = "TASK_NOT_CANCELLABLE"
	CodeTaskNotFinished    = "TASK_NOT_FINISHED"
	CodeTaskDeleted        = "TASK_DELETED"
)

// ErrorBody is the body of every error answer but 429's.
type ErrorBody struct {
	Success bool   `json:"success"`
	Error   string `json:"error"`
	Message string `json:"message"`
	// Field and Value name the request field at fault (Value only with
	// Field).
	Field string `json:"field,omitempty"`
	Value any    `json:"value,omitempty"`
	// Required and Available are the credits a start costs and the
	// balance (INSUFFICIENT_CREDITS).
	Required  *int64 `json:"required,omitempty"`
	Available *int64 `json:"available,omitempty"`
	// Details says more, e.g. maxBytes (FILE_TOO_LARGE) or status
	// (VIDEO_NOT_READY).
	Details map[string]any `json:"details,omitempty"`
}

// RateLimitBody is the spec's nested body of a 429, the one body without
// a success member.
type RateLimitBody struct {
	Error RateLimitError `json:"error"`
}

// RateLimitError is a 429's error.
type RateLimitError struct {
	Code    string           `json:"code"`
	Message string           `json:"message"`
	Details RateLimitDetails `json:"details"`
}

// RateLimitDetails describe the exhausted window.
type RateLimitDetails struct {
	Limit     int `json:"limit"`
	Remaining int `json:"remaining"`
	// Reset is when the window ends, a Unix time in seconds.
	Reset int64 `json:"reset"`
	// RetryAfter is the seconds to wait, at least 1.
	RetryAfter int `json:"retry_after"`
}
