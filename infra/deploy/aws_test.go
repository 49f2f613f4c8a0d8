package deploy

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/genvideo/gen/shared/awsstack"
	"github.com/genvideo/gen/shared/awsstack/endpoint"
)

// The checks of this file are those of issue 12: what only a real account
// would otherwise show.

var transformed struct {
	once sync.Once
	tp   map[string]any
	err  error
	skip string
}

// samTransformed is template.yaml after the SAM transform, through the
// translator cfn-lint bundles. Without python3 and cfn-lint the test is
// skipped: the checks of the raw template that precede it still run.
func samTransformed(t *testing.T) map[string]any {
	t.Helper()
	transformed.once.Do(func() {
		py, err := exec.LookPath("python3")
		if err != nil {
			transformed.skip = "python3 is not installed"
			return
		}
		if exec.Command(py, "-c", "import cfnlint, samtranslator").Run() != nil {
			transformed.skip = "cfn-lint (pip install cfn-lint) is not installed"
			return
		}
		out, err := exec.Command(py, filepath.Join("testdata", "sam_transform.py"), filepath.Join(root, "template.yaml")).Output()
		if err != nil {
			if ee, ok := err.(*exec.ExitError); ok {
				err = fmt.Errorf("%w: %s", err, ee.Stderr)
			}
			transformed.err = err
			return
		}
		transformed.err = json.Unmarshal(out, &transformed.tp)
	})
	if transformed.skip != "" {
		t.Skip(transformed.skip + ": skipping the checks of the transformed template")
	}
	if transformed.err != nil {
		t.Fatalf("SAM transform of template.yaml: %v", transformed.err)
	}
	return transformed.tp
}

// transformedOfType lists the transformed template's resources of a type.
func transformedOfType(tp map[string]any, typ string) map[string]map[string]any {
	out := map[string]map[string]any{}
	for id, r := range mapAt(tp, "Resources") {
		if m, ok := r.(map[string]any); ok && m["Type"] == typ {
			out[id] = m
		}
	}
	return out
}

// Defect 1: a first create that rolls back must not leave resources with
// fixed names behind, or every retry fails with "already exists".
func TestRetainedResourcesGoOnFailedCreate(t *testing.T) {
	tp := loadTemplate(t)
	retained := 0
	for id, r := range tp.Resources {
		p, ok := r.raw["DeletionPolicy"]
		if !ok {
			continue
		}
		retained++
		if p != "RetainExceptOnCreate" {
			t.Errorf("%s: DeletionPolicy %v, want RetainExceptOnCreate: a rolled-back first create would leave it behind", id, p)
		}
	}
	if retained < 5 {
		t.Errorf("%d resources with a DeletionPolicy, want the four tables and the bucket", retained)
	}
}

// Defect 4: without OpenApiVersion SAM deploys a second stage, "Stage",
// that serves every route outside the usage plans.
func TestOnlyTheConfiguredStage(t *testing.T) {
	tp := loadTemplate(t)
	if v, _ := tp.Resources["GenApi"].Properties["OpenApiVersion"].(string); !strings.HasPrefix(v, "3.") {
		t.Errorf("GenApi.OpenApiVersion = %q, want 3.x (without it SAM adds a stage named Stage)", v)
	}
	sam := samTransformed(t)
	stages := transformedOfType(sam, "AWS::ApiGateway::Stage")
	if len(stages) != 1 {
		t.Errorf("SAM deploys stages %v, want one", slices.Collect(maps.Keys(stages)))
	}
	for id, d := range transformedOfType(sam, "AWS::ApiGateway::Deployment") {
		if name := dig(d, "Properties", "StageName"); name != nil {
			t.Errorf("deployment %s creates stage %v as well", id, name)
		}
	}
}

// functionTimeout is a function's timeout in seconds, its own or Globals'.
func functionTimeout(tp *template, id string) int {
	if v, ok := tp.Resources[id].Properties["Timeout"].(int); ok {
		return v
	}
	v, _ := dig(tp.Globals, "Function", "Timeout").(int)
	return v
}

// hasAPIEvents reports whether API Gateway invokes the function.
func hasAPIEvents(tp *template, id string) bool {
	for _, ev := range mapAt(tp.Resources[id].Properties, "Events") {
		if dig(ev, "Type") == "Api" {
			return true
		}
	}
	return false
}

// Defect 5: an API function stops well before API Gateway's 29 seconds,
// with time left after its context ends (endpoint.Reserve) to refund a
// start that could not finish.
func TestAPIFunctionsStopBeforeTheGateway(t *testing.T) {
	tp := loadTemplate(t)
	const gateway = 29
	for _, id := range tp.ofType("AWS::Serverless::Function") {
		if !hasAPIEvents(tp, id) {
			continue
		}
		timeout := functionTimeout(tp, id)
		if timeout <= 0 || timeout > gateway-5 {
			t.Errorf("%s: Timeout %d s, want at most %d s, well inside API Gateway's %d s", id, timeout, gateway-5, gateway)
		}
		if time.Duration(timeout)*time.Second <= 2*endpoint.Reserve {
			t.Errorf("%s: Timeout %d s leaves too little after endpoint.Reserve (%v) for the request itself", id, timeout, endpoint.Reserve)
		}
	}
}

