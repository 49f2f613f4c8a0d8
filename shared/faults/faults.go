// Package faults injects failures at the service's boundaries: the store,
// blob storage and the video generator. Each decorator (WrapStore,
// WrapBlobs, WrapGenerator) wraps the real dependency and asks an
// Injector, call by call, what happens to the call: nothing, an error, a
// delay, a panic, an error after the call took effect (a reply lost on
// the way back), or a hang that stands for the process dying there.
// Calls are named "<Component>.<Method>": "Store.CreateTask",
// "Blobs.Put", "Generator.Generate".
//
// WrapDirectives is the other kind: the generator fails, refuses, stalls
// or drops a sample when the prompt says so ("[fail]", "[slow:30]"), and
// fails a share of generations at random.
//
// The fault-injection tests and the soak run use the decorators. The
// local service wraps its generator with WrapDirectives only when told to
// (GEN_FAULT_INJECTION=on); the AWS stack never imports this package.
package faults

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/genvideo/gen/shared/provider"
	"github.com/genvideo/gen/shared/store"
	"github.com/genvideo/gen/shared/task"
)

// ErrInjected is wrapped by every error this package makes.
var ErrInjected = errors.New("injected fault")

// ErrCrashed is wrapped by every call made after Injector.Crash, and by
// the hung calls it releases.
var ErrCrashed = errors.New("the process crashed")

// Detail is internal-looking text (a file path, SQL, a source line) that
// every injected error carries. It belongs in logs; a test that finds any
// of DetailMarkers in a response body has found a leak.
const Detail = "/var/lib/gen/gen.db: SELECT credits FROM accounts WHERE id = ?: disk I/O error (sqlitestore/tasks.go:42)"

// DetailMarkers are fragments of Detail, each unlikely in a response.
var DetailMarkers = []string{"/var/lib/gen", "SELECT credits", "tasks.go:42", "disk I/O", "injected fault"}

// Unavailable is an outage of the dependency: it wraps store.ErrUnavailable,
// which the API answers with 503 and the workflow retries.
func Unavailable() error {
	return fmt.Errorf("%w: %w: %s", ErrInjected, store.ErrUnavailable, Detail)
}

// Broken is a failure of no known kind: the API answers it with 500.
func Broken() error {
	return fmt.Errorf("%w: %s", ErrInjected, Detail)
}

// Transient is a generator failure worth retrying (provider.Transient).
func Transient() error {
	return &generatorError{msg: "temporary generator failure: " + Detail, transient: true}
}

// Refused is the generator's content-policy refusal (FailureCode
// CONTENT_POLICY_VIOLATION).
func Refused() error {
	return &generatorError{msg: "refused by the content policy: " + Detail, code: task.FailContentPolicy}
}

// generatorError is classified as the renderer's errors are
// (provider.Classifier); Transient and FailureCode say the same for
// the faults' own tests.
type generatorError struct {
	msg       string
	transient bool
	code      string
	// cause, when not nil, is wrapped too (a context's error).
	cause error
}

func (e *generatorError) Error() string {
	if e.cause != nil {
		return fmt.Sprintf("%s: %s: %s", ErrInjected, e.msg, e.cause)
	}
	return fmt.Sprintf("%s: %s", ErrInjected, e.msg)
}

func (e *generatorError) Unwrap() []error {
	if e.cause != nil {
		return []error{ErrInjected, e.cause}
	}
	return []error{ErrInjected}
}

func (e *generatorError) Transient() bool     { return e.transient }
func (e *generatorError) FailureCode() string { return e.code }

// Classify reads the fault as the renderer's errors read.
func (e *generatorError) Classify() provider.Answer {
	switch {
	case e.transient:
		return provider.Answer{Class: provider.Transient}
	case e.code == task.FailContentPolicy:
		return provider.Answer{Class: provider.Refused}
	}
	return provider.Answer{Class: provider.Failed}
}

// Fault is what happens to one call. The zero Fault lets it through.
type Fault struct {
	// Delay holds the call this long before it runs. If the call's context
	// ends first, the call fails with the context's error (wrapped in
	// store.ErrUnavailable for the store) and does not run.
	Delay time.Duration
	// Err is returned instead of the call's own result. The call does not
	// run, unless After is set.
	Err error
	// After lets the call run, and take effect, before Err, Panic or Hang
	// apply: the caller does not learn that it succeeded.
	After bool
	// Panic, when not nil, makes the call panic with this value.
	Panic any
	// Hang blocks the call until its context ends or the injector crashes,
	// and then fails it: the process stopped there.
	Hang bool
}

func (f Fault) zero() bool { return f == Fault{} }

// Rule decides the fault of the n-th call (counted from 1) of a method.
type Rule func(method string, n int) Fault

// Always gives every call the fault f.
func Always(f Fault) Rule { return func(string, int) Fault { return f } }

