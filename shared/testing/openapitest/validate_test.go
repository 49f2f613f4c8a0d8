package openapitest_test

import (
	"bytes"
	"context"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/genvideo/gen/shared/testing/openapitest"
)

func TestDocumentLoadsAsOpenAPI31(t *testing.T) {
	doc, err := openapitest.Doc()
	if err != nil {
		t.Fatalf("Doc: %v", err)
	}
	if !doc.IsOpenAPI31OrLater() {
		t.Errorf("openapi = %q, want 3.1", doc.OpenAPI)
	}
	want := []string{
		"/api/gen/text-to-video", "/api/gen/image-to-video", "/api/gen/first-last-frame",
		"/api/gen/status/{taskId}", "/api/gen/download/{taskId}", "/api/gen/history", "/api/gen/models",
		"/openapi.json", "/docs", "/api/gen/uploads",
		// The webhooks (an extension).
		"/api/gen/webhooks", "/api/gen/webhooks/secret", "/api/gen/webhooks/{webhookId}",
		"/api/gen/webhooks/{webhookId}/deliveries", "/api/gen/webhooks/{webhookId}/deliveries/{deliveryId}/replay",
	}
	// Cancel, delete and credits.
	want = append(want, "/api/gen/cancel/{taskId}", "/api/gen/tasks/{taskId}", "/api/gen/credits")
	// The OpenAI-compatible videos API.
	want = append(want, "/openai/v1/videos", "/openai/v1/videos/{taskId}", "/openai/v1/videos/{taskId}/content", "/openai/v1/videos/extensions")
	// The live event stream.
	want = append(want, "/api/gen/status/{taskId}/events")
	// Quotes, one path per start endpoint.
	want = append(want, "/api/gen/quote/text-to-video", "/api/gen/quote/image-to-video", "/api/gen/quote/first-last-frame")
	// Extensions of a task's video, and their quote (issue 37).
	want = append(want, "/api/gen/extend/{taskId}", "/api/gen/quote/extend")
	for _, p := range want {
		if doc.Paths.Value(p) == nil {
			t.Errorf("path %s is missing", p)
		}
	}
	if got := doc.Paths.Len(); got != len(want) {
		t.Errorf("%d paths, want %d", got, len(want))
	}
	if s := doc.Components.SecuritySchemes["ApiKey"]; s == nil || s.Value.In != "header" || s.Value.Name != "X-API-Key" {
		t.Errorf("security scheme ApiKey = %+v, want the X-API-Key header", s)
	}
}

// The JSON form is the YAML, converted without loss: kin-openapi reads the

const (
	taskID   = "gen_1763000000000_abcdefghij"
	started  = `{"success":true,"message":"ok","taskId":"` + taskID + `","status":"pending","estimatedWaitTime":"1-3 seconds","creditsUsed":35,"remainingCredits":65,"statusUrl":"/api/gen/status/` + taskID + `","downloadUrl":"/api/gen/download/` + taskID + `"}`
	params   = `{"sampleCount":1,"durationSeconds":4,"aspectRatio":"16:9","resolution":"720p","generateAudio":false,"enhancePrompt":true,"seed":7,"personGeneration":"allow_adult"}`
	pending  = `{"success":true,"taskId":"` + taskID + `","status":"pending","type":"text-to-video","model":"gen-3.1-lite-generate-001","prompt":"p","parameters":` + params + `,"creditsCost":35,"createdAt":"2030-01-02T03:04:00.000Z","downloadUrl":"/api/gen/download/` + taskID + `"}`
	video    = `{"url":"https://storage.test/v.mp4","mimeType":"video/mp4","expiresAt":"2030-01-03T03:04:02.000Z"}`
	complete = `{"success":true,"taskId":"` + taskID + `","status":"completed","type":"text-to-video","model":"gen-3.1-lite-generate-001","prompt":"p","parameters":` + params + `,"creditsCost":35,"createdAt":"2030-01-02T03:04:00.000Z","completedAt":"2030-01-02T03:04:02.000Z","processingTime":2,"videos":[` + video + `],"downloadUrl":"/api/gen/download/` + taskID + `"}`
	limited  = `{"error":{"code":"RATE_LIMIT_EXCEEDED","message":"m","details":{"limit":60,"remaining":0,"reset":1763000060,"retry_after":17}}}`
)

