package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/genvideo/gen/shared/domain"
	"github.com/genvideo/gen/shared/localcount"
	"github.com/genvideo/gen/shared/ratelimit"
	"github.com/genvideo/gen/shared/service"
	"github.com/genvideo/gen/shared/store"
	"github.com/genvideo/gen/shared/store/sqlitestore"
	"github.com/genvideo/gen/shared/task"
	"github.com/genvideo/gen/shared/testing/httpapitest"
	"github.com/genvideo/gen/shared/testing/imagechecktest"
	"github.com/genvideo/gen/shared/testing/logtest"
)

// env is a test server over a real SQLite store wrapped in faultStore.
type env struct {
	*httpapitest.Env
	t      *testing.T
	faults *faultStore
	logs   *logtest.Buffer
}

// roomy are limits no test reaches unless it means to.
var roomy = store.KeyLimits{RequestsPerMinute: 10000, RequestsPerDay: 100000, StartsPerMinute: 1000, MaxInFlight: 1000}

// newEnv starts a server; edit adjusts its Config (Store, Blobs, Starter
// and Now are filled in by httpapitest.Start unless edit sets them).
func newEnv(t *testing.T, edit func(*httpapitest.Config)) *env {
	t.Helper()
	st, err := sqlitestore.Open(filepath.Join(t.TempDir(), "gen.db"))
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	fs := &faultStore{Store: st, faults: map[string]func() error{}}
	logs := &logtest.Buffer{}
	cfg := httpapitest.Config{Config: service.Config{
		Store:  fs,
		Logger: slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}}
	if edit != nil {
		edit(&cfg)
	}
	e := &env{Env: httpapitest.Start(t, cfg), t: t, faults: fs, logs: logs}
	return e
}

// eachCounting runs test once with requests counted by the store, and
// once counted in memory over it as the local stack counts them
// (localcount, day windows persisted), with the same assertions.
func eachCounting(t *testing.T, test func(*testing.T, func(*httpapitest.Config))) {
	t.Run("store", func(t *testing.T) { test(t, nil) })
	t.Run("in memory", func(t *testing.T) {
		test(t, func(cfg *httpapitest.Config) {
			st := cfg.Store.(*faultStore).Store.(*sqlitestore.Store)
			c := localcount.New(localcount.Config{Persister: st,
				Persist: func(c domain.Window) bool { return c.Kind == ratelimit.Day }})
			t.Cleanup(func() { c.Close() })
			cfg.Limiter = c
		})
	})
}

// caller makes an Enterprise account with roomy limits and the credits.
func (e *env) caller(credits int64) httpapitest.Caller {
	e.t.Helper()
	return httpapitest.NewCaller(e.t, e.faults.Store, credits, ratelimit.Enterprise, roomy)
}

// response is a decoded answer.
type response struct {
	status int
	header http.Header
	raw    []byte
	body   map[string]any
}