// Nth gives the n-th call the fault f, and lets the others through.
func Nth(n int, f Fault) Rule {
	return func(_ string, i int) Fault {
		if i == n {
			return f
		}
		return Fault{}
	}
}

// Random gives each call, with probability rate, one of faults chosen at
// random, drawn from a source seeded with seed. Goroutines calling at once
// decide in the order they get there, so a seed fixes the sequence of
// decisions, not which call gets which.
func Random(seed uint64, rate float64, faults ...Fault) Rule {
	var mu sync.Mutex
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	return func(string, int) Fault {
		mu.Lock()
		defer mu.Unlock()
		if len(faults) == 0 || r.Float64() >= rate {
			return Fault{}
		}
		return faults[r.IntN(len(faults))]
	}
}

// Injector decides the faults of the calls of every decorator built on
// it. Rules are set per method name, or per prefix with a trailing "*"
// ("Store.*", or "*" for every call); an exact name wins over a prefix,
// and a longer prefix over a shorter one. It is safe for concurrent use.
type Injector struct {
	mu       sync.Mutex
	rules    map[string]Rule
	calls    map[string]int
	trace    []string
	injected int
	crashed  chan struct{}
	crash    sync.Once
	hung     chan string
}

// NewInjector returns an injector with no rules: every call goes through.
func NewInjector() *Injector {
	return &Injector{
		rules:   map[string]Rule{},
		calls:   map[string]int{},
		crashed: make(chan struct{}),
		hung:    make(chan string, 64),
	}
}

// Set makes r decide the calls matching pattern; a nil r removes the rule.
func (in *Injector) Set(pattern string, r Rule) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if r == nil {
		delete(in.rules, pattern)
		return
	}
	in.rules[pattern] = r
}

// Reset removes every rule and forgets the calls counted and traced so
// far (not a crash: that is for good).
func (in *Injector) Reset() {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.rules = map[string]Rule{}
	in.calls = map[string]int{}
	in.trace = nil
	in.injected = 0
}

// Calls is how many calls of method were made since the last Reset.
func (in *Injector) Calls(method string) int {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.calls[method]
}

// Trace lists the names of the calls made since the last Reset, in the
// order they were made.
func (in *Injector) Trace() []string {
	in.mu.Lock()
	defer in.mu.Unlock()
	return append([]string(nil), in.trace...)
}

// Injected is how many calls got a fault since the last Reset.
func (in *Injector) Injected() int {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.injected
}

// Hung receives the name of each call that starts to hang.
func (in *Injector) Hung() <-chan string { return in.hung }

// Crash stands for the death of the process: hung calls return, and every
// later call fails at once without running, so that nothing the dead
// process still had under way reaches a dependency.
func (in *Injector) Crash() { in.crash.Do(func() { close(in.crashed) }) }

func (in *Injector) isCrashed() bool {
	select {
	case <-in.crashed:
		return true
	default:
		return false
	}
}

// decide counts the call and returns its fault.
func (in *Injector) decide(method string) Fault {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.calls[method]++
	in.trace = append(in.trace, method)
	r := in.rule(method)
	if r == nil {
		return Fault{}
	}
	f := r(method, in.calls[method])
	if !f.zero() {
		in.injected++
	}
	return f
}

// rule finds the rule for method; in.mu is held.
func (in *Injector) rule(method string) Rule {
	if r, ok := in.rules[method]; ok {
		return r
	}
	var best Rule
	bestLen := -1
	for p, r := range in.rules {
		prefix, ok := strings.CutSuffix(p, "*")
		if ok && strings.HasPrefix(method, prefix) && len(prefix) > bestLen {
			best, bestLen = r, len(prefix)
		}
	}
	return best
}

// failure turns a cause (the context's error, or ErrCrashed) into the
// error a component returns for it.
type failure func(method string, cause error) error

func storeFailure(method string, cause error) error {
	return fmt.Errorf("%s: %w: %w", method, store.ErrUnavailable, cause)
}

func plainFailure(method string, cause error) error {
	return fmt.Errorf("%s: %w", method, cause)
}

// call runs fn, the real call, under the fault the injector decides.
func (in *Injector) call(ctx context.Context, method string, fail failure, fn func() error) error {
	if in.isCrashed() {
		return fail(method, ErrCrashed)
	}
	f := in.decide(method)
	if f.Delay > 0 {
		t := time.NewTimer(f.Delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return fail(method, ctx.Err())
		case <-in.crashed:
			t.Stop()
			return fail(method, ErrCrashed)
		case <-t.C:
		}
	}
	var err error
	if f.After {
		err = fn()
	}
	if f.Panic != nil {
		panic(f.Panic)
	}
	if f.Hang {
		select {
		case in.hung <- method:
		default:
		}
		select {
		case <-ctx.Done():
			return fail(method, ctx.Err())
		case <-in.crashed:
			return fail(method, ErrCrashed)
		}
	}
	if f.Err != nil {
		return f.Err
	}
	if f.After {
		return err
	}
	return fn()
}
