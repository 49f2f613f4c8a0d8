package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/genvideo/gen/shared/domain"
	"github.com/genvideo/gen/shared/httpapi"
	"github.com/genvideo/gen/shared/params"
	"github.com/genvideo/gen/shared/store/sqlitestore"
	"github.com/genvideo/gen/shared/task"
	"github.com/genvideo/gen/shared/testing/httpapitest"
)

// tasksInEveryState starts five tasks and moves them along: pending,
// processing, completed with two videos, completed with one of two
// (partial, 190 refunded) and failed. Each is created 1 s after the last;
// each completion comes 95.5 s after its creation.
func tasksInEveryState(t *testing.T, e *env, key string) map[string]string {
	t.Helper()
	ctx := context.Background()
	st := e.faults.Store
	ids := map[string]string{}
	for _, name := range []string{"pending", "processing", "completed", "partial", "failed"} {
		body := map[string]any{"prompt": "a " + name + " task", "seed": 3}
		if name == "completed" || name == "partial" {
			body["sampleCount"] = 2
		}
		r := e.postJSON("/api/gen/text-to-video", key, body)
		if r.status != 202 {
			t.Fatalf("start %s: %d %s", name, r.status, r.raw)
		}
		ids[name] = r.body["taskId"].(string)
		e.Clock.Advance(time.Second)
	}
	at := func(name string) time.Time { return e.task(ids[name]).CreatedAt.Add(95500 * time.Millisecond) }
	for _, name := range []string{"processing", "completed", "partial", "failed"} {
		if _, err := st.MarkProcessing(ctx, ids[name], e.Clock.Now()); err != nil {
			t.Fatalf("start processing %s: %v", name, err)
		}
	}
	videos := func(id string, n int) []task.Video {
		var vs []task.Video
		for i := 0; i < n; i++ {
			vs = append(vs, task.Video{Key: fmt.Sprintf("videos/%s/%d.mp4", id, i), MimeType: "video/mp4", Size: 1000})
		}
		return vs
	}
	if _, err := st.Complete(ctx, ids["completed"], domain.Completion{Videos: videos(ids["completed"], 2)}, at("completed")); err != nil {
		t.Fatalf("complete: %v", err)
	}
	if _, err := st.Complete(ctx, ids["partial"], domain.Completion{Videos: videos(ids["partial"], 1), Refund: 190}, at("partial")); err != nil {
		t.Fatalf("complete partial: %v", err)
	}
	if _, err := st.Fail(ctx, ids["failed"], task.Failure{Code: task.FailContentPolicy, Message: "the prompt was refused"}, at("failed")); err != nil {
		t.Fatalf("fail: %v", err)
	}
	return ids
}

// The polling hint is RetryAfter, or the generation's shortest expected
// time when that is shorter, and at least a second.
func TestStatusRetryAfterFollowsTheEstimate(t *testing.T) {
	tests := []struct {
		lo   time.Duration
		want string
	}{
		{2 * time.Second, "2"},
		{30 * time.Second, "5"},
		{100 * time.Millisecond, "1"},
	}
	for _, tt := range tests {
		e := newEnv(t, func(c *httpapitest.Config) {
			c.RetryAfter = 5 * time.Second
			c.Estimate = func(params.Parameters) (time.Duration, time.Duration) { return tt.lo, 2 * tt.lo }
		})
		c := e.caller(10000)
		id := tasksInEveryState(t, e, c.Key)["pending"]
		r := e.get("/api/gen/status/"+id, c.Key)
		if got := r.header.Get("Retry-After"); got != tt.want {
			t.Errorf("estimate %v: Retry-After = %q, want %q", tt.lo, got, tt.want)
		}
	}
}

