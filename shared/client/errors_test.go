package client_test

import (
	"bytes"
	"context"
	"errors"
	"image/color"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/genvideo/gen/shared/awsstack"
	"github.com/genvideo/gen/shared/client"
	"github.com/genvideo/gen/shared/httpapi"
	"github.com/genvideo/gen/shared/store"
)

// apiError asserts that err is an *Error with the status and code.
func apiError(t *testing.T, err error, status int, code string) *client.Error {
	t.Helper()
	var e *client.Error
	if !errors.As(err, &e) {
		t.Fatalf("err = %v (%T), want a *client.Error %d %s", err, err, status, code)
	}
	if e.Status != status || e.Code != code || e.Message == "" {
		t.Fatalf("err = %d %s %q, want %d %s with a message", e.Status, e.Code, e.Message, status, code)
	}
	return e
}

// Every error code a client can meet, from the real service.
func TestErrorCodes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rich := stack.Key(t, 10000, store.KeyLimits{})
	c := clientOf(t, baseURL, rich.APIKey, false)
	png := pngImage(t, color.RGBA{1, 2, 3, 255})

	t.Run("UNAUTHORIZED", func(t *testing.T) {
		_, err := clientOf(t, baseURL, "gen_not-a-key", false).Models(ctx)
		if e := apiError(t, err, 401, client.CodeUnauthorized); e.Message != "Invalid API key" {
			t.Errorf("message = %q", e.Message)
		}
		_, err = clientOf(t, baseURL, "", false).Models(ctx)
		apiError(t, err, 401, client.CodeUnauthorized)
	})
	t.Run("VALIDATION_ERROR", func(t *testing.T) {
		req := lite("x")
		req.SampleCount = 9
		_, err := c.TextToVideo(ctx, req)
		if e := apiError(t, err, 400, client.CodeValidation); e.Field != "sampleCount" || e.Value != float64(9) {
			t.Errorf("field, value = %q, %v, want sampleCount, 9", e.Field, e.Value)
		}
		_, err = c.History(ctx, client.HistoryQuery{Limit: 101})
		if e := apiError(t, err, 400, client.CodeValidation); e.Field != "limit" {
			t.Errorf("field = %q, want limit", e.Field)
		}
	})
	t.Run("INVALID_MODEL", func(t *testing.T) {
		_, err := c.TextToVideo(ctx, client.Request{Prompt: "x", Model: "gen-9"})
		apiError(t, err, 400, client.CodeInvalidModel)
		_, err = c.FirstLastFrame(ctx, lite("x"), client.ImageBytes("a.png", png), client.ImageBytes("b.png", png))
		apiError(t, err, 400, client.CodeInvalidModel)
	})
	t.Run("INVALID_PROMPT", func(t *testing.T) {
		_, err := c.TextToVideo(ctx, client.Request{Prompt: "   "})
		apiError(t, err, 400, client.CodeInvalidPrompt)
	})
	t.Run("MISSING_IMAGE", func(t *testing.T) {
		_, err := c.ImageToVideo(ctx, lite("x"), client.ImageBytes("empty.png", nil))
		if e := apiError(t, err, 400, client.CodeMissingImage); e.Field != "image" {
			t.Errorf("field = %q, want image", e.Field)
		}
	})
	t.Run("INVALID_IMAGE_TYPE", func(t *testing.T) {
		_, err := c.ImageToVideo(ctx, lite("x"), client.ImageBytes("a.gif", []byte("GIF89a\x01\x00\x01\x00\x00\x00\x00;")))
		apiError(t, err, 400, client.CodeInvalidImageType)
	})
	t.Run("FILE_TOO_LARGE", func(t *testing.T) {
		huge := io.MultiReader(bytes.NewReader(png[:8]), io.LimitReader(zeros{}, httpapi.DefaultMaxImageBytes))
		_, err := c.ImageToVideo(ctx, lite("x"), client.ImageReader("huge.png", huge))
		e := apiError(t, err, 413, client.CodeFileTooLarge)
		want := float64(httpapi.DefaultMaxImageBytes)
		if local == nil {
			// Over 10 MB API Gateway answers itself, with the template's
			// REQUEST_TOO_LARGE response: what the functions accept.
			want = awsstack.DefaultMaxImageBytes
		}
		if got, _ := e.Details["maxBytes"].(float64); got != want {
			t.Errorf("details.maxBytes = %v, want %v", e.Details["maxBytes"], want)
		}
	})
	t.Run("INSUFFICIENT_CREDITS", func(t *testing.T) {
		poor := stack.Key(t, 10, store.KeyLimits{})
		_, err := clientOf(t, baseURL, poor.APIKey, true).TextToVideo(ctx, lite("x"))
		if e := apiError(t, err, 402, client.CodeInsufficientCredits); e.Required != 35 || e.Available != 10 {
			t.Errorf("required, available = %d, %d, want 35, 10", e.Required, e.Available)
		}
	})
	t.Run("TASK_NOT_FOUND", func(t *testing.T) {
		_, err := c.Status(ctx, "gen_1700000000000_abcdefghij")
		apiError(t, err, 404, client.CodeTaskNotFound)
		_, err = gatewayClient(t, rich.APIKey).Download(ctx, "not/a/task")
		if local == nil {
			// An encoded slash is no {taskId} to API Gateway: its answer
			// for an unknown route.
			apiError(t, err, 404, "NOT_FOUND")
		} else {
			apiError(t, err, 404, client.CodeTaskNotFound)
		}
	})
	t.Run("VIDEO_NOT_READY", func(t *testing.T) {
		needsFaults(t)
		s := startLite(t, c, "[slow:60] not yet")
		_, err := c.Download(ctx, s.TaskID)
		e := apiError(t, err, 400, client.CodeVideoNotReady)
		if st := e.Details["status"]; st != "pending" && st != "processing" {
			t.Errorf("details.status = %v, want pending or processing", st)
		}
	})
	t.Run("RATE_LIMIT_EXCEEDED", func(t *testing.T) {
		k := stack.Key(t, 0, store.KeyLimits{RequestsPerMinute: 1, RequestsPerDay: 1000, StartsPerMinute: 10, MaxInFlight: 5})
		// The window may last up to a minute: the client must not wait.
		c := gatewayClient(t, k.APIKey, client.WithRetry(client.RetryPolicy{MaxRetryAfter: time.Millisecond}))
		if _, err := c.Models(ctx); err != nil {
			t.Fatal(err)
		}
		_, err := c.Models(ctx)
		e := apiError(t, err, 429, client.CodeRateLimit)
		if local == nil {
			// The usage plan's throttle answers, with the gateway's
			// THROTTLED response: static details, a retry after 1 s.
			if rl := e.RateLimit; rl == nil || rl.RetryAfter != time.Second || e.RetryAfter != time.Second {
				t.Errorf("rate limit = %+v, retry after %v; want the gateway's 1 s", rl, e.RetryAfter)
			}
			return
		}
		if rl := e.RateLimit; rl == nil || rl.Limit != 1 || rl.Remaining != 0 || rl.RetryAfter <= 0 || rl.Reset.IsZero() {
			t.Errorf("rate limit = %+v, want limit 1, none left, a retry hint and a reset", rl)
		}
		if e.RetryAfter != e.RateLimit.RetryAfter {
			t.Errorf("RetryAfter = %v, want the body's %v", e.RetryAfter, e.RateLimit.RetryAfter)
		}
	})
	t.Run("DAILY_LIMIT_EXCEEDED", func(t *testing.T) {
		k := stack.Key(t, 0, store.KeyLimits{RequestsPerMinute: 100, RequestsPerDay: 1, StartsPerMinute: 10, MaxInFlight: 5})
		c := gatewayClient(t, k.APIKey)
		if _, err := c.Models(ctx); err != nil {
			t.Fatal(err)
		}
		// Hours to wait: not retried, whatever the policy.
		_, err := c.Models(ctx)
		if e := apiError(t, err, 429, client.CodeDailyLimit); e.RetryAfter <= time.Minute && time.Now().UTC().Hour() < 23 {
			t.Errorf("RetryAfter = %v, want the hours until midnight UTC", e.RetryAfter)
		}
	})
	t.Run("CONCURRENCY_LIMIT_EXCEEDED", func(t *testing.T) {
		needsFaults(t)
		k := stack.Key(t, 1000, store.KeyLimits{RequestsPerMinute: 100, RequestsPerDay: 1000, StartsPerMinute: 10, MaxInFlight: 1})
		c := clientOf(t, baseURL, k.APIKey, true)
		startLite(t, c, "[slow:60] hogging the slot")
		// No Idempotency-Key: a start is not retried, even on a 429.
		_, err := c.TextToVideo(ctx, lite("second"))
		e := apiError(t, err, 429, client.CodeConcurrencyLimit)
		if e.RateLimit == nil || e.RateLimit.Limit != 1 {
			t.Errorf("rate limit = %+v, want limit 1", e.RateLimit)
		}
		if got := stack.Balance(t, k.AccountID); got != 1000-35 {
			t.Errorf("balance = %d, want %d (one start)", got, 1000-35)
		}
	})
	t.Run("IDEMPOTENCY_CONFLICT", func(t *testing.T) {
		needsFaults(t)
		key := client.NewIdempotencyKey()
		first, err := c.TextToVideo(ctx, lite("[fail] once"), client.WithIdempotencyKey(key))
		if err != nil {
			t.Fatal(err)
		}
		again, err := c.TextToVideo(ctx, lite("[fail] once"), client.WithIdempotencyKey(key))
		if err != nil || again.TaskID != first.TaskID || again.IdempotencyKey != key {
			t.Fatalf("the same start again = %+v, %v, want the first answer (task %s)", again, err, first.TaskID)
		}
		_, err = c.TextToVideo(ctx, lite("[fail] another"), client.WithIdempotencyKey(key))
		if e := apiError(t, err, 409, client.CodeIdempotencyConflict); e.Field != "Idempotency-Key" {
			t.Errorf("field = %q, want Idempotency-Key", e.Field)
		}
	})
}

