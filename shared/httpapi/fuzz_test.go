package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/genvideo/gen/shared/domain"
	"github.com/genvideo/gen/shared/httpapi"
	"github.com/genvideo/gen/shared/ratelimit"
	"github.com/genvideo/gen/shared/service"
	"github.com/genvideo/gen/shared/store"
	"github.com/genvideo/gen/shared/store/sqlitestore"
	"github.com/genvideo/gen/shared/task"
	"github.com/genvideo/gen/shared/testing/httpapitest"
	"github.com/genvideo/gen/shared/testing/logtest"
)

// The fuzz targets send hostile requests through the whole handler (key,
// rate limit, validation, upload, store) on a real SQLite store. Their
// seed corpora (testdata/fuzz/<FuzzName>/ and the f.Add calls) run with
// every `go test`; `go test -fuzz=FuzzTextToVideo ./shared/httpapi`
// explores further. The properties, for every input:
//   - no panic and no 5xx;
//   - an error is one of the contract's codes for its status, in the
//     contract's body;
//   - a refused request changes nothing: balance, ledger, tasks, workflow
//     starts and stored blobs are as they were;
//   - an accepted start changed exactly one task and one charge, and
//     stored exactly its own inputs.

// contractCodes are the error codes each status may carry.
var contractCodes = map[int][]string{
	400: {"VALIDATION_ERROR", "INVALID_MODEL", "INVALID_PROMPT", "MISSING_IMAGE", "INVALID_IMAGE_TYPE", "VIDEO_NOT_READY"},
	401: {"UNAUTHORIZED"},
	402: {"INSUFFICIENT_CREDITS"},
	404: {"TASK_NOT_FOUND", "NOT_FOUND"},
	405: {"METHOD_NOT_ALLOWED"},
	409: {"IDEMPOTENCY_CONFLICT"},
	413: {"FILE_TOO_LARGE"},
	429: {"RATE_LIMIT_EXCEEDED", "DAILY_LIMIT_EXCEEDED", "CONCURRENCY_LIMIT_EXCEEDED"},
}

// fuzzImageLimit is the image limit of the fuzz servers: small, so that
// the fuzzer reaches the 413 of an oversized image.
const fuzzImageLimit = 1024

// fuzzEnv is a server shared by every input of one fuzz target, and a
// caller whose limits and credits no input exhausts.
type fuzzEnv struct {
	base   *env
	caller httpapitest.Caller
	// other is a second account with tasks of its own, which the
	// caller must never see.
	other      httpapitest.Caller
	otherTasks []string
}

func newFuzzEnv(f *testing.F) *fuzzEnv {
	f.Helper()
	st, err := sqlitestore.Open(filepath.Join(f.TempDir(), "gen.db"))
	if err != nil {
		f.Fatalf("open store: %v", err)
	}
	f.Cleanup(func() { st.Close() })
	fs := &faultStore{Store: st, faults: map[string]func() error{}}
	cfg := httpapitest.Config{
		Config: service.Config{Store: fs, Logger: slog.New(slog.NewJSONHandler(io.Discard, nil))},
		HTTP:   httpapi.Config{MaxImageBytes: fuzzImageLimit},
	}
	huge := store.KeyLimits{RequestsPerMinute: 1 << 30, RequestsPerDay: 1 << 30, StartsPerMinute: 1 << 30, MaxInFlight: 1 << 30}
	fe := &fuzzEnv{base: &env{Env: httpapitest.Start(f, cfg), faults: fs, logs: &logtest.Buffer{}}}
	fe.caller = httpapitest.NewCaller(f, st, 1<<40, ratelimit.Enterprise, huge)
	fe.other = httpapitest.NewCaller(f, st, 1<<40, ratelimit.Enterprise, huge)
	fe.otherTasks = []string{fe.addTask(f, fe.other, task.Pending), fe.addTask(f, fe.other, task.Failed)}
	return fe
}

