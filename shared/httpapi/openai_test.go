package httpapi_test

import (
	"bytes"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/genvideo/gen/shared/catalog"
	"github.com/genvideo/gen/shared/domain"
	"github.com/genvideo/gen/shared/provider/capability"
	"github.com/genvideo/gen/shared/ratelimit"
	"github.com/genvideo/gen/shared/task"
	"github.com/genvideo/gen/shared/testing/httpapitest"
	"github.com/genvideo/gen/shared/testing/imagechecktest"
	"github.com/genvideo/gen/shared/testing/openapitest"
)

// bearer sends a request to the OpenAI-shaped API with the key as a
// bearer token (none when key is ""), as the OpenAI SDKs do.
func (e *env) bearer(method, path, key, contentType string, body io.Reader) response {
	e.t.Helper()
	req, err := http.NewRequest(method, e.Server.URL+path, body)
	if err != nil {
		e.t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	// Every answer is checked against the OpenAPI document.
	client := &http.Client{Transport: &openapitest.Transport{TB: e.t, Base: e.Server.Client().Transport},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := client.Do(req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	r := response{status: res.StatusCode, header: res.Header, raw: raw}
	if strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
		if err := json.Unmarshal(raw, &r.body); err != nil {
			e.t.Fatalf("%s %s: body %q is not JSON: %v", method, path, raw, err)
		}
	}
	return r
}

// wantOpenAIError checks an error in OpenAI's envelope.
func wantOpenAIError(t *testing.T, r response, status int, typ, param string) {
	t.Helper()
	if r.status != status {
		t.Fatalf("status = %d, want %d (body %s)", r.status, status, r.raw)
	}
	e, ok := r.body["error"].(map[string]any)
	if !ok {
		t.Fatalf("body %s has no error object", r.raw)
	}
	if e["type"] != typ {
		t.Errorf("error.type = %v, want %s (body %s)", e["type"], typ, r.raw)
	}
	if m, _ := e["message"].(string); m == "" {
		t.Errorf("error.message is empty: %s", r.raw)
	}
	if _, ok := e["code"]; !ok {
		t.Errorf("error has no code member: %s", r.raw)
	}
	got, _ := e["param"].(string)
	if got != param {
		t.Errorf("error.param = %v, want %q (body %s)", e["param"], param, r.raw)
	}
	if _, ok := r.body["success"]; ok {
		t.Errorf("an OpenAI-shaped error carries the contract's success field: %s", r.raw)
	}
}

func TestOpenAICreateAndRetrieve(t *testing.T) {
	e := newEnv(t, nil)
	c := e.caller(10000)
	tests := []struct {
		name    string
		body    func() (string, []byte)
		seconds string
		size    string
		kind    string
		cost    int64
	}{
		{"json with seconds as a number", func() (string, []byte) {
			return "application/json", []byte(`{"prompt":"a cat","seconds":4,"size":"720x1280"}`)
		}, "4", "720x1280", "text-to-video", 0},
		{"multipart text", func() (string, []byte) {
			return multipartBody(t, field("prompt", "a dog"), field("model", "gen-3.1-lite-generate-001"), field("seconds", "6"))
		}, "6", "1280x720", "text-to-video", 0},
		{"multipart image", func() (string, []byte) {
			return multipartBody(t, field("prompt", "move"), field("size", "1920x1080"), file("input_reference", "a.png", pngData))
		}, "8", "1920x1080", "image-to-video", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := e.state(c.AccountID).Credits
			ct, body := tt.body()
			r := e.bearer(http.MethodPost, "/openai/v1/videos", c.Key, ct, bytes.NewReader(body))
			if r.status != http.StatusOK {
				t.Fatalf("create = %d %s", r.status, r.raw)
			}
			for k, want := range map[string]any{"object": "video", "status": "queued", "seconds": tt.seconds, "size": tt.size, "progress": float64(0)} {
				if r.body[k] != want {
					t.Errorf("%s = %v, want %v (body %s)", k, r.body[k], want, r.raw)
				}
			}
			for _, k := range []string{"completed_at", "expires_at", "error"} {
				if v, ok := r.body[k]; !ok || v != nil {
					t.Errorf("%s = %v (present %v), want null", k, v, ok)
				}
			}
			id := r.body["id"].(string)
			tk := e.task(id)
			if tk.Type != tt.kind {
				t.Errorf("task type %s, want %s", tk.Type, tt.kind)
			}
			// The same task through the contract, with the same charge.
			s := e.get("/api/gen/status/"+id, c.Key)
			if s.status != http.StatusOK || int64(tk.CreditsCost) != before-e.state(c.AccountID).Credits {
				t.Errorf("contract status %d, cost %d, balance moved by %d", s.status, tk.CreditsCost, before-e.state(c.AccountID).Credits)
			}
			got := e.bearer(http.MethodGet, "/openai/v1/videos/"+id, c.Key, "", nil)
			if got.status != http.StatusOK || got.body["id"] != id || got.header.Get("Retry-After") == "" {
				t.Errorf("retrieve = %d %s (Retry-After %q)", got.status, got.raw, got.header.Get("Retry-After"))
			}
		})
	}
}

func TestOpenAIErrors(t *testing.T) {
	e := newEnv(t, nil)
	c := e.caller(10000)
	poor := e.caller(10)
	other := e.caller(10000)
	ids := tasksInEveryState(t, e, c.Key)
	ct, img := multipartBody(t, field("prompt", "x"), file("input_reference", "a.gif", gifData))
	tests := []struct {
		name        string
		method      string
		path        string
		key         string
		contentType string
		body        string
		status      int
		typ         string
		param       string
	}{
		{"no key", "GET", "/openai/v1/videos", "", "", "", 401, "authentication_error", ""},
		{"wrong key", "GET", "/openai/v1/videos", "gen_nope", "", "", 401, "authentication_error", ""},
		{"seconds not offered", "POST", "/openai/v1/videos", c.Key, "application/json", `{"prompt":"x","seconds":"12"}`, 400, "invalid_request_error", "seconds"},
		{"size not offered", "POST", "/openai/v1/videos", c.Key, "application/json", `{"prompt":"x","size":"1792x1024"}`, 400, "invalid_request_error", "size"},
		{"size the model cannot make", "POST", "/openai/v1/videos", c.Key, "application/json", `{"prompt":"x","model":"gen-3.1-lite-generate-001","size":"1080x1920"}`, 400, "invalid_request_error", "size"},
		{"unknown model", "POST", "/openai/v1/videos", c.Key, "application/json", `{"prompt":"x","model":"sora-2"}`, 400, "invalid_request_error", "model"},
		{"no prompt", "POST", "/openai/v1/videos", c.Key, "application/json", `{"seconds":"4"}`, 400, "invalid_request_error", "prompt"},
		{"unknown field", "POST", "/openai/v1/videos", c.Key, "application/json", `{"prompt":"x","n":2}`, 400, "invalid_request_error", "n"},
		{"not json", "POST", "/openai/v1/videos", c.Key, "application/json", `{"prompt":`, 400, "invalid_request_error", ""},
		{"two prompts", "POST", "/openai/v1/videos", c.Key, "application/json", `{"prompt":"a","prompt":"b"}`, 400, "invalid_request_error", "prompt"},
		{"seconds not a string", "POST", "/openai/v1/videos", c.Key, "application/json", `{"prompt":"x","seconds":true}`, 400, "invalid_request_error", "seconds"},
		{"image url", "POST", "/openai/v1/videos", c.Key, "application/json", `{"prompt":"x","input_reference":{"image_url":"https://x"}}`, 400, "invalid_request_error", "input_reference"},
		{"not an image", "POST", "/openai/v1/videos", c.Key, ct, string(img), 400, "invalid_request_error", "input_reference"},
		{"no credits", "POST", "/openai/v1/videos", poor.Key, "application/json", `{"prompt":"x"}`, 402, "insufficient_quota", ""},
		{"another account's video", "GET", "/openai/v1/videos/" + ids["completed"], other.Key, "", "", 404, "not_found_error", ""},
		{"unknown video", "GET", "/openai/v1/videos/gen_1_nothing", c.Key, "", "", 404, "not_found_error", ""},
		{"content not ready", "GET", "/openai/v1/videos/" + ids["pending"] + "/content", c.Key, "", "", 400, "invalid_request_error", ""},
		{"thumbnail of a video stored without a poster", "GET", "/openai/v1/videos/" + ids["completed"] + "/content?variant=thumbnail", c.Key, "", "", 404, "not_found_error", ""},
		{"two variants", "GET", "/openai/v1/videos/" + ids["completed"] + "/content?variant=thumbnail&variant=video", c.Key, "", "", 400, "invalid_request_error", "variant"},
		{"spritesheet", "GET", "/openai/v1/videos/" + ids["completed"] + "/content?variant=spritesheet", c.Key, "", "", 400, "invalid_request_error", "variant"},
		{"delete in flight", "DELETE", "/openai/v1/videos/" + ids["processing"], c.Key, "", "", 409, "conflict_error", ""},
		{"after another account's video", "GET", "/openai/v1/videos?after=" + ids["completed"], other.Key, "", "", 400, "invalid_request_error", "after"},
		{"unknown order", "GET", "/openai/v1/videos?order=oldest", c.Key, "", "", 400, "invalid_request_error", "order"},
		{"two orders", "GET", "/openai/v1/videos?order=asc&order=desc", c.Key, "", "", 400, "invalid_request_error", "order"},
		{"limit", "GET", "/openai/v1/videos?limit=0", c.Key, "", "", 400, "invalid_request_error", "limit"},
		{"unknown path", "GET", "/openai/v1/images", c.Key, "", "", 404, "not_found_error", ""},
		{"method", "PUT", "/openai/v1/videos", c.Key, "", "", 405, "invalid_request_error", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snap := e.state(c.AccountID)
			var body io.Reader
			if tt.body != "" {
				body = strings.NewReader(tt.body)
			}
			r := e.bearer(tt.method, tt.path, tt.key, tt.contentType, body)
			wantOpenAIError(t, r, tt.status, tt.typ, tt.param)
			e.assertUnchanged(snap, c.AccountID, tt.name)
		})
	}

	// The contract's paths keep X-API-Key alone, and the OpenAI paths
	// take the bearer token alone.
	wantError(t, e.bearer(http.MethodGet, "/api/gen/history", c.Key, "", nil), http.StatusUnauthorized, "UNAUTHORIZED")
	wantOpenAIError(t, e.get("/openai/v1/videos", c.Key), http.StatusUnauthorized, "authentication_error", "")
}