type zeros struct{}

func (zeros) Read(b []byte) (int, error) {
	clear(b)
	return len(b), nil
}

// flaky serves the real stack behind a front that answers the first n
// requests with the contract's 503, and counts the requests.
type flaky struct {
	n, seen atomic.Int32
	next    http.Handler
}

func (f *flaky) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if f.seen.Add(1) <= f.n.Load() {
		io.Copy(io.Discard, r.Body)
		httpapi.WriteError(w, &httpapi.Error{Status: 503, Code: client.CodeUnavailable, Message: "try again"})
		return
	}
	f.next.ServeHTTP(w, r)
}

// Reads are retried on 5xx; a start only with an Idempotency-Key, and
// then it starts once.
func TestRetries(t *testing.T) {
	needsFaults(t)
	t.Parallel()
	ctx := context.Background()
	k := stack.Key(t, 1000, store.KeyLimits{})
	f := &flaky{next: local.Stack.Handler()}
	srv := httptest.NewServer(f)
	defer srv.Close()
	fast := client.WithRetry(client.RetryPolicy{MinBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond})
	c := clientOf(t, srv.URL, k.APIKey, true, fast)

	tests := []struct {
		name     string
		failures int32
		call     func() error
		requests int32
		ok       bool
	}{
		{"a read through two failures", 2, func() error { _, err := c.Models(ctx); return err }, 3, true},
		{"a read gives up after MaxAttempts", 9, func() error { _, err := c.Models(ctx); return err }, 4, false},
		{"a start without a key is not retried", 1, func() error { _, err := c.TextToVideo(ctx, lite("[fail] a")); return err }, 1, false},
		{"a start with a key is retried", 2, func() error {
			_, err := c.TextToVideo(ctx, lite("[fail] b"), client.WithIdempotencyKey(client.NewIdempotencyKey()))
			return err
		}, 3, true},
		{"an image start with a key is retried", 1, func() error {
			_, err := c.ImageToVideo(ctx, lite("[fail] c"), client.ImageBytes("a.png", pngImage(t, color.RGBA{9, 9, 9, 255})),
				client.WithIdempotencyKey(client.NewIdempotencyKey()))
			return err
		}, 2, true},
		{"an image from a reader is read once, so not retried", 1, func() error {
			_, err := c.ImageToVideo(ctx, lite("[fail] d"), client.ImageReader("a.png", bytes.NewReader(pngImage(t, color.RGBA{9, 9, 9, 255}))),
				client.WithIdempotencyKey(client.NewIdempotencyKey()))
			return err
		}, 1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f.seen.Store(0)
			f.n.Store(tt.failures)
			err := tt.call()
			if tt.ok && err != nil {
				t.Fatalf("err = %v, want success", err)
			}
			if !tt.ok {
				apiError(t, err, 503, client.CodeUnavailable)
			}
			if got := f.seen.Load(); got != tt.requests {
				t.Errorf("%d requests, want %d", got, tt.requests)
			}
		})
	}
	// Two starts succeeded, one of them through two failures: two tasks.
	page, err := c.History(ctx, client.HistoryQuery{})
	if err != nil || page.Pagination.Total != 2 {
		t.Errorf("history total = %+v, %v, want 2 tasks", page, err)
	}
}

