package devstack

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/png"
	"io"
	"io/fs"
	"log/slog"
	"mime/multipart"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/genvideo/gen/shared/blob"
	"github.com/genvideo/gen/shared/faults"
	"github.com/genvideo/gen/shared/provider"
	"github.com/genvideo/gen/shared/store"
	"github.com/genvideo/gen/shared/task"
	"github.com/genvideo/gen/shared/testing/logtest"
	"github.com/genvideo/gen/shared/testing/storetest"
	"github.com/genvideo/gen/shared/testing/workflowtest"
)

// The fault-injection tests run the whole stack over HTTP with
// shared/faults decorators around its store, blob storage and generator.
// The generator is the in-memory fake (a prompt with [fail] fails), so that
// the tests measure the service's handling of faults, not ffmpeg.

// faultStack is a running stack whose dependencies go through inj.
type faultStack struct {
	*env
	inj  *faults.Injector
	logs *logtest.Buffer
}

func startFaultStack(t *testing.T, dataDir string) *faultStack {
	t.Helper()
	inj := faults.NewInjector()
	logs := &logtest.Buffer{}
	gen := &workflowtest.Generator{Outcome: func(_ context.Context, job provider.Job, _ int) (int, error) {
		if strings.Contains(job.Prompt, "[fail]") {
			return 0, faults.Broken()
		}
		return job.Params.SampleCount, nil
	}}
	e := startEnv(t, dataDir, func(c *Config) {
		c.Logger = slog.New(slog.NewTextHandler(logs, nil))
		c.Hooks = Hooks{
			WrapStore: func(s store.Store) store.Store { return faults.WrapStore(s, inj) },
			WrapBlobs: func(b blob.Store) blob.Store { return faults.WrapBlobs(b, inj) },
			WrapGenerator: func(provider.Generator) provider.Generator {
				return faults.WrapGenerator(gen, inj)
			},
		}
	})
	return &faultStack{env: e, inj: inj, logs: logs}
}

// request is one call of the contract, made with a key.
type request struct {
	name string
	send func(e *env, key string) response
}

func startText(prompt string) request {
	return request{"text-to-video", func(e *env, key string) response {
		return e.postJSON("/api/gen/text-to-video", key,
			`{"prompt":"`+prompt+`","model":"gen-3.1-lite-generate-001","durationSeconds":4,"sampleCount":2}`)
	}}
}

// smallPNG is a valid 32x18 PNG: the fake generator never decodes it.
var smallPNG = sync.OnceValue(func() []byte {
	img := image.NewRGBA(image.Rect(0, 0, 32, 18))
	for i := range img.Pix {
		img.Pix[i] = byte(i)
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		panic(err)
	}
	return buf.Bytes()
})

func startImage() request {
	return request{"image-to-video", func(e *env, key string) response {
		return e.postForm("/api/gen/image-to-video", key,
			map[string]string{"prompt": "a red kite", "model": "gen-3.1-lite-generate-001", "durationSeconds": "4"},
			map[string][]byte{"image": smallPNG()})
	}}
}

func startFrames() request {
	return request{"first-last-frame", func(e *env, key string) response {
		return e.postForm("/api/gen/first-last-frame", key,
			map[string]string{"prompt": "dusk", "resolution": "720p", "durationSeconds": "4"},
			map[string][]byte{"firstFrame": smallPNG(), "lastFrame": smallPNG()})
	}}
}

func get(name, path string) request {
	return request{name, func(e *env, key string) response { return e.do(http.MethodGet, path, key, "", nil) }}
}

// books is what a request that charged nothing leaves as it was.
type books struct {
	credits  int64
	inFlight int
	entries  int
	tasks    int
	inputs   []string
}

func (f *faultStack) books(accountID string) books {
	f.t.Helper()
	ctx := context.Background()
	a, err := f.stack.Store.Account(ctx, accountID)
	if err != nil {
		f.t.Fatal(err)
	}
	l, err := f.stack.Store.Ledger(ctx, accountID)
	if err != nil {
		f.t.Fatal(err)
	}
	_, total, err := f.stack.Store.Tasks(ctx, accountID, store.TaskQuery{Limit: 1})
	if err != nil {
		f.t.Fatal(err)
	}
	return books{credits: a.Credits, inFlight: a.InFlight, entries: len(l), tasks: total, inputs: f.inputs()}
}

