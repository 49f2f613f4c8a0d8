package httpapi_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/genvideo/gen/shared/domain"
	"github.com/genvideo/gen/shared/ratelimit"
	"github.com/genvideo/gen/shared/store"
	"github.com/genvideo/gen/shared/task"
	"github.com/genvideo/gen/shared/testing/httpapitest"
)

// want429 checks the nested 429 body and its headers.
func want429(t *testing.T, r response, code string, limit, reset, retryAfter int64) {
	t.Helper()
	if r.status != 429 {
		t.Fatalf("status = %d, want 429 (body %s)", r.status, r.raw)
	}
	if _, ok := r.body["success"]; ok {
		t.Errorf("429 body has a success field: %s", r.raw)
	}
	e := obj(t, r.body, "error")
	if e["code"] != code {
		t.Errorf("error.code = %v, want %s", e["code"], code)
	}
	if msg, _ := e["message"].(string); msg == "" {
		t.Error("error.message is empty")
	}
	d := obj(t, e, "details")
	got := [4]int64{num(t, d, "limit"), num(t, d, "remaining"), num(t, d, "reset"), num(t, d, "retry_after")}
	if want := [4]int64{limit, 0, reset, retryAfter}; got != want {
		t.Errorf("details limit/remaining/reset/retry_after = %v, want %v", got, want)
	}
	for _, h := range []string{"Retry-After", "X-RateLimit-Retry-After"} {
		if got := r.header.Get(h); got != strconv.FormatInt(retryAfter, 10) {
			t.Errorf("%s = %q, want %d", h, got, retryAfter)
		}
	}
	if got := r.header.Get("X-RateLimit-Limit"); got == "" {
		t.Error("429 has no X-RateLimit-Limit")
	}
}

func TestRequestsPerMinute(t *testing.T) { eachCounting(t, testRequestsPerMinute) }

func testRequestsPerMinute(t *testing.T, counting func(*httpapitest.Config)) {
	e := newEnv(t, counting)
	e.Clock.Advance(15 * time.Second)
	c := httpapitest.NewCaller(t, e.faults.Store, 1000, ratelimit.Enterprise, store.KeyLimits{RequestsPerMinute: 2})
	reset := httpapitest.Epoch.Add(time.Minute).Unix()
	for i, wantRemaining := range []string{"1", "0"} {
		r := e.get("/api/gen/models", c.Key)
		if r.status != 200 || r.header.Get("X-RateLimit-Remaining") != wantRemaining || r.header.Get("X-RateLimit-Limit") != "2" {
			t.Fatalf("request %d: %d with limit %q remaining %q, want 200 with 2, %s", i+1, r.status,
				r.header.Get("X-RateLimit-Limit"), r.header.Get("X-RateLimit-Remaining"), wantRemaining)
		}
	}
	before := e.state(c.AccountID)
	r := e.postJSON("/api/gen/text-to-video", c.Key, map[string]any{"prompt": "x"})
	want429(t, r, "RATE_LIMIT_EXCEEDED", 2, reset, 45)
	if got := r.header.Get("X-RateLimit-Remaining"); got != "0" {
		t.Errorf("X-RateLimit-Remaining = %q, want 0", got)
	}
	if got := r.header.Get("X-RateLimit-Reset"); got != strconv.FormatInt(reset, 10) {
		t.Errorf("X-RateLimit-Reset = %q, want %d", got, reset)
	}
	e.assertUnchanged(before, c.AccountID, "a start over the request limit")

	// The next window starts afresh.
	e.Clock.Advance(45 * time.Second)
	if r := e.get("/api/gen/models", c.Key); r.status != 200 || r.header.Get("X-RateLimit-Remaining") != "1" {
		t.Errorf("next minute: %d remaining %q, want 200 remaining 1", r.status, r.header.Get("X-RateLimit-Remaining"))
	}
}

func TestRequestsPerDay(t *testing.T) { eachCounting(t, testRequestsPerDay) }

func testRequestsPerDay(t *testing.T, counting func(*httpapitest.Config)) {
	e := newEnv(t, counting)
	c := httpapitest.NewCaller(t, e.faults.Store, 1000, ratelimit.Enterprise, store.KeyLimits{RequestsPerMinute: 100, RequestsPerDay: 2})
	e.get("/api/gen/models", c.Key)
	e.Clock.Advance(time.Hour) // another minute window, the same day
	e.get("/api/gen/models", c.Key)
	r := e.get("/api/gen/history", c.Key)
	midnight := time.Date(2030, 1, 3, 0, 0, 0, 0, time.UTC)
	now := httpapitest.Epoch.Add(time.Hour)
	want429(t, r, "DAILY_LIMIT_EXCEEDED", 2, midnight.Unix(), int64(midnight.Sub(now)/time.Second))
	// The headers keep describing the minute window; nothing is left in it
	// while the day is exhausted.
	if r.header.Get("X-RateLimit-Limit") != "100" || r.header.Get("X-RateLimit-Remaining") != "0" ||
		r.header.Get("X-RateLimit-Reset") != strconv.FormatInt(now.Add(time.Minute).Unix(), 10) {
		t.Errorf("X-RateLimit-Limit/Remaining/Reset = %s/%s/%s, want 100/0/%d", r.header.Get("X-RateLimit-Limit"),
			r.header.Get("X-RateLimit-Remaining"), r.header.Get("X-RateLimit-Reset"), now.Add(time.Minute).Unix())
	}
	e.Clock.Advance(midnight.Sub(now))
	if r := e.get("/api/gen/models", c.Key); r.status != 200 {
		t.Errorf("next day: status %d, want 200", r.status)
	}
}