// A start with an Idempotency-Key waits out a 429 as its Retry-After asks
// (the concurrency limit's 5 s) and then starts.
func TestStartWaitsOutTheConcurrencyLimit(t *testing.T) {
	needsFaults(t)
	t.Parallel()
	ctx := context.Background()
	k := stack.Key(t, 1000, store.KeyLimits{RequestsPerMinute: 100, RequestsPerDay: 1000, StartsPerMinute: 10, MaxInFlight: 1})
	// Attempts enough for a loaded machine (the suite under -race), where
	// the first task's two seconds can outlast the default four tries: what
	// is tested is that the client waits, not how long the render takes.
	c := newClient(t, k.APIKey, client.WithAutoIdempotency(), client.WithRetry(client.RetryPolicy{MaxAttempts: 12}))
	first := startLite(t, c, "[slow:2] brief")
	second, err := c.TextToVideo(ctx, lite("[fail] after the first"))
	if err != nil {
		t.Fatalf("second start: %v, want it started once the first finished", err)
	}
	if second.IdempotencyKey == "" || second.TaskID == first.TaskID {
		t.Errorf("second = %+v, want a new task started with a generated key", second)
	}
	task, err := c.Status(ctx, first.TaskID)
	if err != nil || !task.Status.Terminal() {
		t.Errorf("first task = %+v, %v, want it finished before the second started", task, err)
	}
}

