package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/genvideo/gen/shared/apikey"
	"github.com/genvideo/gen/shared/domain"
	"github.com/genvideo/gen/shared/store"
	"github.com/genvideo/gen/shared/task"
	"github.com/genvideo/gen/shared/testing/httpapitest"
	"github.com/genvideo/gen/shared/testing/imagechecktest"
)

// startRequest is one start request that can be sent any number of
// times, byte for byte.
type startRequest struct {
	path        string
	contentType string
	body        []byte
}

func jsonStart(body string) startRequest {
	return startRequest{"/api/gen/text-to-video", "application/json", []byte(body)}
}

func formStart(t *testing.T, path string, parts ...part) startRequest {
	ct, body := multipartBody(t, parts...)
	return startRequest{path, ct, body}
}

// sendIdem sends sr with the API key and, unless idemKey is "", the
// Idempotency-Key.
func (e *env) sendIdem(sr startRequest, key, idemKey string) response {
	e.t.Helper()
	req, err := http.NewRequest(http.MethodPost, e.Server.URL+sr.path, bytes.NewReader(sr.body))
	if err != nil {
		e.t.Fatalf("new request: %v", err)
	}
	req.Header.Set("X-API-Key", key)
	req.Header.Set("Content-Type", sr.contentType)
	if idemKey != "" {
		req.Header.Set("Idempotency-Key", idemKey)
	}
	return e.send(req)
}

// wantReplay checks that r replays first: the same status and body, byte
// for byte, the same Location, and the replay marker.
func wantReplay(t *testing.T, r, first response) {
	t.Helper()
	if r.status != first.status || !bytes.Equal(r.raw, first.raw) {
		t.Fatalf("replay = %d %s, want the first answer %d %s", r.status, r.raw, first.status, first.raw)
	}
	if got, want := r.header.Get("Location"), first.header.Get("Location"); got != want {
		t.Errorf("replay Location = %q, want %q", got, want)
	}
	if got := r.header.Get("Idempotent-Replayed"); got != "true" {
		t.Errorf("replay Idempotent-Replayed = %q, want true", got)
	}
	if got := first.header.Get("Idempotent-Replayed"); got != "" {
		t.Errorf("first answer Idempotent-Replayed = %q, want none", got)
	}
}

// charges counts the charge entries of a state's ledger.
func charges(s state) int {
	n := 0
	for _, l := range s.Ledger {
		if l.Kind == domain.EntryCharge {
			n++
		}
	}
	return n
}

// idemStarts are one request per start endpoint, and what each costs.
func idemStarts(t *testing.T) []struct {
	name string
	req  startRequest
	cost int64
} {
	return []struct {
		name string
		req  startRequest
		cost int64
	}{
		{"text-to-video", jsonStart(`{"prompt":"a heron","seed":7}`), 190},
		{"image-to-video", formStart(t, "/api/gen/image-to-video", field("prompt", "a heron"), file("image", "h.png", pngData)), 190},
		{"first-last-frame", formStart(t, "/api/gen/first-last-frame", field("prompt", "a heron"),
			file("firstFrame", "a.png", pngData), file("lastFrame", "b.jpg", jpegData)), 190},
	}
}

// TestIdempotentReplay: the same key and request answer the first 202
// again, byte for byte, with no second task, charge, start or upload;
// even once the account could not pay for another start, and once the
// task has moved on.
func TestIdempotentReplay(t *testing.T) {
	for _, tt := range idemStarts(t) {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel() // each on a server of its own
			e := newEnv(t, nil)
			c := e.caller(2 * tt.cost)
			first := e.sendIdem(tt.req, c.Key, "order-42")
			id := wantStarted(t, first, tt.cost, tt.cost)
			// Spend the rest: a fresh start would now be a 402.
			wantStarted(t, e.sendIdem(tt.req, c.Key, ""), tt.cost, 0)
			before := e.state(c.AccountID)

			wantReplay(t, e.sendIdem(tt.req, c.Key, "order-42"), first)
			e.assertUnchanged(before, c.AccountID, "a replay")

			st := e.faults.Store
			if _, err := st.MarkProcessing(context.Background(), id, e.Clock.Now()); err != nil {
				t.Fatal(err)
			}
			if _, err := st.Complete(context.Background(), id, domain.Completion{Videos: []task.Video{{Key: "videos/" + id + "/0.mp4"}}}, e.Clock.Now()); err != nil {
				t.Fatal(err)
			}
			before = e.state(c.AccountID)
			wantReplay(t, e.sendIdem(tt.req, c.Key, "order-42"), first)
			e.assertUnchanged(before, c.AccountID, "a replay of a completed task")
		})
	}
}

