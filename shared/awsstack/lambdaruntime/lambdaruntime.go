// Package lambdaruntime runs a Lambda function's bootstrap binary the way
// AWS Lambda does, on one machine: each process gets a Lambda Runtime API
// of its own (the plain HTTP interface every custom runtime polls: GET
// /2018-06-01/runtime/invocation/next, then POST .../{id}/response or
// .../{id}/error), one invocation at a time; an answer is taken whole
// (Invoke) or handed on as the function posts it (InvokeStream, as
// Lambda's InvokeWithResponseStream). Process is one such process;
// Pool keeps the processes of one function, starting one on first use
// (the cold start) and more for concurrent invocations, and replacing one
// that dies. The tests of functions/ (through awsstacktest) and the AWS
// assembly on one machine (infra/aws-local) both run functions with it.
package lambdaruntime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Result is how an invocation ended: Payload on success; on a function
// error, ErrorType and ErrorMessage as the Runtime API received them
// (errorType is the Go type name of the error the handler returned).
// A streamed invocation (InvokeStream) that succeeds has Stream in place
// of Payload: the response as the function writes it.
type Result struct {
	Payload      []byte
	IsError      bool
	ErrorType    string
	ErrorMessage string
	Stream       io.ReadCloser
	// ended is closed when the function has finished a streamed answer.
	ended chan struct{}
}

// ErrExited is returned by Invoke when the process ended before it
// answered (it crashed, was killed, or its init failed): Lambda reports
// such an invocation as Runtime.ExitError.
var ErrExited = errors.New("lambda process exited")

// Process is one Lambda execution environment: a bootstrap process and
// its Runtime API.
type Process struct {
	name    string
	cmd     *exec.Cmd
	exited  chan struct{}
	srv     *http.Server
	ln      net.Listener
	timeout time.Duration

	events chan invocation
	// busy counts the invocations taken and not yet answered (0 or 1).
	busy atomic.Int32
	// started is when the process was started; ready is closed, and
	// readyAt set, at its first Runtime API next call.
	started   time.Time
	ready     chan struct{}
	readyAt   time.Time
	readyOnce sync.Once

	mu      sync.Mutex
	waiting map[string]waiter
	seq     int
}

// waiter is an invocation waiting for its answer: done receives it; a
// streamed one (InvokeStream) receives the response's body as it comes.
type waiter struct {
	done   chan Result
	stream bool
}

type invocation struct {
	id       string
	payload  []byte
	deadline time.Time
}

// Config says how to start a process.
type Config struct {
	// Name is the function's name (AWS_LAMBDA_FUNCTION_NAME).
	Name string
	// Binary is the bootstrap to run.
	Binary string
	// Env is its environment, before the variables Lambda itself sets.
	Env []string
	// Output receives the process's stdout and stderr.
	Output io.Writer
	// Timeout is the function's timeout, the deadline handed to each
	// invocation that has no earlier one; 0 means 15 minutes.
	Timeout time.Duration
	// MemoryMB is AWS_LAMBDA_FUNCTION_MEMORY_SIZE; 0 means 1024.
	MemoryMB int
}

