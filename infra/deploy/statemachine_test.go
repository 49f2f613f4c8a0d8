package deploy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambda/messages"

	"github.com/genvideo/gen/shared/blob/memblob"
	"github.com/genvideo/gen/shared/catalog"
	"github.com/genvideo/gen/shared/domain"
	"github.com/genvideo/gen/shared/params"
	"github.com/genvideo/gen/shared/provider"
	"github.com/genvideo/gen/shared/store/sqlitestore"
	"github.com/genvideo/gen/shared/task"
	"github.com/genvideo/gen/shared/testing/workflowtest"
	"github.com/genvideo/gen/shared/workflow"
)

// The definition as Step Functions receives it: every ${placeholder}
// replaced by what the template's DefinitionSubstitutions give on a
// deployment (function ARNs), so that a wrong wiring in the template
// routes a state to the wrong step below.
func substitutedDefinition(t *testing.T) (def []byte, functions map[string]string) {
	t.Helper()
	tp := loadTemplate(t)
	sm := tp.Resources["GenerationStateMachine"]
	data, err := os.ReadFile(filepath.Join(root, sm.Properties["DefinitionUri"].(string)))
	if err != nil {
		t.Fatal(err)
	}
	functions = map[string]string{} // function name -> logical id
	subs := mapAt(sm.Properties, "DefinitionSubstitutions")
	var missing []string
	out := aslPlaceholder.ReplaceAllStringFunc(string(data), func(m string) string {
		name := m[2 : len(m)-1]
		v, ok := subs[name]
		if !ok {
			missing = append(missing, name)
			return m
		}
		arn, err := tp.eval(v)
		if err != nil {
			t.Errorf("DefinitionSubstitutions.%s: %v", name, err)
			return m
		}
		fn := arn[strings.LastIndex(arn, ":")+1:]
		if ga, ok := dig(v, "Fn::GetAtt").([]any); ok {
			functions[fn] = ga[0].(string)
		}
		return arn
	})
	if len(missing) > 0 {
		t.Fatalf("placeholders without a substitution: %v", missing)
	}
	return []byte(out), functions
}

func writeTemp(t *testing.T, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestDefinitionPassesASLValidator(t *testing.T) {
	// Slow (a subprocess or a JVM): let them overlap.
	t.Parallel()
	tools := requireNodeTools(t)
	def, _ := substitutedDefinition(t)
	validator := filepath.Join(tools.Modules(), "asl-validator", "dist", "bin", "asl-validator.js")
	validate := func(def []byte) (string, error) {
		out, errOut, err := tools.Run(t.Context(), validator, "--json-path", writeTemp(t, "definition.json", def))
		return string(out) + string(errOut), err
	}
	if out, err := validate(def); err != nil {
		t.Fatalf("asl-validator rejects statemachine/generation.asl.json: %v\n%s", err, out)
	}
	// The validator does validate: a transition to a state that does not
	// exist, and an unsubstituted placeholder as a Resource, are refused.
	for _, c := range []struct{ name, from, to string }{
		{"dangling Next", `"Next": "Complete"`, `"Next": "Compleet"`},
		{"placeholder left as Resource", `"Resource": "arn:aws:lambda:`, `"Resource": "${Oops}`},
	} {
		broken := bytes.Replace(def, []byte(c.from), []byte(c.to), 1)
		if bytes.Equal(broken, def) {
			t.Fatalf("%s: %q is not in the definition", c.name, c.from)
		}
		if out, err := validate(broken); err == nil {
			t.Errorf("%s: asl-validator accepted the broken definition:\n%s", c.name, out)
		}
	}
}

// lambdaService serves step handlers as the Lambda Invoke API does,
// through aws-lambda-go's own invocation code (lambda.Function, the
// go1.x runtime's entry point), so that a failing handler is reported
// exactly as on AWS: HTTP 200, X-Amz-Function-Error, and the payload
// {"errorMessage", "errorType"} where errorType is the Go type name of
// the returned error.
type lambdaService struct {
	functions map[string]*lambda.Function // by function name
	calls     map[string]*atomic.Int64
}

func newLambdaService(handlers map[string]any) *lambdaService {
	s := &lambdaService{functions: map[string]*lambda.Function{}, calls: map[string]*atomic.Int64{}}
	for name, h := range handlers {
		//lint:ignore SA1019 Function is aws-lambda-go's own invoke path; it names errors as Lambda does.
		s.functions[name] = lambda.NewFunction(lambda.NewHandler(h))
		s.calls[name] = new(atomic.Int64)
	}
	return s
}

func (s *lambdaService) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	fn, ok := s.functions[name]
	if !ok {
		http.Error(w, `{"Type":"User","message":"Function not found: `+name+`"}`, http.StatusNotFound)
		return
	}
	payload, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	n := s.calls[name].Add(1)
	deadline := time.Now().Add(15 * time.Minute)
	req := &messages.InvokeRequest{
		Payload:   payload,
		RequestId: fmt.Sprintf("%s-%d", name, n),
		Deadline:  messages.InvokeRequest_Timestamp{Seconds: deadline.Unix(), Nanos: int64(deadline.Nanosecond())},
	}
	var resp messages.InvokeResponse
	if err := fn.Invoke(req, &resp); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	if resp.Error != nil {
		w.Header().Set("X-Amz-Function-Error", "Unhandled")
		json.NewEncoder(w).Encode(resp.Error)
		return
	}
	w.Write(resp.Payload)
}