// do sends a request with the key (none when key is "") and decodes the
// JSON answer.
func (e *env) do(method, path, key, contentType string, body io.Reader) response {
	e.t.Helper()
	req, err := http.NewRequest(method, e.Server.URL+path, body)
	if err != nil {
		e.t.Fatalf("new request: %v", err)
	}
	if key != "" {
		req.Header.Set("X-API-Key", key)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	return e.send(req)
}

func (e *env) send(req *http.Request) response {
	e.t.Helper()
	res, err := e.Server.Client().Do(req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", req.Method, req.URL.Path, err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		e.t.Fatalf("read body of %s %s: %v", req.Method, req.URL.Path, err)
	}
	r := response{status: res.StatusCode, header: res.Header, raw: raw}
	if len(raw) > 0 && req.Method != http.MethodHead {
		if err := json.Unmarshal(raw, &r.body); err != nil {
			e.t.Fatalf("%s %s: body %q is not a JSON object: %v", req.Method, req.URL.Path, raw, err)
		}
	}
	return r
}

func (e *env) get(path, key string) response {
	e.t.Helper()
	return e.do(http.MethodGet, path, key, "", nil)
}

// postJSON sends v (a string is sent as it is) to a start endpoint.
func (e *env) postJSON(path, key string, v any) response {
	e.t.Helper()
	var b []byte
	if s, ok := v.(string); ok {
		b = []byte(s)
	} else {
		var err error
		if b, err = json.Marshal(v); err != nil {
			e.t.Fatalf("marshal: %v", err)
		}
	}
	return e.do(http.MethodPost, path, key, "application/json", bytes.NewReader(b))
}

// part is one part of a multipart form; a file when filename or
// contentType is set.
type part struct {
	name        string
	filename    string
	contentType string
	data        []byte
}

func field(name, value string) part { return part{name: name, data: []byte(value)} }

func file(name, filename string, data []byte) part {
	return part{name: name, filename: filename, contentType: "application/octet-stream", data: data}
}

// multipartBody encodes parts; it returns the Content-Type and the body.
func multipartBody(t *testing.T, parts ...part) (string, []byte) {
	t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for _, p := range parts {
		h := textproto.MIMEHeader{}
		disp := `form-data; name="` + p.name + `"`
		if p.filename != "" {
			disp += `; filename="` + p.filename + `"`
		}
		h.Set("Content-Disposition", disp)
		if p.contentType != "" {
			h.Set("Content-Type", p.contentType)
		}
		pw, err := w.CreatePart(h)
		if err != nil {
			t.Fatalf("create part: %v", err)
		}
		pw.Write(p.data)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("close multipart: %v", err)
	}
	return w.FormDataContentType(), buf.Bytes()
}

func (e *env) postForm(path, key string, parts ...part) response {
	e.t.Helper()
	ct, body := multipartBody(e.t, parts...)
	return e.do(http.MethodPost, path, key, ct, bytes.NewReader(body))
}

// Test images: whole, small images, as the service checks every byte.
var (
	pngData  = imagechecktest.Uncompressed(64, 36, 0)
	jpegData = imagechecktest.JPEG(32, 18)
	gifData  = []byte("GIF89a\x01\x00\x01\x00\x00\x00\x00;")
)

// state is everything a rejected request must leave as it was.
type state struct {
	Credits  int64
	InFlight int
	Ledger   []domain.LedgerEntry
	Tasks    []string
	Blobs    []string
	Started  int
}

func (e *env) state(accountID string) state {
	e.t.Helper()
	ctx := context.Background()
	st := e.faults.Store
	a, err := st.Account(ctx, accountID)
	if err != nil {
		e.t.Fatalf("account %s: %v", accountID, err)
	}
	ledger, err := st.Ledger(ctx, accountID)
	if err != nil {
		e.t.Fatalf("ledger %s: %v", accountID, err)
	}
	tasks, _, err := st.Tasks(ctx, accountID, store.TaskQuery{Limit: 1000})
	if err != nil {
		e.t.Fatalf("tasks %s: %v", accountID, err)
	}
	s := state{Credits: a.Credits, InFlight: a.InFlight, Ledger: ledger, Blobs: e.Blobs.Keys(), Started: len(e.Executions.Started())}
	for _, t := range tasks {
		s.Tasks = append(s.Tasks, t.ID+":"+string(t.Status))
	}
	return s
}

func (e *env) assertUnchanged(before state, accountID, what string) {
	e.t.Helper()
	if after := e.state(accountID); !reflect.DeepEqual(after, before) {
		e.t.Errorf("%s changed the state:\n got %+v\nwant %+v", what, after, before)
	}
}

// task reads a task from the store.
func (e *env) task(id string) task.Task {
	e.t.Helper()
	tk, err := e.faults.Store.Task(context.Background(), id)
	if err != nil {
		e.t.Fatalf("task %s: %v", id, err)
	}
	return tk
}

// wantError checks an error response of the contract's flat form.
func wantError(t *testing.T, r response, status int, code string) {
	t.Helper()
	if r.status != status {
		t.Fatalf("status = %d, want %d (body %s)", r.status, status, r.raw)
	}
	if got := r.body["success"]; got != false {
		t.Errorf("success = %v, want false (body %s)", got, r.raw)
	}
	if got := r.body["error"]; got != code {
		t.Errorf("error = %v, want %s (body %s)", got, code, r.raw)
	}
	if msg, _ := r.body["message"].(string); msg == "" {
		t.Errorf("message is empty (body %s)", r.raw)
	}
}

// num reads a JSON number field as an int64.
func num(t *testing.T, m map[string]any, key string) int64 {
	t.Helper()
	v, ok := m[key].(float64)
	if !ok {
		t.Fatalf("field %q = %#v, want a number (in %v)", key, m[key], m)
	}
	return int64(v)
}

func obj(t *testing.T, m map[string]any, key string) map[string]any {
	t.Helper()
	v, ok := m[key].(map[string]any)
	if !ok {
		t.Fatalf("field %q = %#v, want an object (in %v)", key, m[key], m)
	}
	return v
}

func list(t *testing.T, m map[string]any, key string) []any {
	t.Helper()
	v, ok := m[key].([]any)
	if !ok {
		t.Fatalf("field %q = %#v, want an array (in %v)", key, m[key], m)
	}
	return v
}

// faultStore wraps a store so that a test can make some of its methods
// fail or panic, and counts the look-ups that must not happen.
type faultStore struct {
	store.Store
	mu         sync.Mutex
	faults     map[string]func() error
	keyLookups int
	taskReads  int
}

// set makes method run fn instead (fn may panic); nil restores it.
func (f *faultStore) set(method string, fn func() error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.faults[method] = fn
}

func (f *faultStore) fault(method string) error {
	f.mu.Lock()
	fn := f.faults[method]
	switch method {
	case "KeyByHash":
		f.keyLookups++
	case "Task":
		f.taskReads++
	}
	f.mu.Unlock()
	if fn == nil {
		return nil
	}
	return fn()
}

func (f *faultStore) counts() (keyLookups, taskReads int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.keyLookups, f.taskReads
}

func (f *faultStore) KeyByHash(ctx context.Context, hash string) (store.Key, error) {
	if err := f.fault("KeyByHash"); err != nil {
		return store.Key{}, err
	}
	return f.Store.KeyByHash(ctx, hash)
}

func (f *faultStore) Take(ctx context.Context, cs []domain.Window, at time.Time) ([]int, error) {
	if err := f.fault("Take"); err != nil {
		return nil, err
	}
	return f.Store.Take(ctx, cs, at)
}

func (f *faultStore) CreateTask(ctx context.Context, t task.Task, g domain.StartGuard) (domain.Charged, error) {
	if err := f.fault("CreateTask"); err != nil {
		return domain.Charged{}, err
	}
	return f.Store.CreateTask(ctx, t, g)
}

func (f *faultStore) Task(ctx context.Context, id string) (task.Task, error) {
	if err := f.fault("Task"); err != nil {
		return task.Task{}, err
	}
	return f.Store.Task(ctx, id)
}

func (f *faultStore) Tasks(ctx context.Context, accountID string, q store.TaskQuery) ([]task.Task, int, error) {
	if err := f.fault("Tasks"); err != nil {
		return nil, 0, err
	}
	return f.Store.Tasks(ctx, accountID, q)
}

// lines returns the log records whose msg is msg.
// logLines returns the JSON log records in b whose msg is msg.
func logLines(b *logtest.Buffer, msg string) []map[string]any {
	var out []map[string]any
	for _, l := range strings.Split(b.String(), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil && m["msg"] == msg {
			out = append(out, m)
		}
	}
	return out
}

func stringsReader(s string) io.Reader { return strings.NewReader(s) }
