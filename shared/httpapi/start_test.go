package httpapi_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/genvideo/gen/shared/domain"
	"github.com/genvideo/gen/shared/params"
	"github.com/genvideo/gen/shared/task"
	"github.com/genvideo/gen/shared/testing/httpapitest"
)

// wantStarted checks the 202 of a start and returns the task id.
func wantStarted(t *testing.T, r response, cost, remaining int64) string {
	t.Helper()
	if r.status != http.StatusAccepted {
		t.Fatalf("status = %d, want 202 (body %s)", r.status, r.raw)
	}
	b := r.body
	id, _ := b["taskId"].(string)
	if !task.ValidID(id) {
		t.Fatalf("taskId = %q, not a task id", id)
	}
	want := map[string]any{
		"success":     true,
		"status":      "pending",
		"statusUrl":   "/api/gen/status/" + id,
		"downloadUrl": "/api/gen/download/" + id,
	}
	for k, v := range want {
		if b[k] != v {
			t.Errorf("%s = %v, want %v", k, b[k], v)
		}
	}
	if msg, _ := b["message"].(string); msg == "" {
		t.Error("message is empty")
	}
	if got := num(t, b, "creditsUsed"); got != cost {
		t.Errorf("creditsUsed = %d, want %d", got, cost)
	}
	if got := num(t, b, "remainingCredits"); got != remaining {
		t.Errorf("remainingCredits = %d, want %d", got, remaining)
	}
	if got := r.header.Get("Location"); got != "/api/gen/status/"+id {
		t.Errorf("Location = %q, want the status path", got)
	}
	return id
}

func TestTextToVideo(t *testing.T) {
	e := newEnv(t, func(c *httpapitest.Config) {
		c.GenerationTimeout = 7 * time.Minute
		c.Estimate = func(p params.Parameters) (time.Duration, time.Duration) {
			return time.Duration(p.SampleCount) * 45 * time.Second, time.Duration(p.SampleCount) * 90 * time.Second
		}
	})
	e.Clock.Advance(1234567 * time.Microsecond) // not a whole millisecond
	c := e.caller(2000)

	tests := []struct {
		name      string
		body      map[string]any
		cost      int64
		model     string
		wait      string
		wantParam params.Parameters
	}{
		{
			name:  "defaults",
			body:  map[string]any{"prompt": "  a cat on a skateboard  ", "seed": 42},
			cost:  190,
			model: "gen-3.1-fast-generate-001",
			wait:  "45-90 seconds",
			wantParam: params.Parameters{SampleCount: 1, DurationSeconds: 8, AspectRatio: "16:9", Resolution: "1080p",
				GenerateAudio: true, EnhancePrompt: true, Seed: new(int64(42)), PersonGeneration: "allow_adult"},
		},
		{
			name: "quality, two videos, no audio",
			body: map[string]any{"prompt": "waves", "model": "gen-3.1-generate-001", "sampleCount": 2,
				"generateAudio": false, "durationSeconds": 6, "aspectRatio": "9:16", "negativePrompt": "boats",
				"seed": 7, "personGeneration": "dont_allow", "enhancePrompt": false, "resolution": "720p"},
			cost:  500,
			model: "gen-3.1-generate-001",
			wait:  "90-180 seconds",
			wantParam: params.Parameters{SampleCount: 2, DurationSeconds: 6, AspectRatio: "9:16", Resolution: "720p",
				NegativePrompt: "boats", Seed: new(int64(7)), PersonGeneration: "dont_allow"},
		},
	}
	balance := int64(2000)
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := e.postJSON("/api/gen/text-to-video", c.Key, tt.body)
			balance -= tt.cost
			id := wantStarted(t, r, tt.cost, balance)
			if got := r.body["estimatedWaitTime"]; got != tt.wait {
				t.Errorf("estimatedWaitTime = %v, want %q", got, tt.wait)
			}
			for _, k := range []string{"imageInfo", "firstFrame", "lastFrame"} {
				if _, ok := r.body[k]; ok {
					t.Errorf("text-to-video answer has %s", k)
				}
			}

			got := e.task(id)
			created := e.Clock.Now().UTC().Truncate(time.Millisecond)
			if got.AccountID != c.AccountID || got.KeyName != c.KeyName || got.Type != "text-to-video" ||
				got.Model != tt.model || got.Prompt != tt.body["prompt"] || got.CreditsCost != int(tt.cost) ||
				got.Status != task.Pending || !got.CreatedAt.Equal(created) || !got.Deadline.Equal(created.Add(7*time.Minute)) ||
				len(got.Inputs) != 0 {
				t.Errorf("stored task = %+v, want account %s, key %q, model %s, prompt as sent, cost %d, pending, created %v, deadline +7m",
					got, c.AccountID, c.KeyName, tt.model, tt.cost, created)
			}
			if !reflect.DeepEqual(got.Params, tt.wantParam) {
				t.Errorf("stored params = %+v, want %+v", got.Params, tt.wantParam)
			}
			started := e.Executions.Started()
			if len(started) != i+1 || started[i].ID != id || started[i].Status != task.Pending {
				t.Errorf("starter got %d tasks (last %+v), want %d, the last %s pending", len(started), started[len(started)-1], i+1, id)
			}
			s := e.state(c.AccountID)
			last := s.Ledger[len(s.Ledger)-1]
			if s.Credits != balance || last.Kind != domain.EntryCharge || last.Amount != -tt.cost || last.TaskID != id {
				t.Errorf("balance %d, last ledger entry %+v; want %d after a charge of %d for %s", s.Credits, last, balance, tt.cost, id)
			}
		})
	}
}

