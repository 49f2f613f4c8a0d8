// Package providertest is the conformance suite every provider adapter
// passes against its strict fake (Run): that each answer class of the
// contract (provider.Class) comes back as the adapter's provider gives
// it, at submit or once the job is done; that a task's job is paid for
// once, and only when the provider accepted it (the fake's Accepted);
// that a done job records what it cost; and that the start-up check
// tells credentials refused and models retired apart. What each class
// then does to the task and its money is the workflow's, one table for
// every provider (infra/docs/providers.md, "Outcomes").
//
// The suite takes a T rather than a *testing.T so that a test can show
// it failing an adapter that misreads its provider.
package providertest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime"
	"time"

	"github.com/genvideo/gen/shared/provider"
)

// T is the part of testing.TB the suite uses.
type T interface {
	Helper()
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
	Context() context.Context
	TempDir() string
	Cleanup(func())
}

// Fake is what the suite reads of a strict fake (providerfake.Base has it).
type Fake interface {
	// Accepted counts the jobs started for prompts containing text:
	// what the provider bills.
	Accepted(text string) int
}

// Setup is what an adapter under test is started with.
type Setup struct {
	// WrongCredentials: the adapter presents credentials the fake
	// refuses.
	WrongCredentials bool
	// Retired: the fake no longer serves the provider model the job's
	// model maps to.
	Retired bool
}

// Harness is one adapter as the suite drives it.
type Harness struct {
	// Start returns the adapter, talking to a new strict fake set up as
	// s says, and the fake.
	Start func(t T, s Setup) (provider.Provider, Fake)
	// Job is a job of prompt that the adapter's capability table takes.
	Job func(t T, prompt string) provider.Job
	// Submit makes the fake answer a submit of prompt with class, once
	// set; a class the provider never answers at submit is left out.
	Submit map[provider.Class]func(f Fake, prompt string)
	// Done makes the fake end an accepted job of prompt with class.
	Done map[provider.Class]func(f Fake, prompt string)
	// BusyAfter is the wait the fake's Busy answer asks for.
	BusyAfter time.Duration
	// Local: the provider runs on the service's own machine (the
	// built-in renderer): it bills nothing, and has no credentials to
	// refuse nor models to retire.
	Local bool
}

// maxPolls bounds the polls of a job the fake finishes: no fake takes
// more than a few.
const maxPolls = 10

// Run runs the suite on h.
func Run(t T, h Harness) {
	t.Helper()
	accepted(t, h)
	for c, set := range h.Submit {
		atSubmit(t, h, c, set)
	}
	for c, set := range h.Done {
		atDone(t, h, c, set)
	}
	if !h.Local {
		credentials(t, h)
		retired(t, h)
	}
}

// poll follows op until it is done or fails.
func poll(t T, p provider.Provider, op provider.Operation, job provider.Job) (provider.Operation, error) {
	var err error
	for range maxPolls {
		if op.Done {
			return op, nil
		}
		if op, err = p.Poll(t.Context(), op.Name, job); err != nil {
			return op, err
		}
	}
	t.Fatalf("%s: not done after %d polls", job.Prompt, maxPolls)
	return op, nil
}

// accepted: a job the provider takes is one paid job, followed to its
// videos, and its billing records the provider's model and a cost.
func accepted(t T, h Harness) {
	t.Helper()
	p, f := h.Start(t, Setup{})
	job := h.Job(t, "conformance: accepted")
	op, err := p.Submit(t.Context(), job)
	if c := provider.Classify(err).Class; c != provider.Accepted {
		t.Fatalf("accepted: Submit = %v (%s), want accepted", err, c)
	}
	if !op.Done && op.Name == "" {
		t.Errorf("accepted: Submit answered no operation name, and the job is not done")
	}
	op, err = poll(t, p, op, job)
	if err != nil {
		t.Fatalf("accepted: Poll = %v, want done", err)
	}
	if len(op.Result.Paths) == 0 {
		t.Errorf("accepted: done with no video")
	}
	for _, path := range op.Result.Paths {
		if fi, err := os.Stat(path); err != nil || fi.Size() == 0 {
			t.Errorf("accepted: video %s: %v, want a file in the job's folder", path, err)
		}
	}
	if !h.Local && (op.Billing.ProviderModel == "" || op.Billing.CostUSD <= 0) {
		t.Errorf("accepted: billing %+v, want the provider's model and what the job cost", op.Billing)
	}
	if n := f.Accepted(job.Prompt); n != 1 {
		t.Errorf("accepted: the fake started %d jobs, want 1", n)
	}
}

