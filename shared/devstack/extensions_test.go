package devstack

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"image/color"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/genvideo/gen/shared/settings"
	"github.com/genvideo/gen/shared/store"
	"github.com/genvideo/gen/shared/testing/storetest"
	"github.com/genvideo/gen/shared/testing/veotest"
)

// quoted asks the quote of a start (path, the quote endpoint's) and
// makes it (start), and checks that the start is charged what the quote
// said; it answers the start.
func quoted(t *testing.T, e *veoEnv, key, quote, start, body string) response {
	t.Helper()
	q := e.postJSON(quote, key, body)
	if q.status != http.StatusOK || q.body["allowed"] != true {
		t.Fatalf("POST %s = %d: %s", quote, q.status, q.raw)
	}
	r := e.postJSON(start, key, body)
	if r.status != http.StatusAccepted {
		t.Fatalf("POST %s = %d: %s", start, r.status, r.raw)
	}
	if got, want := num(r.body["creditsUsed"]), num(q.body["creditsRequired"]); got != want {
		t.Errorf("POST %s charged %d credits, its quote said %d", start, got, want)
	}
	return r
}

// refusedUncharged checks that r is a 400 naming field and that the
// account's balance is still balance.
func refusedUncharged(t *testing.T, e *veoEnv, r response, field, account string, balance int64) {
	t.Helper()
	if r.status != http.StatusBadRequest || r.body["field"] != field {
		t.Errorf("answered %d %s, want a 400 naming %s", r.status, r.raw, field)
	}
	if b := e.balance(account); b != balance {
		t.Errorf("balance %d after a refused start, want %d: nothing charged", b, balance)
	}
}

// lastSubmit is the instance and parameters of the fake's last submit
// whose prompt is prompt.
func lastSubmit(t *testing.T, e *veoEnv, prompt string) (map[string]any, map[string]any) {
	t.Helper()
	subs := e.fake.Submits()
	for i := len(subs) - 1; i >= 0; i-- {
		var in, p map[string]any
		json.Unmarshal(subs[i].Instance, &in)
		json.Unmarshal(subs[i].Parameters, &p)
		if in["prompt"] == prompt && subs[i].Status == http.StatusOK {
			return in, p
		}
	}
	t.Fatalf("no accepted submit of %q", prompt)
	return nil, nil
}