// Defect 14: a parameter that cannot break the stack. GenerationTimeout is
// a bounded number of minutes, each of whose values the functions parse
// and the Generate Lambda can serve; tasks expire with their videos.
func TestParametersCannotBreakTheStack(t *testing.T) {
	tp := loadTemplate(t)
	p, _ := tp.Parameters["GenerationTimeout"].(map[string]any)
	lo, _ := p["MinValue"].(int)
	hi, _ := p["MaxValue"].(int)
	if p["Type"] != "Number" || lo < 1 || hi < lo {
		t.Fatalf("GenerationTimeout = %v, want a Number with MinValue >= 1 and MaxValue", p)
	}
	if generate := functionTimeout(tp, "GenerateFunction"); time.Duration(hi)*time.Minute >= time.Duration(generate)*time.Second {
		t.Errorf("GenerationTimeout may be %d minutes, as long as or longer than one Generate invocation (%d s)", hi, generate)
	}
	for _, minutes := range []int{lo, hi} {
		old := p["Default"]
		p["Default"] = minutes
		env := functionEnv(t, tp, "TextToVideoFunction")
		p["Default"] = old
		e, err := awsstack.ParseEnv(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
		if err != nil || e.GenerationTimeout != time.Duration(minutes)*time.Minute {
			t.Errorf("GenerationTimeout=%d: the functions read %v (%v), want %d minutes", minutes, e.GenerationTimeout, err, minutes)
		}
	}
	if got := dig(tp.Resources["TasksTable"].Properties, "TimeToLiveSpecification"); mustJSON(t, got) != `{"AttributeName":"ttl","Enabled":true}` {
		t.Errorf("TasksTable TTL = %s, want enabled on ttl", mustJSON(t, got))
	}
	for _, id := range []string{"TextToVideoFunction", "ImageToVideoFunction", "FirstLastFrameFunction"} {
		v := dig(tp.Resources[id].Properties, "Environment", "Variables", awsstack.EnvTaskRetentionDays)
		if mustJSON(t, v) != `{"Ref":"VideoRetentionDays"}` {
			t.Errorf("%s: %s = %s, want !Ref VideoRetentionDays: a task goes with its videos", id, awsstack.EnvTaskRetentionDays, mustJSON(t, v))
		}
	}
}

// Defect 14: CI deploys without a prompt: samconfig.toml's ci environment
// (sam deploy --config-env ci) confirms nothing and fails on nothing to do.
func TestSAMConfigDeploysInCI(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(root, "samconfig.toml"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	section := regexp.MustCompile(`(?ms)^\[ci\.deploy\.parameters\]$(.*?)(^\[|\z)`).FindStringSubmatch(text)
	if section == nil {
		t.Fatalf("samconfig.toml has no [ci.deploy.parameters]")
	}
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^confirm_changeset\s*=\s*false$`),
		regexp.MustCompile(`(?m)^fail_on_empty_changeset\s*=\s*false$`),
		regexp.MustCompile(`(?m)^capabilities\s*=\s*"CAPABILITY_IAM"$`),
		regexp.MustCompile(`(?m)^resolve_s3\s*=\s*true$`),
		regexp.MustCompile(`(?m)^stack_name\s*=\s*"[A-Za-z][A-Za-z0-9-]*"$`),
		regexp.MustCompile(`(?m)^region\s*=\s*"[a-z0-9-]+"$`),
	} {
		if !want.MatchString(section[1]) {
			t.Errorf("[ci.deploy.parameters] has no line matching %s", want)
		}
	}
}

// Defect 7 and defect 6: every Task state retries Lambda's client-side
// timeout too, and retries throttling (Lambda.TooManyRequestsException)
// long enough that a burst of generations waits for concurrency instead
// of failing and refunding: at least two minutes of backoff, with jitter
// so that the throttled executions do not come back together.
func TestDefinitionRetriesThrottlingPatiently(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(root, "statemachine", "generation.asl.json"))
	if err != nil {
		t.Fatal(err)
	}
	var def struct {
		States map[string]struct {
			Type  string
			Retry []struct {
				ErrorEquals     []string
				IntervalSeconds float64
				MaxAttempts     int
				BackoffRate     float64
				MaxDelaySeconds float64
				JitterStrategy  string
			}
		}
	}
	if err := json.Unmarshal(data, &def); err != nil {
		t.Fatal(err)
	}
	for name, s := range def.States {
		if s.Type != "Task" {
			continue
		}
		retried := map[string]bool{}
		for _, r := range s.Retry {
			for _, e := range r.ErrorEquals {
				if r.MaxAttempts == 0 {
					continue
				}
				retried[e] = true
				if e != "Lambda.TooManyRequestsException" && e != "States.ALL" {
					continue
				}
				interval, attempts := r.IntervalSeconds, r.MaxAttempts
				if interval == 0 {
					interval = 1
				}
				if attempts == 0 {
					attempts = 3
				}
				wait := 0.0
				for i := range attempts {
					d := interval
					for range i {
						d *= max(r.BackoffRate, 1)
					}
					if r.MaxDelaySeconds > 0 {
						d = min(d, r.MaxDelaySeconds)
					}
					wait += d
				}
				if wait < 120 {
					t.Errorf("%s retries %s for %.0f s in all, want at least 120 s: throttled work would be refunded", name, e, wait)
				}
				if e == "Lambda.TooManyRequestsException" && r.JitterStrategy != "FULL" {
					t.Errorf("%s retries %s without JitterStrategy FULL", name, e)
				}
			}
		}
		for _, e := range []string{"Lambda.ClientExecutionTimeoutException", "Lambda.TooManyRequestsException"} {
			if !retried[e] && !retried["States.ALL"] {
				t.Errorf("%s does not retry %s", name, e)
			}
		}
	}
}
