package httpapi_test

import (
	"net/http/httptest"
	"testing"
	"time"

	"github.com/genvideo/gen/shared/httpapi"
)

func TestWriteError(t *testing.T) {
	zero, six := int64(0), int64(6)
	tests := []struct {
		name    string
		err     *httpapi.Error
		body    string
		headers map[string]string
	}{
		{
			name: "plain",
			err:  &httpapi.Error{Status: 404, Code: "TASK_NOT_FOUND", Message: "Task not found."},
			body: `{"success":false,"error":"TASK_NOT_FOUND","message":"Task not found."}`,
		},
		{
			name: "validation with a value",
			err:  &httpapi.Error{Status: 400, Code: "VALIDATION_ERROR", Message: "m", Field: "seed", Value: -1},
			body: `{"success":false,"error":"VALIDATION_ERROR","message":"m","field":"seed","value":-1}`,
		},
		{
			name: "a value without a field is not sent",
			err:  &httpapi.Error{Status: 400, Code: "VALIDATION_ERROR", Message: "m", Value: "x"},
			body: `{"success":false,"error":"VALIDATION_ERROR","message":"m"}`,
		},
		{
			name: "credits, zero available",
			err:  &httpapi.Error{Status: 402, Code: "INSUFFICIENT_CREDITS", Message: "m", Required: &six, Available: &zero},
			body: `{"success":false,"error":"INSUFFICIENT_CREDITS","message":"m","required":6,"available":0}`,
		},
		{
			name: "details",
			err:  &httpapi.Error{Status: 400, Code: "VIDEO_NOT_READY", Message: "m", Details: map[string]any{"status": "pending"}},
			body: `{"success":false,"error":"VIDEO_NOT_READY","message":"m","details":{"status":"pending"}}`,
		},
		{
			name:    "405",
			err:     &httpapi.Error{Status: 405, Code: "METHOD_NOT_ALLOWED", Message: "m", Allow: "POST"},
			body:    `{"success":false,"error":"METHOD_NOT_ALLOWED","message":"m"}`,
			headers: map[string]string{"Allow": "POST"},
		},
		{
			name: "429",
			err: &httpapi.Error{Status: 429, Code: "RATE_LIMIT_EXCEEDED", Message: "m",
				RateLimit: &httpapi.RateLimit{Limit: 60, Remaining: 0, Reset: time.Unix(1700000060, 0), RetryAfter: 17}},
			body:    `{"error":{"code":"RATE_LIMIT_EXCEEDED","message":"m","details":{"limit":60,"remaining":0,"reset":1700000060,"retry_after":17}}}`,
			headers: map[string]string{"Retry-After": "17", "X-RateLimit-Retry-After": "17"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			httpapi.WriteError(w, tt.err)
			if w.Code != tt.err.Status {
				t.Errorf("status = %d, want %d", w.Code, tt.err.Status)
			}
			if got := w.Body.String(); got != tt.body+"\n" {
				t.Errorf("body = %s, want %s", got, tt.body)
			}
			if got := w.Header().Get("Content-Type"); got != "application/json; charset=utf-8" {
				t.Errorf("Content-Type = %q, want JSON", got)
			}
			for h, v := range tt.headers {
				if got := w.Header().Get(h); got != v {
					t.Errorf("%s = %q, want %q", h, got, v)
				}
			}
		})
	}
}