// inputs lists the uploaded images in blob storage.
func (f *faultStack) inputs() []string {
	var files []string
	root := filepath.Join(f.cfg.DataDir, "blobs", "data", "inputs")
	filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, strings.TrimPrefix(path, root))
		}
		return nil
	})
	return files
}

// settle waits until no workflow runs.
func (f *faultStack) settle() { f.stack.executions.Wait() }

// wantNoLeak fails the test if the body carries any internal detail.
func wantNoLeak(t *testing.T, what string, r response) {
	t.Helper()
	body := string(r.raw)
	for _, m := range append(slices.Clone(faults.DetailMarkers), "goroutine ", ".go:", "panic", "sql:", "sqlite") {
		if strings.Contains(body, m) {
			t.Errorf("%s: %d body leaks %q: %s", what, r.status, m, body)
		}
	}
}

// requestCalls is the part of a trace that a request made: for a start,
// up to and including the call that created the task (what follows is its
// workflow, running in the background).
func requestCalls(trace []string) []string {
	if i := slices.Index(trace, "Store.CreateTask"); i >= 0 {
		return trace[:i+1]
	}
	return trace
}

// TestOutageAnswers503AndChargesNothing makes every store and blob
// storage call of each request, one at a time, fail as an outage: the
// answer is 503 SERVICE_UNAVAILABLE, the body tells nothing internal, the
// log has the cause, and the account's books, tasks and uploads are as
// they were.
func TestOutageAnswers503AndChargesNothing(t *testing.T) {
	f := startFaultStack(t, "")
	k := f.key(100000, store.KeyLimits{})
	done := startText("a finished task")
	r := done.send(f.env, k.APIKey)
	if r.status != http.StatusAccepted {
		t.Fatalf("start = %d: %s", r.status, r.raw)
	}
	id := str(r.body["taskId"])
	f.settle()

	requests := []request{
		startText("an outage"), startImage(), startFrames(),
		get("status", "/api/gen/status/"+id), get("download", "/api/gen/download/"+id),
		get("history", "/api/gen/history?limit=5"), get("models", "/api/gen/models"),
	}
	for _, rq := range requests {
		f.inj.Reset()
		if r := rq.send(f.env, k.APIKey); r.status >= 300 {
			t.Fatalf("%s without faults = %d: %s", rq.name, r.status, r.raw)
		}
		calls := requestCalls(f.inj.Trace())
		f.settle()
		// Requests are counted in memory (localcount): the store sees
		// the key look-up, and what the endpoint itself reads or writes.
		if !slices.Contains(calls, "Store.KeyByHash") {
			t.Fatalf("%s made the calls %v, want at least a key look-up", rq.name, calls)
		}
		for i, method := range calls {
			nth := 0
			for _, m := range calls[:i+1] {
				if m == method {
					nth++
				}
			}
			t.Run(fmt.Sprintf("%s/%s#%d", rq.name, method, nth), func(t *testing.T) {
				before := f.books(k.AccountID)
				logged := len(f.logs.String())
				f.inj.Reset()
				f.inj.Set(method, faults.Nth(nth, faults.Fault{Err: faults.Unavailable()}))
				r := rq.send(f.env, k.APIKey)
				f.settle()
				f.inj.Reset()

				if r.status != http.StatusServiceUnavailable || r.body["error"] != "SERVICE_UNAVAILABLE" || r.body["success"] != false {
					t.Errorf("got %d %s, want 503 SERVICE_UNAVAILABLE", r.status, r.raw)
				}
				wantNoLeak(t, rq.name, r)
				if !strings.Contains(f.logs.String()[logged:], "injected fault") {
					t.Errorf("the log does not record the outage")
				}
				if after := f.books(k.AccountID); !equalBooks(after, before) {
					t.Errorf("books after the outage %+v, want them as before %+v", after, before)
				}
			})
		}
	}
	storetest.CheckInvariants(t, f.stack.Store, k.AccountID)
}

func equalBooks(a, b books) bool {
	return a.credits == b.credits && a.inFlight == b.inFlight && a.entries == b.entries &&
		a.tasks == b.tasks && slices.Equal(a.inputs, b.inputs)
}