// TestVeoReferenceImagesExtensionAnd4K (issue 37): on each Google API,
// against the strict fake, a start with reference images (as uploads
// and as a form's files), a 4K start and an extension of a completed
// task's video each complete with the request Google documents, charged
// what their quotes said; the combinations the route cannot honour are
// refused before any charge, as are extensions of another account's
// task (404), of a failed one and of a deleted one (400).
func TestVeoReferenceImagesExtensionAnd4K(t *testing.T) {
	const quality = "gen-3.1-generate-001"
	for _, api := range veoAPIs {
		t.Run(api, func(t *testing.T) {
			t.Parallel()
			e := startVeo(t, api, veotest.Config{Delay: time.Second}, "", nil)
			e.fake.When("this one fails", veotest.Outcome{ErrorCode: 13})
			k := e.key(100000, store.KeyLimits{})
			red := testImage(t, 640, 360, color.RGBA{200, 40, 40, 255}, color.RGBA{20, 20, 220, 255})
			green := testImage(t, 640, 360, color.RGBA{10, 200, 10, 255}, color.RGBA{250, 250, 250, 255})

			// Reference images, as direct uploads.
			up1, s1 := e.createUpload(k.APIKey, "image/png", red)
			up2, s2 := e.createUpload(k.APIKey, "image/png", green)
			if s1/100 != 2 || s2/100 != 2 {
				t.Fatalf("uploads answered %d, %d", s1, s2)
			}
			refsBody := `{"prompt":"the fox in the dress","model":"` + quality + `","resolution":"720p","referenceImages":["` + up1 + `","` + up2 + `"]}`
			r := quoted(t, e, k.APIKey, "/api/gen/quote/text-to-video", "/api/gen/text-to-video", refsBody)
			if refs, _ := r.body["referenceImages"].([]any); len(refs) != 2 {
				t.Errorf("the 202 describes %d reference images, want 2: %s", len(refs), r.raw)
			}
			refsTask := str(r.body["taskId"])
			// And as a form's file.
			r = e.postForm("/api/gen/text-to-video", k.APIKey,
				map[string]string{"prompt": "the fox alone", "model": quality, "resolution": "720p"},
				map[string][]byte{"referenceImages": red})
			if r.status != http.StatusAccepted {
				t.Fatalf("a form with a reference image = %d: %s", r.status, r.raw)
			}
			formTask := str(r.body["taskId"])

			// 4K, at its own price.
			r = quoted(t, e, k.APIKey, "/api/gen/quote/text-to-video", "/api/gen/text-to-video",
				`{"prompt":"a city at 4k","model":"`+quality+`","resolution":"4k"}`)
			if num(r.body["creditsUsed"]) != 750 {
				t.Errorf("a 4K start charged %v credits, want 750", r.body["creditsUsed"])
			}
			fourK := str(r.body["taskId"])
			failing := str(e.postJSON("/api/gen/text-to-video", k.APIKey,
				`{"prompt":"this one fails","model":"`+quality+`","resolution":"720p"}`).body["taskId"])

			for _, id := range []string{refsTask, formTask, fourK} {
				if done := e.wait(k.APIKey, id); done.body["status"] != "completed" {
					t.Fatalf("task %s ended %s", id, done.raw)
				}
			}
			if done := e.wait(k.APIKey, failing); done.body["status"] != "failed" {
				t.Fatalf("the failing task ended %s", done.raw)
			}

			// What reached Google: the asset images with their bytes, at
			// 8 s and allow_adult; 4k as asked.
			in, p := lastSubmit(t, e, "the fox in the dress")
			refs, _ := in["referenceImages"].([]any)
			if len(refs) != 2 || in["image"] != nil || in["lastFrame"] != nil {
				t.Fatalf("instance %v, want two reference images and no frame", in)
			}
			for i, want := range [][]byte{red, green} {
				ref := refs[i].(map[string]any)
				img := ref["image"].(map[string]any)
				if ref["referenceType"] != "asset" || img["bytesBase64Encoded"] != base64.StdEncoding.EncodeToString(want) || img["mimeType"] != "image/png" {
					t.Errorf("referenceImages[%d] is not the %d-th upload as an asset image", i, i+1)
				}
			}
			if p["durationSeconds"] != float64(8) || p["personGeneration"] != "allow_adult" {
				t.Errorf("parameters %v, want 8 s and allow_adult", p)
			}
			if in, _ := lastSubmit(t, e, "the fox alone"); len(in["referenceImages"].([]any)) != 1 {
				t.Errorf("the form's reference image did not reach the provider: %v", in)
			}
			if _, p := lastSubmit(t, e, "a city at 4k"); p["resolution"] != "4k" || p["durationSeconds"] != float64(8) {
				t.Errorf("4K parameters %v, want 4k at 8 s", p)
			}

			// Combinations the route cannot honour: nothing charged.
			balance := e.balance(k.AccountID)
			up3, _ := e.createUpload(k.APIKey, "image/png", red)
			refusedUncharged(t, e, e.postJSON("/api/gen/text-to-video", k.APIKey,
				`{"prompt":"x","model":"`+quality+`","durationSeconds":6,"referenceImages":["`+up3+`"]}`), "durationSeconds", k.AccountID, balance)
			refusedUncharged(t, e, e.postForm("/api/gen/first-last-frame", k.APIKey,
				map[string]string{"prompt": "x", "referenceImages": up3}, map[string][]byte{"firstFrame": red, "lastFrame": green}),
				"referenceImages", k.AccountID, balance)
			refusedUncharged(t, e, e.postJSON("/api/gen/text-to-video", k.APIKey,
				`{"prompt":"x","model":"gen-3.1-lite-generate-001","resolution":"4k"}`), "resolution", k.AccountID, balance)
			refusedUncharged(t, e, e.postJSON("/api/gen/text-to-video", k.APIKey,
				`{"prompt":"x","model":"`+quality+`","resolution":"4k","durationSeconds":4}`), "resolution", k.AccountID, balance)
			if api == settings.GeneratorGemini {
				refusedUncharged(t, e, e.postJSON("/api/gen/text-to-video", k.APIKey,
					`{"prompt":"x","model":"`+quality+`","aspectRatio":"9:16","referenceImages":["`+up3+`"]}`), "aspectRatio", k.AccountID, balance)
				// The Gemini API extends 720p videos only.
				refusedUncharged(t, e, e.postJSON("/api/gen/extend/"+fourK, k.APIKey, `{"prompt":"x"}`), "taskId", k.AccountID, balance)
			}

			// The extension of the reference images' video.
			r = quoted(t, e, k.APIKey, "/api/gen/quote/extend?taskId="+refsTask, "/api/gen/extend/"+refsTask,
				`{"prompt":"and then she dances"}`)
			if r.body["extendsTaskId"] != refsTask {
				t.Errorf("the 202 names %v as the source, want %s", r.body["extendsTaskId"], refsTask)
			}
			ext := str(r.body["taskId"])
			done := e.wait(k.APIKey, ext)
			if done.body["status"] != "completed" || done.body["type"] != "video-extension" {
				t.Fatalf("the extension ended %s", done.raw)
			}
			in, p = lastSubmit(t, e, "and then she dances")
			video, _ := in["video"].(map[string]any)
			src := storedTask(t, e.env, refsTask)
			switch api {
			case settings.GeneratorGemini:
				// The file Google answered, as the SDK passes it.
				if video["uri"] == nil || video["uri"] != src.Videos[0].ProviderURI || len(video) != 1 {
					t.Errorf("video %v, want the uri %q Google answered", video, src.Videos[0].ProviderURI)
				}
			default:
				// No storage URI: the video's bytes.
				if video["bytesBase64Encoded"] != base64.StdEncoding.EncodeToString(veotest.Video) || video["mimeType"] != "video/mp4" {
					t.Errorf("video %.80v, want the source's bytes", video)
				}
			}
			if p["resolution"] != "720p" || p["durationSeconds"] != float64(8) || p["aspectRatio"] != src.Params.AspectRatio {
				t.Errorf("extension parameters %v, want 720p, 8 s and the source's aspect ratio", p)
			}
			if st := storedTask(t, e.env, ext); st.Billing.Route != src.Billing.Route || st.VideoSeconds() != src.VideoSeconds()+7 {
				t.Errorf("the extension ran on %q (the source on %q), %d s long", st.Billing.Route, src.Billing.Route, st.VideoSeconds())
			}
			if h := e.do(http.MethodGet, "/api/gen/history?limit=20", k.APIKey, "", nil); !strings.Contains(string(h.raw), ext) {
				t.Errorf("the extension is not in the history: %s", h.raw)
			}

			// Refused extensions, charged nothing.
			balance = e.balance(k.AccountID)
			other := e.key(1000, store.KeyLimits{})
			if r := e.postJSON("/api/gen/extend/"+refsTask, other.APIKey, `{"prompt":"x"}`); r.status != http.StatusNotFound || r.body["error"] != "TASK_NOT_FOUND" {
				t.Errorf("extension of another account's task = %d %s, want 404", r.status, r.raw)
			}
			if b := e.balance(other.AccountID); b != 1000 {
				t.Errorf("the other account was charged: %d", b)
			}
			refusedUncharged(t, e, e.postJSON("/api/gen/extend/"+failing, k.APIKey, `{"prompt":"x"}`), "taskId", k.AccountID, balance)
			if d := e.do(http.MethodDelete, "/api/gen/tasks/"+formTask, k.APIKey, "", nil); d.status/100 != 2 {
				t.Fatalf("delete = %d: %s", d.status, d.raw)
			}
			refusedUncharged(t, e, e.postJSON("/api/gen/extend/"+formTask, k.APIKey, `{"prompt":"x"}`), "taskId", k.AccountID, balance)
			refusedUncharged(t, e, e.postJSON("/api/gen/extend/"+refsTask, k.APIKey, `{"prompt":"x","aspectRatio":"9:16"}`), "aspectRatio", k.AccountID, balance)

			for _, id := range []string{refsTask, fourK, ext} {
				if n := e.fake.Accepted(storedTask(t, e.env, id).Prompt); n != 1 {
					t.Errorf("task %s was submitted %d times, want once", id, n)
				}
			}
			if !bytes.Contains([]byte(e.do(http.MethodGet, "/api/gen/models", k.APIKey, "", nil).raw), []byte(`"video-extension"`)) {
				t.Error("GET /api/gen/models shows no video-extension mode")
			}
			storetest.CheckInvariants(t, e.stack.Store, k.AccountID)
		})
	}
}