func rl(extra ...string) http.Header {
	h := http.Header{"Content-Type": {"application/json; charset=utf-8"},
		"X-Ratelimit-Limit": {"60"}, "X-Ratelimit-Remaining": {"59"}, "X-Ratelimit-Reset": {"1763000060"}}
	for i := 0; i+1 < len(extra); i += 2 {
		h.Set(extra[i], extra[i+1])
	}
	return h
}

func plain(extra ...string) http.Header {
	h := http.Header{"Content-Type": {"application/json; charset=utf-8"}}
	for i := 0; i+1 < len(extra); i += 2 {
		h.Set(extra[i], extra[i+1])
	}
	return h
}

// TestValidatorRejectsWhatTheContractForbids proves that the document is
// strict enough to catch drift: each bad response differs from a good one
// in one way.
func TestValidatorRejectsWhatTheContractForbids(t *testing.T) {
	v, err := openapitest.NewValidator()
	if err != nil {
		t.Fatalf("NewValidator: %v", err)
	}
	tests := []struct {
		name         string
		method, path string
		status       int
		header       http.Header
		body         string
		ok           bool
	}{
		{"start", "POST", "/api/gen/text-to-video", 202, rl("Location", "/api/gen/status/"+taskID), started, true},
		{"replayed start", "POST", "/api/gen/text-to-video", 202, rl("Location", "/api/gen/status/"+taskID, "Idempotent-Replayed", "true"), started, true},
		{"replayed start with a bad marker", "POST", "/api/gen/text-to-video", 202, rl("Location", "/api/gen/status/"+taskID, "Idempotent-Replayed", "yes"), started, false},
		{"start without Location", "POST", "/api/gen/text-to-video", 202, rl(), started, false},
		{"start without rate-limit headers", "POST", "/api/gen/text-to-video", 202, plain("Location", "/api/gen/status/"+taskID), started, false},
		{"start with an unknown field", "POST", "/api/gen/text-to-video", 202, rl("Location", "/api/gen/status/"+taskID), strings.Replace(started, `"success":true`, `"success":true,"extra":1`, 1), false},
		{"start naming the cost creditsCost", "POST", "/api/gen/text-to-video", 202, rl("Location", "/api/gen/status/"+taskID), strings.Replace(started, "creditsUsed", "creditsCost", 1), false},
		{"image start without imageInfo", "POST", "/api/gen/image-to-video", 202, rl("Location", "/api/gen/status/"+taskID), started, false},
		{"undocumented status", "POST", "/api/gen/text-to-video", 418, plain(), `{"success":false,"error":"INTERNAL_ERROR","message":"m"}`, false},
		// text-to-video takes reference images as files (issue 37).
		{"413 on text-to-video", "POST", "/api/gen/text-to-video", 413, plain(), `{"success":false,"error":"FILE_TOO_LARGE","message":"m","details":{"maxBytes":1}}`, true},
		{"413 on the extension", "POST", "/api/gen/extend/" + taskID, 413, plain(), `{"success":false,"error":"FILE_TOO_LARGE","message":"m","details":{"maxBytes":1}}`, false},
		{"413", "POST", "/api/gen/image-to-video", 413, plain(), `{"success":false,"error":"FILE_TOO_LARGE","message":"m","field":"image","details":{"maxBytes":1}}`, true},
		{"pending", "GET", "/api/gen/status/" + taskID, 200, rl("Retry-After", "5"), pending, true},
		{"completed", "GET", "/api/gen/status/" + taskID, 200, rl(), complete, true},
		{"completed without videos", "GET", "/api/gen/status/" + taskID, 200, rl(), strings.Replace(complete, `"videos":[`+video+`],`, "", 1), false},
		{"pending with videos", "GET", "/api/gen/status/" + taskID, 200, rl(), strings.Replace(pending, `"downloadUrl"`, `"videos":[`+video+`],"downloadUrl"`, 1), false},
		{"timestamp without milliseconds", "GET", "/api/gen/status/" + taskID, 200, rl(), strings.Replace(pending, "04:00.000Z", "04:00Z", 1), false},
		{"unknown status", "GET", "/api/gen/status/" + taskID, 200, rl(), strings.Replace(pending, `"status":"pending"`, `"status":"queued"`, 1), false},
		{"error body", "GET", "/api/gen/status/" + taskID, 404, plain(), `{"success":false,"error":"TASK_NOT_FOUND","message":"Task not found."}`, true},
		{"error body with success true", "GET", "/api/gen/status/" + taskID, 404, plain(), `{"success":true,"error":"TASK_NOT_FOUND","message":"Task not found."}`, false},
		{"404 with another code", "GET", "/api/gen/status/" + taskID, 404, plain(), `{"success":false,"error":"NOT_FOUND","message":"m"}`, false},
		{"402", "POST", "/api/gen/text-to-video", 402, rl(), `{"success":false,"error":"INSUFFICIENT_CREDITS","message":"m","required":190,"available":0}`, true},
		{"402 without available", "POST", "/api/gen/text-to-video", 402, rl(), `{"success":false,"error":"INSUFFICIENT_CREDITS","message":"m","required":190}`, false},
		{"409", "POST", "/api/gen/text-to-video", 409, rl(), `{"success":false,"error":"IDEMPOTENCY_CONFLICT","message":"m"}`, true},
		{"a value without its field", "POST", "/api/gen/text-to-video", 400, rl(), `{"success":false,"error":"VALIDATION_ERROR","message":"m","value":3}`, false},
		{"429", "GET", "/api/gen/models", 429, rl("Retry-After", "17", "X-RateLimit-Retry-After", "17"), limited, true},
		{"429 without Retry-After", "GET", "/api/gen/models", 429, rl("X-RateLimit-Retry-After", "17"), limited, false},
		{"429 in the flat form", "GET", "/api/gen/models", 429, rl("Retry-After", "17", "X-RateLimit-Retry-After", "17"), `{"success":false,"error":"RATE_LIMIT_EXCEEDED","message":"m"}`, false},
		{"429 concurrency on a read", "GET", "/api/gen/models", 429, rl("Retry-After", "5", "X-RateLimit-Retry-After", "5"), strings.Replace(limited, "RATE_LIMIT", "CONCURRENCY_LIMIT", 1), false},
		{"429 concurrency on a start", "POST", "/api/gen/text-to-video", 429, rl("Retry-After", "5", "X-RateLimit-Retry-After", "5"), strings.Replace(limited, "RATE_LIMIT", "CONCURRENCY_LIMIT", 1), true},
		{"401 with another message", "GET", "/api/gen/models", 401, plain(), `{"success":false,"error":"UNAUTHORIZED","message":"nope"}`, false},
		{"unknown route", "GET", "/api/gen/nothing", 404, plain(), `{"success":false,"error":"NOT_FOUND","message":"m"}`, true},
		{"unknown route with TASK_NOT_FOUND", "GET", "/api/gen/nothing", 404, plain(), `{"success":false,"error":"TASK_NOT_FOUND","message":"m"}`, false},
		{"405", "DELETE", "/api/gen/models", 405, plain("Allow", "GET, HEAD"), `{"success":false,"error":"METHOD_NOT_ALLOWED","message":"m"}`, true},
		{"405 without Allow", "DELETE", "/api/gen/models", 405, plain(), `{"success":false,"error":"METHOD_NOT_ALLOWED","message":"m"}`, false},
		{"HEAD", "HEAD", "/api/gen/models", 200, rl(), "", true},
		{"HEAD with an undocumented status", "HEAD", "/api/gen/models", 418, rl(), "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest(tt.method, tt.path, nil)
			err := v.ValidateResponse(context.Background(), req, tt.status, tt.header, []byte(tt.body))
			if ok := err == nil; ok != tt.ok {
				t.Errorf("ValidateResponse = %v, want ok=%v", err, tt.ok)
			}
		})
	}
}