func TestImageToVideo(t *testing.T) {
	e := newEnv(t, nil)
	c := e.caller(1000)
	// The declared type lies; the bytes decide.
	r := e.postForm("/api/gen/image-to-video", c.Key,
		field("prompt", "the cat jumps"),
		part{name: "image", filename: "cat photo.png", contentType: "image/gif", data: pngData},
		field("model", "gen-3.1-lite-generate-001"),
		field("generateAudio", "false"),
		field("sampleCount", "2"),
	)
	id := wantStarted(t, r, 70, 930)
	info := obj(t, r.body, "imageInfo")
	if info["originalName"] != "cat photo.png" || num(t, info, "size") != int64(len(pngData)) || info["mimeType"] != "image/png" {
		t.Errorf("imageInfo = %v, want cat photo.png, %d bytes, image/png", info, len(pngData))
	}
	key := "inputs/" + id + "/image.png"
	data, ct, ok := e.Blobs.Object(key)
	if !ok || !bytes.Equal(data, pngData) || ct != "image/png" {
		t.Errorf("blob %s: present %v, %d bytes, type %q; want the uploaded PNG", key, ok, len(data), ct)
	}
	got := e.task(id)
	want := []task.Input{{Role: "image", Key: key, OriginalName: "cat photo.png", Size: int64(len(pngData)), MimeType: "image/png"}}
	if len(got.Inputs) != 1 || got.Inputs[0] != want[0] || got.Type != "image-to-video" || got.Params.SampleCount != 2 {
		t.Errorf("stored task type %s, inputs %+v, sampleCount %d; want image-to-video, %+v, 2", got.Type, got.Inputs, got.Params.SampleCount, want)
	}
	if started := e.Executions.Started(); len(started) != 1 || len(started[0].Inputs) != 1 {
		t.Errorf("starter got %+v, want the task with its input", started)
	}
}