// TestIdempotentReplayCanonicalJSON: the order of the fields, white space
// and null fields do not make another request.
func TestIdempotentReplayCanonicalJSON(t *testing.T) {
	e := newEnv(t, nil)
	c := e.caller(1000)
	first := e.sendIdem(jsonStart(`{"prompt":"a heron","seed":7,"sampleCount":1}`), c.Key, "k")
	wantStarted(t, first, 190, 810)
	for _, body := range []string{
		`{"sampleCount":1,"seed":7,"prompt":"a heron"}`,
		"{\n  \"prompt\" : \"a heron\",\n  \"seed\": 7,\n  \"sampleCount\": 1\n}",
		`{"prompt":"a \u0068eron","seed":7,"sampleCount":1,"negativePrompt":null}`,
	} {
		wantReplay(t, e.sendIdem(jsonStart(body), c.Key, "k"), first)
	}
	if s := e.state(c.AccountID); len(s.Tasks) != 1 || charges(s) != 1 {
		t.Errorf("after replays: %d tasks, %d charges; want 1, 1", len(s.Tasks), charges(s))
	}
}

// TestIdempotencyConflict: the key reused with another request is a 409
// that changes nothing; the conflicting request's uploads are deleted.
func TestIdempotencyConflict(t *testing.T) {
	const i2v = "/api/gen/image-to-video"
	otherPNG := imagechecktest.Uncompressed(65, 36, 0)
	tests := []struct {
		name string
		req  startRequest
	}{
		{"another prompt", formStart(t, i2v, field("prompt", "a crane"), file("image", "h.png", pngData))},
		{"another parameter", formStart(t, i2v, field("prompt", "a heron"), field("seed", "1"), file("image", "h.png", pngData))},
		{"another image, same name and size", formStart(t, i2v, field("prompt", "a heron"), file("image", "h.png", imagechecktest.Uncompressed(64, 36, 1)))},
		{"a longer image", formStart(t, i2v, field("prompt", "a heron"), file("image", "h.png", otherPNG))},
		{"another file name", formStart(t, i2v, field("prompt", "a heron"), file("image", "g.png", pngData))},
		{"another endpoint", formStart(t, "/api/gen/first-last-frame", field("prompt", "a heron"), file("firstFrame", "h.png", pngData), file("lastFrame", "h.png", pngData))},
		{"text-to-video", jsonStart(`{"prompt":"a heron"}`)},
	}
	e := newEnv(t, nil)
	c := e.caller(1000)
	first := e.sendIdem(formStart(t, i2v, field("prompt", "a heron"), file("image", "h.png", pngData)), c.Key, "k")
	id := wantStarted(t, first, 190, 810)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := e.state(c.AccountID)
			r := e.sendIdem(tt.req, c.Key, "k")
			wantError(t, r, http.StatusConflict, "IDEMPOTENCY_CONFLICT")
			if r.body["field"] != "Idempotency-Key" {
				t.Errorf("field = %v, want Idempotency-Key", r.body["field"])
			}
			if d := obj(t, r.body, "details"); d["taskId"] != id {
				t.Errorf("details.taskId = %v, want %s", d["taskId"], id)
			}
			e.assertUnchanged(before, c.AccountID, "a conflicting request")
		})
	}
}

// TestIdempotencyKeyHeader: a key that is not 1 to 255 printable ASCII
// characters, or is sent twice, is a 400 that changes nothing.
func TestIdempotencyKeyHeader(t *testing.T) {
	e := newEnv(t, nil)
	long := strings.Repeat("k", 255)
	tests := []struct {
		name   string
		keys   []string
		status int
	}{
		{"empty", []string{""}, 400},
		{"256 characters", []string{long + "k"}, 400},
		{"non-ASCII", []string{"clé"}, 400},
		{"control character", []string{"a\x01b"}, 400},
		{"DEL", []string{"a\x7fb"}, 400},
		{"sent twice", []string{"a", "a"}, 400},
		{"255 characters", []string{long}, 202},
		{"printable punctuation and spaces", []string{`a b~!"#$%&'()*+,-./:;<=>?@[\]^_{|}` + "`"}, 202},
	}
	for _, sr := range idemStarts(t) {
		// An account per endpoint: the accepted keys are reused.
		c := e.caller(10000)
		for _, tt := range tests {
			t.Run(sr.name+"/"+tt.name, func(t *testing.T) {
				before := e.state(c.AccountID)
				// Served directly: an HTTP client refuses to send some of
				// these header values.
				req := httptest.NewRequest(http.MethodPost, sr.req.path, bytes.NewReader(sr.req.body))
				req.Header.Set("X-API-Key", c.Key)
				req.Header.Set("Content-Type", sr.req.contentType)
				req.Header["Idempotency-Key"] = tt.keys
				rec := httptest.NewRecorder()
				e.API.Handler().ServeHTTP(rec, req)
				r := e.decode(rec)
				if tt.status == 202 {
					wantStarted(t, r, sr.cost, before.Credits-sr.cost)
					return
				}
				wantError(t, r, tt.status, "VALIDATION_ERROR")
				if r.body["field"] != "Idempotency-Key" {
					t.Errorf("field = %v, want Idempotency-Key", r.body["field"])
				}
				e.assertUnchanged(before, c.AccountID, tt.name)
			})
		}
	}
}

