package main

import (
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/genvideo/gen/shared/client"
)

// reportError tells the user what went wrong and what to do: a sentence
// on stderr, and with --json also an {"error": ...} object on stdout.
func reportError(opts *options, err error) {
	msg := explain(opts, err)
	fmt.Fprintln(opts.env.stderr, "gen: "+msg)
	var waiting *stillWaiting
	if !opts.json || errors.As(err, &waiting) {
		// generate printed its JSON result already.
		return
	}
	out := map[string]any{"message": msg}
	var apiErr *client.Error
	var failed *client.GenerationError
	switch {
	case errors.As(err, &apiErr):
		out["status"] = apiErr.Status
		out["code"] = apiErr.Code
		out["serviceMessage"] = apiErr.Message
		if apiErr.Field != "" {
			out["field"] = apiErr.Field
			out["value"] = apiErr.Value
		}
		if apiErr.Code == client.CodeInsufficientCredits {
			out["required"], out["available"] = apiErr.Required, apiErr.Available
		}
		if apiErr.Details != nil {
			out["details"] = apiErr.Details
		}
		if apiErr.RetryAfter > 0 {
			out["retryAfterSeconds"] = int(apiErr.RetryAfter.Round(time.Second) / time.Second)
		}
	case errors.As(err, &failed):
		out["code"] = failed.Code
		out["taskId"] = failed.TaskID
		out["creditsRefunded"] = failed.CreditsRefunded
	}
	opts.printJSON(map[string]any{"error": out})
}

// explain turns an error into a sentence that says what to do.
func explain(opts *options, err error) string {
	var apiErr *client.Error
	var failed *client.GenerationError
	var waiting *stillWaiting
	var netErr net.Error
	switch {
	case errors.As(err, &waiting):
		id := waiting.err.TaskID
		return fmt.Sprintf("the task %s is still %s after %s; it goes on. Check it with `gen status %s`, then save the videos with `gen download %s`.",
			id, orUnknown(waiting.err.Status), waiting.err.Waited.Round(time.Second), id, id)
	case errors.As(err, &failed):
		return fmt.Sprintf("the generation %s failed: %s (%s). Its %d credits were refunded.",
			failed.TaskID, failed.Message, failed.Code, failed.CreditsRefunded)
	case errors.As(err, &apiErr):
		return explainAPI(opts, apiErr)
	case errors.As(err, &netErr) || isConnRefused(err):
		return fmt.Sprintf("cannot reach the service at %s (%v). Is it running (`make run`)? Set GEN_BASE_URL to its address.",
			opts.baseURL, err)
	}
	return err.Error()
}

func explainAPI(opts *options, e *client.Error) string {
	switch e.Code {
	case client.CodeUnauthorized:
		if opts.key == "" {
			return "no API key: set GEN_API_KEY to your key (`make run` prints the local dev key)."
		}
		return "the API key in GEN_API_KEY was refused (" + e.Message + "). Set GEN_API_KEY to a valid key."
	case client.CodeInsufficientCredits:
		return fmt.Sprintf("not enough credits: this generation costs %d credits and the balance is %d. Ask for more credits, or use a cheaper model (--model lite) or --no-audio.",
			e.Required, e.Available)
	case client.CodeMaxCreditsExceeded:
		return e.Message + " Raise --max-credits, or make it cheaper (--model lite, --no-audio, fewer --samples); `gen quote` tells the price."
	case client.CodeSpendingCap:
		return e.Message + " Wait for the reset, or ask the key's operator to raise the cap (one you lowered yourself: PATCH /api/gen/credits)."
	case client.CodeRateLimit, client.CodeDailyLimit, client.CodeConcurrencyLimit:
		when := ""
		if e.RateLimit != nil && !e.RateLimit.Reset.IsZero() {
			when = " (at " + e.RateLimit.Reset.Local().Format(time.TimeOnly) + ")"
		}
		return fmt.Sprintf("rate limited (%s): %s Retry in %s%s.", e.Code, e.Message, retryIn(e.RetryAfter), when)
	case client.CodeValidation, client.CodeInvalidModel, client.CodeInvalidPrompt:
		msg := "invalid request: " + e.Message
		if e.Field != "" {
			msg += fmt.Sprintf(" (%s", e.Field)
			if e.Value != nil {
				msg += fmt.Sprintf(" = %v", e.Value)
			}
			msg += ")"
		}
		if e.Code == client.CodeInvalidModel {
			msg += ". `gen models` lists the models."
		}
		return msg
	case client.CodeMissingImage, client.CodeInvalidImageType:
		return "the image was refused: " + e.Message + " Send a JPEG or PNG file."
	case client.CodeFileTooLarge:
		return "the image is too large: " + e.Message
	case client.CodeTaskNotFound:
		return "no such task in this account (" + e.Message + ") Check the id; `gen history` lists your tasks."
	case client.CodeVideoNotReady:
		return "the videos are not ready: " + e.Message + " `gen status ID` shows where the task is."
	case client.CodeIdempotencyConflict:
		return "the Idempotency-Key was already used for a different request: " + e.Message
	case client.CodeInternal, client.CodeUnavailable:
		return fmt.Sprintf("the service has a problem (%d %s): %s", e.Status, e.Code, e.Message)
	}
	return e.Error()
}

func retryIn(d time.Duration) string {
	if d <= 0 {
		return "a moment"
	}
	return d.Round(time.Second).String()
}

func orUnknown(s client.Status) string {
	if s == "" {
		return "unfinished"
	}
	return string(s)
}

// isConnRefused reports a refused connection, which net.Error does not
// always wrap in a way errors.As finds.
func isConnRefused(err error) bool {
	var opErr *net.OpError
	return errors.As(err, &opErr)
}