// atSubmit: a submit answered c; only an ambiguous answer may have
// started a job, which is never submitted again.
func atSubmit(t T, h Harness, c provider.Class, set func(Fake, string)) {
	t.Helper()
	p, f := h.Start(t, Setup{})
	job := h.Job(t, "conformance: at submit, "+c.String())
	set(f, job.Prompt)
	_, err := p.Submit(t.Context(), job)
	got := provider.Classify(err)
	if got.Class != c {
		t.Errorf("submit answered %s: Submit = %v, classified %s", c, err, got.Class)
		return
	}
	want := 0
	if c == provider.OutcomeUnknown {
		want = 1 // the fake took it; its answer was lost
	}
	if n := f.Accepted(job.Prompt); n != want {
		t.Errorf("submit answered %s: the fake started %d jobs, want %d", c, n, want)
	}
	switch c {
	case provider.Busy:
		if got.After != h.BusyAfter {
			t.Errorf("submit answered busy: wait %s, want the provider's hint %s", got.After, h.BusyAfter)
		}
	case provider.Refused:
		if got.Category == "" {
			t.Errorf("submit refused: no category for the client")
		}
	}
	checkMoney(t, "submit answered "+c.String(), c)
}

// atDone: an accepted job that ends c is one paid job.
func atDone(t T, h Harness, c provider.Class, set func(Fake, string)) {
	t.Helper()
	p, f := h.Start(t, Setup{})
	job := h.Job(t, "conformance: done, "+c.String())
	set(f, job.Prompt)
	op, err := p.Submit(t.Context(), job)
	if err != nil {
		t.Errorf("done %s: Submit = %v, want accepted", c, err)
		return
	}
	_, err = poll(t, p, op, job)
	if got := provider.Classify(err).Class; got != c {
		t.Errorf("done %s: Poll = %v, classified %s", c, err, got)
	}
	if n := f.Accepted(job.Prompt); n != 1 {
		t.Errorf("done %s: the fake started %d jobs, want 1", c, n)
	}
	checkMoney(t, "done "+c.String(), c)
}

// checkMoney: what the task records for c, as the outcome table says.
func checkMoney(t T, what string, c provider.Class) {
	t.Helper()
	want := map[provider.Class]string{provider.Refused: "CONTENT_POLICY_VIOLATION", provider.ModelRetired: "MODEL_UNAVAILABLE",
		provider.OutcomeUnknown: "PROVIDER_OUTCOME_UNKNOWN"}[c]
	if want == "" {
		want = "GENERATION_FAILED"
	}
	if got := c.FailureCode(); got != want {
		t.Errorf("%s: the task would fail %s, want %s", what, got, want)
	}
}

// credentials: credentials refused at submit start nothing, and the
// start-up check says so.
func credentials(t T, h Harness) {
	t.Helper()
	p, f := h.Start(t, Setup{WrongCredentials: true})
	job := h.Job(t, "conformance: credentials refused")
	_, err := p.Submit(t.Context(), job)
	if c := provider.Classify(err).Class; c != provider.CredentialsRefused {
		t.Errorf("wrong credentials: Submit = %v (%s), want credentials refused", err, c)
	}
	if n := f.Accepted(job.Prompt); n != 0 {
		t.Errorf("wrong credentials: the fake started %d jobs, want none", n)
	}
	if c, ok := p.(provider.Checker); ok {
		if err := c.Check(t.Context()); err == nil {
			t.Errorf("wrong credentials: the start-up check passed")
		}
	}
}

// retired: a model the provider no longer serves is refused at submit
// as retired, and found by the start-up check without stopping it.
func retired(t T, h Harness) {
	t.Helper()
	p, f := h.Start(t, Setup{Retired: true})
	job := h.Job(t, "conformance: retired")
	_, err := p.Submit(t.Context(), job)
	if c := provider.Classify(err).Class; c != provider.ModelRetired {
		t.Errorf("retired model: Submit = %v (%s), want model retired", err, c)
	}
	if n := f.Accepted(job.Prompt); n != 0 {
		t.Errorf("retired model: the fake started %d jobs, want none", n)
	}
	if c, ok := p.(provider.Checker); ok {
		var u *provider.UnavailableModelsError
		if err := c.Check(t.Context()); !errors.As(err, &u) {
			t.Errorf("retired model: the start-up check = %v, want the model unavailable", err)
		}
		if err := provider.Verify(t.Context(), p, slog.New(slog.DiscardHandler)); err != nil {
			t.Errorf("retired model: Verify = %v, want the start-up to go on", err)
		}
	}
	good, _ := h.Start(t, Setup{})
	if c, ok := good.(provider.Checker); ok {
		if err := c.Check(t.Context()); err != nil {
			t.Errorf("start-up check = %v, want it to pass", err)
		}
	}
}

// Failures runs the suite on h with a T of its own and answers what it
// found wrong: how a test shows that the suite fails a broken adapter.
// tb gives the context and the temporary folders.
func Failures(tb T, h Harness) []string {
	r := &recorder{T: tb}
	done := make(chan struct{})
	go func() {
		defer close(done)
		Run(r, h)
	}()
	<-done
	return r.failures
}

// recorder is a T that records failures; its Fatalf ends the goroutine
// the suite runs in, as testing's does.
type recorder struct {
	T
	failures []string
}

func (r *recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) {
	r.failures = append(r.failures, fmt.Sprintf(format, args...))
}

func (r *recorder) Fatalf(format string, args ...any) {
	r.Errorf(format, args...)
	runtime.Goexit()
}