func TestFirstLastFrame(t *testing.T) {
	e := newEnv(t, nil)
	c := e.caller(1000)
	r := e.postForm("/api/gen/first-last-frame", c.Key,
		file("lastFrame", "end.png", pngData),
		field("prompt", "sunrise to sunset"),
		file("firstFrame", "start.jpg", jpegData),
		field("model", "gen-3.1-generate-001"),
	)
	id := wantStarted(t, r, 500, 500)
	if _, ok := r.body["imageInfo"]; ok {
		t.Error("first-last-frame answer has imageInfo; want firstFrame and lastFrame")
	}
	for _, w := range []struct {
		field, name, mime, key string
		size                   int
	}{
		{"firstFrame", "start.jpg", "image/jpeg", "inputs/" + id + "/firstFrame.jpg", len(jpegData)},
		{"lastFrame", "end.png", "image/png", "inputs/" + id + "/lastFrame.png", len(pngData)},
	} {
		info := obj(t, r.body, w.field)
		if info["originalName"] != w.name || num(t, info, "size") != int64(w.size) || info["mimeType"] != w.mime {
			t.Errorf("%s = %v, want %s, %d bytes, %s", w.field, info, w.name, w.size, w.mime)
		}
		if _, _, ok := e.Blobs.Object(w.key); !ok {
			t.Errorf("blob %s missing", w.key)
		}
	}
	if got := e.task(id); got.Type != "first-last-frame" || len(got.Inputs) != 2 {
		t.Errorf("stored task type %s with %d inputs, want first-last-frame with 2", got.Type, len(got.Inputs))
	}
}

