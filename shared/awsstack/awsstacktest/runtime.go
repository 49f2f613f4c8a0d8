package awsstacktest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/genvideo/gen/shared/logtest"
)

// invokeTimeout bounds one invocation in a test, so that a function that
// hangs fails the test with its log rather than stalling the run. It is a
// safety net, not an assertion: invocations take seconds.
const invokeTimeout = 3 * time.Minute

// Result is how an invocation ended: Payload on success; on a function
// error, ErrorType and ErrorMessage as the Runtime API received them
// (errorType is the Go type name of the error the handler returned).
type Result struct {
	Payload      []byte
	IsError      bool
	ErrorType    string
	ErrorMessage string
}

// Function is one Lambda process, driven through a fake of the Lambda
// Runtime API (the plain HTTP interface every custom runtime polls): the
// process fetches each event with GET /2018-06-01/runtime/invocation/next
// and answers with POST .../{id}/response or .../{id}/error.
type Function struct {
	name   string
	cmd    *exec.Cmd
	exited chan struct{}
	log    *logtest.Buffer

	events chan invocation
	// started is when the process was started; ready is closed, and
	// readyAt set, at its first Runtime API next call.
	started   time.Time
	ready     chan struct{}
	readyAt   time.Time
	readyOnce sync.Once

	mu      sync.Mutex
	waiting map[string]chan Result
	seq     int
}

type invocation struct {
	id      string
	payload []byte
}

