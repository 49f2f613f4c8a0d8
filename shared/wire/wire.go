// Package wire is the contract's JSON, one Go type per shape: the start
// requests and their answers, the task, download, history, models,
// credits, quote, upload and webhook answers, the two error bodies and
// the webhook event a receiver is sent. The HTTP layer (shared/httpapi)
// writes these types, the Go client's types are these types
// (shared/client aliases them), and the webhook worker sends
// WebhookEvent, so that what the service writes and what the client reads
// cannot drift apart; shared/testing/openapitest decodes every answer the
// OpenAPI document describes into them with unknown members refused.
//
// The package imports only the standard library: the client links
// nothing of the service, and the webhook worker nothing of the HTTP
// layer. Fields are in the order the service writes them. A few fields
// are not part of any body (json:"-"): what the client reads from an
// answer's headers beside it. The OpenAI-compatible facade's shapes are
// OpenAI's, in shared/openaiapi.
package wire

import (
	"bytes"
	"errors"
	"time"
)

// TimeLayout is the contract's timestamp: ISO 8601, UTC, milliseconds.
const TimeLayout = "2006-01-02T15:04:05.000Z"

// Time is a timestamp of the contract. It is written in TimeLayout, in
// UTC; any RFC 3339 timestamp is read. It embeds time.Time, whose methods
// (IsZero, Before, Local, ...) it has.
type Time struct{ time.Time }

// TimeOf is t as the contract writes it: UTC, to the millisecond, so that
// two Times are equal (==) exactly when they are written alike.
func TimeOf(t time.Time) Time { return Time{t.UTC().Truncate(time.Millisecond)} }

// MarshalJSON writes t in TimeLayout.
func (t Time) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, len(TimeLayout)+2)
	b = append(b, '"')
	b = t.UTC().AppendFormat(b, TimeLayout)
	return append(b, '"'), nil
}

// MarshalText writes t in TimeLayout, for a Time used as text (a map
// key, a header).
func (t Time) MarshalText() ([]byte, error) { return t.UTC().AppendFormat(nil, TimeLayout), nil }

// UnmarshalJSON reads an RFC 3339 timestamp; null leaves t as it is.
func (t *Time) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	s, ok := bytes.CutPrefix(b, []byte(`"`))
	if s, ok = bytes.CutSuffix(s, []byte(`"`)); !ok {
		return errors.New("wire: a timestamp must be a JSON string")
	}
	return t.UnmarshalText(s)
}

// UnmarshalText reads an RFC 3339 timestamp.
func (t *Time) UnmarshalText(b []byte) error {
	v, err := time.Parse(time.RFC3339Nano, string(b))
	if err != nil {
		return err
	}
	t.Time = v
	return nil
}

// Status is where a task is in its lifecycle.
type Status string

// The four statuses.
const (
	StatusPending    Status = "pending"
	StatusProcessing Status = "processing"
	StatusCompleted  Status = "completed"
	StatusFailed     Status = "failed"
)

// Terminal reports whether s never changes again: completed or failed.
func (s Status) Terminal() bool { return s == StatusCompleted || s == StatusFailed }

// StatusPath is the status endpoint of task id, relative to the base
// URL: a start's statusUrl and Location.
func StatusPath(id string) string { return "/api/gen/status/" + id }

// DownloadPath is the download endpoint of task id: the downloadUrl of
// every start and status body.
func DownloadPath(id string) string { return "/api/gen/download/" + id }