func TestStatus(t *testing.T) {
	e := newEnv(t, func(c *httpapitest.Config) { c.RetryAfter = 7 * time.Second })
	e.Clock.Advance(123 * time.Millisecond)
	c := e.caller(10000)
	ids := tasksInEveryState(t, e, c.Key)

	tests := []struct {
		name       string
		cost       int64
		retryAfter string
		completed  string // completedAt; "" when absent
		videos     int
		refunded   int64 // -1: absent
		failure    map[string]any
	}{
		{"pending", 190, "7", "", 0, -1, nil},
		{"processing", 190, "7", "", 0, -1, nil},
		{"completed", 380, "", "2030-01-02T03:05:37.623Z", 2, -1, nil},
		{"partial", 380, "", "2030-01-02T03:05:38.623Z", 1, 190, nil},
		{"failed", 190, "", "2030-01-02T03:05:39.623Z", 0, 190, map[string]any{"code": "CONTENT_POLICY_VIOLATION", "message": "the prompt was refused"}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := ids[tt.name]
			r := e.get("/api/gen/status/"+id, c.Key)
			if r.status != 200 {
				t.Fatalf("status %d, want 200 (%s)", r.status, r.raw)
			}
			b := r.body
			created := fmt.Sprintf("2030-01-02T03:04:0%d.123Z", i)
			want := map[string]any{"success": true, "taskId": id, "status": tt.name, "type": "text-to-video",
				"model": "gen-3.1-fast-generate-001", "prompt": "a " + tt.name + " task", "createdAt": created,
				"downloadUrl": "/api/gen/download/" + id}
			if tt.name == "partial" || tt.name == "completed" {
				want["status"] = "completed"
			}
			for k, v := range want {
				if b[k] != v {
					t.Errorf("%s = %v, want %v", k, b[k], v)
				}
			}
			if got := num(t, b, "creditsCost"); got != tt.cost {
				t.Errorf("creditsCost = %d, want %d", got, tt.cost)
			}
			p := obj(t, b, "parameters")
			if p["seed"] != float64(3) || p["aspectRatio"] != "16:9" || p["generateAudio"] != true || p["durationSeconds"] != float64(8) {
				t.Errorf("parameters = %v, want the stored parameters (seed 3, 16:9, audio, 8 s)", p)
			}
			if got := r.header.Get("Retry-After"); got != tt.retryAfter {
				t.Errorf("Retry-After = %q, want %q", got, tt.retryAfter)
			}
			if got, _ := b["completedAt"].(string); got != tt.completed {
				t.Errorf("completedAt = %q, want %q", got, tt.completed)
			}
			if tt.videos > 0 {
				if got := num(t, b, "processingTime"); got != 95 {
					t.Errorf("processingTime = %d, want 95", got)
				}
				checkVideos(t, list(t, b, "videos"), id, tt.videos, tt.completed)
			} else {
				for _, k := range []string{"videos", "processingTime"} {
					if _, ok := b[k]; ok {
						t.Errorf("a %s task has %s", tt.name, k)
					}
				}
			}
			if tt.refunded >= 0 {
				if got := num(t, b, "creditsRefunded"); got != tt.refunded {
					t.Errorf("creditsRefunded = %d, want %d", got, tt.refunded)
				}
			} else if _, ok := b["creditsRefunded"]; ok {
				t.Errorf("creditsRefunded = %v, want none", b["creditsRefunded"])
			}
			if tt.failure != nil {
				if got := obj(t, b, "error"); fmt.Sprint(got) != fmt.Sprint(tt.failure) {
					t.Errorf("error = %v, want %v", got, tt.failure)
				}
			} else if _, ok := b["error"]; ok {
				t.Errorf("error = %v, want none", b["error"])
			}
		})
	}
}

// checkVideos checks signed videos: each expires 24 h after completedAt.
func checkVideos(t *testing.T, videos []any, id string, n int, completedAt string) {
	t.Helper()
	if len(videos) != n {
		t.Fatalf("%d videos, want %d", len(videos), n)
	}
	done, err := time.Parse(time.RFC3339, completedAt)
	if err != nil {
		t.Fatalf("completedAt %q: %v", completedAt, err)
	}
	expires := done.Add(24 * time.Hour)
	for i, v := range videos {
		m := v.(map[string]any)
		wantURL := fmt.Sprintf("https://storage.test/videos/%s/%d.mp4?expires=%d", id, i, expires.Unix())
		want := map[string]any{"url": wantURL, "mimeType": "video/mp4", "expiresAt": expires.UTC().Format("2006-01-02T15:04:05.000Z")}
		for k, w := range want {
			if m[k] != w {
				t.Errorf("videos[%d].%s = %v, want %v", i, k, m[k], w)
			}
		}
	}
}