// Start starts a process with a Runtime API of its own on loopback.
func Start(c Config) (*Process, error) {
	if c.Timeout <= 0 {
		c.Timeout = 15 * time.Minute
	}
	if c.MemoryMB <= 0 {
		c.MemoryMB = 1024
	}
	if c.Output == nil {
		c.Output = io.Discard
	}
	p := &Process{
		name:    c.Name,
		exited:  make(chan struct{}),
		events:  make(chan invocation),
		waiting: map[string]waiter{},
		ready:   make(chan struct{}),
		timeout: c.Timeout,
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("runtime API of %s: %w", c.Name, err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /2018-06-01/runtime/invocation/next", p.next)
	mux.HandleFunc("POST /2018-06-01/runtime/invocation/{id}/response", p.respond(false))
	mux.HandleFunc("POST /2018-06-01/runtime/invocation/{id}/error", p.respond(true))
	mux.HandleFunc("POST /2018-06-01/runtime/init/error", func(w http.ResponseWriter, r *http.Request) {
		io.Copy(c.Output, io.LimitReader(r.Body, 4<<10))
		w.WriteHeader(http.StatusAccepted)
	})
	p.ln, p.srv = ln, &http.Server{Handler: mux}
	go p.srv.Serve(ln)

	p.cmd = exec.Command(c.Binary)
	p.cmd.Env = append(append([]string(nil), c.Env...),
		"AWS_LAMBDA_RUNTIME_API="+ln.Addr().String(),
		"AWS_LAMBDA_FUNCTION_NAME="+c.Name,
		"AWS_LAMBDA_FUNCTION_MEMORY_SIZE="+strconv.Itoa(c.MemoryMB),
		"AWS_LAMBDA_LOG_FORMAT=JSON",
	)
	p.cmd.Stdout, p.cmd.Stderr = c.Output, c.Output
	p.started = time.Now()
	if err := p.cmd.Start(); err != nil {
		p.srv.Close()
		return nil, fmt.Errorf("start %s: %w", c.Name, err)
	}
	go func() {
		p.cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// PID is the process id.
func (p *Process) PID() int { return p.cmd.Process.Pid }

// Exited is closed once the process has ended.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// State describes how the process ended, once it has.
func (p *Process) State() string {
	select {
	case <-p.exited:
		return p.cmd.ProcessState.String()
	default:
		return "running"
	}
}

// Ready is closed at the process's first Runtime API next call, the end
// of its init.
func (p *Process) Ready() <-chan struct{} { return p.ready }

// InitDuration is the time from the start to the first next call, once
// Ready is closed.
func (p *Process) InitDuration() time.Duration { return p.readyAt.Sub(p.started) }

// Busy reports whether the process holds an invocation: it has taken
// an event and not yet answered it.
func (p *Process) Busy() bool { return p.busy.Load() > 0 }

// Kill kills the process, waits for it and closes its Runtime API.
func (p *Process) Kill() {
	p.cmd.Process.Kill()
	<-p.exited
	p.srv.Close() // also closes the long poll the process held
}

// Invoke hands event to the process and waits for its answer. It returns
// ErrExited if the process ends first, or ctx's error.
func (p *Process) Invoke(ctx context.Context, requestID string, event []byte) (Result, error) {
	return p.invoke(ctx, requestID, event, false)
}

// InvokeStream is Invoke as Lambda's InvokeWithResponseStream answers it:
// a successful Result's Stream is the response body as the function
// posts it to the Runtime API (chunk by chunk, as the Runtime API's
// streaming response mode does), to be read to its end or closed. ctx
// bounds the wait for the answer to begin; once it has begun, the stream
// lasts as long as the function writes (its own timeout bounds it), and
// a reader that closes it early leaves the function running, its further
// output discarded, as Lambda does when its client goes away (API
// Gateway, "Stream the integration response for your proxy integrations",
// https://docs.aws.amazon.com/apigateway/latest/developerguide/response-transfer-mode.html).
func (p *Process) InvokeStream(ctx context.Context, requestID string, event []byte) (Result, error) {
	return p.invoke(ctx, requestID, event, true)
}

func (p *Process) invoke(ctx context.Context, requestID string, event []byte, stream bool) (Result, error) {
	p.mu.Lock()
	p.seq++
	if requestID == "" {
		requestID = fmt.Sprintf("%08x-0000-4000-8000-%012d", p.PID(), p.seq)
	}
	done := make(chan Result, 1)
	p.waiting[requestID] = waiter{done: done, stream: stream}
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		delete(p.waiting, requestID)
		p.mu.Unlock()
	}()

	deadline := time.Now().Add(p.timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	select {
	case p.events <- invocation{id: requestID, payload: event, deadline: deadline}:
		p.busy.Add(1)
	case <-p.exited:
		return Result{}, fmt.Errorf("%s exited before taking the event (%v): %w", p.name, p.cmd.ProcessState, ErrExited)
	case <-ctx.Done():
		return Result{}, ctx.Err()
	}
	idle := true
	defer func() {
		if idle {
			p.busy.Add(-1)
		}
	}()
	select {
	case r := <-done:
		if r.ended != nil { // busy until the function has written it all
			idle = false
			go func() {
				<-r.ended
				p.busy.Add(-1)
			}()
		}
		return r, nil
	case <-p.exited:
		return Result{}, fmt.Errorf("%s exited during the invocation (%v): %w", p.name, p.cmd.ProcessState, ErrExited)
	case <-ctx.Done():
		return Result{}, ctx.Err()
	}
}

func (p *Process) next(w http.ResponseWriter, r *http.Request) {
	p.readyOnce.Do(func() {
		p.readyAt = time.Now()
		close(p.ready)
	})
	select {
	case inv := <-p.events:
		h := w.Header()
		h.Set("Lambda-Runtime-Aws-Request-Id", inv.id)
		h.Set("Lambda-Runtime-Deadline-Ms", strconv.FormatInt(inv.deadline.UnixMilli(), 10))
		h.Set("Lambda-Runtime-Invoked-Function-Arn", "arn:aws:lambda:us-east-1:123456789012:function:"+p.name)
		h.Set("Lambda-Runtime-Trace-Id", "Root=1-5bef4de7-ad49b0e87f6ef6c87fc2e700;Parent=9a9197af755a6419;Sampled=1")
		h.Set("Content-Type", "application/json")
		w.Write(inv.payload)
	case <-r.Context().Done():
	}
}

func (p *Process) respond(isError bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("id")
		p.mu.Lock()
		wt, ok := p.waiting[id]
		delete(p.waiting, id)
		p.mu.Unlock()
		if !ok {
			io.Copy(io.Discard, r.Body)
			http.Error(w, "unknown or answered request id "+id, http.StatusBadRequest)
			return
		}
		done := wt.done
		if wt.stream && !isError {
			p.stream(w, r, done)
			return
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
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

// stream hands a streamed response's body to its invocation as the
// function writes it, and answers the function once the body has ended.
// An error the function reports after the stream began (aws-lambda-go
// sends it in the Lambda-Runtime-Function-Error-Type trailer) ends the
// stream with that error. A reader that stops early (closes the stream)
// no longer receives the rest, which is read and discarded.
func (p *Process) stream(w http.ResponseWriter, r *http.Request, done chan<- Result) {
	pr, pw := io.Pipe()
	ended := make(chan struct{})
	defer close(ended)
	done <- Result{Stream: pr, ended: ended}
	_, err := io.Copy(pw, r.Body)
	if errors.Is(err, io.ErrClosedPipe) {
		_, err = io.Copy(io.Discard, r.Body)
	}
	if err == nil {
		if typ := r.Trailer.Get("Lambda-Runtime-Function-Error-Type"); typ != "" {
			err = fmt.Errorf("%s failed during its streamed response: %s", p.name, typ)
		}
	}
	if err == nil {
		err = io.EOF
	}
	pw.CloseWithError(err)
	w.WriteHeader(http.StatusAccepted)
}

// Build compiles the main packages matching pattern (an import path, such
// as github.com/genvideo/gen/functions/...) the way `make build` does
// (-tags lambda.norpc, stripped, no cgo), for this machine, in one go
// command run in dir ("" for the current directory), into out, and returns
// the binaries by package directory name.
func Build(ctx context.Context, dir, pattern, out string) (map[string]string, error) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		return nil, fmt.Errorf("build functions: %w", err)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, fmt.Errorf("build functions: %w", err)
	}
	cmd := exec.CommandContext(ctx, goBin, "build", "-tags", "lambda.norpc", "-trimpath", "-ldflags=-s -w",
		"-o", out+string(os.PathSeparator), pattern)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("go build %s: %w\n%s", pattern, err, b)
	}
	entries, err := os.ReadDir(out)
	if err != nil {
		return nil, fmt.Errorf("build functions: %w", err)
	}
	bins := map[string]string{}
	for _, e := range entries {
		if !e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			bins[e.Name()] = filepath.Join(out, e.Name())
		}
	}
	return bins, nil
}