func TestOpenAIRateLimit(t *testing.T) {
	e := newEnv(t, nil)
	limits := roomy
	limits.RequestsPerMinute = 3
	c := httpapitest.NewCaller(t, e.faults.Store, 10000, ratelimit.Enterprise, limits)
	for i := 0; ; i++ {
		r := e.bearer(http.MethodGet, "/openai/v1/videos", c.Key, "", nil)
		if r.header.Get("X-RateLimit-Limit") == "" {
			t.Fatalf("answer %d has no X-RateLimit-Limit: %v", i, r.header)
		}
		if r.status == http.StatusTooManyRequests {
			wantOpenAIError(t, r, http.StatusTooManyRequests, "rate_limit_error", "")
			if r.header.Get("Retry-After") == "" {
				t.Errorf("429 without Retry-After")
			}
			return
		}
		if i > limits.RequestsPerMinute {
			t.Fatalf("no 429 after %d requests", i)
		}
	}
}

func TestOpenAIListContentDelete(t *testing.T) {
	e := newEnv(t, nil)
	c := e.caller(10000)
	ids := tasksInEveryState(t, e, c.Key)

	// Pages of two in each order (none given is desc, newest first),
	// followed by after=last_id; first_id and last_id are the page's ends.
	newest := []string{ids["failed"], ids["partial"], ids["completed"], ids["processing"], ids["pending"]}
	oldest := slices.Clone(newest)
	slices.Reverse(oldest)
	for _, tt := range []struct {
		order string
		want  []string
	}{{"", newest}, {"desc", newest}, {"asc", oldest}} {
		var seen []string
		after := ""
		for page := 0; page <= len(tt.want); page++ {
			path := "/openai/v1/videos?limit=2"
			if tt.order != "" {
				path += "&order=" + tt.order
			}
			if after != "" {
				path += "&after=" + after
			}
			r := e.bearer(http.MethodGet, path, c.Key, "", nil)
			if r.status != http.StatusOK || r.body["object"] != "list" {
				t.Fatalf("list = %d %s", r.status, r.raw)
			}
			var data []string
			for _, v := range list(t, r.body, "data") {
				data = append(data, v.(map[string]any)["id"].(string))
			}
			if len(data) == 0 || r.body["first_id"] != data[0] || r.body["last_id"] != data[len(data)-1] {
				t.Errorf("order %q: page %v has first_id %v, last_id %v", tt.order, data, r.body["first_id"], r.body["last_id"])
			}
			seen = append(seen, data...)
			if more := len(seen) < len(tt.want); r.body["has_more"] != more {
				t.Errorf("order %q: page %v has has_more %v, want %v", tt.order, data, r.body["has_more"], more)
			}
			if r.body["has_more"] != true {
				break
			}
			after = data[len(data)-1]
		}
		if !slices.Equal(seen, tt.want) {
			t.Errorf("order %q: listed %v, want %v", tt.order, seen, tt.want)
		}
	}

	v := e.bearer(http.MethodGet, "/openai/v1/videos/"+ids["failed"], c.Key, "", nil)
	if v.body["status"] != "failed" || obj(t, v.body, "error")["code"] != "CONTENT_POLICY_VIOLATION" || v.body["completed_at"] == nil {
		t.Errorf("failed video = %s", v.raw)
	}
	v = e.bearer(http.MethodGet, "/openai/v1/videos/"+ids["completed"], c.Key, "", nil)
	if v.body["status"] != "completed" || v.body["progress"] != float64(100) || v.body["expires_at"] == nil {
		t.Errorf("completed video = %s", v.raw)
	}

	res := e.bearer(http.MethodGet, "/openai/v1/videos/"+ids["completed"]+"/content?variant=video", c.Key, "", nil)
	if res.status != http.StatusFound || res.header.Get("Location") == "" {
		t.Errorf("content = %d, Location %q; want a redirect to the signed link", res.status, res.header.Get("Location"))
	}

	d := e.bearer(http.MethodDelete, "/openai/v1/videos/"+ids["completed"], c.Key, "", nil)
	if d.status != http.StatusOK || d.body["object"] != "video.deleted" || d.body["deleted"] != true || d.body["id"] != ids["completed"] {
		t.Errorf("delete = %d %s", d.status, d.raw)
	}
	wantError(t, e.get("/api/gen/status/"+ids["completed"], c.Key), http.StatusNotFound, "TASK_NOT_FOUND")
}