func TestDownload(t *testing.T) {
	e := newEnv(t, nil)
	c := e.caller(10000)
	ids := tasksInEveryState(t, e, c.Key)

	for _, name := range []string{"pending", "processing", "failed"} {
		r := e.get("/api/gen/download/"+ids[name], c.Key)
		wantError(t, r, 400, "VIDEO_NOT_READY")
		if got := obj(t, r.body, "details")["status"]; got != name {
			t.Errorf("%s task: details.status = %v, want %s", name, got, name)
		}
	}

	completedAt := e.task(ids["completed"]).CompletedAt.Format("2006-01-02T15:04:05.000Z")
	first := e.get("/api/gen/download/"+ids["completed"], c.Key)
	for _, r := range []response{first, func() response {
		// Two days later the URLs are dead; the answer is the same.
		e.Clock.Advance(48 * time.Hour)
		return e.get("/api/gen/download/"+ids["completed"], c.Key)
	}()} {
		if r.status != 200 || r.body["success"] != true || r.body["taskId"] != ids["completed"] || num(t, r.body, "totalVideos") != 2 {
			t.Fatalf("download: %d %s, want 200 with 2 videos", r.status, r.raw)
		}
		checkVideos(t, list(t, r.body, "videos"), ids["completed"], 2, completedAt)
	}
	if r := e.get("/api/gen/download/"+ids["partial"], c.Key); num(t, r.body, "totalVideos") != 1 {
		t.Errorf("partial download: %s, want 1 video", r.raw)
	}
}

func TestTaskNotFound(t *testing.T) {
	e := newEnv(t, nil)
	owner := e.caller(1000)
	other := e.caller(1000)
	r := e.postJSON("/api/gen/text-to-video", owner.Key, map[string]any{"prompt": "mine"})
	id := r.body["taskId"].(string)

	tests := []struct {
		name   string
		id     string
		key    string
		lookup bool
	}{
		{"malformed", "nope", owner.Key, false},
		{"wrong prefix", "vid_1700000000000_abcdefghij", owner.Key, false},
		{"short suffix", "gen_1700000000000_abc", owner.Key, false},
		{"upper case", "gen_1700000000000_ABCDEFGHIJ", owner.Key, false},
		{"unknown", "gen_1700000000000_abcdefghij", owner.Key, true},
		{"another account's", id, other.Key, true},
	}
	for _, tt := range tests {
		for _, ep := range []string{"status", "download"} {
			t.Run(ep+"/"+tt.name, func(t *testing.T) {
				_, before := e.faults.counts()
				r := e.get("/api/gen/"+ep+"/"+tt.id, tt.key)
				wantError(t, r, 404, "TASK_NOT_FOUND")
				if _, after := e.faults.counts(); (after > before) != tt.lookup {
					t.Errorf("store read the task: %v, want %v", after > before, tt.lookup)
				}
			})
		}
	}
	// The owner sees it, so the 404 above was about the account.
	if r := e.get("/api/gen/status/"+id, owner.Key); r.status != 200 {
		t.Errorf("owner's status: %d, want 200", r.status)
	}
}

func TestSigningDown(t *testing.T) {
	e := newEnv(t, nil)
	c := e.caller(10000)
	ids := tasksInEveryState(t, e, c.Key)
	e.Blobs.SetSignErr(fmt.Errorf("%s", secret))
	for _, ep := range []string{"status", "download"} {
		r := e.get("/api/gen/"+ep+"/"+ids["completed"], c.Key)
		wantError(t, r, 503, "SERVICE_UNAVAILABLE")
	}
	// A task without videos needs no signing.
	if r := e.get("/api/gen/status/"+ids["pending"], c.Key); r.status != 200 {
		t.Errorf("pending status while signing is down: %d, want 200", r.status)
	}
}