// decode reads a recorded answer.
func (e *env) decode(rec *httptest.ResponseRecorder) response {
	e.t.Helper()
	res := rec.Result()
	r := response{status: res.StatusCode, header: res.Header, raw: rec.Body.Bytes()}
	if err := json.Unmarshal(r.raw, &r.body); err != nil {
		e.t.Fatalf("body %q is not a JSON object: %v", r.raw, err)
	}
	return r
}

// TestIdempotencyScope: keys belong to the account. Another account's use
// of a key is unrelated; another API key of the same account replays.
func TestIdempotencyScope(t *testing.T) {
	e := newEnv(t, nil)
	a := e.caller(1000)
	b := e.caller(1000)
	req := jsonStart(`{"prompt":"a heron"}`)
	first := e.sendIdem(req, a.Key, "shared")
	idA := wantStarted(t, first, 190, 810)
	idB := wantStarted(t, e.sendIdem(req, b.Key, "shared"), 190, 810)
	if idA == idB {
		t.Fatalf("two accounts got the same task %s", idA)
	}

	second := apikey.New()
	k := store.Key{ID: apikey.NewID(), Hash: apikey.Hash(second), AccountID: a.AccountID, Name: "second key",
		Tier: "enterprise", Limits: roomy, CreatedAt: httpapitest.Epoch}
	if err := e.faults.Store.CreateKey(context.Background(), k); err != nil {
		t.Fatal(err)
	}
	before := e.state(a.AccountID)
	wantReplay(t, e.sendIdem(req, second, "shared"), first)
	e.assertUnchanged(before, a.AccountID, "a replay through another key of the account")
	r := e.sendIdem(jsonStart(`{"prompt":"a crane"}`), second, "shared")
	wantError(t, r, http.StatusConflict, "IDEMPOTENCY_CONFLICT")
}

// TestIdempotencyExpiry: a key is remembered for 24 hours, then it is
// free for a new start.
func TestIdempotencyExpiry(t *testing.T) {
	e := newEnv(t, nil)
	c := e.caller(1000)
	req := jsonStart(`{"prompt":"a heron"}`)
	first := e.sendIdem(req, c.Key, "k")
	id := wantStarted(t, first, 190, 810)
	e.Clock.Advance(24*time.Hour - time.Millisecond)
	wantReplay(t, e.sendIdem(req, c.Key, "k"), first)
	wantError(t, e.sendIdem(jsonStart(`{"prompt":"other"}`), c.Key, "k"), http.StatusConflict, "IDEMPOTENCY_CONFLICT")

	e.Clock.Advance(time.Millisecond)
	later := e.sendIdem(jsonStart(`{"prompt":"other"}`), c.Key, "k")
	if id2 := wantStarted(t, later, 190, 620); id2 == id {
		t.Errorf("the start after 24 hours replayed %s, want a new task", id)
	}
	wantReplay(t, e.sendIdem(jsonStart(`{"prompt":"other"}`), c.Key, "k"), later)
}

// TestIdempotencyRefusedStartsKeepNoRecord: a start refused (400, 402,
// 429) does not use its key: once the cause is gone, the same key starts.
func TestIdempotencyRefusedStartsKeepNoRecord(t *testing.T) {
	e := newEnv(t, nil)
	c := httpapitest.NewCaller(t, e.faults.Store, 100, "enterprise", store.KeyLimits{MaxInFlight: 1})
	req := jsonStart(`{"prompt":"a heron"}`)

	wantError(t, e.sendIdem(jsonStart(`{"prompt":""}`), c.Key, "k"), 400, "INVALID_PROMPT")
	wantError(t, e.sendIdem(req, c.Key, "k"), 402, "INSUFFICIENT_CREDITS")
	if _, err := e.faults.Store.Grant(context.Background(), c.AccountID, 1000, "top-up", e.Clock.Now()); err != nil {
		t.Fatal(err)
	}
	busy := wantStarted(t, e.sendIdem(req, c.Key, ""), 190, 910)
	if r := e.sendIdem(req, c.Key, "k"); r.status != 429 {
		t.Fatalf("start at the in-flight limit = %d %s, want 429", r.status, r.raw)
	}
	if _, err := e.faults.Store.Fail(context.Background(), busy, task.Failure{Code: task.FailGeneration, Message: "x"}, e.Clock.Now()); err != nil {
		t.Fatal(err)
	}
	first := e.sendIdem(req, c.Key, "k")
	wantStarted(t, first, 190, 910)
	wantReplay(t, e.sendIdem(req, c.Key, "k"), first)
}

