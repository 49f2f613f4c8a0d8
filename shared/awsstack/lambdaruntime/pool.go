package lambdaruntime

import (
	"context"
	"errors"
	"io"
	"sync"
)

// Pool runs the invocations of one function as Lambda does: an idle
// process takes the next invocation; with none idle a new process starts
// (a cold start), so that concurrent invocations run in processes of
// their own; a process that dies fails the invocation it ran, and is not
// reused.
type Pool struct {
	cfg Config
	// OnStart, if set, is told about each process started and whether
	// its start failed.
	onStart func(p *Process, err error)
	// output returns the writer of a new process's output.
	output func(pid int) io.Writer

	mu     sync.Mutex
	idle   []*Process
	all    map[*Process]bool
	closed bool
}

// NewPool returns a pool of processes started with cfg. output, if not
// nil, gives the writer of each process's output by its pid, and
// onStart, if not nil, is told of each start.
func NewPool(cfg Config, output func(pid int) io.Writer, onStart func(p *Process, err error)) *Pool {
	pl := &Pool{cfg: cfg, onStart: onStart, all: map[*Process]bool{}}
	if output != nil {
		pl.output = output
	}
	return pl
}

// Name is the function's name.
func (pl *Pool) Name() string { return pl.cfg.Name }

// ErrClosed is returned by Invoke once the pool is closed.
var ErrClosed = errors.New("lambda pool closed")

// Invoke runs event in an idle process, or a new one. cold says whether
// a process was started for it.
func (pl *Pool) Invoke(ctx context.Context, requestID string, event []byte) (res Result, p *Process, cold bool, err error) {
	return pl.invoke(func(p *Process) (Result, error) { return p.Invoke(ctx, requestID, event) })
}

// InvokeStream is Invoke as InvokeWithResponseStream answers it
// (Process.InvokeStream): the process is taken for no other invocation
// until the function has finished writing its stream.
func (pl *Pool) InvokeStream(ctx context.Context, requestID string, event []byte) (res Result, p *Process, cold bool, err error) {
	return pl.invoke(func(p *Process) (Result, error) { return p.InvokeStream(ctx, requestID, event) })
}

// invoke takes a process, runs call on it, and settles the process after.
func (pl *Pool) invoke(call func(*Process) (Result, error)) (res Result, p *Process, cold bool, err error) {
	p, cold, err = pl.take()
	if err != nil {
		return Result{}, nil, cold, err
	}
	res, err = call(p)
	switch {
	case errors.Is(err, ErrExited):
		pl.drop(p)
	case err != nil:
		// The caller gave up (a timeout): Lambda ends the environment
		// of a timed-out invocation, and so does the pool.
		pl.drop(p)
		go p.Kill()
	case res.ended != nil:
		// A stream: the process is idle once its body is written.
		go func() {
			<-res.ended
			pl.put(p)
		}()
	default:
		pl.put(p)
	}
	return res, p, cold, err
}

// Processes lists the live processes, idle or busy.
func (pl *Pool) Processes() []*Process {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	var out []*Process
	for p := range pl.all {
		out = append(out, p)
	}
	return out
}

// Close kills every process.
func (pl *Pool) Close() {
	pl.mu.Lock()
	pl.closed = true
	all := pl.all
	pl.all, pl.idle = map[*Process]bool{}, nil
	pl.mu.Unlock()
	for p := range all {
		p.Kill()
	}
}

func (pl *Pool) take() (*Process, bool, error) {
	pl.mu.Lock()
	if pl.closed {
		pl.mu.Unlock()
		return nil, false, ErrClosed
	}
	for len(pl.idle) > 0 {
		p := pl.idle[len(pl.idle)-1]
		pl.idle = pl.idle[:len(pl.idle)-1]
		select {
		case <-p.Exited():
			delete(pl.all, p)
			continue
		default:
		}
		pl.mu.Unlock()
		return p, false, nil
	}
	pl.mu.Unlock()

	cfg := pl.cfg
	var lazy *lazyWriter
	if pl.output != nil {
		lazy = &lazyWriter{}
		cfg.Output = lazy
	}
	p, err := Start(cfg)
	if pl.onStart != nil {
		pl.onStart(p, err)
	}
	if err != nil {
		return nil, true, err
	}
	if lazy != nil {
		lazy.set(pl.output(p.PID()))
	}
	pl.mu.Lock()
	defer pl.mu.Unlock()
	if pl.closed {
		go p.Kill()
		return nil, true, ErrClosed
	}
	pl.all[p] = true
	return p, true, nil
}

func (pl *Pool) put(p *Process) {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	if pl.all[p] {
		pl.idle = append(pl.idle, p)
	}
}

func (pl *Pool) drop(p *Process) {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	delete(pl.all, p)
}

// lazyWriter holds what a process writes before its pid (and so its
// label) is known, then passes everything on.
type lazyWriter struct {
	mu  sync.Mutex
	w   io.Writer
	buf []byte
}

func (l *lazyWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.w == nil {
		l.buf = append(l.buf, b...)
		return len(b), nil
	}
	return l.w.Write(b)
}

func (l *lazyWriter) set(w io.Writer) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.w = w
	if len(l.buf) > 0 {
		w.Write(l.buf)
		l.buf = nil
	}
}