// execution is what sfnlocal.cjs reports of one execution.
type execution struct {
	Name   string
	Status string
	Output json.RawMessage
	Error  string
	Cause  string
	Events []struct {
		Type    string
		State   string
		Error   string
		Cause   string
		Attempt int
		Next    string
	}
}

// entered lists the states the execution entered, in order.
func (e execution) entered() []string {
	var out []string
	for _, ev := range e.Events {
		if ev.Type == "StateEntered" {
			out = append(out, ev.State)
		}
	}
	return out
}

// errorsOf lists the error names of the failures of a state, in order.
func (e execution) errorsOf(state string) []string {
	var out []string
	for _, ev := range e.Events {
		if ev.Type == "StateFailed" && ev.State == state {
			out = append(out, ev.Error)
		}
	}
	return out
}

func (e execution) count(typ, state string) int {
	n := 0
	for _, ev := range e.Events {
		if ev.Type == typ && ev.State == state {
			n++
		}
	}
	return n
}

// Generator outcomes, chosen by the prompt.
const (
	promptOK        = "a calm sea at dawn"
	promptPartial   = "two boats, one filtered"
	promptPolicy    = "something the policy refuses"
	promptTransient = "a storm that clears on the third try"
	promptFlaky     = "a generator that never recovers"
	// promptPolled is a provider's job that is done at its second poll.
	promptPolled = "a job the provider works on"
)

// pollingProvider is a provider.Provider: the job of promptPolled is
// submitted, then polled until done; every other job is gen's, done at
// submit. It counts submits by task.
type pollingProvider struct {
	gen *workflowtest.Generator

	mu      sync.Mutex
	submits map[string]int
	polls   map[string]int
}

