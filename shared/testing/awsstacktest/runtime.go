package awsstacktest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/genvideo/gen/shared/awsstack/lambdaruntime"
	"github.com/genvideo/gen/shared/testing/logtest"
)

// invokeTimeout bounds one invocation in a test, so that a function that
// hangs fails the test with its log rather than stalling the run. It is a
// safety net, not an assertion: invocations take seconds.
const invokeTimeout = 3 * time.Minute

// Result is how an invocation ended (lambdaruntime.Result).
type Result = lambdaruntime.Result

// Function is one Lambda process (lambdaruntime.Process), driven through
// its Runtime API, with the test's failure handling.
type Function struct {
	name string
	p    *lambdaruntime.Process
	log  *logtest.Buffer
}

// StartFunction runs binary as a Lambda with the environment env (plus
// AWS_LAMBDA_RUNTIME_API pointing at its runtime). The process is
// killed when the test ends.
func StartFunction(t testing.TB, name, binary string, env []string) *Function {
	t.Helper()
	f := &Function{name: name, log: &logtest.Buffer{}}
	p, err := lambdaruntime.Start(lambdaruntime.Config{Name: name, Binary: binary, Env: env, Output: f.log, Timeout: invokeTimeout})
	if err != nil {
		t.Fatal(err)
	}
	f.p = p
	t.Cleanup(func() {
		p.Kill()
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
	ctx, cancel := context.WithTimeout(context.Background(), invokeTimeout)
	defer cancel()
	r, err := f.p.Invoke(ctx, "", event)
	if errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("%s did not answer within %v:\n%s", f.name, invokeTimeout, f.Log())
	}
	if err != nil {
		t.Fatalf("%v:\n%s", err, f.Log())
	}
	return r
}

// Exited waits for the process to end (a cold start that fails) and
// returns its log; it fails the test if the process asks for an event
// instead.
func (f *Function) Exited(t testing.TB) string {
	t.Helper()
	timeout := time.NewTimer(invokeTimeout)
	defer timeout.Stop()
	select {
	case <-f.p.Exited():
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
	case <-f.p.Ready():
		return f.p.InitDuration()
	case <-f.p.Exited():
		t.Fatalf("%s exited during its init (%v):\n%s", f.name, f.p.State(), f.Log())
	case <-timeout.C:
		t.Fatalf("%s did not ask for an event within %v:\n%s", f.name, invokeTimeout, f.Log())
	}
	return 0
}

// Build compiles the main packages matching pattern (an import path, such
// as github.com/genvideo/gen/functions/...) the way `make build` does, for
// this machine (lambdaruntime.Build), and returns the binaries by package
// directory name.
func Build(t testing.TB, pattern string) map[string]string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	bins, err := lambdaruntime.Build(ctx, "", pattern, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return bins
}