// An Idempotency-Key works on the OpenAI path as on the contract's: the
// same body replays the first video (one task, one charge), another body
// is a 409.
func TestOpenAIIdempotency(t *testing.T) {
	e := newEnv(t, nil)
	c := e.caller(10000)
	send := func(body string) response {
		req, _ := http.NewRequest(http.MethodPost, e.Server.URL+"/openai/v1/videos", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+c.Key)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", "k-1")
		return e.send(req)
	}
	first := send(`{"prompt":"once","seconds":"4"}`)
	if first.status != http.StatusOK {
		t.Fatalf("create = %d %s", first.status, first.raw)
	}
	after := e.state(c.AccountID)
	again := send(`{"seconds":"4","prompt":"once"}`)
	if again.status != http.StatusOK || again.body["id"] != first.body["id"] || again.header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("replay = %d %s (replayed %q), want the first video", again.status, again.raw, again.header.Get("Idempotent-Replayed"))
	}
	wantOpenAIError(t, send(`{"prompt":"twice","seconds":"4"}`), http.StatusConflict, "conflict_error", "Idempotency-Key")
	e.assertUnchanged(after, c.AccountID, "a replay and a conflict")
}

// An input_reference over the limit is a 413 naming it, charged nothing.
func TestOpenAIImageTooLarge(t *testing.T) {
	e := newEnv(t, func(cfg *httpapitest.Config) { cfg.HTTP.MaxImageBytes = 1024 })
	c := e.caller(10000)
	snap := e.state(c.AccountID)
	ct, body := multipartBody(t, field("prompt", "x"), file("input_reference", "big.png", imagechecktest.Uncompressed(640, 360, 0)))
	wantOpenAIError(t, e.bearer(http.MethodPost, "/openai/v1/videos", c.Key, ct, bytes.NewReader(body)),
		http.StatusRequestEntityTooLarge, "invalid_request_error", "input_reference")
	e.assertUnchanged(snap, c.AccountID, "a refused image")
}