// StartFunction runs binary as a Lambda with the environment env (plus
// AWS_LAMBDA_RUNTIME_API pointing at its fake runtime). The process is
// killed when the test ends.
func StartFunction(t testing.TB, name, binary string, env []string) *Function {
	t.Helper()
	f := &Function{
		name:    name,
		exited:  make(chan struct{}),
		log:     &logtest.Buffer{},
		events:  make(chan invocation),
		waiting: map[string]chan Result{},
		ready:   make(chan struct{}),
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /2018-06-01/runtime/invocation/next", f.next)
	mux.HandleFunc("POST /2018-06-01/runtime/invocation/{id}/response", f.respond(false))
	mux.HandleFunc("POST /2018-06-01/runtime/invocation/{id}/error", f.respond(true))
	srv := httptest.NewServer(mux)

	f.cmd = exec.Command(binary)
	f.cmd.Env = append(append([]string(nil), env...),
		"AWS_LAMBDA_RUNTIME_API="+strings.TrimPrefix(srv.URL, "http://"),
		"AWS_LAMBDA_FUNCTION_NAME="+name,
		"AWS_LAMBDA_FUNCTION_MEMORY_SIZE=1024",
		"AWS_LAMBDA_LOG_FORMAT=JSON",
	)
	f.cmd.Stdout, f.cmd.Stderr = f.log, f.log
	f.started = time.Now()
	if err := f.cmd.Start(); err != nil {
		srv.Close()
		t.Fatalf("start %s: %v", name, err)
	}
	go func() {
		f.cmd.Wait()
		close(f.exited)
	}()
	t.Cleanup(func() {
		f.cmd.Process.Kill()
		<-f.exited
		// The process holds a long poll open; close it before the server.
		srv.CloseClientConnections()
		srv.Close()
		if t.Failed() {
			t.Logf("log of %s:\n%s", name, f.Log())
		}
	})
	return f
}

// Log is what the process wrote so far.
func (f *Function) Log() string { return f.log.String() }

// Invoke hands event to the function and waits for its answer. A process
// that exits (a failed cold start) fails the test with its log.
func (f *Function) Invoke(t testing.TB, event []byte) Result {
	t.Helper()
	f.mu.Lock()
	f.seq++
	id := fmt.Sprintf("%s-%08d-0000-4000-8000-%012d", f.name, f.seq, f.seq)
	done := make(chan Result, 1)
	f.waiting[id] = done
	f.mu.Unlock()

	timeout := time.NewTimer(invokeTimeout)
	defer timeout.Stop()
	select {
	case f.events <- invocation{id: id, payload: event}:
	case <-f.exited:
		t.Fatalf("%s exited before taking the event (%v):\n%s", f.name, f.cmd.ProcessState, f.Log())
	case <-timeout.C:
		t.Fatalf("%s did not ask for the event within %v:\n%s", f.name, invokeTimeout, f.Log())
	}
	select {
	case r := <-done:
		return r
	case <-f.exited:
		t.Fatalf("%s exited during the invocation (%v):\n%s", f.name, f.cmd.ProcessState, f.Log())
	case <-timeout.C:
		t.Fatalf("%s did not answer within %v:\n%s", f.name, invokeTimeout, f.Log())
	}
	return Result{}
}

// Exited waits for the process to end (a cold start that fails) and
// returns its log; it fails the test if the process asks for an event
// instead.
func (f *Function) Exited(t testing.TB) string {
	t.Helper()
	timeout := time.NewTimer(invokeTimeout)
	defer timeout.Stop()
	select {
	case <-f.exited:
		return f.Log()
	case <-timeout.C:
		t.Fatalf("%s still runs after %v:\n%s", f.name, invokeTimeout, f.Log())
	}
	return ""
}

// Init waits for the process's first Runtime API next call and returns
// the time from its start to that call: its init, which a client waits
// for on a cold start. A process that exits first fails the test.
func (f *Function) Init(t testing.TB) time.Duration {
	t.Helper()
	timeout := time.NewTimer(invokeTimeout)
	defer timeout.Stop()
	select {
	case <-f.ready:
		return f.readyAt.Sub(f.started)
	case <-f.exited:
		t.Fatalf("%s exited during its init (%v):\n%s", f.name, f.cmd.ProcessState, f.Log())
	case <-timeout.C:
		t.Fatalf("%s did not ask for an event within %v:\n%s", f.name, invokeTimeout, f.Log())
	}
	return 0
}

func (f *Function) next(w http.ResponseWriter, r *http.Request) {
	f.readyOnce.Do(func() {
		f.readyAt = time.Now()
		close(f.ready)
	})
	select {
	case inv := <-f.events:
		h := w.Header()
		h.Set("Lambda-Runtime-Aws-Request-Id", inv.id)
		h.Set("Lambda-Runtime-Deadline-Ms", strconv.FormatInt(time.Now().Add(invokeTimeout).UnixMilli(), 10))
		h.Set("Lambda-Runtime-Invoked-Function-Arn", "arn:aws:lambda:us-east-1:123456789012:function:"+f.name)
		h.Set("Lambda-Runtime-Trace-Id", "Root=1-5bef4de7-ad49b0e87f6ef6c87fc2e700;Parent=9a9197af755a6419;Sampled=1")
		h.Set("Content-Type", "application/json")
		w.Write(inv.payload)
	case <-r.Context().Done():
	}
}

func (f *Function) respond(isError bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("id")
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		f.mu.Lock()
		done, ok := f.waiting[id]
		delete(f.waiting, id)
		f.mu.Unlock()
		if !ok {
			http.Error(w, "unknown or answered request id "+id, http.StatusBadRequest)
			return
		}
		res := Result{Payload: body, IsError: isError}
		if isError {
			var e struct {
				ErrorMessage string `json:"errorMessage"`
				ErrorType    string `json:"errorType"`
			}
			json.Unmarshal(body, &e)
			res.ErrorType, res.ErrorMessage = e.ErrorType, e.ErrorMessage
		}
		w.WriteHeader(http.StatusAccepted)
		done <- res
	}
}

// Build compiles the main packages matching pattern (an import path, such
// as github.com/genvideo/gen/functions/...) the way `make build` does
// (-tags lambda.norpc, stripped, no cgo), for this machine, in one go command, and
// returns the binaries by package directory name.
func Build(t testing.TB, pattern string) map[string]string {
	t.Helper()
	dir := t.TempDir()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("build functions: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, goBin, "build", "-tags", "lambda.norpc", "-ldflags=-s -w", "-o", dir+string(os.PathSeparator), pattern)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pattern, err, out)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	bins := map[string]string{}
	for _, e := range entries {
		bins[e.Name()] = dir + string(os.PathSeparator) + e.Name()
	}
	return bins
}