// TestStartRejected sends start requests that must each be refused with
// the given error, and checks that none of them charged, created, started
// or stored anything.
func TestStartRejected(t *testing.T) {
	e := newEnv(t, nil)
	c := e.caller(1000)
	poor := e.caller(100)
	big := `{"prompt": "` + strings.Repeat("a", 70<<10) + `"}`
	manyFields := []part{field("prompt", "x")}
	for i := 0; i < 40; i++ {
		manyFields = append(manyFields, field("seed", "1"))
	}

	type jsonCase struct {
		name        string
		contentType string
		body        string
		status      int
		code        string
		field       string
		value       any
	}
	jsonCases := []jsonCase{
		{"no content type", "", `{"prompt":"x"}`, 400, "VALIDATION_ERROR", "", nil},
		{"text content type", "text/plain", `{"prompt":"x"}`, 400, "VALIDATION_ERROR", "", nil},
		// A form is a start with reference images as files (issue 37):
		// an empty one has no prompt.
		{"an empty form", "multipart/form-data; boundary=x", `--x--`, 400, "INVALID_PROMPT", "prompt", nil},
		{"not JSON", "application/json", `prompt=x`, 400, "VALIDATION_ERROR", "", nil},
		{"empty body", "application/json", ``, 400, "VALIDATION_ERROR", "", nil},
		{"body over 64 KiB", "application/json", big, 400, "VALIDATION_ERROR", "", nil},
		{"unknown field", "application/json", `{"prompt":"x","promt":"y"}`, 400, "VALIDATION_ERROR", "promt", nil},
		{"missing prompt", "application/json", `{"model":"gen-3.1-generate-001"}`, 400, "INVALID_PROMPT", "prompt", nil},
		{"blank prompt", "application/json", `{"prompt":"   "}`, 400, "INVALID_PROMPT", "prompt", nil},
		{"unknown model", "application/json", `{"prompt":"x","model":"gen-9"}`, 400, "INVALID_MODEL", "model", "gen-9"},
		{"too many samples", "application/json", `{"prompt":"x","sampleCount":3}`, 400, "VALIDATION_ERROR", "sampleCount", float64(3)},
		{"bad duration", "application/json; charset=utf-8", `{"prompt":"x","durationSeconds":5}`, 400, "VALIDATION_ERROR", "durationSeconds", float64(5)},
	}
	for _, tt := range jsonCases {
		t.Run("text-to-video/"+tt.name, func(t *testing.T) {
			before := e.state(c.AccountID)
			r := e.do(http.MethodPost, "/api/gen/text-to-video", c.Key, tt.contentType, strings.NewReader(tt.body))
			wantError(t, r, tt.status, tt.code)
			if got, _ := r.body["field"].(string); got != tt.field {
				t.Errorf("field = %q, want %q", got, tt.field)
			}
			if tt.value != nil && r.body["value"] != tt.value {
				t.Errorf("value = %#v, want %#v", r.body["value"], tt.value)
			}
			e.assertUnchanged(before, c.AccountID, tt.name)
		})
	}

	t.Run("text-to-video/insufficient credits", func(t *testing.T) {
		before := e.state(poor.AccountID)
		r := e.postJSON("/api/gen/text-to-video", poor.Key, map[string]any{"prompt": "x"})
		wantError(t, r, 402, "INSUFFICIENT_CREDITS")
		if num(t, r.body, "required") != 190 || num(t, r.body, "available") != 100 {
			t.Errorf("required/available = %v/%v, want 190/100", r.body["required"], r.body["available"])
		}
		e.assertUnchanged(before, poor.AccountID, "a start without credits")
	})

	type formCase struct {
		name   string
		path   string
		parts  []part
		status int
		code   string
		field  string
	}
	const i2v, flf = "/api/gen/image-to-video", "/api/gen/first-last-frame"
	formCases := []formCase{
		{"missing image", i2v, []part{field("prompt", "x")}, 400, "MISSING_IMAGE", "image"},
		{"empty image", i2v, []part{field("prompt", "x"), file("image", "a.png", nil)}, 400, "MISSING_IMAGE", "image"},
		{"gif named png", i2v, []part{field("prompt", "x"), part{name: "image", filename: "a.png", contentType: "image/png", data: gifData}}, 400, "INVALID_IMAGE_TYPE", "image"},
		{"text as image", i2v, []part{field("prompt", "x"), field("image", "hello")}, 400, "INVALID_IMAGE_TYPE", "image"},
		{"truncated png signature", i2v, []part{field("prompt", "x"), file("image", "a.png", pngData[:5])}, 400, "INVALID_IMAGE_TYPE", "image"},
		{"two images", i2v, []part{field("prompt", "x"), file("image", "a.png", pngData), file("image", "b.png", pngData)}, 400, "VALIDATION_ERROR", "image"},
		{"unexpected file", i2v, []part{field("prompt", "x"), file("image", "a.png", pngData), file("video", "v.mp4", pngData)}, 400, "VALIDATION_ERROR", "video"},
		{"frame on image-to-video", i2v, []part{field("prompt", "x"), file("image", "a.png", pngData), file("firstFrame", "f.png", pngData)}, 400, "VALIDATION_ERROR", "firstFrame"},
		{"field over 16 KiB", i2v, []part{file("image", "a.png", pngData), field("prompt", strings.Repeat("a", 17<<10))}, 400, "VALIDATION_ERROR", "prompt"},
		{"too many parts", i2v, append([]part{file("image", "a.png", pngData)}, manyFields...), 400, "VALIDATION_ERROR", ""},
		{"repeated field", i2v, []part{file("image", "a.png", pngData), field("prompt", "x"), field("prompt", "y")}, 400, "VALIDATION_ERROR", "prompt"},
		{"invalid parameter after the upload", i2v, []part{file("image", "a.png", pngData), field("prompt", "x"), field("sampleCount", "9")}, 400, "VALIDATION_ERROR", "sampleCount"},
		{"invalid prompt", i2v, []part{file("image", "a.png", pngData), field("prompt", "bell\a")}, 400, "INVALID_PROMPT", "prompt"},
		{"unknown form field", i2v, []part{file("image", "a.png", pngData), field("prompt", "x"), field("colour", "red")}, 400, "VALIDATION_ERROR", "colour"},
		{"lite has no first-last-frame", flf, []part{file("firstFrame", "a.png", pngData), file("lastFrame", "b.png", pngData), field("prompt", "x"), field("model", "gen-3.1-lite-generate-001")}, 400, "INVALID_MODEL", "model"},
		{"missing last frame", flf, []part{file("firstFrame", "a.png", pngData), field("prompt", "x")}, 400, "MISSING_IMAGE", "lastFrame"},
		{"missing first frame", flf, []part{field("prompt", "x"), file("lastFrame", "a.png", pngData)}, 400, "MISSING_IMAGE", "firstFrame"},
		{"bad last frame", flf, []part{file("firstFrame", "a.png", pngData), file("lastFrame", "b.jpg", gifData), field("prompt", "x")}, 400, "INVALID_IMAGE_TYPE", "lastFrame"},
		{"image on first-last-frame", flf, []part{file("firstFrame", "a.png", pngData), file("lastFrame", "b.png", pngData), file("image", "c.png", pngData), field("prompt", "x")}, 400, "VALIDATION_ERROR", "image"},
	}
	for _, tt := range formCases {
		t.Run(strings.TrimPrefix(tt.path, "/api/gen/")+"/"+tt.name, func(t *testing.T) {
			before := e.state(c.AccountID)
			r := e.postForm(tt.path, c.Key, tt.parts...)
			wantError(t, r, tt.status, tt.code)
			if got, _ := r.body["field"].(string); got != tt.field {
				t.Errorf("field = %q, want %q (message %v)", got, tt.field, r.body["message"])
			}
			e.assertUnchanged(before, c.AccountID, tt.name)
		})
	}

	rawCases := []struct {
		name, path, contentType, body string
	}{
		{"JSON to image-to-video", i2v, "application/json", `{"prompt":"x"}`},
		{"no boundary", i2v, "multipart/form-data", "--x\r\n"},
		{"no content type", flf, "", "--x\r\n"},
		{"truncated multipart", i2v, "multipart/form-data; boundary=xyz",
			"--xyz\r\nContent-Disposition: form-data; name=\"image\"; filename=\"a.png\"\r\n\r\n" + string(pngData)},
		{"garbage multipart", flf, "multipart/form-data; boundary=xyz", "this is not multipart at all"},
	}
	for _, tt := range rawCases {
		t.Run(strings.TrimPrefix(tt.path, "/api/gen/")+"/"+tt.name, func(t *testing.T) {
			before := e.state(c.AccountID)
			r := e.do(http.MethodPost, tt.path, c.Key, tt.contentType, strings.NewReader(tt.body))
			wantError(t, r, 400, "VALIDATION_ERROR")
			e.assertUnchanged(before, c.AccountID, tt.name)
		})
	}

	t.Run("image-to-video/insufficient credits", func(t *testing.T) {
		before := e.state(poor.AccountID)
		r := e.postForm(i2v, poor.Key, file("image", "a.png", pngData), field("prompt", "x"), field("model", "gen-3.1-generate-001"))
		wantError(t, r, 402, "INSUFFICIENT_CREDITS")
		if num(t, r.body, "required") != 500 || num(t, r.body, "available") != 100 {
			t.Errorf("required/available = %v/%v, want 500/100", r.body["required"], r.body["available"])
		}
		e.assertUnchanged(before, poor.AccountID, "an image start without credits")
	})
}