func TestStartsPerMinute(t *testing.T) {
	e := newEnv(t, nil)
	c := httpapitest.NewCaller(t, e.faults.Store, 150, ratelimit.Enterprise, store.KeyLimits{StartsPerMinute: 1})
	body := map[string]any{"prompt": "x", "model": "gen-3.1-lite-generate-001"}

	// A start refused for credits does not use the start budget...
	poor := e.postJSON("/api/gen/text-to-video", c.Key, map[string]any{"prompt": "x"})
	wantError(t, poor, 402, "INSUFFICIENT_CREDITS")
	// ...so this one may start.
	wantStarted(t, e.postJSON("/api/gen/text-to-video", c.Key, body), 65, 85)

	before := e.state(c.AccountID)
	r := e.postForm("/api/gen/image-to-video", c.Key, file("image", "a.png", pngData), field("prompt", "x"), field("model", "gen-3.1-lite-generate-001"))
	want429(t, r, "RATE_LIMIT_EXCEEDED", 1, httpapitest.Epoch.Add(time.Minute).Unix(), 60)
	// The request itself was counted: the third of Pro's 300.
	if got := r.header.Get("X-RateLimit-Remaining"); got != "297" {
		t.Errorf("X-RateLimit-Remaining = %q, want 297", got)
	}
	e.assertUnchanged(before, c.AccountID, "a start over the start limit")

	e.Clock.Advance(time.Minute)
	wantStarted(t, e.postJSON("/api/gen/text-to-video", c.Key, body), 65, 20)
}

func TestConcurrency(t *testing.T) {
	e := newEnv(t, nil)
	c := httpapitest.NewCaller(t, e.faults.Store, 10000, ratelimit.Enterprise, store.KeyLimits{MaxInFlight: 2})
	var ids []string
	for i := 0; i < 2; i++ {
		ids = append(ids, wantStarted(t, e.postJSON("/api/gen/text-to-video", c.Key, map[string]any{"prompt": "x"}), 190, 10000-190*int64(i+1)))
	}
	before := e.state(c.AccountID)
	for _, path := range []string{"/api/gen/text-to-video", "/api/gen/image-to-video"} {
		var r response
		if path == "/api/gen/text-to-video" {
			r = e.postJSON(path, c.Key, map[string]any{"prompt": "x"})
		} else {
			r = e.postForm(path, c.Key, file("image", "a.png", pngData), field("prompt", "x"))
		}
		want429(t, r, "CONCURRENCY_LIMIT_EXCEEDED", 2, httpapitest.Epoch.Add(5*time.Second).Unix(), 5)
		e.assertUnchanged(before, c.AccountID, "a start over the in-flight limit at "+path)
	}
	if _, err := e.faults.Store.Fail(context.Background(), ids[0], task.Failure{Code: task.FailGeneration, Message: "x"}, e.Clock.Now()); err != nil {
		t.Fatalf("fail: %v", err)
	}
	wantStarted(t, e.postJSON("/api/gen/text-to-video", c.Key, map[string]any{"prompt": "x"}), 190, 10000-190*2)
}

func TestStandardTierFigures(t *testing.T) {
	e := newEnv(t, nil)
	c := httpapitest.NewCaller(t, e.faults.Store, 100000, ratelimit.Standard, store.KeyLimits{})
	// Standard: 10 starts per minute, 5 in flight. Finish each start so
	// that only the start budget counts.
	for i := 0; i < 10; i++ {
		r := e.postJSON("/api/gen/text-to-video", c.Key, map[string]any{"prompt": "x"})
		id := wantStarted(t, r, 190, 100000-190*int64(i+1))
		if _, err := e.faults.Store.Complete(context.Background(), id, domain.Completion{Videos: []task.Video{{Key: "v", MimeType: "video/mp4"}}}, e.Clock.Now()); err != nil {
			t.Fatalf("complete: %v", err)
		}
	}
	r := e.postJSON("/api/gen/text-to-video", c.Key, map[string]any{"prompt": "x"})
	want429(t, r, "RATE_LIMIT_EXCEEDED", 10, httpapitest.Epoch.Add(time.Minute).Unix(), 60)

	e.Clock.Advance(time.Minute)
	for i := 0; i < 5; i++ {
		wantStarted(t, e.postJSON("/api/gen/text-to-video", c.Key, map[string]any{"prompt": "x"}), 190, 100000-190*int64(11+i))
	}
	r = e.postJSON("/api/gen/text-to-video", c.Key, map[string]any{"prompt": "x"})
	want429(t, r, "CONCURRENCY_LIMIT_EXCEEDED", 5, httpapitest.Epoch.Add(time.Minute+5*time.Second).Unix(), 5)
	if got := r.header.Get("X-RateLimit-Limit"); got != "60" {
		t.Errorf("X-RateLimit-Limit = %q, want 60", got)
	}
}