// TestLostReplyChargesNothing: the store commits a start and the reply is
// lost on the way back (an outage after the write). The client is told
// 503, so nothing may stay charged: once the dust settles the task, if
// the store has it, is failed and refunded.
//
// The refund itself may meet the same outage: refused twice, it is tried
// again until it lands, since a task left charged and pending would be run
// by the next sweep.
func TestLostReplyChargesNothing(t *testing.T) {
	cases := []struct {
		rq             request
		refusedRefunds int
	}{
		{startText("a lost reply"), 0},
		{startImage(), 0},
		{startText("a lost reply, a flaky refund"), 2},
	}
	for _, tc := range cases {
		rq := tc.rq
		t.Run(rq.name, func(t *testing.T) {
			f := startFaultStack(t, "")
			k := f.key(10000, store.KeyLimits{})
			f.inj.Set("Store.CreateTask", faults.Nth(1, faults.Fault{Err: faults.Unavailable(), After: true}))
			f.inj.Set("Store.Fail", func(_ string, i int) faults.Fault {
				if i <= tc.refusedRefunds {
					return faults.Fault{Err: faults.Unavailable()}
				}
				return faults.Fault{}
			})
			r := rq.send(f.env, k.APIKey)
			f.settle()
			if r.status != http.StatusServiceUnavailable {
				t.Fatalf("got %d %s, want 503", r.status, r.raw)
			}
			wantNoLeak(t, rq.name, r)
			if got := f.balance(k.AccountID); got != 10000 {
				t.Errorf("balance %d after a 503, want 10000: the client was told nothing was charged", got)
			}
			tasks, _, _ := f.stack.Store.Tasks(context.Background(), k.AccountID, store.TaskQuery{Limit: 10})
			for _, tk := range tasks {
				if tk.Status != task.Failed || tk.CreditsRefunded != tk.CreditsCost {
					t.Errorf("task %s is %s refunded %d after a 503, want failed and refunded %d",
						tk.ID, tk.Status, tk.CreditsRefunded, tk.CreditsCost)
				}
			}
			storetest.CheckInvariants(t, f.stack.Store, k.AccountID)
		})
	}
}