// addTask gives c's account a task in status pending, completed or
// failed, and returns its id.
func (fe *fuzzEnv) addTask(f *testing.F, c httpapitest.Caller, status task.Status) string {
	f.Helper()
	ctx := context.Background()
	st := fe.base.faults.Store
	created := httpapitest.Epoch
	tk := task.Task{ID: task.NewID(created), AccountID: c.AccountID, KeyName: c.KeyName, Type: "text-to-video",
		Model: "gen-3.1-lite-generate-001", Prompt: "a " + string(status) + " task", CreditsCost: 35, CreatedAt: created}
	if _, err := st.CreateTask(ctx, tk, domain.StartGuard{}); err != nil {
		f.Fatalf("create a %s task: %v", status, err)
	}
	var err error
	switch status {
	case task.Completed:
		_, err = st.Complete(ctx, tk.ID, domain.Completion{Videos: []task.Video{{Key: "videos/" + tk.ID + "/0.mp4"}}}, created)
	case task.Failed:
		_, err = st.Fail(ctx, tk.ID, task.Failure{Code: task.FailGeneration, Message: "x"}, created)
	}
	if err != nil {
		f.Fatalf("move a task to %s: %v", status, err)
	}
	return tk.ID
}

// env is the shared server as seen by the test of one input.
func (fe *fuzzEnv) env(t *testing.T) *env {
	e := *fe.base
	e.t = t
	return &e
}

// serve answers req directly, without a network.
func serve(e *env, req *http.Request) response {
	e.t.Helper()
	rec := httptest.NewRecorder()
	e.API.Handler().ServeHTTP(rec, req)
	res := rec.Result()
	r := response{status: res.StatusCode, header: res.Header, raw: rec.Body.Bytes()}
	if req.Method != http.MethodHead && len(r.raw) > 0 {
		if err := json.Unmarshal(r.raw, &r.body); err != nil {
			e.t.Fatalf("%s %q: body %q is not a JSON object: %v", req.Method, req.URL, r.raw, err)
		}
	}
	return r
}

// checkContract fails the test unless r is a success in okStatuses or an
// error of the contract: a status below 500, one of its codes, the
// contract's body.
func checkContract(t *testing.T, r response, okStatuses ...int) {
	t.Helper()
	if slices.Contains(okStatuses, r.status) {
		return
	}
	if r.status >= 500 {
		t.Fatalf("status %d (%s), want no 5xx for any input", r.status, r.raw)
	}
	codes, ok := contractCodes[r.status]
	if !ok {
		t.Fatalf("status %d (%s) is not one of the contract's", r.status, r.raw)
	}
	code, _ := r.body["error"].(string)
	if r.status == http.StatusTooManyRequests {
		code, _ = obj(t, r.body, "error")["code"].(string)
	} else if r.body["success"] != false {
		t.Errorf("success = %v, want false (%s)", r.body["success"], r.raw)
	}
	if !slices.Contains(codes, code) {
		t.Fatalf("status %d with code %q (%s), want one of %v", r.status, code, r.raw, codes)
	}
}

// checkStart checks a start's answer and what it did to the account.
func checkStart(t *testing.T, e *env, accountID string, before state, r response) {
	t.Helper()
	checkContract(t, r, http.StatusAccepted)
	if r.status != http.StatusAccepted || r.header.Get("Idempotent-Replayed") == "true" {
		e.assertUnchanged(before, accountID, "a refused or replayed start")
		return
	}
	after := e.state(accountID)
	id, _ := r.body["taskId"].(string)
	cost := num(t, r.body, "creditsUsed")
	if len(after.Tasks) != len(before.Tasks)+1 || !slices.Contains(after.Tasks, id+":pending") {
		t.Errorf("tasks %d -> %d; want one more, %s pending", len(before.Tasks), len(after.Tasks), id)
	}
	if after.Credits != before.Credits-cost || len(after.Ledger) != len(before.Ledger)+1 || after.Started != before.Started+1 {
		t.Errorf("credits %d -> %d, ledger %d -> %d entries, starts %d -> %d; want one charge of %d and one start",
			before.Credits, after.Credits, len(before.Ledger), len(after.Ledger), before.Started, after.Started, cost)
	}
	want := slices.Clone(before.Blobs)
	for _, in := range e.task(id).Inputs {
		want = append(want, in.Key)
	}
	slices.Sort(want)
	if !slices.Equal(after.Blobs, want) {
		t.Errorf("blobs %v, want the ones before and the inputs of %s", after.Blobs, id)
	}
}