func TestValidateRequest(t *testing.T) {
	v, err := openapitest.NewValidator()
	if err != nil {
		t.Fatalf("NewValidator: %v", err)
	}
	tests := []struct {
		name, method, path, key, body string
		ok                            bool
	}{
		{"valid start", "POST", "/api/gen/text-to-video", "k", `{"prompt":"p","model":"gen-3.1-lite-generate-001","durationSeconds":4}`, true},
		{"no key", "POST", "/api/gen/text-to-video", "", `{"prompt":"p"}`, false},
		{"unknown field", "POST", "/api/gen/text-to-video", "k", `{"prompt":"p","colour":"red"}`, false},
		{"no prompt", "POST", "/api/gen/text-to-video", "k", `{"model":"gen-3.1-lite-generate-001"}`, false},
		{"duration 5", "POST", "/api/gen/text-to-video", "k", `{"prompt":"p","durationSeconds":5}`, false},
		{"history", "GET", "/api/gen/history?limit=100&status=failed", "k", "", true},
		{"history limit 101", "GET", "/api/gen/history?limit=101", "k", "", false},
		{"the document needs no key", "GET", "/openapi.json", "", "", true},
	}
	form := func(fields ...string) (string, string) {
		var buf bytes.Buffer
		w := multipart.NewWriter(&buf)
		for i := 0; i+1 < len(fields); i += 2 {
			if fields[i] == "image" || fields[i] == "referenceImages" {
				fw, _ := w.CreateFormFile(fields[i], "a.png")
				fw.Write([]byte(fields[i+1]))
				continue
			}
			w.WriteField(fields[i], fields[i+1])
		}
		w.Close()
		return w.FormDataContentType(), buf.String()
	}
	const image, quote = "/api/gen/image-to-video", "/api/gen/quote/text-to-video"
	multiparts := []struct {
		name, path string
		fields     []string
		ok         bool
	}{
		{"image form", image, []string{"prompt", "p", "durationSeconds", "4", "generateAudio", "false", "image", "\x89PNG"}, true},
		{"image form without the image", image, []string{"prompt", "p"}, false},
		{"image form with an unknown field", image, []string{"prompt", "p", "colour", "red", "image", "\x89PNG"}, false},
		{"image form with a bad boolean", image, []string{"prompt", "p", "generateAudio", "yes", "image", "\x89PNG"}, false},
		// The quote takes the start's form too (its reference images as files).
		{"quote of a form with a reference image", quote, []string{"prompt", "p", "durationSeconds", "8", "referenceImages", "\x89PNG"}, true},
		{"quote of a form with an unknown field", quote, []string{"prompt", "p", "colour", "red"}, false},
	}
	for _, tt := range multiparts {
		t.Run(tt.name, func(t *testing.T) {
			ct, body := form(tt.fields...)
			req := httptest.NewRequest("POST", tt.path, nil)
			req.Header.Set("Content-Type", ct)
			req.Header.Set("X-API-Key", "k")
			err := v.ValidateRequest(context.Background(), req, []byte(body))
			if ok := err == nil; ok != tt.ok {
				t.Errorf("ValidateRequest = %v, want ok=%v", err, tt.ok)
			}
		})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest(tt.method, tt.path, nil)
			if tt.body != "" {
				req.Header.Set("Content-Type", "application/json")
			}
			if tt.key != "" {
				req.Header.Set("X-API-Key", tt.key)
			}
			err := v.ValidateRequest(context.Background(), req, []byte(tt.body))
			if ok := err == nil; ok != tt.ok {
				t.Errorf("ValidateRequest = %v, want ok=%v", err, tt.ok)
			}
		})
	}
}