func (p *pollingProvider) Submit(ctx context.Context, job provider.Job) (provider.Operation, error) {
	if job.Prompt != promptPolled {
		res, err := p.gen.Generate(ctx, job)
		return provider.Operation{Done: true, Result: res}, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.submits[job.TaskID]++
	return provider.Operation{Name: "operations/" + job.TaskID, PollAfter: time.Second}, nil
}

func (p *pollingProvider) Poll(ctx context.Context, name string, job provider.Job) (provider.Operation, error) {
	p.mu.Lock()
	p.polls[job.TaskID]++
	n := p.polls[job.TaskID]
	p.mu.Unlock()
	if name != "operations/"+job.TaskID {
		return provider.Operation{}, fmt.Errorf("poll of %s for task %s", name, job.TaskID)
	}
	if n < 2 {
		return provider.Operation{Name: name, PollAfter: time.Second}, nil
	}
	res, err := p.gen.Generate(ctx, job)
	return provider.Operation{Name: name, Done: true, Result: res}, err
}

// transientErr and policyErr are generator failures as the workflow
// classifies them (provider.Classify).
type transientErr struct{}

func (transientErr) Error() string { return "the renderer is busy" }
func (transientErr) Classify() provider.Answer {
	return provider.Answer{Class: provider.Transient}
}

type policyErr struct{}

func (policyErr) Error() string { return "refused by the content policy" }
func (policyErr) Classify() provider.Answer {
	return provider.Answer{Class: provider.Refused}
}

func outcome(ctx context.Context, job provider.Job, attempt int) (int, error) {
	switch job.Prompt {
	case promptPartial:
		return job.Params.SampleCount - 1, nil
	case promptPolicy:
		return 0, policyErr{}
	case promptTransient:
		if attempt < 3 {
			return 0, transientErr{}
		}
	case promptFlaky:
		return 0, transientErr{}
	}
	return job.Params.SampleCount, nil
}

// TestStateMachineOnLocalStepFunctions runs statemachine/generation.asl.json
// end to end in aws-local-stepfunctions, with its Task states calling the
// real step handlers (workflow.Steps on a real SQLite store; fakes only
// for blob storage and the generator), and checks each path's effect on
// the tasks and the credit ledger.
func TestStateMachineOnLocalStepFunctions(t *testing.T) {
	// Slow (a subprocess or a JVM): let them overlap.
	t.Parallel()
	tools := requireNodeTools(t)
	def, functions := substitutedDefinition(t)

	dir := t.TempDir()
	st, err := sqlitestore.Open(filepath.Join(dir, "gen.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	blobs := memblob.New()
	gen := &workflowtest.Generator{Outcome: outcome}
	provider := &pollingProvider{gen: gen, submits: map[string]int{}, polls: map[string]int{}}
	steps := &workflow.Steps{Store: st, Blobs: blobs, Generator: gen, Provider: provider, TempDir: dir,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	handlers := map[string]any{
		"MarkProcessingFunction": steps.MarkProcessingOutcome,
		"GenerateFunction":       steps.GenerateOutcome,
		"PollFunction":           steps.GenerateOutcome,
		"CompleteFunction":       steps.Complete,
		"FailFunction":           steps.Fail,
	}
	byName := map[string]any{}
	for name, id := range functions {
		h, ok := handlers[id]
		if !ok {
			t.Fatalf("the definition calls %s, which is no step function", id)
		}
		byName[name] = h
	}
	svc := newLambdaService(byName)
	mux := http.NewServeMux()
	mux.Handle("POST /2015-03-31/functions/{name}/invocations", svc)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	ctx := t.Context()
	m, _ := catalog.Lookup("gen-3.1-fast-generate-001")
	price := m.Price(true)
	now := time.Now()
	newTask := func(account, prompt string, samples int, edit ...func(*task.Task)) task.Task {
		t.Helper()
		if err := st.CreateAccount(ctx, domain.Account{ID: account, Credits: 10_000, CreatedAt: now}); err != nil {
			t.Fatal(err)
		}
		tk := task.Task{
			ID: task.NewID(now), AccountID: account, KeyName: "test", Type: catalog.TextToVideo,
			Model: m.ID, Prompt: prompt,
			Params: params.Parameters{SampleCount: samples, DurationSeconds: 8, AspectRatio: "16:9",
				Resolution: "1080p", GenerateAudio: true, EnhancePrompt: true, Seed: new(int64(1)), PersonGeneration: "allow_adult"},
			CreditsCost: price * samples, CreatedAt: now, Deadline: now.Add(10 * time.Minute),
		}
		for _, f := range edit {
			f(&tk)
		}
		if _, err := st.CreateTask(ctx, tk, domain.StartGuard{}); err != nil {
			t.Fatal(err)
		}
		return tk
	}
	image := []byte("\x89PNG\r\n\x1a\n a picture")
	ok := newTask("acct-ok", promptOK, 2, func(tk *task.Task) {
		tk.Type = catalog.ImageToVideo
		tk.Inputs = []task.Input{{Role: task.RoleImage, Key: "inputs/" + tk.ID + "/image.png", Size: int64(len(image)), MimeType: "image/png"}}
		if _, err := blobs.Put(ctx, tk.Inputs[0].Key, bytes.NewReader(image), "image/png"); err != nil {
			t.Fatal(err)
		}
	})
	partial := newTask("acct-partial", promptPartial, 2)
	policy := newTask("acct-policy", promptPolicy, 1)
	retried := newTask("acct-retried", promptTransient, 1)
	flaky := newTask("acct-flaky", promptFlaky, 1)
	late := newTask("acct-late", promptOK, 1, func(tk *task.Task) {
		tk.CreatedAt, tk.Deadline = now.Add(-20*time.Minute), now.Add(-10*time.Minute)
	})
	polled := newTask("acct-polled", promptPolled, 1)
	unknown := task.NewID(now)

	type run struct {
		Name  string         `json:"name"`
		Input workflow.Input `json:"input"`
	}
	runs := []run{}
	for _, tk := range []task.Task{ok, partial, policy, retried, flaky, late, polled} {
		runs = append(runs, run{tk.ID, workflow.NewInput(tk, now)})
	}
	runs = append(runs,
		run{unknown, workflow.Input{TaskID: unknown, TimeoutSeconds: 600}},
		run{ok.ID + "-again", workflow.NewInput(ok, now)}) // a second execution for a finished task

	spec, err := json.Marshal(map[string]any{"lambdaEndpoint": srv.URL, "executions": runs})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	out, errOut, err := tools.Run(runCtx, "sfnlocal.cjs",
		writeTemp(t, "definition.json", def), writeTemp(t, "spec.json", spec))
	if err != nil {
		t.Fatalf("sfnlocal.cjs: %v\n%s", err, errOut)
	}
	var results []execution
	if err := json.Unmarshal(out, &results); err != nil {
		t.Fatalf("sfnlocal.cjs output: %v\n%s", err, out)
	}
	if len(results) != len(runs) {
		t.Fatalf("got %d executions, want %d", len(results), len(runs))
	}
	resultOf := map[string]execution{}
	for _, r := range results {
		resultOf[r.Name] = r
	}

	load := func(t *testing.T, id string) task.Task {
		t.Helper()
		tk, err := st.Task(ctx, id)
		if err != nil {
			t.Fatalf("task %s: %v", id, err)
		}
		return tk
	}
	refunds := func(t *testing.T, tk task.Task) []int64 {
		t.Helper()
		entries, err := st.Ledger(ctx, tk.AccountID)
		if err != nil {
			t.Fatal(err)
		}
		var out []int64
		for _, e := range entries {
			if e.TaskID == tk.ID && e.Kind == domain.EntryRefund {
				out = append(out, e.Amount)
			}
		}
		return out
	}
	balance := func(t *testing.T, tk task.Task) int64 {
		t.Helper()
		a, err := st.Account(ctx, tk.AccountID)
		if err != nil {
			t.Fatal(err)
		}
		if a.InFlight != 0 {
			t.Errorf("%s: account %s has %d tasks in flight after the workflow", tk.Prompt, a.ID, a.InFlight)
		}
		return a.Credits
	}
	checkPath := func(t *testing.T, e execution, want []string) {
		t.Helper()
		if got := e.entered(); !slices.Equal(got, want) {
			t.Errorf("states entered %v, want %v", got, want)
		}
	}
	// The built-in generator is done at submit: Generate once, then IsGenerated.
	success := []string{"MarkProcessing", "IsProcessing", "Generate", "IsGenerated", "Complete"}
	refunded := []string{"MarkProcessing", "IsProcessing", "Generate", "RecordFailure"}

	// failedRefunded checks that task id failed with code and was refunded
	// its price once, and returns it.
	failedRefunded := func(t *testing.T, id, code string) task.Task {
		t.Helper()
		tk := load(t, id)
		if tk.Status != task.Failed || tk.Failure == nil || tk.Failure.Code != code {
			t.Errorf("task is %s with failure %+v, want failed with %s", tk.Status, tk.Failure, code)
		}
		if got, want := refunds(t, tk), []int64{int64(price)}; !slices.Equal(got, want) {
			t.Errorf("refunds %v, want %v", got, want)
		}
		return tk
	}

	t.Run("success", func(t *testing.T) {
		e := resultOf[ok.ID]
		if e.Status != "SUCCEEDED" {
			t.Fatalf("execution %s: %s %s", e.Status, e.Error, e.Cause)
		}
		checkPath(t, e, success)
		tk := load(t, ok.ID)
		if tk.Status != task.Completed || len(tk.Videos) != 2 {
			t.Errorf("task is %s with %d videos, want completed with 2", tk.Status, len(tk.Videos))
		}
		for i, v := range tk.Videos {
			data, _, found := blobs.Object(v.Key)
			if !found || !bytes.Equal(data, workflowtest.VideoContent(ok.ID, i)) || v.Key != workflow.VideoKey(ok.ID, i) {
				t.Errorf("video %d: key %s, stored %v", i, v.Key, found)
			}
		}
		if got := gen.Inputs(ok.ID)[task.RoleImage]; !bytes.Equal(got, image) {
			t.Errorf("the generator got image %q, want the uploaded %q", got, image)
		}
		if got, want := balance(t, tk), int64(10_000-2*price); got != want {
			t.Errorf("balance %d, want %d", got, want)
		}
		if r := refunds(t, tk); len(r) != 0 {
			t.Errorf("refunds %v, want none", r)
		}
		var output struct{ Task workflow.TaskState }
		if err := json.Unmarshal(e.Output, &output); err != nil || output.Task.Status != task.Completed {
			t.Errorf("execution output %s, want $.task.status completed", e.Output)
		}
	})

	t.Run("a provider's operation is waited for and polled, never submitted again", func(t *testing.T) {
		e := resultOf[polled.ID]
		checkPath(t, e, []string{"MarkProcessing", "IsProcessing", "Generate", "IsGenerated", "WaitForProvider",
			"Poll", "IsGenerated", "WaitForProvider", "Poll", "IsGenerated", "Complete"})
		tk := load(t, polled.ID)
		if tk.Status != task.Completed || len(tk.Videos) != 1 || tk.Operation != "operations/"+polled.ID {
			t.Errorf("task is %s with %d videos and operation %q, want completed with 1 and its operation",
				tk.Status, len(tk.Videos), tk.Operation)
		}
		if n := provider.submits[polled.ID]; n != 1 {
			t.Errorf("submitted %d times, want once", n)
		}
		if got, want := balance(t, tk), int64(10_000-price); got != want {
			t.Errorf("balance %d, want %d", got, want)
		}
	})

	t.Run("partial result refunds the missing sample", func(t *testing.T) {
		e := resultOf[partial.ID]
		checkPath(t, e, success)
		tk := load(t, partial.ID)
		if tk.Status != task.Completed || len(tk.Videos) != 1 {
			t.Errorf("task is %s with %d videos, want completed with 1", tk.Status, len(tk.Videos))
		}
		if got, want := refunds(t, tk), []int64{int64(price)}; !slices.Equal(got, want) {
			t.Errorf("refunds %v, want %v", got, want)
		}
		if got, want := balance(t, tk), int64(10_000-price); got != want {
			t.Errorf("balance %d, want %d", got, want)
		}
	})

	t.Run("failure is caught and refunded once", func(t *testing.T) {
		e := resultOf[policy.ID]
		// A task that failed and was refunded is a successful execution.
		if e.Status != "SUCCEEDED" {
			t.Fatalf("execution %s: %s %s", e.Status, e.Error, e.Cause)
		}
		// Issue 24, defect 7: a refusal is Generate's answer, not a
		// Lambda error (which WorkflowErrorsAlarm counts), routed to
		// RecordFailure like a caught error.
		checkPath(t, e, []string{"MarkProcessing", "IsProcessing", "Generate", "IsGenerated", "RecordOutcome", "RecordFailure"})
		if got := e.errorsOf("Generate"); len(got) != 0 {
			t.Errorf("Generate failed with %v, want no error: a refused prompt is an ordinary outcome", got)
		}
		tk := failedRefunded(t, policy.ID, task.FailContentPolicy)
		if got := balance(t, tk); got != 10_000 {
			t.Errorf("balance %d, want the 10000 it had", got)
		}
	})

	t.Run("retry on TransientGenerationError", func(t *testing.T) {
		e := resultOf[retried.ID]
		checkPath(t, e, success)
		if got, want := e.errorsOf("Generate"), []string{"TransientGenerationError", "TransientGenerationError"}; !slices.Equal(got, want) {
			t.Errorf("Generate failed with %v, want %v", got, want)
		}
		if got := e.count("StateRetried", "Generate"); got != 2 {
			t.Errorf("Generate retried %d times, want 2", got)
		}
		if got := gen.Calls(retried.ID); got != 3 {
			t.Errorf("the generator ran %d times, want 3", got)
		}
		tk := load(t, retried.ID)
		if tk.Status != task.Completed {
			t.Errorf("task is %s, want completed", tk.Status)
		}
		if r := refunds(t, tk); len(r) != 0 {
			t.Errorf("refunds %v, want none", r)
		}
	})

	t.Run("retries exhausted", func(t *testing.T) {
		e := resultOf[flaky.ID]
		checkPath(t, e, refunded)
		// One attempt and the retrier's MaxAttempts of 3.
		if got := gen.Calls(flaky.ID); got != 4 {
			t.Errorf("the generator ran %d times, want 4", got)
		}
		failedRefunded(t, flaky.ID, task.FailGeneration)
	})

	t.Run("deadline passed before processing", func(t *testing.T) {
		e := resultOf[late.ID]
		// Issue 24, defect 7: a late start is a timeout, answered, not a
		// Lambda error.
		checkPath(t, e, []string{"MarkProcessing", "IsProcessing", "PastDeadline", "RecordFailure"})
		if got := e.errorsOf("MarkProcessing"); len(got) != 0 {
			t.Errorf("MarkProcessing failed with %v, want no error: a timeout is an ordinary outcome", got)
		}
		if got := gen.Calls(late.ID); got != 0 {
			t.Errorf("the generator ran %d times, want 0", got)
		}
		failedRefunded(t, late.ID, task.FailTimeout)
	})

	t.Run("unknown task fails the execution", func(t *testing.T) {
		e := resultOf[unknown]
		if e.Status != "FAILED" || e.Error != "TaskNotFound" {
			t.Errorf("execution %s with error %q, want FAILED with TaskNotFound", e.Status, e.Error)
		}
		checkPath(t, e, []string{"MarkProcessing", "NoSuchTask"})
	})

	t.Run("a second execution changes nothing", func(t *testing.T) {
		e := resultOf[ok.ID+"-again"]
		if e.Status != "SUCCEEDED" {
			t.Fatalf("execution %s: %s %s", e.Status, e.Error, e.Cause)
		}
		checkPath(t, e, []string{"MarkProcessing", "IsProcessing", "AlreadyFinished"})
		if got := gen.Calls(ok.ID); got != 1 {
			t.Errorf("the generator ran %d times for the task, want 1", got)
		}
	})

	// Every Lambda the definition named was one of the step functions.
	for name, c := range svc.calls {
		if c.Load() == 0 {
			t.Errorf("function %s was never invoked", name)
		}
	}
}

// TestLambdaServiceNamesErrorsLikeLambda checks the test's Lambda stand-in
// against aws-lambda-go's convention: the error type is the Go type name
// of the returned error, and a wrapped error is named after the wrapper,
// which is why the steps return their errors unwrapped.
func TestLambdaServiceNamesErrorsLikeLambda(t *testing.T) {
	svc := newLambdaService(map[string]any{
		"named": func(ctx context.Context, in workflow.TaskRef) (workflow.TaskState, error) {
			return workflow.TaskState{}, &workflow.TaskNotFound{TaskID: in.TaskID}
		},
		"wrapped": func(ctx context.Context, in workflow.TaskRef) (workflow.TaskState, error) {
			return workflow.TaskState{}, fmt.Errorf("load: %w", &workflow.TaskNotFound{TaskID: in.TaskID})
		},
		"plain": func(ctx context.Context, in workflow.TaskRef) (workflow.TaskState, error) {
			return workflow.TaskState{}, errors.New("boom")
		},
		"ok": func(ctx context.Context, in workflow.TaskRef) (workflow.TaskState, error) {
			return workflow.TaskState{TaskID: in.TaskID, Status: task.Processing}, nil
		},
	})
	mux := http.NewServeMux()
	mux.Handle("POST /2015-03-31/functions/{name}/invocations", svc)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	for _, c := range []struct {
		fn, wantType, wantBody string
	}{
		{"named", "TaskNotFound", ""},
		{"wrapped", "wrapError", ""},
		{"plain", "errorString", ""},
		{"ok", "", `{"taskId":"gen_1","status":"processing"}`},
	} {
		resp, err := http.Post(srv.URL+"/2015-03-31/functions/"+c.fn+"/invocations", "application/json",
			strings.NewReader(`{"taskId":"gen_1"}`))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var payload struct {
			ErrorType string `json:"errorType"`
		}
		json.Unmarshal(body, &payload)
		flagged := resp.Header.Get("X-Amz-Function-Error") != ""
		switch {
		case c.wantType != "" && (!flagged || payload.ErrorType != c.wantType):
			t.Errorf("%s: error flagged %v, type %q, want %q (body %s)", c.fn, flagged, payload.ErrorType, c.wantType, body)
		case c.wantType == "" && (flagged || string(bytes.TrimSpace(body)) != c.wantBody):
			t.Errorf("%s: body %s (error flagged %v), want %s", c.fn, body, flagged, c.wantBody)
		}
	}
}
