package httpapi_test

import (
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/genvideo/gen/shared/catalog"
)

func TestHistory(t *testing.T) {
	e := newEnv(t, nil)
	c := e.caller(10000)
	other := e.caller(10000)
	ids := tasksInEveryState(t, e, c.Key) // created in this order, 1 s apart
	r := e.postForm("/api/gen/image-to-video", c.Key, file("image", "a.jpg", jpegData), field("prompt", "from a photo"))
	imageID := r.body["taskId"].(string)
	e.postJSON("/api/gen/text-to-video", other.Key, map[string]any{"prompt": "not yours"})

	newestFirst := []string{imageID, ids["failed"], ids["partial"], ids["completed"], ids["processing"], ids["pending"]}
	tests := []struct {
		query   string
		want    []string
		total   int64
		limit   int64
		skip    int64
		hasMore bool
	}{
		{"", newestFirst, 6, 20, 0, false},
		{"?limit=2", newestFirst[:2], 6, 2, 0, true},
		{"?limit=2&skip=4", newestFirst[4:], 6, 2, 4, false},
		{"?limit=2&skip=3", newestFirst[3:5], 6, 2, 3, true},
		{"?skip=6", nil, 6, 20, 6, false},
		{"?skip=100", nil, 6, 20, 100, false},
		{"?status=completed", []string{ids["partial"], ids["completed"]}, 2, 20, 0, false},
		{"?status=pending&limit=100", []string{imageID, ids["pending"]}, 2, 100, 0, false},
		{"?status=failed&limit=1", []string{ids["failed"]}, 1, 1, 0, false},
		{"?limit=1&status=processing&skip=1", nil, 1, 1, 1, false},
		{"?cachebust=1", newestFirst, 6, 20, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			r := e.get("/api/gen/history"+tt.query, c.Key)
			if r.status != 200 || r.body["success"] != true {
				t.Fatalf("status %d, want 200 (%s)", r.status, r.raw)
			}
			var got []string
			for _, v := range list(t, r.body, "videos") {
				got = append(got, v.(map[string]any)["taskId"].(string))
			}
			if strings.Join(got, ",") != strings.Join(tt.want, ",") {
				t.Errorf("videos = %v, want %v", got, tt.want)
			}
			p := obj(t, r.body, "pagination")
			if num(t, p, "total") != tt.total || num(t, p, "limit") != tt.limit || num(t, p, "skip") != tt.skip || p["hasMore"] != tt.hasMore {
				t.Errorf("pagination = %v, want total %d, limit %d, skip %d, hasMore %v", p, tt.total, tt.limit, tt.skip, tt.hasMore)
			}
		})
	}

	r = e.get("/api/gen/history", c.Key)
	items := map[string]map[string]any{}
	for _, v := range list(t, r.body, "videos") {
		m := v.(map[string]any)
		items[m["taskId"].(string)] = m
	}
	img := items[imageID]
	if img["type"] != "image-to-video" || img["hasImage"] != true || img["apiKey"] != c.KeyName || img["prompt"] != "from a photo" ||
		img["status"] != "pending" || img["model"] != catalog.DefaultModel || num(t, img, "creditsCost") != 190 || num(t, img, "videoCount") != 0 {
		t.Errorf("image task item = %v, want image-to-video, hasImage, apiKey %q, pending, 190 credits, 0 videos", img, c.KeyName)
	}
	if _, err := time.Parse("2006-01-02T15:04:05.000Z", img["createdAt"].(string)); err != nil {
		t.Errorf("createdAt %v: %v", img["createdAt"], err)
	}
	for _, k := range []string{"completedAt", "processingTime", "error", "creditsRefunded"} {
		if _, ok := img[k]; ok {
			t.Errorf("pending item has %s", k)
		}
	}
	done := items[ids["completed"]]
	if done["hasImage"] != false || num(t, done, "videoCount") != 2 || num(t, done, "processingTime") != 95 || done["completedAt"] == nil {
		t.Errorf("completed item = %v, want no image, 2 videos, processingTime 95, completedAt", done)
	}
	if _, ok := done["creditsRefunded"]; ok {
		t.Errorf("completed item has creditsRefunded %v", done["creditsRefunded"])
	}
	if part := items[ids["partial"]]; num(t, part, "videoCount") != 1 || num(t, part, "creditsRefunded") != 190 {
		t.Errorf("partial item = %v, want 1 video, 190 refunded", part)
	}
	failed := items[ids["failed"]]
	if e := obj(t, failed, "error"); e["code"] != "CONTENT_POLICY_VIOLATION" || num(t, failed, "creditsRefunded") != 190 || failed["completedAt"] == nil {
		t.Errorf("failed item = %v, want error CONTENT_POLICY_VIOLATION, 190 refunded, completedAt", failed)
	}
}