func TestNewRefusesABadBaseURL(t *testing.T) {
	for _, u := range []string{"", "127.0.0.1:8080", "ftp://host", "http://"} {
		if _, err := client.New(u, "k"); err == nil {
			t.Errorf("New(%q) succeeded, want an error", u)
		}
	}
	if _, err := client.New("https://api.example.com/prod/", "k"); err != nil {
		t.Errorf("New with a path prefix: %v", err)
	}
}

func TestStartedReadsEitherCostName(t *testing.T) {
	for _, body := range []string{`{"taskId":"t","creditsUsed":190}`, `{"taskId":"t","creditsCost":190}`} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusAccepted)
			io.WriteString(w, body)
		}))
		c, _ := client.New(srv.URL, "k")
		s, err := c.TextToVideo(context.Background(), client.Request{Prompt: "p"})
		srv.Close()
		if err != nil || s.CreditsUsed != 190 {
			t.Errorf("%s: CreditsUsed = %+v, %v, want 190", body, s, err)
		}
	}
}

// An answer that is not the service's (a proxy's page) is still an *Error.
func TestForeignErrorBody(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadGateway)
		io.WriteString(w, "<html>bad gateway</html>")
	}))
	defer srv.Close()
	c, _ := client.New(srv.URL, "k", client.WithRetry(client.RetryPolicy{MaxAttempts: 1}))
	_, err := c.Models(context.Background())
	var e *client.Error
	if !errors.As(err, &e) || e.Status != 502 || e.Code != "" || !strings.Contains(e.Message, "bad gateway") || !e.Temporary() {
		t.Errorf("err = %#v, want a temporary 502 without a code that quotes the body", err)
	}
}

// A task id is one path segment, under the base URL's own path.
func TestPaths(t *testing.T) {
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.URL.EscapedPath()+"?"+r.URL.RawQuery)
		w.WriteHeader(http.StatusNotFound)
	}))
	defer srv.Close()
	c, err := client.New(srv.URL+"/prod/", "k", client.WithRetry(client.RetryPolicy{MaxAttempts: 1}))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	c.Status(ctx, "not/a task")
	c.Download(ctx, "gen_1700000000000_abcdefghij")
	c.History(ctx, client.HistoryQuery{Status: client.StatusFailed, Limit: 5, Skip: 10})
	want := []string{
		"/prod/api/gen/status/not%2Fa%20task?",
		"/prod/api/gen/download/gen_1700000000000_abcdefghij?",
		"/prod/api/gen/history?limit=5&skip=10&status=failed",
	}
	if !slices.Equal(got, want) {
		t.Errorf("paths = %q, want %q", got, want)
	}
}