// TestOpenAIExtensionAnd4K (issue 37): where OpenAI's shape has a place
// for what the contract offers beyond one clip, the facade starts it by
// the contract's one start and charges what the contract's quote of the
// same start says: a size of 4K UHD is resolution 4k, and videos.extend
// (POST /videos/extensions, video[id]) is the contract's extension of a
// completed video, answered as a video object whose seconds is the
// stitched whole.
func TestOpenAIExtensionAnd4K(t *testing.T) {
	const quality = "gen-3.1-generate-001"
	// The built-in generator makes neither: a table whose Quality model
	// renders 4K at 8 seconds and extends its own 720p videos, as Veo 3.1's
	// route does (shared/provider/veo/veomodels).
	e := newEnv(t, func(cfg *httpapitest.Config) {
		tbl := capability.Builtin()
		l := tbl.Models[quality]
		l.Modes = append(slices.Clone(l.Modes), catalog.VideoExtension)
		l.Resolutions = maps.Clone(l.Resolutions)
		l.Resolutions[8] = append(slices.Clone(l.Resolutions[8]), catalog.Resolution4K)
		l.MaxExtendSeconds, l.ExtendResolutions = 30, []string{"720p"}
		l.ModeDurations = map[string][]int{catalog.VideoExtension: {8}}
		l.ModeResolutions = map[string][]string{catalog.VideoExtension: {"720p"}}
		l.PersonGeneration = maps.Clone(l.PersonGeneration)
		l.PersonGeneration[catalog.VideoExtension] = []string{"allow_adult"}
		tbl.Models[quality] = l
		cfg.Capabilities = tbl
	})
	c := e.caller(100000)
	ids := tasksInEveryState(t, e, c.Key)
	src := completedOn(t, e, c.Key, `{"prompt":"the source","model":"`+quality+`","resolution":"720p"}`, "builtin")
	tests := []struct {
		name              string
		path              string
		body              func() (string, []byte)
		quote, quoteBody  string
		kind, res, aspect string
		seconds, size     string
	}{
		{"4k landscape", "/openai/v1/videos", func() (string, []byte) {
			return "application/json", []byte(`{"prompt":"a city","model":"` + quality + `","size":"3840x2160"}`)
		}, "/api/gen/quote/text-to-video", `{"prompt":"a city","model":"` + quality + `","resolution":"4k"}`,
			"text-to-video", "4k", "16:9", "8", "3840x2160"},
		{"4k portrait, multipart", "/openai/v1/videos", func() (string, []byte) {
			return multipartBody(t, field("prompt", "a tower"), field("model", quality), field("size", "2160x3840"), field("seconds", "8"))
		}, "/api/gen/quote/text-to-video", `{"prompt":"a tower","model":"` + quality + `","resolution":"4k","aspectRatio":"9:16"}`,
			"text-to-video", "4k", "9:16", "8", "2160x3840"},
		{"extension, multipart as the SDKs send it", "/openai/v1/videos/extensions", func() (string, []byte) {
			return multipartBody(t, field("prompt", "and then"), field("seconds", "8"), field("video[id]", src.ID))
		}, "/api/gen/quote/extend?taskId=" + src.ID, `{"prompt":"and then"}`,
			"video-extension", "720p", src.Params.AspectRatio, "15", "1280x720"},
		{"extension, JSON", "/openai/v1/videos/extensions", func() (string, []byte) {
			return "application/json", []byte(`{"prompt":"and later","video":{"id":"` + src.ID + `"}}`)
		}, "/api/gen/quote/extend?taskId=" + src.ID, `{"prompt":"and later","durationSeconds":8}`,
			"video-extension", "720p", src.Params.AspectRatio, "15", "1280x720"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := e.postJSON(tt.quote, c.Key, tt.quoteBody)
			if q.status != http.StatusOK {
				t.Fatalf("quote = %d %s", q.status, q.raw)
			}
			before := e.state(c.AccountID).Credits
			ct, body := tt.body()
			r := e.bearer(http.MethodPost, tt.path, c.Key, ct, bytes.NewReader(body))
			if r.status != http.StatusOK {
				t.Fatalf("POST %s = %d %s", tt.path, r.status, r.raw)
			}
			if r.body["object"] != "video" || r.body["status"] != "queued" || r.body["seconds"] != tt.seconds || r.body["size"] != tt.size {
				t.Errorf("video %s, want a queued video of %s s at %s", r.raw, tt.seconds, tt.size)
			}
			tk := e.task(r.body["id"].(string))
			if tk.Type != tt.kind || tk.Params.Resolution != tt.res || tk.Params.AspectRatio != tt.aspect {
				t.Errorf("task %s at %s %s, want %s at %s %s", tk.Type, tk.Params.Resolution, tk.Params.AspectRatio, tt.kind, tt.res, tt.aspect)
			}
			if tt.kind == "video-extension" {
				if in, ok := tk.Input("video"); !ok || in.Task != src.ID {
					t.Errorf("the extension's input %+v, want the video of %s", in, src.ID)
				}
			}
			charged := before - e.state(c.AccountID).Credits
			if charged != int64(tk.CreditsCost) || float64(charged) != q.body["creditsRequired"] {
				t.Errorf("charged %d (task cost %d), the contract's quote says %v", charged, tk.CreditsCost, q.body["creditsRequired"])
			}
		})
	}

	// What the route cannot honour, or OpenAI's extension does not take,
	// is refused in OpenAI's shape naming its field, charged nothing.
	other := e.caller(100000)
	ext := "/openai/v1/videos/extensions"
	form := func(parts ...part) (string, string) {
		ct, b := multipartBody(t, parts...)
		return ct, string(b)
	}
	uploadCT, upload := form(field("prompt", "x"), file("video", "v.mp4", []byte("mp4")))
	twiceCT, twice := form(field("prompt", "x"), field("video[id]", src.ID), field("video[id]", src.ID))
	otherFileCT, otherFile := form(field("prompt", "x"), field("video[id]", src.ID), file("input_reference", "a.png", pngData))
	refused := []struct {
		name, path, key, ct, body string
		status                    int
		typ, param                string
	}{
		{"4k on a model without it", "/openai/v1/videos", c.Key, "application/json", `{"prompt":"x","model":"gen-3.1-lite-generate-001","size":"3840x2160"}`, 400, "invalid_request_error", "size"},
		{"4k at 4 seconds", "/openai/v1/videos", c.Key, "application/json", `{"prompt":"x","model":"` + quality + `","size":"3840x2160","seconds":"4"}`, 400, "invalid_request_error", "size"},
		{"a size of no known shape", "/openai/v1/videos", c.Key, "application/json", `{"prompt":"x","size":"4096x2160"}`, 400, "invalid_request_error", "size"},
		{"extension without video", ext, c.Key, "application/json", `{"prompt":"x"}`, 400, "invalid_request_error", "video"},
		{"extension of a failed video", ext, c.Key, "application/json", `{"prompt":"x","video":{"id":"` + ids["failed"] + `"}}`, 400, "invalid_request_error", "video"},
		{"extension of a video in flight", ext, c.Key, "application/json", `{"prompt":"x","video":{"id":"` + ids["processing"] + `"}}`, 400, "invalid_request_error", "video"},
		{"extension of another account's video", ext, other.Key, "application/json", `{"prompt":"x","video":{"id":"` + src.ID + `"}}`, 404, "not_found_error", ""},
		{"extension of an unknown video", ext, c.Key, "application/json", `{"prompt":"x","video":{"id":"gen_1_nothing"}}`, 404, "not_found_error", ""},
		{"extension with a model", ext, c.Key, "application/json", `{"prompt":"x","model":"` + quality + `","video":{"id":"` + src.ID + `"}}`, 400, "invalid_request_error", "model"},
		{"extension with a size", ext, c.Key, "application/json", `{"prompt":"x","size":"1280x720","video":{"id":"` + src.ID + `"}}`, 400, "invalid_request_error", "size"},
		{"extension of a length the contract does not extend by", ext, c.Key, "application/json", `{"prompt":"x","seconds":"4","video":{"id":"` + src.ID + `"}}`, 400, "invalid_request_error", "seconds"},
		{"extension without a prompt", ext, c.Key, "application/json", `{"video":{"id":"` + src.ID + `"}}`, 400, "invalid_request_error", "prompt"},
		{"extension of an uploaded video", ext, c.Key, uploadCT, upload, 400, "invalid_request_error", "video"},
		{"video given twice", ext, c.Key, twiceCT, twice, 400, "invalid_request_error", "video[id]"},
		{"a file on an extension", ext, c.Key, otherFileCT, otherFile, 400, "invalid_request_error", "input_reference"},
		{"extension of a video its route does not extend", ext, c.Key, "application/json", `{"prompt":"x","video":{"id":"` + ids["completed"] + `"}}`, 400, "invalid_request_error", "video"},
		{"a video's id on a create", "/openai/v1/videos", c.Key, "application/json", `{"prompt":"x","video":{"id":"` + src.ID + `"}}`, 400, "invalid_request_error", "video[id]"},
		{"method", ext, c.Key, "", "", 405, "invalid_request_error", ""},
		// Remix and edits change a video, they do not continue it: no
		// route of this API (clients.md).
		{"remix", "/openai/v1/videos/" + src.ID + "/remix", c.Key, "application/json", `{"prompt":"x"}`, 404, "not_found_error", ""},
		{"edits", "/openai/v1/videos/edits", c.Key, "application/json", `{"prompt":"x","video":{"id":"` + src.ID + `"}}`, 405, "invalid_request_error", ""},
	}
	for _, tt := range refused {
		t.Run(tt.name, func(t *testing.T) {
			snap, otherSnap := e.state(c.AccountID), e.state(other.AccountID)
			method := http.MethodPost
			var body io.Reader
			if tt.body != "" {
				body = strings.NewReader(tt.body)
			} else {
				method = http.MethodGet
			}
			wantOpenAIError(t, e.bearer(method, tt.path, tt.key, tt.ct, body), tt.status, tt.typ, tt.param)
			e.assertUnchanged(snap, c.AccountID, tt.name)
			e.assertUnchanged(otherSnap, other.AccountID, tt.name)
		})
	}
}

// completedOn starts body on text-to-video and completes its task as
// made on route, with its video stored.
func completedOn(t *testing.T, e *env, key, body, route string) task.Task {
	t.Helper()
	r := e.postJSON("/api/gen/text-to-video", key, body)
	if r.status != http.StatusAccepted {
		t.Fatalf("start = %d %s", r.status, r.raw)
	}
	id := r.body["taskId"].(string)
	ctx := t.Context()
	if _, err := e.faults.Store.MarkProcessing(ctx, id, e.Clock.Now()); err != nil {
		t.Fatal(err)
	}
	v := task.Video{Key: "videos/" + id + "/0.mp4", MimeType: "video/mp4", Size: 3}
	if _, err := e.Blobs.Put(ctx, v.Key, strings.NewReader("mp4"), v.MimeType); err != nil {
		t.Fatal(err)
	}
	if _, err := e.faults.Store.Complete(ctx, id, domain.Completion{Videos: []task.Video{v}, Billing: task.Billing{Route: route}}, e.Clock.Now()); err != nil {
		t.Fatal(err)
	}
	return e.task(id)
}