// TestHistoryCursor: following nextCursor walks the history once, newest
// first, with or without a status; hasMore and nextCursor agree, and the
// last page has no cursor. A cursor from a skip page works too.
func TestHistoryCursor(t *testing.T) {
	e := newEnv(t, nil)
	c := e.caller(10000)
	ids := tasksInEveryState(t, e, c.Key)
	newestFirst := []string{ids["failed"], ids["partial"], ids["completed"], ids["processing"], ids["pending"]}
	for _, tt := range []struct {
		query string
		want  []string
	}{
		{"limit=2", newestFirst},
		{"limit=1&status=completed", []string{ids["partial"], ids["completed"]}},
		{"limit=2&skip=1", newestFirst[1:]},
		{"limit=5", newestFirst},
	} {
		t.Run(tt.query, func(t *testing.T) {
			var got []string
			path := "/api/gen/history?" + tt.query
			for pages := 0; pages <= len(tt.want); pages++ {
				r := e.get(path, c.Key)
				if r.status != 200 {
					t.Fatalf("%s: status %d (%s)", path, r.status, r.raw)
				}
				for _, v := range list(t, r.body, "videos") {
					got = append(got, v.(map[string]any)["taskId"].(string))
				}
				p := obj(t, r.body, "pagination")
				next, _ := p["nextCursor"].(string)
				if (next != "") != (p["hasMore"] == true) {
					t.Errorf("%s: hasMore %v with nextCursor %q", path, p["hasMore"], next)
				}
				if next == "" {
					break
				}
				// Skip applies to the first page only: the cursor is
				// already past what it skipped.
				q := strings.Replace(tt.query, "&skip=1", "", 1)
				path = "/api/gen/history?" + q + "&cursor=" + next
			}
			if strings.Join(got, ",") != strings.Join(tt.want, ",") {
				t.Errorf("pages walk %v, want %v", got, tt.want)
			}
		})
	}
}

func TestHistoryRejected(t *testing.T) {
	e := newEnv(t, nil)
	c := e.caller(1000)
	tests := []struct {
		query, field, value string
	}{
		{"limit=0", "limit", "0"},
		{"limit=101", "limit", "101"},
		{"limit=-5", "limit", "-5"},
		{"limit=ten", "limit", "ten"},
		{"limit=", "limit", ""},
		{"limit=2.5", "limit", "2.5"},
		{"limit=99999999999999999999", "limit", "99999999999999999999"},
		{"limit=5&limit=6", "limit", "5"},
		{"skip=-1", "skip", "-1"},
		{"skip=x", "skip", "x"},
		{"status=done", "status", "done"},
		{"status=Completed", "status", "Completed"},
		{"status=", "status", ""},
		{"limit=10&skip=0&status=running", "status", "running"},
		{"cursor=", "cursor", ""},
		{"cursor=not*base64", "cursor", "not*base64"},
		{"cursor=" + base64.RawURLEncoding.EncodeToString([]byte("no-dot")), "cursor", base64.RawURLEncoding.EncodeToString([]byte("no-dot"))},
		{"cursor=" + base64.RawURLEncoding.EncodeToString([]byte("x.task")), "cursor", base64.RawURLEncoding.EncodeToString([]byte("x.task"))},
		{"cursor=" + base64.RawURLEncoding.EncodeToString([]byte("12.")), "cursor", base64.RawURLEncoding.EncodeToString([]byte("12."))},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			r := e.get("/api/gen/history?"+tt.query, c.Key)
			wantError(t, r, 400, "VALIDATION_ERROR")
			if r.body["field"] != tt.field || r.body["value"] != tt.value {
				t.Errorf("field, value = %v, %q; want %s, %q", r.body["field"], r.body["value"], tt.field, tt.value)
			}
		})
	}
}

