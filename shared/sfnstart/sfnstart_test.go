package sfnstart_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/genvideo/gen/shared/ratelimit"
	"github.com/genvideo/gen/shared/service"
	"github.com/genvideo/gen/shared/sfnstart"
	"github.com/genvideo/gen/shared/store"
	"github.com/genvideo/gen/shared/task"
	"github.com/genvideo/gen/shared/testing/httpapitest"
	"github.com/genvideo/gen/shared/testing/sfnstarttest"
	"github.com/genvideo/gen/shared/workflow"
)

var _ service.Executions = (*sfnstart.Executions)(nil)

var created = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func newTask(id string) task.Task {
	return task.Task{ID: id, Status: task.Pending, CreatedAt: created, Deadline: created.Add(10 * time.Minute)}
}

func newStarter(t *testing.T, fake *sfnstarttest.Server, now *time.Time) *sfnstart.Executions {
	t.Helper()
	s, err := sfnstart.New(fake.Client(), sfnstarttest.StateMachineARN, func() time.Time { return *now })
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestStartNamesTheExecutionByTask(t *testing.T) {
	fake := sfnstarttest.NewServer(t)
	now := created.Add(30 * time.Second)
	s := newStarter(t, fake, &now)
	tk := newTask("gen_1772366400000_abcdefghij")
	if err := s.Start(context.Background(), tk); err != nil {
		t.Fatalf("Start: %v", err)
	}
	execs := fake.Executions()
	if len(execs) != 1 {
		t.Fatalf("%d executions, want 1", len(execs))
	}
	if execs[0].Name != tk.ID {
		t.Errorf("execution name %q, want the task id %q", execs[0].Name, tk.ID)
	}
	var in workflow.Input
	if err := json.Unmarshal([]byte(execs[0].Input), &in); err != nil {
		t.Fatalf("input %s: %v", execs[0].Input, err)
	}
	if want := workflow.NewInput(tk, now); in != want {
		t.Errorf("input %+v, want %+v", in, want)
	}
	if in.TimeoutSeconds != 570 {
		t.Errorf("timeoutSeconds %d, want 570 (the deadline is 9m30s away)", in.TimeoutSeconds)
	}
	if got, want := s.ExecutionARN(tk.ID), "arn:aws:states:us-east-1:123456789012:execution:gen-generation:"+tk.ID; got != want {
		t.Errorf("ExecutionARN = %s, want %s", got, want)
	}
}

// A start repeated later (another timeoutSeconds), or after the execution
// ended, is success and starts nothing new.
func TestStartIsIdempotent(t *testing.T) {
	fake := sfnstarttest.NewServer(t)
	now := created
	s := newStarter(t, fake, &now)
	ctx := context.Background()
	tk := newTask("gen_1772366400000_idempotent")
	for i, step := range []func(){
		func() {},
		func() { now = now.Add(time.Minute) },
		func() { fake.Finish(t, tk.ID, "SUCCEEDED") },
	} {
		step()
		if err := s.Start(ctx, tk); err != nil {
			t.Fatalf("Start #%d: %v", i+1, err)
		}
	}
	if n := len(fake.Executions()); n != 1 {
		t.Errorf("%d executions after three starts of one task, want 1", n)
	}
}

func TestStartFailure(t *testing.T) {
	fake := sfnstarttest.NewServer(t)
	now := created
	s := newStarter(t, fake, &now)
	fake.FailStarts("StateMachineDoesNotExist")
	err := s.Start(context.Background(), newTask("gen_1772366400000_failingxx"))
	if err == nil || !strings.Contains(err.Error(), "StateMachineDoesNotExist") {
		t.Errorf("Start = %v, want the service's StateMachineDoesNotExist", err)
	}
}

func TestExecution(t *testing.T) {
	fake := sfnstarttest.NewServer(t)
	now := created
	s := newStarter(t, fake, &now)
	ctx := context.Background()
	tk := newTask("gen_1772366400000_executionx")
	check := func(when string, wantExists, wantRunning bool) {
		t.Helper()
		exists, running, err := s.Execution(ctx, tk.ID)
		if err != nil {
			t.Fatalf("Execution %s: %v", when, err)
		}
		if exists != wantExists || running != wantRunning {
			t.Errorf("Execution %s = exists %v, running %v; want %v, %v", when, exists, running, wantExists, wantRunning)
		}
	}
	check("before the start", false, false)
	if err := s.Start(ctx, tk); err != nil {
		t.Fatal(err)
	}
	check("while running", true, true)
	fake.Finish(t, tk.ID, "ABORTED")
	check("once aborted", true, false)
}

func TestNewRefusesMalformedARN(t *testing.T) {
	for _, arn := range []string{
		"",
		"gen-generation",
		"arn:aws:states:us-east-1:123456789012:execution:gen-generation:x",
		"arn:aws:lambda:us-east-1:123456789012:function:gen",
		"arn:aws:states:us-east-1:123456789012:stateMachine:",
	} {
		if _, err := sfnstart.New(nil, arn, nil); err == nil {
			t.Errorf("New(%q): no error", arn)
		}
	}
}

// When StartExecution fails after the charge, the API answers 503 and the
// task is failed with its credits refunded (httpapi's abandon path, here
// through the real starter).
func TestStartFailureRefundsThroughAPI(t *testing.T) {
	fake := sfnstarttest.NewServer(t)
	fake.FailStarts("StateMachineDoesNotExist")
	starter, err := sfnstart.New(fake.Client(), sfnstarttest.StateMachineARN, nil)
	if err != nil {
		t.Fatal(err)
	}
	env := httpapitest.Start(t, httpapitest.Config{Config: service.Config{Executions: starter}})
	caller := httpapitest.NewCaller(t, env.Store, 1000, ratelimit.Standard, store.KeyLimits{})

	req, _ := http.NewRequest(http.MethodPost, env.Server.URL+"/api/gen/text-to-video",
		strings.NewReader(`{"prompt":"a lighthouse at dusk","model":"gen-3.1-lite-generate-001","generateAudio":false}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-API-Key", caller.Key)
	resp, err := env.Server.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("status %d, want 503", resp.StatusCode)
	}
	ctx := context.Background()
	acct, err := env.Store.Account(ctx, caller.AccountID)
	if err != nil {
		t.Fatal(err)
	}
	if acct.Credits != 1000 || acct.InFlight != 0 {
		t.Errorf("account after the failed start: %d credits, %d in flight; want 1000, 0", acct.Credits, acct.InFlight)
	}
	tasks, _, err := env.Store.Tasks(ctx, caller.AccountID, store.TaskQuery{Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(tasks) != 1 || tasks[0].Status != task.Failed {
		t.Fatalf("tasks %+v, want one failed", tasks)
	}
	if calls := fake.Calls(); len(calls) != 1 || calls[0] != "StartExecution "+tasks[0].ID {
		t.Errorf("Step Functions calls %v, want one StartExecution named %s", calls, tasks[0].ID)
	}
}

var _ service.Executions = (*sfnstart.Executions)(nil)

// Stop aborts the task's first execution and those the sweeper started
// after it, leaves an ended one as it is and another task's alone, and
// stops at the first name that does not exist.
func TestStop(t *testing.T) {
	fake := sfnstarttest.NewServer(t)
	now := created
	s := newStarter(t, fake, &now)
	tk, other := newTask("gen_1772366400000_abcdefghij"), newTask("gen_1772366400000_otherother")
	for _, name := range []string{tk.ID, tk.ID + "-redrive-2", tk.ID + "-redrive-3"} {
		if err := s.StartNamed(context.Background(), name, tk); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Start(context.Background(), other); err != nil {
		t.Fatal(err)
	}
	fake.Finish(t, tk.ID, "FAILED")
	if err := s.Stop(context.Background(), tk); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	want := map[string]string{tk.ID: "FAILED", tk.ID + "-redrive-2": "ABORTED", tk.ID + "-redrive-3": "ABORTED", other.ID: "RUNNING"}
	for _, e := range fake.Executions() {
		if e.Status != want[e.Name] {
			t.Errorf("execution %s is %s, want %s", e.Name, e.Status, want[e.Name])
		}
	}
	if err := s.Stop(context.Background(), newTask("gen_1772366400000_nonenonenone")); err != nil {
		t.Errorf("Stop of a task without executions: %v, want nil", err)
	}
}