// TestStartLogsItsTask: a start's request line names the task it created
// (and its replay, the same task), so that the request, and on AWS its
// requestId, leads to the execution named after the task. A refused start
// names none.
func TestStartLogsItsTask(t *testing.T) {
	e := newEnv(t, nil)
	c := e.caller(10000)
	req, _ := http.NewRequest(http.MethodPost, e.Server.URL+"/api/gen/text-to-video",
		strings.NewReader(`{"prompt":"a kite"}`))
	req.Header.Set("X-API-Key", c.Key)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", "log-test")
	first := e.send(req.Clone(context.Background()))
	req.Body = io.NopCloser(strings.NewReader(`{"prompt":"a kite"}`))
	replay := e.send(req)
	refused := e.postJSON("/api/gen/text-to-video", c.Key, map[string]any{"prompt": ""})
	if first.status != http.StatusAccepted || replay.status != http.StatusAccepted || refused.status != http.StatusBadRequest {
		t.Fatalf("starts answered %d, %d, %d; want 202, 202 (replay), 400", first.status, replay.status, refused.status)
	}
	id := first.body["taskId"]
	var got []any
	for _, l := range logLines(e.logs, "request") {
		if l["path"] == "/api/gen/text-to-video" {
			got = append(got, l["task"])
		}
	}
	if want := []any{id, id, nil}; !reflect.DeepEqual(got, want) {
		t.Errorf("the starts' request lines name tasks %v, want %v", got, want)
	}
}