func FuzzTextToVideo(f *testing.F) {
	f.Add("application/json", []byte(`{"prompt":"a heron","seed":7}`), "")
	f.Add("application/json", []byte(`{"prompt":"a heron","seed":7}`), "key-1")
	f.Add("application/json; charset=utf-8", []byte(`{"prompt":"a crane","seed":7}`), "key-1")
	fe := newFuzzEnv(f)
	f.Fuzz(func(t *testing.T, contentType string, body []byte, idemKey string) {
		e := fe.env(t)
		c := fe.caller
		before := e.state(c.AccountID)
		req := httptest.NewRequest(http.MethodPost, "/api/gen/text-to-video", bytes.NewReader(body))
		req.Header.Set("X-API-Key", c.Key)
		req.Header["Content-Type"] = []string{contentType}
		if idemKey != "" {
			req.Header["Idempotency-Key"] = []string{idemKey}
		}
		checkStart(t, e, c.AccountID, before, serve(e, req))
	})
}

var fuzzPaths = []string{"/api/gen/image-to-video", "/api/gen/first-last-frame"}

func FuzzMultipartStart(f *testing.F) {
	body := []byte("--b\r\nContent-Disposition: form-data; name=\"prompt\"\r\n\r\na heron\r\n" +
		"--b\r\nContent-Disposition: form-data; name=\"image\"; filename=\"h.png\"\r\n\r\n" + string(pngData) + "\r\n--b--\r\n")
	f.Add(uint8(0), "b", body)
	f.Add(uint8(1), "b", body[:len(body)/2])
	fe := newFuzzEnv(f)
	f.Fuzz(func(t *testing.T, endpoint uint8, boundary string, body []byte) {
		e := fe.env(t)
		c := fe.caller
		before := e.state(c.AccountID)
		req := httptest.NewRequest(http.MethodPost, fuzzPaths[int(endpoint)%len(fuzzPaths)], bytes.NewReader(body))
		req.Header.Set("X-API-Key", c.Key)
		req.Header["Content-Type"] = []string{"multipart/form-data; boundary=" + boundary}
		checkStart(t, e, c.AccountID, before, serve(e, req))
	})
}

func FuzzHistoryQuery(f *testing.F) {
	f.Add("limit=5&skip=1&status=pending")
	f.Add("limit=0")
	fe := newFuzzEnv(f)
	// The caller's own tasks, in every state the filter can name but
	// processing.
	own := map[string]task.Status{}
	for _, status := range []task.Status{task.Pending, task.Completed, task.Failed} {
		own[fe.addTask(f, fe.caller, status)] = status
	}
	f.Fuzz(func(t *testing.T, rawQuery string) {
		e := fe.env(t)
		c := fe.caller
		before := e.state(c.AccountID)
		req := httptest.NewRequest(http.MethodGet, "/api/gen/history", nil)
		req.URL.RawQuery = rawQuery
		req.Header.Set("X-API-Key", c.Key)
		r := serve(e, req)
		checkContract(t, r, http.StatusOK)
		e.assertUnchanged(before, c.AccountID, "a history request")
		if r.status != http.StatusOK {
			if r.status != http.StatusBadRequest || !slices.Contains([]string{"limit", "skip", "status"}, r.body["field"].(string)) {
				t.Errorf("history refused with %d %s, want 400 naming limit, skip or status", r.status, r.raw)
			}
			return
		}
		// Decoded as integers: skip may be beyond what a float64 holds.
		var page struct {
			Videos []struct {
				TaskID string `json:"taskId"`
			} `json:"videos"`
			Pagination struct {
				Total, Limit, Skip int64
				HasMore            bool
			} `json:"pagination"`
		}
		if err := json.Unmarshal(r.raw, &page); err != nil {
			t.Fatalf("history body %s: %v", r.raw, err)
		}
		p, n := page.Pagination, int64(len(page.Videos))
		if p.Limit < 1 || p.Limit > 100 || p.Skip < 0 || n > p.Limit {
			t.Errorf("pagination %+v with %d videos: want limit 1..100, skip >= 0, at most limit videos", p, n)
		}
		q, _ := url.ParseQuery(rawQuery)
		matching := int64(0)
		for _, s := range own {
			if q.Get("status") == "" || string(s) == q.Get("status") {
				matching++
			}
		}
		if p.Total != matching {
			t.Errorf("total = %d, want %d: the caller's tasks matching %q, no one else's", p.Total, matching, q.Get("status"))
		}
		if p.HasMore != (p.Skip < p.Total-n) {
			t.Errorf("hasMore = %v with skip %d, %d videos, total %d", p.HasMore, p.Skip, n, p.Total)
		}
		for _, v := range page.Videos {
			if _, ok := own[v.TaskID]; !ok {
				t.Errorf("history lists %s, which is not the caller's", v.TaskID)
			}
		}
	})
}