// TestNoErrorLeaksInternals sends a mix of requests while the store and
// blob storage fail at random in every way (errors, outages, lost
// replies, panics, delays) and the generator too. Every answer is a
// contract body with nothing internal in it; a 500 is INTERNAL_ERROR and a
// 503 SERVICE_UNAVAILABLE. Once the faults stop and the unfinished tasks
// are re-driven, every task has ended, the ones a client was told about
// as the client was told, and the books balance.
func TestNoErrorLeaksInternals(t *testing.T) {
	f := startFaultStack(t, "")
	k := f.key(1000000, store.KeyLimits{})
	mix := []request{
		startText("plain"), startText("[fail] doomed"), startImage(), startFrames(),
		get("history", "/api/gen/history"), get("models", "/api/gen/models"),
		get("unknown task", "/api/gen/status/gen_1763000000000_abcdefghij"),
		{"bad body", func(e *env, key string) response {
			return e.postJSON("/api/gen/text-to-video", key, `{"prompt":"x","sampleCount":"two"}`)
		}},
	}
	f.inj.Set("Store.*", faults.Random(1, 0.2,
		faults.Fault{Err: faults.Unavailable()},
		faults.Fault{Err: faults.Unavailable(), After: true},
		faults.Fault{Err: faults.Broken()},
		faults.Fault{Panic: faults.Detail},
		faults.Fault{Delay: 20 * time.Millisecond}))
	f.inj.Set("Blobs.*", faults.Random(2, 0.2,
		faults.Fault{Err: faults.Unavailable()},
		faults.Fault{Err: faults.Broken()},
		faults.Fault{Panic: faults.Detail}))
	f.inj.Set("Generator.*", faults.Random(3, 0.3,
		faults.Fault{Err: faults.Broken()},
		faults.Fault{Err: faults.Refused()},
		faults.Fault{Panic: faults.Detail}))

	accepted := map[string]bool{}
	var ids []string
	statuses := map[int]int{}
	for i := range 120 {
		rq := mix[i%len(mix)]
		if i%5 == 4 && len(ids) > 0 {
			id := ids[i%len(ids)]
			rq = get("status", "/api/gen/status/"+id)
			if i%2 == 0 {
				rq = get("download", "/api/gen/download/"+id)
			}
		}
		r := rq.send(f.env, k.APIKey)
		statuses[r.status]++
		wantNoLeak(t, rq.name, r)
		switch {
		case r.body == nil:
			t.Errorf("%s: %d body is not JSON: %s", rq.name, r.status, r.raw)
		case r.status == http.StatusAccepted:
			accepted[str(r.body["taskId"])] = true
			ids = append(ids, str(r.body["taskId"]))
		case r.status == http.StatusInternalServerError && r.body["error"] != "INTERNAL_ERROR",
			r.status == http.StatusServiceUnavailable && r.body["error"] != "SERVICE_UNAVAILABLE":
			t.Errorf("%s: %d with error %v, want INTERNAL_ERROR for 500, SERVICE_UNAVAILABLE for 503", rq.name, r.status, r.body["error"])
		case r.status >= 400 && (r.body["success"] != false || str(r.body["message"]) == ""):
			t.Errorf("%s: %d body %s, want success false and a message", rq.name, r.status, r.raw)
		}
	}
	t.Logf("statuses %v, %d faults injected", statuses, f.inj.Injected())
	if statuses[http.StatusInternalServerError] == 0 || statuses[http.StatusServiceUnavailable] == 0 || len(accepted) == 0 {
		t.Errorf("statuses %v: want some 500s, some 503s and some starts, or the test proves little", statuses)
	}

	// The outage ends with a restart, which re-drives what the faults
	// left (waiting out the workflows' retry intervals would take
	// minutes).
	f.stop()
	f = startFaultStack(t, f.cfg.DataDir)
	f.settle()
	all, _, err := f.stack.Store.Tasks(context.Background(), k.AccountID, store.TaskQuery{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tk := range all {
		switch {
		case !tk.Status.Terminal():
			t.Errorf("task %s is %s after the recovery, want it finished", tk.ID, tk.Status)
		case !accepted[tk.ID] && (tk.Status != task.Failed || tk.CreditsRefunded != tk.CreditsCost):
			t.Errorf("task %s was never announced with a 202, but it is %s refunded %d of %d",
				tk.ID, tk.Status, tk.CreditsRefunded, tk.CreditsCost)
		case tk.Status == task.Failed && strings.ContainsAny(tk.Failure.Message, "/:"):
			t.Errorf("task %s failed with message %q, want a client-safe one", tk.ID, tk.Failure.Message)
		}
	}
	for id := range accepted {
		r := f.do(http.MethodGet, "/api/gen/status/"+id, k.APIKey, "", nil)
		wantNoLeak(t, "status", r)
		if s := r.body["status"]; s != "completed" && s != "failed" {
			t.Errorf("announced task %s: status %d %s, want it finished", id, r.status, r.raw)
		}
	}
	storetest.CheckInvariants(t, f.stack.Store, k.AccountID)
}

// result is an answer received by a client goroutine.
type result struct {
	status int
	body   []byte
	err    error
}

// sendAsync sends a start from another goroutine, which may block while
// the server is stopped under it.
func (f *faultStack) sendAsync(path, key, contentType string, body []byte) <-chan result {
	out := make(chan result, 1)
	url := f.srv.URL + path
	go func() {
		req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
		if err != nil {
			out <- result{err: err}
			return
		}
		req.Header.Set("X-API-Key", key)
		req.Header.Set("Content-Type", contentType)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			out <- result{err: err}
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		out <- result{status: resp.StatusCode, body: b, err: err}
	}()
	return out
}

// crashKind is a start whose request and workflow the crash test cuts.
type crashKind struct {
	name       string
	path       string
	form       func() (contentType string, body []byte)
	wantStatus task.Status
}

func jsonBody(body string) func() (string, []byte) {
	return func() (string, []byte) { return "application/json", []byte(body) }
}

var crashKinds = []crashKind{
	{"text", "/api/gen/text-to-video",
		jsonBody(`{"prompt":"cut short","model":"gen-3.1-lite-generate-001","durationSeconds":4,"sampleCount":2}`), task.Completed},
	{"image", "/api/gen/image-to-video", imageForm, task.Completed},
	{"failing", "/api/gen/text-to-video",
		jsonBody(`{"prompt":"[fail] cut short","model":"gen-3.1-lite-generate-001","durationSeconds":4}`), task.Failed},
}

// imageForm is the multipart body of an image-to-video start.
func imageForm() (string, []byte) {
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	w.WriteField("prompt", "cut short")
	w.WriteField("model", "gen-3.1-lite-generate-001")
	w.WriteField("durationSeconds", "4")
	fw, _ := w.CreateFormFile("image", "image.png")
	fw.Write(smallPNG())
	w.Close()
	return w.FormDataContentType(), buf.Bytes()
}

// crashPoints are where TestCrashThenRestart cuts a start: right after
// its request charged for it, and around each step of its workflow.
// (shared/workflow's TestCrashBetweenAnyTwoSteps cuts the workflow at every
// one of its calls; this test adds the request and a real restart on the
// data directory.)
var crashPoints = []struct {
	kind   crashKind
	method string
	nth    int
	after  bool
}{
	{crashKinds[0], "Store.CreateTask", 1, true}, // charged, workflow not started
	{crashKinds[1], "Store.CreateTask", 1, true},
	{crashKinds[0], "Store.MarkProcessing", 1, true},
	{crashKinds[1], "Blobs.Get", 1, false},
	{crashKinds[0], "Generator.Generate", 1, true}, // generated, not stored
	{crashKinds[0], "Store.Complete", 1, false},
	{crashKinds[0], "Store.Complete", 1, true}, // completed, execution not ended
	{crashKinds[2], "Store.Fail", 1, false},
	{crashKinds[2], "Store.Fail", 1, true}, // refunded, execution not ended
}

// TestCrashThenRestart cuts the process at each crash point, before the
// call or after it took effect, and starts the stack again on the same
// data directory. The next process finishes the task: completed (or
// failed, for a failing generation) and refunded at most once, with
// nothing left in flight.
func TestCrashThenRestart(t *testing.T) {
	for _, cp := range crashPoints {
		when := map[bool]string{false: "before", true: "after"}[cp.after]
		t.Run(fmt.Sprintf("%s/%s#%d/%s", cp.kind.name, cp.method, cp.nth, when), func(t *testing.T) {
			t.Parallel()
			ct, body := cp.kind.form()
			dir := t.TempDir()
			f := startFaultStack(t, dir)
			k := f.key(10000, store.KeyLimits{})
			f.inj.Reset() // count from the start request on
			f.inj.Set(cp.method, faults.Nth(cp.nth, faults.Fault{Hang: true, After: cp.after}))
			answer := f.sendAsync(cp.kind.path, k.APIKey, ct, body)
			// The answer may come first: the workflow runs on after it.
			select {
			case got := <-f.inj.Hung():
				if got != cp.method {
					t.Fatalf("the process stopped in %s, want %s", got, cp.method)
				}
			case <-time.After(time.Minute):
				t.Fatalf("the process never reached %s #%d; it made the calls %v", cp.method, cp.nth, f.inj.Trace())
			}
			f.inj.Crash()
			<-answer // whatever the dying process answered
			f.stop()

			next := startFaultStack(t, dir) // recovers what it finds
			next.settle()
			checkAfterCrash(t, next, k.AccountID, cp.kind.wantStatus)
		})
	}
}

// checkAfterCrash checks the account after the restart: its one task
// (if the crash came after it was created) ended as an undisturbed one
// would, and the books balance.
func checkAfterCrash(t *testing.T, f *faultStack, accountID string, want task.Status) {
	t.Helper()
	ctx := context.Background()
	if left, err := f.stack.Store.Unfinished(ctx); err != nil || len(left) != 0 {
		t.Fatalf("after the restart %d tasks are unfinished (%v), want none", len(left), err)
	}
	tasks, _, err := f.stack.Store.Tasks(ctx, accountID, store.TaskQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if len(tasks) > 1 {
		t.Fatalf("%d tasks after one start, want at most one", len(tasks))
	}
	for _, tk := range tasks {
		switch {
		case tk.Status == want && want == task.Completed && len(tk.Videos) == tk.Params.SampleCount && tk.CreditsRefunded == 0:
		case tk.Status == want && want == task.Failed && tk.CreditsRefunded == tk.CreditsCost:
		default:
			t.Errorf("task %s ended %s with %d videos, refunded %d of %d (failure %+v); want %s",
				tk.ID, tk.Status, len(tk.Videos), tk.CreditsRefunded, tk.CreditsCost, tk.Failure, want)
		}
	}
	if a, err := f.stack.Store.Account(ctx, accountID); err != nil || a.InFlight != 0 {
		t.Errorf("account after the restart: %+v, %v; want nothing in flight", a, err)
	}
	storetest.CheckInvariants(t, f.stack.Store, accountID)
}
