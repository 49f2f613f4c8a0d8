package asl

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"
)

// TaskFunc is what a Task state's Resource runs: a Lambda handler's
// shape, JSON in and JSON out. Its error is named by ErrorName, and its
// context is cancelled when the execution is aborted or the task times out.
type TaskFunc func(ctx context.Context, input json.RawMessage) (json.RawMessage, error)

// Handler adapts a typed handler, such as one given to aws-lambda-go's
// lambda.Start, to a TaskFunc: the input is decoded into In and the
// output encoded from Out. As in aws-lambda-go, a decoding error is
// returned as it is (so it is named after the encoding/json error type).
func Handler[In, Out any](f func(context.Context, In) (Out, error)) TaskFunc {
	return func(ctx context.Context, input json.RawMessage) (json.RawMessage, error) {
		var in In
		if err := json.Unmarshal(input, &in); err != nil {
			return nil, err
		}
		out, err := f(ctx, in)
		if err != nil {
			return nil, err
		}
		return json.Marshal(out)
	}
}

// clock is the executor's time: Retry intervals, Wait states and
// timeouts are all its timers, so tests can run them without waiting.
type clock interface {
	Now() time.Time
	// AfterFunc calls f in its own goroutine after d (at once if d <= 0);
	// the function it returns stops the timer.
	AfterFunc(d time.Duration, f func()) (stop func() bool)
}

type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

func (systemClock) AfterFunc(d time.Duration, f func()) func() bool { return time.AfterFunc(d, f).Stop }

// Option configures an Executor.
type Option func(*Executor)

// WithTaskConcurrency runs at most n Task states' functions at once,
// across every execution; the others wait their turn in the order they
// were entered, holding no goroutine, as a Lambda function's reserved
// concurrency holds its invocations back. A task's TimeoutSeconds runs
// while it waits, as it does on AWS. 0, the default, is no bound.
func WithTaskConcurrency(n int) Option { return func(e *Executor) { e.slots = n } }

// WithLogger sets where state transitions (debug) and failures (warn) are
// logged. The default discards them.
func WithLogger(l *slog.Logger) Option { return func(e *Executor) { e.logger = l } }

// Errors of Run and Start.
var (
	// ErrClosed: the executor has been closed.
	ErrClosed = errors.New("asl: executor closed")
	// ErrRunning: Run was given the name of an execution still running.
	ErrRunning = errors.New("asl: an execution with this name is running")
)

// Executor runs executions of one state machine, with Task resources
// resolved to Go functions.
type Executor struct {
	sm     *StateMachine
	tasks  map[string]TaskFunc
	clock  clock
	logger *slog.Logger

	base context.Context // cancelled by Close
	stop context.CancelFunc

	mu      sync.Mutex
	idle    *sync.Cond // signalled when active drops to 0
	active  int        // executions and task calls still running
	running map[string]bool
	// cancels aborts each running execution by name (Stop).
	cancels map[string]context.CancelFunc
	closed  bool

	// slots bounds the task functions running at once (0: none); busy
	// are running, queue waits (WithTaskConcurrency).
	slots int
	qmu   sync.Mutex
	busy  int
	queue []func()
}

// NewExecutor returns an executor for sm. tasks maps every Task Resource
// of sm (after substitution) to its function; a missing one is an error.
func NewExecutor(sm *StateMachine, tasks map[string]TaskFunc, opts ...Option) (*Executor, error) {
	for _, res := range sm.Resources() {
		if tasks[res] == nil {
			return nil, fmt.Errorf("asl: no task function for resource %q", res)
		}
	}
	e := &Executor{
		sm:      sm,
		tasks:   tasks,
		clock:   systemClock{},
		logger:  slog.New(slog.NewTextHandler(io.Discard, nil)),
		running: map[string]bool{},
		cancels: map[string]context.CancelFunc{},
	}
	e.idle = sync.NewCond(&e.mu)
	for _, o := range opts {
		o(e)
	}
	e.base, e.stop = context.WithCancel(context.Background())
	return e, nil
}

// Run runs an execution to its end and returns its record. The error is
// nil when it succeeded, the *Error that failed it (Failed, TimedOut), or
// the context's error when ctx was cancelled or the executor closed
// (Aborted). input is encoded as JSON (pass a json.RawMessage for JSON
// text). An execution of the same name must not be running.
func (e *Executor) Run(ctx context.Context, name string, input any) (Execution, error) {
	doc, err := encodeInput(input)
	if err != nil {
		return Execution{}, err
	}
	if err := e.register(name); err != nil {
		return Execution{}, err
	}
	defer e.unregister(name)
	ctx, cancel := e.link(ctx)
	defer cancel()
	e.setCancel(name, cancel)
	ended := make(chan Execution, 1)
	e.begin(ctx, name, doc, func(exec Execution) { ended <- exec })
	exec := <-ended
	switch exec.Status {
	case Succeeded:
		return exec, nil
	case Aborted:
		if err := ctx.Err(); err != nil {
			return exec, err
		}
		return exec, context.Canceled
	default:
		return exec, exec.Error
	}
}