// TestIdempotencyWithoutKey: without the header two identical requests
// are two starts.
func TestIdempotencyWithoutKey(t *testing.T) {
	e := newEnv(t, nil)
	c := e.caller(1000)
	req := jsonStart(`{"prompt":"a heron","seed":1}`)
	a := wantStarted(t, e.sendIdem(req, c.Key, ""), 190, 810)
	b := wantStarted(t, e.sendIdem(req, c.Key, ""), 190, 620)
	if a == b {
		t.Errorf("two starts without a key gave one task %s", a)
	}
}

// TestIdempotencyAfterAbandonedStart: a first start whose workflow could
// not start answered 503 and was refunded; a retry with its key starts
// afresh, and later retries replay that retry.
func TestIdempotencyAfterAbandonedStart(t *testing.T) {
	for _, tt := range idemStarts(t) {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel() // each on a server of its own
			e := newEnv(t, nil)
			c := e.caller(1000)
			e.Executions.SetErr(errors.New("workflow service down"))
			wantError(t, e.sendIdem(tt.req, c.Key, "k"), 503, "SERVICE_UNAVAILABLE")
			e.Executions.SetErr(nil)

			retry := e.sendIdem(tt.req, c.Key, "k")
			id := wantStarted(t, retry, tt.cost, 1000-tt.cost)
			wantReplay(t, e.sendIdem(tt.req, c.Key, "k"), retry)
			s := e.state(c.AccountID)
			if len(s.Tasks) != 2 || charges(s) != 2 || s.Credits != 1000-tt.cost || s.Started != 1 || e.Executions.Started()[0].ID != id {
				t.Errorf("after an abandoned start and its retry: tasks %v, %d charges, %d credits, %d started; want the failed and the new task, 2 charges (one refunded), %d credits, the new task started",
					s.Tasks, charges(s), s.Credits, s.Started, 1000-tt.cost)
			}
			for _, b := range s.Blobs {
				if !strings.HasPrefix(b, "inputs/"+id+"/") {
					t.Errorf("blob %s left behind; want only the inputs of %s", b, id)
				}
			}
		})
	}
}

// TestIdempotencyConcurrentDuplicates: thirty identical requests race:
// every one answers the same task, which was created, charged, started
// and uploaded once.
func TestIdempotencyConcurrentDuplicates(t *testing.T) {
	for _, tt := range idemStarts(t) {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel() // each on a server of its own
			e := newEnv(t, nil)
			c := e.caller(1000)
			const n = 30
			rs := make([]response, n)
			var wg sync.WaitGroup
			start := make(chan struct{})
			for i := range n {
				wg.Go(func() {
					<-start
					rs[i] = e.sendIdem(tt.req, c.Key, "dup")
				})
			}
			close(start)
			wg.Wait()

			ids := map[string]int{}
			replays := 0
			for i, r := range rs {
				if r.status != http.StatusAccepted {
					t.Fatalf("request %d = %d %s, want 202", i, r.status, r.raw)
				}
				ids[r.body["taskId"].(string)]++
				if r.header.Get("Idempotent-Replayed") == "true" {
					replays++
				}
				if got := num(t, r.body, "remainingCredits"); got != 1000-tt.cost {
					t.Errorf("request %d: remainingCredits = %d, want %d", i, got, 1000-tt.cost)
				}
			}
			if len(ids) != 1 || replays != n-1 {
				t.Errorf("task ids %v, %d replays; want one task, %d replays", ids, replays, n-1)
			}
			s := e.state(c.AccountID)
			if len(s.Tasks) != 1 || charges(s) != 1 || s.Credits != 1000-tt.cost || s.Started != 1 {
				t.Errorf("after %d identical starts: %d tasks, %d charges, %d credits, %d started; want 1, 1, %d, 1",
					n, len(s.Tasks), charges(s), s.Credits, s.Started, 1000-tt.cost)
			}
			var id string
			for k := range ids {
				id = k
			}
			if want := len(e.task(id).Inputs); len(s.Blobs) != want {
				t.Errorf("blobs %v, want only the %d inputs of %s", s.Blobs, want, id)
			}
		})
	}
}