func FuzzTaskPath(f *testing.F) {
	f.Add("gen_1700000000000_abcdefghij")
	f.Add("../history")
	fe := newFuzzEnv(f)
	for _, id := range fe.otherTasks {
		f.Add(id)
	}
	unknown := func(e *env, p string) response {
		req := httptest.NewRequest(http.MethodGet, p+"gen_1700000000000_unknownid0", nil)
		req.Header.Set("X-API-Key", fe.caller.Key)
		return serve(e, req)
	}
	f.Fuzz(func(t *testing.T, id string) {
		e := fe.env(t)
		c := fe.caller
		before := e.state(c.AccountID)
		for _, p := range []string{"/api/gen/status/", "/api/gen/download/"} {
			notFound := unknown(e, p)
			if notFound.status != http.StatusNotFound || notFound.body["error"] != "TASK_NOT_FOUND" {
				t.Fatalf("GET %s<unknown id> = %d %s, want 404 TASK_NOT_FOUND", p, notFound.status, notFound.raw)
			}
			// Through the router, with the id as one escaped segment, and
			// through the endpoint alone, as a Lambda serves it.
			req := httptest.NewRequest(http.MethodGet, p, nil)
			req.URL.Path = p + id
			req.URL.RawPath = p + url.PathEscape(id)
			req.Header.Set("X-API-Key", c.Key)
			routed := serve(e, req)

			route := httpapi.Status
			if strings.Contains(p, "download") {
				route = httpapi.Download
			}
			h := httpapi.EndpointHandler(e.Service, httpapi.Config{}, route)
			req = req.Clone(context.Background())
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			direct := response{status: rec.Code, header: rec.Result().Header, raw: rec.Body.Bytes()}
			if err := json.Unmarshal(direct.raw, &direct.body); err != nil {
				t.Fatalf("endpoint answer %q is not JSON: %v", direct.raw, err)
			}

			for _, r := range []response{routed, direct} {
				checkContract(t, r)
				if r.status == http.StatusNotFound && r.body["error"] == "TASK_NOT_FOUND" && !bytes.Equal(r.raw, notFound.raw) {
					t.Errorf("GET %s%q: 404 body %s, want exactly the unknown id's %s", p, id, r.raw, notFound.raw)
				}
			}
			// Another account's task is exactly an unknown one.
			if slices.Contains(fe.otherTasks, id) && !bytes.Equal(routed.raw, notFound.raw) {
				t.Errorf("GET %s<other account's task> = %d %s, want exactly %s", p, routed.status, routed.raw, notFound.raw)
			}
		}
		e.assertUnchanged(before, c.AccountID, "status and download requests")
	})
}