// TestEndpointHandlers serves single endpoints outside the router, as a
// per-endpoint Lambda does, under a path with a stage prefix.
func TestEndpointHandlers(t *testing.T) {
	e := newEnv(t, func(c *httpapitest.Config) { c.Webhooks = c.Store.(*faultStore).Store.(*sqlitestore.Store) })
	c := e.caller(1000)
	r := e.postJSON("/api/gen/text-to-video", c.Key, map[string]any{"prompt": "x"})
	id := r.body["taskId"].(string)

	endpoint := func(r httpapi.Endpoint) http.Handler { return httpapi.EndpointHandler(e.Service, httpapi.Config{}, r) }
	tests := []struct {
		handler http.Handler
		method  string
		path    string
		status  int
	}{
		{endpoint(httpapi.Status), "GET", "/prod/api/gen/status/" + id, 200},
		{endpoint(httpapi.Status), "GET", "/api/gen/status/" + id, 200},
		{endpoint(httpapi.Download), "GET", "/prod/api/gen/download/" + id, 400},
		{endpoint(httpapi.Status), "GET", "/prod/api/gen/status/nope", 404},
		{endpoint(httpapi.History), "GET", "/prod/api/gen/history", 200},
		{endpoint(httpapi.Models), "GET", "/prod/api/gen/models", 200},
		{endpoint(httpapi.Models), "POST", "/prod/api/gen/models", 405},
		{endpoint(httpapi.TextToVideo), "POST", "/prod/api/gen/text-to-video", 202},
		{endpoint(httpapi.ImageToVideo), "POST", "/prod/api/gen/image-to-video", 400},
		{endpoint(httpapi.FirstLastFrame), "GET", "/prod/api/gen/first-last-frame", 405},
		{endpoint(httpapi.Webhooks), "GET", "/prod/api/gen/webhooks", 200},
		{endpoint(httpapi.Webhooks), "DELETE", "/prod/api/gen/webhooks", 405},
	}
	for _, tt := range tests {
		req := httptest.NewRequest(tt.method, tt.path, nil)
		if tt.path == "/prod/api/gen/text-to-video" {
			req = httptest.NewRequest(tt.method, tt.path, stringsReader(`{"prompt":"x"}`))
			req.Header.Set("Content-Type", "application/json")
		}
		req.Header.Set("X-API-Key", c.Key)
		w := httptest.NewRecorder()
		tt.handler.ServeHTTP(w, req)
		if w.Code != tt.status {
			t.Errorf("%s %s: %d, want %d (%s)", tt.method, tt.path, w.Code, tt.status, w.Body)
		}
		if tt.status != 405 && w.Header().Get("X-RateLimit-Limit") == "" {
			t.Errorf("%s %s: no X-RateLimit-Limit", tt.method, tt.path)
		}
	}
}

// TestRouter serves a chosen set of endpoints behind one router, as the MCP
// Lambda calls them in-process: those answer, any other path is the
// router's 404.
func TestRouter(t *testing.T) {
	e := newEnv(t, nil)
	c := e.caller(1000)
	h := httpapi.Router(e.Service, httpapi.Config{}, httpapi.Status, httpapi.Models, httpapi.Credits)
	for _, tt := range []struct {
		method, path string
		status       int
		code         string
	}{
		{"GET", "/api/gen/models", 200, ""},
		{"GET", "/api/gen/credits", 200, ""},
		{"GET", "/api/gen/status/gen_1700000000000_abcdefghij", 404, "TASK_NOT_FOUND"},
		{"POST", "/api/gen/models", 405, "METHOD_NOT_ALLOWED"},
		{"GET", "/api/gen/history", 404, "NOT_FOUND"},
		{"POST", "/api/gen/text-to-video", 404, "NOT_FOUND"},
		{"GET", "/api/gen/../gen/models", 404, "NOT_FOUND"},
	} {
		req := httptest.NewRequest(tt.method, tt.path, nil)
		req.Header.Set("X-API-Key", c.Key)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		var body struct{ Error string }
		json.Unmarshal(w.Body.Bytes(), &body)
		if w.Code != tt.status || body.Error != tt.code {
			t.Errorf("%s %s: %d %q, want %d %q (%s)", tt.method, tt.path, w.Code, body.Error, tt.status, tt.code, w.Body)
		}
	}
}

func TestHead(t *testing.T) {
	e := newEnv(t, nil)
	c := e.caller(1000)
	r := e.do(http.MethodHead, "/api/gen/models", c.Key, "", nil)
	if r.status != 200 || len(r.raw) != 0 {
		t.Errorf("HEAD models: %d with %d body bytes, want 200 and none", r.status, len(r.raw))
	}
	if n, err := strconv.Atoi(r.header.Get("Content-Length")); err != nil || n == 0 {
		t.Errorf("HEAD Content-Length = %q, want the GET body's length", r.header.Get("Content-Length"))
	}
}