func TestModels(t *testing.T) {
	e := newEnv(t, nil)
	c := e.caller(0)
	r := e.get("/api/gen/models", c.Key)
	if r.status != 200 || r.body["success"] != true || r.body["defaultModel"] != "gen-3.1-fast-generate-001" {
		t.Fatalf("models: %d %s", r.status, r.raw)
	}
	models := list(t, r.body, "models")
	all := catalog.All()
	if len(models) != len(all) {
		t.Fatalf("%d models, want %d", len(models), len(all))
	}
	for i, m := range all {
		got := models[i].(map[string]any)
		var caps []string
		for _, c := range got["capabilities"].([]any) {
			caps = append(caps, c.(string))
		}
		p := obj(t, got, "pricing")
		if got["modelId"] != m.ID || got["name"] != m.Name || got["description"] != m.Description ||
			strings.Join(caps, ",") != strings.Join(m.Capabilities, ",") ||
			num(t, p, "creditsPerVideo") != int64(m.CreditsPerVideo) || num(t, p, "creditsPerVideoNoAudio") != int64(m.CreditsPerVideoNoAudio) {
			t.Errorf("models[%d] = %v, want %+v", i, got, m)
		}
	}
}

// TestRequestLog checks the one log line per request: who and what, and
// never the key itself, whatever happened.
func TestRequestLog(t *testing.T) {
	e := newEnv(t, nil)
	c := e.caller(1000)
	e.get("/api/gen/models", c.Key)
	e.get("/api/gen/status/nope", c.Key)
	unknown := c.Key[:len(c.Key)-1] + "Q" // well-formed, unknown
	if unknown == c.Key {
		unknown = c.Key[:len(c.Key)-1] + "R"
	}
	e.get("/api/gen/models", unknown)
	e.faults.set("Tasks", func() error { panic("boom") })
	e.get("/api/gen/history", c.Key)
	e.do("GET", "/nowhere", c.Key, "", nil)

	lines := logLines(e.logs, "request")
	want := []struct {
		path, account, key string
		status             float64
	}{
		{"/api/gen/models", c.AccountID, c.KeyID, 200},
		{"/api/gen/status/nope", c.AccountID, c.KeyID, 404},
		{"/api/gen/models", "", "", 401},
		{"/api/gen/history", c.AccountID, c.KeyID, 500},
		{"/nowhere", "", "", 404},
	}
	if len(lines) != len(want) {
		t.Fatalf("%d request log lines, want %d:\n%s", len(lines), len(want), e.logs)
	}
	for i, w := range want {
		l := lines[i]
		if l["method"] != "GET" || l["path"] != w.path || l["status"] != w.status || l["account"] != w.account || l["key"] != w.key {
			t.Errorf("log line %d = %v, want GET %s %v account %q key %q", i, l, w.path, w.status, w.account, w.key)
		}
		if _, ok := l["duration"]; !ok {
			t.Errorf("log line %d has no duration", i)
		}
	}
	for _, k := range []string{c.Key, unknown} {
		if strings.Contains(e.logs.String(), k[len("gen_"):]) {
			t.Errorf("the log holds an API key:\n%s", e.logs)
		}
	}
	if !strings.Contains(e.logs.String(), "boom") {
		t.Error("the panic is not logged")
	}
}