// Start starts an execution in the background and returns. Like
// StartExecution it is idempotent: while an execution of that name runs,
// starting it again does nothing. The execution outlives ctx (whose values
// it keeps): it runs until it ends or the executor is closed. Its states
// up to its first task call or wait run before Start returns (Pass and
// Choice states take microseconds); the rest runs in the background.
func (e *Executor) Start(ctx context.Context, name string, input any) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	doc, err := encodeInput(input)
	if err != nil {
		return err
	}
	if err := e.register(name); err != nil {
		if errors.Is(err, ErrRunning) {
			e.logger.Debug("execution already running", "execution", name)
			return nil
		}
		return err
	}
	xctx, cancel := e.link(context.WithoutCancel(ctx))
	e.setCancel(name, cancel)
	// The execution runs here until its first task call or wait, which
	// carry it on in the background (run.go).
	e.begin(xctx, name, doc, func(Execution) {
		cancel()
		e.unregister(name)
	})
	return nil
}

// Running reports whether an execution of that name is running.
func (e *Executor) Running(name string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.running[name]
}

// Stop aborts the running execution of that name, as StopExecution
// does: the contexts of its task calls are cancelled, it takes no
// further state, and it ends Aborted. It reports whether one was
// running.
func (e *Executor) Stop(name string) bool {
	e.mu.Lock()
	cancel, ok := e.cancels[name]
	e.mu.Unlock()
	if ok {
		cancel()
	}
	return ok
}

// setCancel records how to abort the registered execution name.
func (e *Executor) setCancel(name string, cancel context.CancelFunc) {
	e.mu.Lock()
	if e.running[name] {
		e.cancels[name] = cancel
	}
	e.mu.Unlock()
}

// Wait blocks until no execution is running (including task calls left
// behind by timeouts or aborts).
func (e *Executor) Wait() {
	e.mu.Lock()
	defer e.mu.Unlock()
	for e.active > 0 {
		e.idle.Wait()
	}
}

// Close aborts every running execution, cancelling the contexts of their
// task calls, waits for them to return, and makes later Run and Start
// calls fail with ErrClosed. Aborted executions can be started again by
// another executor: their tasks are expected to be idempotent.
func (e *Executor) Close() {
	e.mu.Lock()
	e.closed = true
	e.mu.Unlock()
	e.stop()
	e.Wait()
}

func (e *Executor) register(name string) error {
	if name == "" {
		return errors.New("asl: an execution needs a name")
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	switch {
	case e.closed:
		return ErrClosed
	case e.running[name]:
		return ErrRunning
	}
	e.running[name] = true
	e.active++
	return nil
}

func (e *Executor) unregister(name string) {
	e.mu.Lock()
	delete(e.running, name)
	delete(e.cancels, name)
	e.mu.Unlock()
	e.release()
}

// acquire counts a task call, which may outlive its execution (timeouts).
// It is only called while an execution is registered, so active > 0.
func (e *Executor) acquire() {
	e.mu.Lock()
	e.active++
	e.mu.Unlock()
}

func (e *Executor) release() {
	e.mu.Lock()
	e.active--
	if e.active == 0 {
		e.idle.Broadcast()
	}
	e.mu.Unlock()
}

// spawn runs f in a goroutine of its own, or, when every slot is busy,
// after the task functions ahead of it, in the goroutine of one that
// finished.
func (e *Executor) spawn(f func()) {
	if e.slots <= 0 {
		go f()
		return
	}
	e.qmu.Lock()
	if e.busy < e.slots {
		e.busy++
		e.qmu.Unlock()
		go e.work(f)
		return
	}
	e.queue = append(e.queue, f)
	e.qmu.Unlock()
}

// work runs f, then what waits, until nothing does.
func (e *Executor) work(f func()) {
	for f != nil {
		f()
		e.qmu.Lock()
		if len(e.queue) == 0 {
			e.busy--
			f = nil
		} else {
			f, e.queue[0] = e.queue[0], nil
			e.queue = e.queue[1:]
		}
		e.qmu.Unlock()
	}
}

// link returns a context that is done when parent is or when the executor
// is closed.
func (e *Executor) link(parent context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(parent)
	stop := context.AfterFunc(e.base, cancel)
	return ctx, func() {
		stop()
		cancel()
	}
}

func encodeInput(input any) (any, error) {
	data, err := json.Marshal(input)
	if err != nil {
		return nil, fmt.Errorf("asl: encode execution input: %w", err)
	}
	doc, err := decode(data)
	if err != nil {
		return nil, fmt.Errorf("asl: encode execution input: %w", err)
	}
	return doc, nil
}