// TestVeoExtensionBodiesMeanOneThing is TestEveryJSONBodyMeansOneThing
// for the extension and its quote, which need a completed task whose
// route extends it: each body that could mean two things is a 400 naming
// the field, before the task is even looked up, and changes nothing;
// the valid body is then accepted.
func TestVeoExtensionBodiesMeanOneThing(t *testing.T) {
	e := startVeo(t, settings.GeneratorGemini, veotest.Config{}, "", nil)
	k := e.key(100000, store.KeyLimits{})
	r := e.postJSON("/api/gen/text-to-video", k.APIKey, `{"prompt":"a source","model":"gen-3.1-generate-001","resolution":"720p"}`)
	if r.status != http.StatusAccepted {
		t.Fatalf("text-to-video = %d: %s", r.status, r.raw)
	}
	src := str(r.body["taskId"])
	if done := e.wait(k.APIKey, src); done.body["status"] != "completed" {
		t.Fatalf("the source ended %s", done.raw)
	}
	tried := 0
	for _, op := range jsonOps(t) {
		if !extensionOps[op.id] {
			continue
		}
		tried++
		t.Run(op.id, func(t *testing.T) {
			op.path = strings.Replace(op.path, "{taskId}", src, 1)
			if op.id == "quoteExtendVideo" {
				op.path += "?taskId=" + src
			}
			before := e.accountState(k)
			base := strings.ReplaceAll(jsonBodies[op.id], "{taskId}", src)
			for _, v := range variants(t, base, op.nullAbsent) {
				wantRefused(t, op, v, e.sendJSON(op, k.APIKey, v.body))
			}
			// Not even another account's task is looked up.
			foreign := op
			foreign.path = strings.Replace(op.path, src, "gen_1767225600000_notyours01", -1)
			unknown := `{"prompt":"x","zz":1}`
			if op.id == "openaiExtendVideo" {
				unknown = `{"prompt":"x","video":{"id":"gen_1767225600000_notyours01"},"zz":1}`
			}
			wantRefused(t, foreign, variant{"an unknown field", unknown, "zz"}, e.sendJSON(foreign, k.APIKey, unknown))
			if after := e.accountState(k); after != before {
				t.Errorf("the refused bodies changed the account: %+v, then %+v", before, after)
			}
			if r := e.sendJSON(op, k.APIKey, base); r.status/100 != 2 {
				t.Errorf("the valid body %s answered %d %s", base, r.status, r.raw)
			}
		})
	}
	if tried != len(extensionOps) {
		t.Errorf("the document has %d of the %d extension operations", tried, len(extensionOps))
	}
}
