package deploy

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/genvideo/gen/infra/awslocal/streams"
	"github.com/genvideo/gen/shared/awsstack"
	"github.com/genvideo/gen/shared/awsstack/endpoint"
	"github.com/genvideo/gen/shared/awsstack/mcplambda"
	"github.com/genvideo/gen/shared/testing/awsstacktest"
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
		if id == "ApiGatewayLogsRole" {
			continue // TestLogsRoleOutlivesTheStack
		}
		if p != "RetainExceptOnCreate" {
			t.Errorf("%s: DeletionPolicy %v, want RetainExceptOnCreate: a rolled-back first create would leave it behind", id, p)
		}
	}
	if retained < 6 {
		t.Errorf("%d resources with a DeletionPolicy, want the tables, the bucket and the logs role", retained)
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

// streamsEveryRoute reports whether every Api event of the function has
// a streamed integration (ResponseTransferMode RESPONSE_STREAM), as a
// function that answers in the streaming format (endpoint.Stream) needs,
// and whether any does.
func streamsEveryRoute(tp *template, id string) (every, any bool) {
	every = true
	for _, ev := range mapAt(tp.Resources[id].Properties, "Events") {
		if dig(ev, "Type") != "Api" {
			continue
		}
		if dig(ev, "Properties", "ResponseTransferMode") == "RESPONSE_STREAM" {
			any = true
		} else {
			every = false
		}
	}
	return every && any, any
}

// The event stream's function answers in the streaming format on every
// route, within API Gateway's 15 minutes of a stream, and its main
// integration waits as long (infra/docs/contract.md, "Live events").
func TestEventStreamIsStreamed(t *testing.T) {
	tp := loadTemplate(t)
	for _, id := range tp.ofType("AWS::Serverless::Function") {
		every, any := streamsEveryRoute(tp, id)
		if any && !every {
			t.Errorf("%s: some of its routes stream and some do not; one function answers in one format", id)
		}
		if any != (id == "StatusEventsFunction" || id == "McpFunction") {
			t.Errorf("%s: streamed %v, want only StatusEventsFunction and McpFunction streamed", id, any)
		}
	}
	// MCP's wait is bounded below a streamed response's 5 minutes of
	// silence (mcplambda.MaxWait): the function and its route outlast
	// it, and stop well before API Gateway's 15 minutes.
	if got := functionTimeout(tp, "McpFunction"); time.Duration(got)*time.Second <= mcplambda.MaxWait || got > 900 {
		t.Errorf("McpFunction: Timeout %d s, want above mcplambda.MaxWait (%v) and at most 900", got, mcplambda.MaxWait)
	}
	if got, _ := dig(tp.Resources["McpFunction"].Properties, "Events", "Route", "Properties", "TimeoutInMillis").(int); got != 1000*functionTimeout(tp, "McpFunction") {
		t.Errorf("McpFunction's Route: TimeoutInMillis %v, want the function's Timeout", got)
	}
	if got := functionTimeout(tp, "StatusEventsFunction"); got != 900 {
		t.Errorf("StatusEventsFunction: Timeout %d s, want 900 (a stream's 15 minutes; the stream ends after 14)", got)
	}
	if got := dig(tp.Resources["StatusEventsFunction"].Properties, "Events", "Route", "Properties", "TimeoutInMillis"); got != 900000 {
		t.Errorf("StatusEventsFunction's Route: TimeoutInMillis %v, want 900000", got)
	}
}

// Defect 5: an API function stops well before API Gateway's 29 seconds,
// with time left after its context ends (endpoint.Reserve) to refund a
// start that could not finish. A streamed one (the event stream) is
// bounded by the stream's 15 minutes instead (TestEventStreamIsStreamed).
func TestAPIFunctionsStopBeforeTheGateway(t *testing.T) {
	tp := loadTemplate(t)
	const gateway = 29
	for _, id := range tp.ofType("AWS::Serverless::Function") {
		if every, _ := streamsEveryRoute(tp, id); !hasAPIEvents(tp, id) || every {
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
		regexp.MustCompile(`(?m)^capabilities\s*=\s*"CAPABILITY_NAMED_IAM"$`),
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
	def := readDefinition(t)
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

// Defect 11: access logs on the stage, with the account's CloudWatch role
// set first; alarms on failed executions, failed refunds, Lambda errors
// and throttles of every function; no execution data (prompts) in the
// state machine's logs.
func TestOperability(t *testing.T) {
	tp := loadTemplate(t)
	api := tp.Resources["GenApi"]
	dest, err := tp.eval(dig(api.Properties, "AccessLogSetting", "DestinationArn"))
	if want, _ := tp.getAtt("ApiAccessLogGroup", "Arn"); err != nil || dest != want {
		t.Errorf("GenApi access logs go to %s (%v), want ApiAccessLogGroup", dest, err)
	}
	format, _ := dig(api.Properties, "AccessLogSetting", "Format").(string)
	var line map[string]string
	if err := json.Unmarshal([]byte(format), &line); err != nil || line["requestId"] != "$context.requestId" || line["status"] != "$context.status" {
		t.Errorf("access log format %q is not one JSON object with requestId and status (%v)", format, err)
	}
	if strings.Contains(strings.ToLower(format), "apikey") || strings.Contains(format, "X-API-Key") {
		t.Errorf("access log format %q logs the API key", format)
	}
	acct := tp.Resources["ApiGatewayAccount"]
	if acct.Type != "AWS::ApiGateway::Account" || mustJSON(t, acct.Properties["CloudWatchRoleArn"]) != `{"Fn::GetAtt":["ApiGatewayLogsRole","Arn"]}` {
		t.Errorf("ApiGatewayAccount = %+v, want the account's CloudWatch role", acct)
	}
	if pol := mustJSON(t, tp.Resources["ApiGatewayLogsRole"].Properties["ManagedPolicyArns"]); !strings.Contains(pol, "AmazonAPIGatewayPushToCloudWatchLogs") {
		t.Errorf("ApiGatewayLogsRole policies %s, want AmazonAPIGatewayPushToCloudWatchLogs", pol)
	}
	if v := dig(tp.Resources["GenerationStateMachine"].Properties, "Logging", "IncludeExecutionData"); v != false {
		t.Errorf("state machine logs IncludeExecutionData = %v, want false: execution data holds the prompts", v)
	}

	// What the alarms watch: "namespace metric dimension-ref".
	watched := map[string]bool{}
	for _, id := range tp.ofType("AWS::CloudWatch::Alarm") {
		p := tp.Resources[id].Properties
		if mustJSON(t, p["AlarmActions"]) != `[{"Ref":"AlarmTopic"}]` {
			t.Errorf("%s notifies %s, want AlarmTopic", id, mustJSON(t, p["AlarmActions"]))
		}
		if list, ok := p["Metrics"].([]any); ok && len(list) > 10 {
			t.Errorf("%s has %d metric queries; CloudWatch takes at most 10", id, len(list))
		}
		metrics := []any{map[string]any{"Metric": map[string]any{"Namespace": p["Namespace"], "MetricName": p["MetricName"], "Dimensions": p["Dimensions"]}}}
		if list, ok := p["Metrics"].([]any); ok {
			metrics = nil
			for _, m := range list {
				if ms := dig(m, "MetricStat"); ms != nil {
					metrics = append(metrics, ms)
				}
			}
		}
		for _, m := range metrics {
			ns, _ := tp.eval(dig(m, "Metric", "Namespace"))
			name, _ := dig(m, "Metric", "MetricName").(string)
			dims, _ := dig(m, "Metric", "Dimensions").([]any)
			target := ""
			for _, d := range dims {
				target = refTarget(dig(d, "Value"))
			}
			watched[ns+" "+name+" "+target] = true
		}
	}
	stack, _ := tp.eval(map[string]any{"Ref": "AWS::StackName"})
	want := []string{"AWS/States ExecutionsFailed GenerationStateMachine", stack + " FailedRefunds "}
	for _, fn := range tp.ofType("AWS::Serverless::Function") {
		want = append(want, "AWS/Lambda Errors "+fn)
		if fn != "GenerateFunction" { // throttled by design with a reservation; its retries wait
			want = append(want, "AWS/Lambda Throttles "+fn)
		}
	}
	for _, w := range want {
		if !watched[w] {
			t.Errorf("no alarm watches %s", w)
		}
	}
	// The failed-refund metric counts the ERROR logs that say a refund
	// could not be written.
	mf := tp.Resources["FailedRefundsMetric"].Properties
	if pat, _ := mf["FilterPattern"].(string); !strings.Contains(pat, `$.level = "ERROR"`) || !strings.Contains(pat, "refund") ||
		mustJSON(t, mf["LogGroupName"]) != `{"Ref":"FunctionLogGroup"}` {
		t.Errorf("FailedRefundsMetric = %s, want ERROR logs about refunds of FunctionLogGroup", mustJSON(t, mf))
	}
	src, err := os.ReadFile(filepath.Join(root, "shared", "service", "start.go"))
	if err != nil || !regexp.MustCompile(`LevelError, "cannot fail and refund`).Match(src) {
		t.Errorf("shared/service/start.go no longer logs an ERROR \"cannot fail and refund...\", which FailedRefundsMetric counts (%v)", err)
	}

	sam := samTransformed(t)
	for id, st := range transformedOfType(sam, "AWS::ApiGateway::Stage") {
		if dig(st, "Properties", "AccessLogSetting", "DestinationArn") == nil {
			t.Errorf("deployed stage %s has no access logs", id)
		}
	}
}

// Defect 12: no Scan, DeleteItem or BatchWriteItem for the public
// functions (nor a SAM policy template that allows them); the authorizer
// reads keys by hash only; Generate may list inputs/, so that a missing
// input is S3's 404, not a 403 like a denied one.
func TestPublicFunctionsLeastPrivilege(t *testing.T) {
	tp := loadTemplate(t)
	for _, id := range tp.ofType("AWS::Serverless::Function") {
		if !hasAPIEvents(tp, id) && id != "AuthorizerFunction" {
			continue
		}
		for _, line := range policySummary(t, tp, id, tp.Resources[id].Properties["Policies"]) {
			// DELETE /api/gen/tasks/{taskId} (and OpenAI's DELETE
			// /openai/v1/videos/{taskId}) removes a finished task: their
			// functions alone may delete, and only tasks.
			if (id == "DeleteTaskFunction" || id == "OpenaiVideoFunction") && strings.HasPrefix(line, "dynamodb:DeleteItem TasksTable") {
				continue
			}
			// DELETE /api/gen/webhooks/{webhookId} removes an endpoint:
			// on the webhooks table alone, its leading keys limited to
			// the accounts' partitions (TestWebhookFunctions).
			if id == "WebhookDeleteFunction" && line == "dynamodb:DeleteItem WebhooksTable" {
				continue
			}
			if regexp.MustCompile(`^(DynamoDB(Crud|Read)Policy|dynamodb:(Scan|DeleteItem|BatchWriteItem|\*)) `).MatchString(line) {
				t.Errorf("%s, reachable from the Internet, may %s", id, line)
			}
		}
	}
	az, _ := tp.Resources["AuthorizerFunction"].Properties["Policies"].([]any)
	if len(az) != 1 {
		t.Fatalf("AuthorizerFunction has %d policies, want one statement", len(az))
	}
	stmt := dig(az[0], "Statement").([]any)[0]
	if got := mustJSON(t, dig(stmt, "Condition", "ForAllValues:StringLike", "dynamodb:LeadingKeys")); got != `["H#*"]` {
		t.Errorf("authorizer's key reads are limited to leading keys %s, want [\"H#*\"] (the items by hash)", got)
	}
	found := false
	for _, p := range tp.Resources["GenerateRole"].Properties["Policies"].([]any) {
		stmts, _ := dig(p, "PolicyDocument", "Statement").([]any)
		for _, s := range stmts {
			if dig(s, "Action") == "s3:ListBucket" {
				found = true
				if got := mustJSON(t, dig(s, "Condition", "StringLike", "s3:prefix")); got != `["inputs/*"]` {
					t.Errorf("Generate may list %s, want only inputs/*", got)
				}
			}
		}
	}
	if !found {
		t.Errorf("Generate may not s3:ListBucket: a missing input would look like a denied one (403)")
	}
}

// Defect 6: Generate can be given reserved concurrency, which isolates
// (and caps) it; 0, the default, leaves every account deployable.
func TestGenerateConcurrency(t *testing.T) {
	tp := loadTemplate(t)
	p, _ := tp.Parameters["GenerateReservedConcurrency"].(map[string]any)
	if p["Type"] != "Number" || p["MinValue"] != 0 || p["Default"] == nil {
		t.Errorf("GenerateReservedConcurrency = %v, want a Number from 0", p)
	}
	// Issue 34, defect 1: the default deploys in any account. Lambda keeps
	// 100 executions unreserved, so any reservation fails the deploy of
	// an account on the new-account quota of 10: reserving is the
	// operator's choice, and the parameter says what it needs.
	if d, ok := p["Default"].(int); !ok || d != 0 {
		t.Errorf("GenerateReservedConcurrency defaults to %v, want 0: a reservation fails a new account's first deploy", p["Default"])
	}
	if reserve, err := tp.condition("ReserveGenerate"); err != nil || reserve {
		t.Errorf("ReserveGenerate with the defaults = %v (%v), want false: nothing reserved unless the operator asks", reserve, err)
	}
	for _, field := range []string{"Description", "ConstraintDescription"} {
		if d, _ := p[field].(string); !strings.Contains(d, "100") || !strings.Contains(d, "unreserved") {
			t.Errorf("GenerateReservedConcurrency's %s does not say that Lambda keeps 100 executions unreserved: %q", field, d)
		}
	}
	got := mustJSON(t, tp.Resources["GenerateFunction"].Properties["ReservedConcurrentExecutions"])
	if got != `{"Fn::If":["ReserveGenerate",{"Ref":"GenerateReservedConcurrency"},{"Ref":"AWS::NoValue"}]}` {
		t.Errorf("GenerateFunction.ReservedConcurrentExecutions = %s, want GenerateReservedConcurrency unless 0", got)
	}
	if c := mustJSON(t, tp.Conditions["ReserveGenerate"]); c != `{"Fn::Not":[{"Fn::Equals":[{"Ref":"GenerateReservedConcurrency"},0]}]}` {
		t.Errorf("ReserveGenerate = %s", c)
	}
}

// Issue 34, defect 6: the events function, whose executions last up to
// 14 minutes each, can be given reserved concurrency (0, the default,
// leaves accounts on the new-account quota deployable), and reads the
// per-key cap of open streams from a parameter.
func TestEventsConcurrency(t *testing.T) {
	tp := loadTemplate(t)
	p, _ := tp.Parameters["EventsReservedConcurrency"].(map[string]any)
	if p["Type"] != "Number" || p["MinValue"] != 0 || p["Default"] != 0 {
		t.Errorf("EventsReservedConcurrency = %v, want a Number from 0, default 0", p)
	}
	fn := tp.Resources["StatusEventsFunction"].Properties
	if got := mustJSON(t, fn["ReservedConcurrentExecutions"]); got != `{"Fn::If":["ReserveEvents",{"Ref":"EventsReservedConcurrency"},{"Ref":"AWS::NoValue"}]}` {
		t.Errorf("StatusEventsFunction.ReservedConcurrentExecutions = %s, want EventsReservedConcurrency unless 0", got)
	}
	if c := mustJSON(t, tp.Conditions["ReserveEvents"]); c != `{"Fn::Not":[{"Fn::Equals":[{"Ref":"EventsReservedConcurrency"},0]}]}` {
		t.Errorf("ReserveEvents = %s", c)
	}
	m, _ := tp.Parameters["MaxEventStreams"].(map[string]any)
	if m["Type"] != "Number" || m["MinValue"] != 1 || m["Default"] != 5 {
		t.Errorf("MaxEventStreams = %v, want a Number from 1, default 5", m)
	}
	if got := mustJSON(t, dig(fn, "Environment", "Variables", "GEN_MAX_EVENT_STREAMS")); got != `{"Ref":"MaxEventStreams"}` {
		t.Errorf("StatusEventsFunction's GEN_MAX_EVENT_STREAMS = %s, want the MaxEventStreams parameter", got)
	}
}

// Defect 10 of issue 12: the routes without a key are throttled. Issue
// 24, defect 4: and only they. Stage and method throttling is per method
// for all clients together, so on a keyed route it would cap every
// customer at once (and its 429 blames "this API key"); keyed routes are
// throttled per key by their usage plans.
func TestPublicRoutesThrottled(t *testing.T) {
	tp := loadTemplate(t)
	settings, _ := tp.Resources["GenApi"].Properties["MethodSettings"].([]any)
	// The throttled methods, as "METHOD /path" ("*" for any).
	throttled := map[string]bool{}
	for _, s := range settings {
		if dig(s, "ThrottlingRateLimit") == nil && dig(s, "ThrottlingBurstLimit") == nil {
			continue
		}
		if dig(s, "ResourcePath") == "/*" && dig(s, "HttpMethod") == "*" {
			continue // the stage's backstop (TestBackstopBeforeTheAuthorizer)
		}
		if mustJSON(t, dig(s, "ThrottlingRateLimit")) != `{"Ref":"PublicRateLimit"}` ||
			mustJSON(t, dig(s, "ThrottlingBurstLimit")) != `{"Ref":"PublicBurstLimit"}` {
			t.Errorf("GenApi.MethodSettings %s: want PublicRateLimit and PublicBurstLimit", mustJSON(t, s))
		}
		path, _ := dig(s, "ResourcePath").(string)
		method, _ := dig(s, "HttpMethod").(string)
		if path != "/" && path != "/*" {
			path = strings.ReplaceAll(path, "~1", "/")[1:]
		}
		throttled[method+" "+path] = true
	}
	covered := func(method, path string) bool {
		return throttled[method+" "+path] || throttled["* "+path] || throttled["* /*"] || throttled[method+" /*"]
	}
	public := 0
	for _, ev := range apiEvents(t, tp) {
		keyless := dig(ev.auth, "Authorizer") == "NONE"
		switch {
		case keyless && !covered(ev.method, ev.path):
			t.Errorf("%s %s (%s) has no key and no throttling", ev.method, ev.path, ev.function)
		case !keyless && covered(ev.method, ev.path):
			t.Errorf("%s %s (%s) is keyed, yet throttled for all keys together by the stage's method settings", ev.method, ev.path, ev.function)
		}
		if keyless {
			public++
		}
	}
	if public == 0 {
		t.Errorf("no route without a key: the check checks nothing")
	}
	for _, name := range []string{"PublicRateLimit", "PublicBurstLimit"} {
		p, _ := tp.Parameters[name].(map[string]any)
		if p["Type"] != "Number" || p["MinValue"] == nil || p["MaxValue"] == nil {
			t.Errorf("parameter %s = %v, want a bounded Number", name, p)
		}
	}
	sam := samTransformed(t)
	for id, st := range transformedOfType(sam, "AWS::ApiGateway::Stage") {
		if dig(st, "Properties", "MethodSettings") == nil {
			t.Errorf("deployed stage %s has no method throttling", id)
		}
	}
}

// Defect 13: the stack's own signing key rotates every
// SignerRotationDays (at least 2, so that the key a rotation deletes has
// not signed for a day), through the rotation function, which only
// Secrets Manager may invoke.
func TestSignerRotation(t *testing.T) {
	tp := loadTemplate(t)
	rs := tp.Resources["SignerRotation"]
	if rs.Type != "AWS::SecretsManager::RotationSchedule" || mustJSON(t, rs.Properties["SecretId"]) != `{"Ref":"SignerSecret"}` ||
		mustJSON(t, rs.Properties["RotationLambdaARN"]) != `{"Fn::GetAtt":["RotateSignerFunction","Arn"]}` ||
		mustJSON(t, dig(rs.Properties, "RotationRules", "AutomaticallyAfterDays")) != `{"Ref":"SignerRotationDays"}` {
		t.Errorf("SignerRotation = %s %s, want the signer secret rotated by RotateSignerFunction every SignerRotationDays", rs.Type, mustJSON(t, rs.Properties))
	}
	if p, _ := tp.Parameters["SignerRotationDays"].(map[string]any); p["MinValue"] != 2 {
		t.Errorf("SignerRotationDays = %v, want MinValue 2", p)
	}
	perm := tp.Resources["RotateSignerPermission"].Properties
	if perm["Principal"] != "secretsmanager.amazonaws.com" || mustJSON(t, perm["FunctionName"]) != `{"Fn::GetAtt":["RotateSignerFunction","Arn"]}` {
		t.Errorf("RotateSignerPermission = %s, want Secrets Manager allowed to invoke the rotation", mustJSON(t, perm))
	}
	for _, id := range []string{"RotateSignerFunction", "RotateSignerPermission", "SignerRotation", "SignerRotationAlarm"} {
		if c := tp.Resources[id].raw["Condition"]; c != "CreateSigner" {
			t.Errorf("%s has condition %v, want CreateSigner (a secret of your own rotates your way)", id, c)
		}
	}
}

// Defect 13: a secret under a customer managed key can be read: the
// functions that read it get kms:Decrypt on that key, through Secrets
// Manager only.
func TestSignerSecretCustomerKey(t *testing.T) {
	tp := loadTemplate(t)
	for _, id := range []string{"StatusFunction", "DownloadFunction"} {
		lines := policySummary(t, tp, id, tp.Resources[id].Properties["Policies"])
		if !slices.Contains(lines, "if SignerCustomerKey: kms:Decrypt SignerSecretKmsKeyArn") {
			t.Errorf("%s may not kms:Decrypt the signer secret's customer key: %v", id, lines)
		}
	}
	if _, ok := tp.Parameters["SignerSecretKmsKeyArn"]; !ok {
		t.Errorf("no parameter SignerSecretKmsKeyArn")
	}
}

// Defect 9: a failed sweep is not retried by EventBridge (the next runs
// in 5 minutes), and the function leaves failed tasks to it
// (sweeper.Scheduled).
func TestSweeperNotRetried(t *testing.T) {
	tp := loadTemplate(t)
	if got := dig(tp.Resources["SweeperFunction"].Properties, "EventInvokeConfig", "MaximumRetryAttempts"); got != 0 {
		t.Errorf("SweeperFunction EventInvokeConfig.MaximumRetryAttempts = %v, want 0", got)
	}
	src, err := os.ReadFile(filepath.Join(root, "functions", "sweeper", "main.go"))
	if err != nil || !strings.Contains(string(src), "lambda.Start(sw.Scheduled)") {
		t.Errorf("functions/sweeper does not run sweeper.Scheduled (%v)", err)
	}
}

// deploy.md says what only a real account shows and how to smoke-test a
// deployment; the script it names parses and covers the four checks the
// issue asks for.
func TestDeployDocAndSmokeScript(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(root, "infra", "docs", "deploy.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## What only a real account shows", "## Smoke test after `sam deploy`", "infra/scripts/smoke-aws.sh"} {
		if !strings.Contains(string(doc), want) {
			t.Errorf("deploy.md lacks %q", want)
		}
	}
	script := filepath.Join(root, "infra", "scripts", "smoke-aws.sh")
	st, err := os.Stat(script)
	if err != nil || st.Mode()&0o111 == 0 {
		t.Fatalf("smoke script %s: %v (mode %v), want an executable", script, err, st.Mode())
	}
	if out, err := exec.Command("bash", "-n", script).CombinedOutput(); err != nil {
		t.Errorf("bash -n %s: %v\n%s", script, err, out)
	}
	src, _ := os.ReadFile(script)
	for check, want := range map[string]string{
		"oversized upload":     "EntityTooLarge",
		"oversized request":    "FILE_TOO_LARGE",
		"revoked key":          "keys revoke",
		"generation":           "imageUploadId",
		"key store down":       "SERVICE_UNAVAILABLE",
		"key store restored":   "delete-role-policy",
		"end to end completed": "completed",
		// Issue 24: what a script can show of its defects.
		"fresh-region deploy":            "--fresh-region",
		"the account setting kept":       "aws apigateway get-account",
		"sam delete":                     "sam delete",
		"a missing upload id":            "MISSING_IMAGE",
		"one key's throttle and another": "another key's request",
		// Issue 34: that a stream really streams.
		"the events stream streams": "the live events stream streams",
	} {
		if !strings.Contains(string(src), want) {
			t.Errorf("smoke script does not check %s (%q)", check, want)
		}
	}
}

// cfnLintDefinition runs cfn-lint on a template holding the state machine
// definition def (its ${...} placeholders replaced by function ARNs) as an
// AWS::StepFunctions::StateMachine: cfn-lint checks a definition only
// there, not behind SAM's DefinitionUri.
func cfnLintDefinition(t *testing.T, lint string, def []byte) ([]byte, error) {
	t.Helper()
	subst := aslPlaceholder.ReplaceAllString(string(def), "arn:aws:lambda:us-east-1:123456789012:function:$1")
	var d any
	if err := json.Unmarshal([]byte(subst), &d); err != nil {
		t.Fatalf("definition: %v", err)
	}
	tmpl := map[string]any{"AWSTemplateFormatVersion": "2010-09-09", "Resources": map[string]any{
		"Generation": map[string]any{"Type": "AWS::StepFunctions::StateMachine", "Properties": map[string]any{
			"RoleArn": "arn:aws:iam::123456789012:role/generation", "Definition": d}}}}
	path := filepath.Join(t.TempDir(), "statemachine.json")
	if err := os.WriteFile(path, []byte(mustJSON(t, tmpl)), 0o644); err != nil {
		t.Fatal(err)
	}
	return exec.CommandContext(t.Context(), lint, "--", path).CombinedOutput()
}

// The state machine definition passes cfn-lint's checks of Step Functions
// definitions (E3601) too; a broken one fails them, so the check can fail.
func TestCfnLintChecksTheDefinition(t *testing.T) {
	lint, err := exec.LookPath("cfn-lint")
	if err != nil {
		t.Skip("cfn-lint is not installed (pip install cfn-lint): skipping the CloudFormation lint of the definition")
	}
	def, err := os.ReadFile(filepath.Join(root, "statemachine", "generation.asl.json"))
	if err != nil {
		t.Fatal(err)
	}
	if out, err := cfnLintDefinition(t, lint, def); err != nil {
		t.Errorf("cfn-lint of the state machine definition: %v\n%s", err, out)
	}
	broken := strings.Replace(string(def), `"StartAt": "MarkProcessing"`, `"StartAt": "NoSuchState"`, 1)
	if broken == string(def) {
		t.Fatal("the definition does not start at MarkProcessing: update the broken variant")
	}
	if out, err := cfnLintDefinition(t, lint, []byte(broken)); err == nil || !strings.Contains(string(out), "E3601") {
		t.Errorf("cfn-lint of a definition starting at a missing state: %v\n%s, want E3601", err, out)
	}
}

// dependencies lists what resource id of a transformed template waits
// for: its DependsOn, and every resource its properties Ref, Fn::GetAtt
// or name in an Fn::Sub (CloudFormation orders by all of them, a Sub
// variable unused by its string included).
func dependencies(tp map[string]any, id string) []string {
	res := mapAt(tp, "Resources")
	r, _ := res[id].(map[string]any)
	var deps []string
	switch d := r["DependsOn"].(type) {
	case string:
		deps = append(deps, d)
	case []any:
		for _, x := range d {
			deps = append(deps, fmt.Sprint(x))
		}
	}
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				switch k {
				case "Ref":
					deps = append(deps, fmt.Sprint(x))
				case "Fn::GetAtt":
					if l, ok := x.([]any); ok && len(l) > 0 {
						deps = append(deps, fmt.Sprint(l[0]))
					}
				case "Fn::Sub":
					str := x
					if l, ok := x.([]any); ok && len(l) == 2 {
						str = l[0]
						walk(l[1])
					}
					if s, ok := str.(string); ok {
						for _, m := range regexp.MustCompile(`\$\{([A-Za-z0-9]+)`).FindAllStringSubmatch(s, -1) {
							deps = append(deps, m[1])
						}
					}
					continue
				}
				walk(x)
			}
		case []any:
			for _, x := range v {
				walk(x)
			}
		}
	}
	walk(r["Properties"])
	var out []string
	for _, d := range deps {
		if _, ok := res[d]; ok && !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return out
}

// waitsFor reports whether resource from is created after resource to.
func waitsFor(tp map[string]any, from, to string) bool {
	seen := map[string]bool{}
	var visit func(id string) bool
	visit = func(id string) bool {
		if id == to {
			return true
		}
		if seen[id] {
			return false
		}
		seen[id] = true
		return slices.ContainsFunc(dependencies(tp, id), visit)
	}
	return slices.ContainsFunc(dependencies(tp, from), visit)
}

// Issue 24, defect 1: in a region that never had an API Gateway
// resource, AWS::ApiGateway::Account must come after one (its
// documentation); and the stage, which writes access logs, after the
// account's role is set. Checked on what SAM deploys: a DependsOn on the
// Serverless::Api lands on the REST API too.
func TestFirstDeployInARegion(t *testing.T) {
	sam := samTransformed(t)
	res := mapAt(sam, "Resources")
	apiFirst := false
	for _, d := range dependencies(sam, "ApiGatewayAccount") {
		typ, _ := dig(res[d], "Type").(string)
		if strings.HasPrefix(typ, "AWS::ApiGateway::") && !waitsFor(sam, d, "ApiGatewayAccount") {
			apiFirst = true
		}
	}
	if !apiFirst {
		t.Errorf("ApiGatewayAccount waits for %v: no API Gateway resource made before it, so a first deploy in a region fails",
			dependencies(sam, "ApiGatewayAccount"))
	}
	stages := transformedOfType(sam, "AWS::ApiGateway::Stage")
	if len(stages) == 0 {
		t.Fatal("SAM deploys no stage")
	}
	for id := range stages {
		if !waitsFor(sam, id, "ApiGatewayAccount") {
			t.Errorf("stage %s does not wait for ApiGatewayAccount: its access logs need the account's CloudWatch role", id)
		}
		if waitsFor(sam, "ApiGatewayAccount", id) {
			t.Errorf("ApiGatewayAccount waits for stage %s, which waits for it", id)
		}
	}
}

// Issue 24, defect 8: the region's API Gateway account setting outlives
// the stack, so the role it names must too (a deleted role stops the
// logs of every other API in the region). Its name is generated, so a
// kept role never collides with a later deploy's.
func TestLogsRoleOutlivesTheStack(t *testing.T) {
	tp := loadTemplate(t)
	role := tp.Resources["ApiGatewayLogsRole"]
	if role.raw["DeletionPolicy"] != "Retain" || role.raw["UpdateReplacePolicy"] != "Retain" {
		t.Errorf("ApiGatewayLogsRole DeletionPolicy %v, UpdateReplacePolicy %v, want Retain: the account setting keeps naming it",
			role.raw["DeletionPolicy"], role.raw["UpdateReplacePolicy"])
	}
	if _, named := role.Properties["RoleName"]; named {
		t.Errorf("ApiGatewayLogsRole has a fixed RoleName: a kept role would make the next deploy fail with \"already exists\"")
	}
	if acct := mustJSON(t, tp.Resources["ApiGatewayAccount"].Properties["CloudWatchRoleArn"]); acct != `{"Fn::GetAtt":["ApiGatewayLogsRole","Arn"]}` {
		t.Errorf("ApiGatewayAccount names %s, want ApiGatewayLogsRole", acct)
	}
}

// Issue 24, defect 11: no function at all may Scan (but the sweeper its
// one sparse index), BatchWriteItem or hold a SAM CRUD policy template
// (the workflow's steps and the sweeper included); only the two deletes
// of the API delete, each on its table.
// A Gemini key's secret under a customer key can be decrypted.
func TestNoFunctionScansOrBatchWrites(t *testing.T) {
	tp := loadTemplate(t)
	for _, id := range tp.ofType("AWS::Serverless::Function") {
		for _, line := range functionPolicies(t, tp, id) {
			// The sweeper reads the sparse index of unfinished tasks
			// (dynamostore's Unfinished), and nothing else, by a Scan.
			if id == "SweeperFunction" && line == "dynamodb:Scan TasksTable/index/unfinished" {
				continue
			}
			if regexp.MustCompile(`^(DynamoDB(Crud|Read)Policy|dynamodb:(Scan|BatchWriteItem|\*)) `).MatchString(line) {
				t.Errorf("%s may %s", id, line)
			}
			if strings.HasPrefix(line, "dynamodb:DeleteItem ") && id != "DeleteTaskFunction" && id != "OpenaiVideoFunction" && id != "WebhookDeleteFunction" {
				t.Errorf("%s may %s", id, line)
			}
		}
	}
	lines := functionPolicies(t, tp, "GenerateFunction")
	if !slices.Contains(lines, "if GeminiKeyCustomerKey: kms:Decrypt GeminiApiKeyKmsKeyArn") {
		t.Errorf("GenerateFunction may not decrypt a Gemini key's secret under a customer key: %v", lines)
	}
	// Issue 34, defect 9: nor may it the routes' secrets under theirs.
	if !slices.Contains(lines, "if RouteKeysCustomerKeys: kms:Decrypt RouteKeyKmsKeyArns") {
		t.Errorf("GenerateFunction may not decrypt the routes' key secrets under customer keys: %v", lines)
	}
}

// Issue 24, defect 12: Google's workload identity pool must name the
// Generate role, so it has a fixed, documented name (not SAM's random
// one, which changes when the function is replaced), and an output.
func TestGenerateRoleNamed(t *testing.T) {
	tp := loadTemplate(t)
	if got := mustJSON(t, tp.Resources["GenerateFunction"].Properties["Role"]); got != `{"Fn::GetAtt":["GenerateRole","Arn"]}` {
		t.Fatalf("GenerateFunction.Role = %s, want GenerateRole's ARN", got)
	}
	stack, _ := tp.eval(map[string]any{"Ref": "AWS::StackName"})
	name, err := tp.eval(tp.Resources["GenerateRole"].Properties["RoleName"])
	if want := stack + "-us-east-1-generate"; err != nil || name != want {
		t.Errorf("GenerateRole's name = %q (%v), want %q: <stack>-<region>-generate", name, err, want)
	}
	if got := mustJSON(t, dig(tp.Outputs["GenerateRoleArn"], "Value")); got != `{"Fn::GetAtt":["GenerateRole","Arn"]}` {
		t.Errorf("output GenerateRoleArn = %s, want GenerateRole's ARN", got)
	}
	doc, _ := os.ReadFile(filepath.Join(root, "infra", "docs", "deploy.md"))
	if !strings.Contains(string(doc), "<stack>-<region>-generate") || !strings.Contains(string(doc), "GenerateRoleArn") {
		t.Errorf("deploy.md does not document the Generate role's name pattern and output")
	}
}

// Issue 24, defect 5: CloudFormation makes no access key of the signing
// user (the second rotation would delete it: drift), and its custom
// resource, served by the rotation function, makes the first key and
// removes them all before the user is deleted
// (shared/awsstack/rotatesignerlambda TestSignerKeyLifecycle).
func TestSignerKeysAreTheRotationsOwn(t *testing.T) {
	tp := loadTemplate(t)
	if keys := tp.ofType("AWS::IAM::AccessKey"); len(keys) > 0 {
		t.Errorf("the template makes access keys %v: the second rotation deletes them under CloudFormation", keys)
	}
	sk := tp.Resources["SignerKey"]
	if sk.Type != "Custom::SignerKey" || mustJSON(t, sk.Properties["ServiceToken"]) != `{"Fn::GetAtt":["RotateSignerFunction","Arn"]}` ||
		mustJSON(t, sk.Properties["SecretId"]) != `{"Ref":"SignerSecret"}` || mustJSON(t, sk.Properties["UserName"]) != `{"Ref":"SigningUser"}` ||
		sk.raw["Condition"] != "CreateSigner" {
		t.Errorf("SignerKey = %s %s, want Custom::SignerKey served by RotateSignerFunction, naming the secret and the user", sk.Type, mustJSON(t, sk.Properties))
	}
	if dep := mustJSON(t, tp.Resources["SignerRotation"].raw["DependsOn"]); !strings.Contains(dep, `"SignerKey"`) {
		t.Errorf("SignerRotation DependsOn %s: a rotation must not start before the first key", dep)
	}
	src, err := os.ReadFile(filepath.Join(root, "functions", "rotate-signer", "main.go"))
	if err != nil || !strings.Contains(string(src), ".Handle)") {
		t.Errorf("functions/rotate-signer does not serve both rotations and SignerKey (rotatesignerlambda.Handle): %v", err)
	}
}

// What a generation costs: a provider's operation is polled by a small
// function running the Generate step's code (functions/poll), with the
// same role and environment, not by the 3,008 MB Generate; Generate
// itself takes 3,008 MB only to render.
func TestPollIsGenerateInASmallFunction(t *testing.T) {
	tp := loadTemplate(t)
	gen, poll := tp.Resources["GenerateFunction"].Properties, tp.Resources["PollFunction"].Properties
	if mem, _ := poll["MemorySize"].(int); mem == 0 || mem > 512 {
		t.Errorf("PollFunction.MemorySize = %v, want at most 512 MB: a poll is one HTTPS request", poll["MemorySize"])
	}
	if got := mustJSON(t, gen["MemorySize"]); got != `{"Fn::If":["RendersVideos",3008,512]}` {
		t.Errorf("GenerateFunction.MemorySize = %s, want 3,008 MB only where it renders", got)
	}
	for _, k := range []string{"Role", "Environment", "Layers", "Timeout"} {
		if g, p := mustJSON(t, gen[k]), mustJSON(t, poll[k]); g != p {
			t.Errorf("PollFunction.%s = %s, GenerateFunction's %s: want the same", k, p, g)
		}
	}
	src, err := os.ReadFile(filepath.Join(root, "functions", "poll", "main.go"))
	if err != nil || !strings.Contains(string(src), "lambda.Start(steps.GenerateOutcome)") {
		t.Errorf("functions/poll does not run the Generate step's code (%v)", err)
	}
}

// Issue 33: the hourly model check builds the routes' providers as the
// Generate step does, so it runs under its role (Google's workload
// identity pool trusts the role by name; it reads the routes' key
// secrets) with every provider variable Generate has, and the role may
// write the routes' checks of the counters table and no other item.
func TestModelCheckIsGenerateOnASchedule(t *testing.T) {
	tp := loadTemplate(t)
	gen, check := tp.Resources["GenerateFunction"].Properties, tp.Resources["ModelCheckFunction"].Properties
	if g, c := mustJSON(t, gen["Role"]), mustJSON(t, check["Role"]); g != c {
		t.Errorf("ModelCheckFunction.Role = %s, GenerateFunction's %s: want the same", c, g)
	}
	genEnv, checkEnv := functionEnv(t, tp, "GenerateFunction"), functionEnv(t, tp, "ModelCheckFunction")
	for k, v := range genEnv {
		if strings.HasPrefix(k, "GEN_VERTEX_") || strings.HasPrefix(k, "GEN_GEMINI_") || k == "GEN_PROVIDER_POLL_INTERVAL" {
			if got, ok := checkEnv[k]; !ok || mustJSON(t, got) != mustJSON(t, v) {
				t.Errorf("ModelCheckFunction's %s = %s, GenerateFunction's %s: want the same", k, mustJSON(t, got), mustJSON(t, v))
			}
		}
	}
	if got := mustJSON(t, dig(mapAt(check, "Events")["Check"], "Properties", "Schedule")); got != `"rate(1 hour)"` {
		t.Errorf("ModelCheckFunction's schedule %s, want hourly", got)
	}
	var found bool
	for _, p := range tp.Resources["GenerateRole"].Properties["Policies"].([]any) {
		for _, st := range dig(p, "PolicyDocument", "Statement").([]any) {
			if dig(st, "Sid") != "WriteRouteChecks" {
				continue
			}
			found = true
			if got := mustJSON(t, dig(st, "Condition")); got != `{"ForAllValues:StringLike":{"dynamodb:LeadingKeys":["models:*"]}}` {
				t.Errorf("WriteRouteChecks condition %s, want the routes' check items only", got)
			}
		}
	}
	if !found {
		t.Error("GenerateRole has no WriteRouteChecks statement")
	}
}

// Issue 24, defect 6: the tasks TTL deletes leave the history's counters
// through TaskExpiryFunction, fed by the tasks table's stream (old
// images: the task's account and status), whose filter passes a TTL
// deletion (a REMOVE by the DynamoDB service) and nothing else: a user's
// DELETE already took its task out of the counters.
// shared/awsstack/taskexpirylambda's TestTTLDeletionLeavesTheTotals runs it.
func TestExpiredTasksLeaveTheCounters(t *testing.T) {
	tp := loadTemplate(t)
	if v := dig(tp.Resources["TasksTable"].Properties, "StreamSpecification", "StreamViewType"); v != "OLD_IMAGE" && v != "NEW_AND_OLD_IMAGES" {
		t.Errorf("TasksTable stream %v, want the old images of removed tasks", v)
	}
	ev := mapAt(tp.Resources["TaskExpiryFunction"].Properties, "Events")["Expired"]
	if dig(ev, "Type") != "DynamoDB" || mustJSON(t, dig(ev, "Properties", "Stream")) != `{"Fn::GetAtt":["TasksTable","StreamArn"]}` {
		t.Fatalf("TaskExpiryFunction's event %s, want the tasks table's stream", mustJSON(t, ev))
	}
	filters, _ := dig(ev, "Properties", "FilterCriteria", "Filters").([]any)
	if len(filters) != 1 {
		t.Fatalf("TaskExpiryFunction filters %v, want one", filters)
	}
	f, err := streams.ParseFilter(dig(filters[0], "Pattern").(string))
	if err != nil {
		t.Fatal(err)
	}
	record := func(identity string) map[string]any {
		var m map[string]any
		json.Unmarshal([]byte(`{"eventName": "REMOVE", "eventSource": "aws:dynamodb", `+identity+`
			"dynamodb": {"Keys": {"id": {"S": "gen_1"}}, "OldImage": {"id": {"S": "gen_1"}, "acct": {"S": "a"}, "status": {"S": "completed"}}}}`), &m)
		return m
	}
	if !f.Match(record(`"userIdentity": {"type": "Service", "principalId": "dynamodb.amazonaws.com"},`)) {
		t.Errorf("the filter drops a TTL deletion")
	}
	if f.Match(record("")) {
		t.Errorf("the filter passes a user's delete, which DeleteTask already counted")
	}
}

// Issue 24, defect 9: the start functions that take images check up to
// two of 20 MiB whole before they answer; sized at 256 MB (a seventh of a
// vCPU) two images of the largest canvas take most of the handler's
// budget (shared/imagecheck BenchmarkLargestCanvas), so they get a whole
// vCPU (1,769 MB).
func TestImageStartsHaveAWholeCPU(t *testing.T) {
	tp := loadTemplate(t)
	for _, id := range []string{"ImageToVideoFunction", "FirstLastFrameFunction"} {
		if mem, _ := tp.Resources[id].Properties["MemorySize"].(int); mem < 1769 {
			t.Errorf("%s.MemorySize = %v, want at least 1769 MB (one vCPU) to check two 20 MiB images in time", id, tp.Resources[id].Properties["MemorySize"])
		}
	}
}

// Issue 24, defect 13: what the stack costs whatever its traffic is
// written down, from the template's own figures: the alarm metrics
// CloudWatch bills (a metric-math alarm per metric it queries), X-Ray's
// sampling at low traffic, and a poll's access log and data transfer; and
// the stage has no detailed per-method metrics, billed per metric.
func TestFixedCostsWrittenDown(t *testing.T) {
	tp := loadTemplate(t)
	metrics := 0
	for _, id := range tp.ofType("AWS::CloudWatch::Alarm") {
		p := tp.Resources[id].Properties
		list, ok := p["Metrics"].([]any)
		if !ok {
			metrics++
			continue
		}
		for _, m := range list {
			if dig(m, "MetricStat") != nil {
				metrics++
			}
		}
	}
	doc, err := os.ReadFile(filepath.Join(root, "infra", "docs", "deploy.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, fixed, ok := strings.Cut(string(doc), "### Fixed costs")
	if !ok {
		t.Fatal("deploy.md has no \"### Fixed costs\"")
	}
	fixed, _, _ = strings.Cut(fixed, "\n## ")
	for _, want := range []string{fmt.Sprintf("%d alarm metrics", metrics), "X-Ray", "access log", "Secrets Manager", "detailed per-method metrics", "AWS WAF"} {
		if !strings.Contains(fixed, want) {
			t.Errorf("deploy.md's fixed costs do not say %q", want)
		}
	}
	settings, _ := tp.Resources["GenApi"].Properties["MethodSettings"].([]any)
	for _, s := range settings {
		if dig(s, "MetricsEnabled") == true {
			t.Errorf("MethodSettings %s enables detailed metrics: billed per metric and method", mustJSON(t, s))
		}
	}
}

// Issue 34, defect 5: the functions that hold a provider's answers (the
// Generate step, and its poll at 256 MB) set GOMEMLIMIT, the Go
// runtime's soft limit, below their smallest MemorySize with a quarter
// of it left for what the runtime does not count (an ffmpeg child making
// a poster frame, the runtime's own non-heap memory): the collector
// works harder near the limit rather than let the heap grow into an
// out-of-memory kill, which fails a task Google bills.
func TestGoMemoryLimit(t *testing.T) {
	tp := loadTemplate(t)
	for _, id := range []string{"GenerateFunction", "PollFunction"} {
		props := tp.Resources[id].Properties
		limit, err := parseGoMemLimit(functionEnv(t, tp, id)["GOMEMLIMIT"])
		if err != nil {
			t.Errorf("%s: GOMEMLIMIT: %v", id, err)
			continue
		}
		// MemorySize is a number of MiB, or !If [cond, a, b].
		var sizes []any
		switch m := props["MemorySize"].(type) {
		case map[string]any:
			branches, _ := m["Fn::If"].([]any)
			if len(branches) == 3 {
				sizes = branches[1:]
			}
		case nil:
			sizes = []any{dig(tp.Globals, "Function", "MemorySize")}
		default:
			sizes = []any{m}
		}
		if len(sizes) == 0 {
			t.Errorf("%s: MemorySize %v is neither a number nor !If", id, props["MemorySize"])
		}
		for _, s := range sizes {
			mb, ok := s.(int)
			if !ok {
				t.Errorf("%s: MemorySize %v is not a number", id, s)
				continue
			}
			if limit > int64(mb)<<20*3/4 {
				t.Errorf("%s: GOMEMLIMIT %d MiB, want at most 3/4 of its MemorySize %d MB", id, limit>>20, mb)
			}
		}
	}
}

// parseGoMemLimit parses GOMEMLIMIT as the Go runtime does: a number of
// bytes with an optional unit, B, KiB, MiB, GiB or TiB (runtime
// package, "Environment Variables").
func parseGoMemLimit(s string) (int64, error) {
	if s == "" {
		return 0, errors.New("not set")
	}
	units := []struct {
		suffix string
		shift  uint
	}{{"TiB", 40}, {"GiB", 30}, {"MiB", 20}, {"KiB", 10}, {"B", 0}}
	shift := uint(0)
	for _, u := range units {
		if n, ok := strings.CutSuffix(s, u.suffix); ok {
			s, shift = n, u.shift
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("%q is not a positive size", s)
	}
	return n << shift, nil
}

// withParameters runs f with the template's parameters defaulting to
// values (what `sam deploy --parameter-overrides` would pass).
func withParameters(t *testing.T, tp *template, values map[string]string, f func()) {
	t.Helper()
	old := map[string]any{}
	for name, v := range values {
		p, ok := tp.Parameters[name].(map[string]any)
		if !ok {
			t.Fatalf("no parameter %s", name)
		}
		old[name] = p["Default"]
		p["Default"] = v
	}
	defer func() {
		for name, v := range old {
			tp.Parameters[name].(map[string]any)["Default"] = v
		}
	}()
	f()
}

// failedRules evaluates the template's Rules as CloudFormation does
// before it makes anything: the rules whose RuleCondition holds and one
// of whose Assertions does not.
func failedRules(t *testing.T, tp *template) []string {
	t.Helper()
	var failed []string
	for name, r := range mapAt(tp.raw, "Rules") {
		if c := dig(r, "RuleCondition"); c != nil {
			ok, err := tp.evalCondition(c)
			if err != nil {
				t.Fatalf("rule %s: RuleCondition: %v", name, err)
			}
			if !ok {
				continue
			}
		}
		as, _ := dig(r, "Assertions").([]any)
		if len(as) == 0 {
			t.Errorf("rule %s asserts nothing", name)
		}
		for _, a := range as {
			ok, err := tp.evalCondition(dig(a, "Assert"))
			if err != nil {
				t.Fatalf("rule %s: %v", name, err)
			}
			if d, _ := dig(a, "AssertDescription").(string); len(d) < 20 {
				t.Errorf("rule %s: an assertion without a description that says why: %q", name, d)
			}
			if !ok {
				failed = append(failed, name)
			}
		}
	}
	slices.Sort(failed)
	return failed
}

// Issue 34, defect 2: settings that cannot work together are refused by
// the template's Rules before CloudFormation makes anything, rather than
// by every function's cold start after (which also stopped the
// Custom::SignerKey's answer), and the custom resource gives up in
// minutes, not CloudFormation's default hour.
func TestRulesRefuseSettingsThatCannotWork(t *testing.T) {
	tp := loadTemplate(t)
	const (
		secret = "arn:aws:secretsmanager:us-east-1:123456789012:secret:gemini-AbCdEf"
		kmsKey = "arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"
		wif    = `{"type":"external_account","audience":"//iam.googleapis.com/projects/1/locations/global/workloadIdentityPools/p/providers/aws"}`
		// providerConfig is ProviderConfigSecretArn's.
		providerConfig = "arn:aws:secretsmanager:us-east-1:123456789012:secret:gen-provider-config-AbCdEf"
	)
	for _, tc := range []struct {
		name   string
		params map[string]string
		failed []string // the rules that refuse them
		// functionsRefuse: every function's cold start refuses them too
		// (awsstack.ParseEnv of Generate's environment).
		functionsRefuse bool
	}{
		{name: "the defaults", params: map[string]string{}},
		{name: "vertex", params: map[string]string{"Generator": "vertex", "VertexProject": "my-project", "VertexWifConfig": wif}},
		{name: "vertex without a project", params: map[string]string{"Generator": "vertex", "VertexWifConfig": wif},
			failed: []string{"VertexNeedsAProject"}, functionsRefuse: true},
		{name: "omni-vertex without a project or federation", params: map[string]string{"Generator": "omni-vertex"},
			failed: []string{"VertexNeedsAProject", "VertexNeedsFederation"}, functionsRefuse: true},
		{name: "vertex without federation", params: map[string]string{"Generator": "vertex", "VertexProject": "my-project"},
			failed: []string{"VertexNeedsFederation"}},
		{name: "gemini", params: map[string]string{"Generator": "gemini", "GeminiApiKeySecretArn": secret}},
		{name: "gemini without its key", params: map[string]string{"Generator": "gemini"},
			failed: []string{"GeminiNeedsAKey"}, functionsRefuse: true},
		{name: "omni without its key", params: map[string]string{"Generator": "omni"},
			failed: []string{"GeminiNeedsAKey"}, functionsRefuse: true},
		{name: "a Gemini key's KMS key without the key", params: map[string]string{"GeminiApiKeyKmsKeyArn": kmsKey},
			failed: []string{"GeminiKeyKmsNeedsASecret"}},
		{name: "route keys' KMS keys without their secrets", params: map[string]string{"RouteKeyKmsKeyArns": kmsKey},
			failed: []string{"RouteKeyKmsNeedsSecrets"}},
		{name: "route keys' KMS keys with their secrets", params: map[string]string{"RouteKeyKmsKeyArns": kmsKey, "RouteKeySecretArns": secret}},
		{name: "a signer KMS key for the stack's own secret", params: map[string]string{"SignerSecretKmsKeyArn": kmsKey},
			failed: []string{"SignerKmsNeedsASecret"}},
		{name: "a signer KMS key with its secret", params: map[string]string{"SignerSecretKmsKeyArn": kmsKey,
			"SignerSecretArn": "arn:aws:secretsmanager:us-east-1:123456789012:secret:signer-AbCdEf"}},
		// Issue 34, defect 9: the provider configuration in one place.
		{name: "the provider configuration in a secret", params: map[string]string{"ProviderConfigSecretArn": providerConfig}},
		{name: "the provider configuration's secret and Routes", params: map[string]string{"ProviderConfigSecretArn": providerConfig,
			"Routes": `{"routes": [{"name": "cards", "kind": "builtin"}]}`}, failed: []string{"ProviderConfigInOnePlace"}, functionsRefuse: true},
		{name: "the provider configuration's secret and Models", params: map[string]string{"ProviderConfigSecretArn": providerConfig,
			"Models": `{"models": [{"modelId": "m", "name": "M", "capabilities": ["text-to-video"], "resolutions": ["720p"], "pricing": {"creditsPerVideo": 1, "creditsPerVideoNoAudio": 1}}]}`},
			failed: []string{"ProviderConfigInOnePlace"}, functionsRefuse: true},
		{name: "a provider configuration KMS key without its secret", params: map[string]string{"ProviderConfigKmsKeyArn": kmsKey},
			failed: []string{"ProviderConfigKmsNeedsASecret"}},
		{name: "a provider configuration KMS key with its secret", params: map[string]string{"ProviderConfigKmsKeyArn": kmsKey,
			"ProviderConfigSecretArn": providerConfig}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			withParameters(t, tp, tc.params, func() {
				if got := failedRules(t, tp); !slices.Equal(got, tc.failed) {
					t.Errorf("failed rules %v, want %v", got, tc.failed)
				}
				env := functionEnv(t, tp, "GenerateFunction")
				_, err := awsstack.ParseEnv(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
				if tc.functionsRefuse && err == nil {
					t.Errorf("the functions take these settings: the rule refuses what works")
				}
				if len(tc.failed) == 0 && err != nil {
					t.Errorf("the rules take settings every function refuses: %v", err)
				}
			})
		})
	}

	sk := tp.Resources["SignerKey"]
	timeout, ok := sk.Properties["ServiceTimeout"].(int)
	if fn := functionTimeout(tp, "RotateSignerFunction"); !ok || timeout <= fn || timeout > 600 {
		t.Errorf("SignerKey's ServiceTimeout = %v, want seconds above the function's %d s and at most 600 (CloudFormation waits 3600 by default)",
			sk.Properties["ServiceTimeout"], fn)
	}
}

// Issue 34, defect 7: usage plans are targets, not limits (AWS: "don't
// rely on usage plans to control costs"), and every distinct bad key
// costs an authorizer run. In front of it: an AWS WAF rate rule per
// client IP on the stage, and a high throttle of every method of the
// stage for all clients together, both parameters; WafRateLimit 0 makes
// no web ACL.
func TestBackstopBeforeTheAuthorizer(t *testing.T) {
	tp := loadTemplate(t)
	acl := tp.Resources["ApiFirewall"]
	if acl.Type != "AWS::WAFv2::WebACL" || acl.Properties["Scope"] != "REGIONAL" || acl.raw["Condition"] != "HasFirewall" ||
		mustJSON(t, acl.Properties["DefaultAction"]) != `{"Allow":{}}` {
		t.Fatalf("ApiFirewall = %s %v %s, want a REGIONAL web ACL allowing by default, under HasFirewall", acl.Type, acl.raw["Condition"], mustJSON(t, acl.Properties))
	}
	rules, _ := acl.Properties["Rules"].([]any)
	rate := false
	for _, r := range rules {
		st := dig(r, "Statement", "RateBasedStatement")
		if st == nil {
			continue
		}
		rate = true
		if dig(st, "AggregateKeyType") != "IP" || mustJSON(t, dig(st, "Limit")) != `{"Ref":"WafRateLimit"}` || dig(st, "EvaluationWindowSec") != 300 {
			t.Errorf("rate rule %s, want WafRateLimit per IP per 5 minutes", mustJSON(t, st))
		}
		if code := dig(r, "Action", "Block", "CustomResponse", "ResponseCode"); code != 429 {
			t.Errorf("rate rule blocks with %v, want 429 as the contract's rate limit", code)
		}
		key, _ := dig(r, "Action", "Block", "CustomResponse", "CustomResponseBodyKey").(string)
		var body struct{ Error struct{ Code string } }
		content, _ := dig(acl.Properties, "CustomResponseBodies", key, "Content").(string)
		if json.Unmarshal([]byte(content), &body) != nil || body.Error.Code != "RATE_LIMIT_EXCEEDED" {
			t.Errorf("the blocked answer %q, want the contract's RATE_LIMIT_EXCEEDED", content)
		}
	}
	if !rate {
		t.Errorf("ApiFirewall has no rate-based rule")
	}
	as := tp.Resources["ApiFirewallAssociation"]
	if as.Type != "AWS::WAFv2::WebACLAssociation" || as.raw["Condition"] != "HasFirewall" ||
		mustJSON(t, as.Properties["WebACLArn"]) != `{"Fn::GetAtt":["ApiFirewall","Arn"]}` {
		t.Errorf("ApiFirewallAssociation = %s %s, want the web ACL on the stage", as.Type, mustJSON(t, as.Properties))
	}
	if arn, err := tp.eval(as.Properties["ResourceArn"]); err != nil ||
		!regexp.MustCompile(`^arn:aws:apigateway:us-east-1::/restapis/[^/]+/stages/v1$`).MatchString(arn) {
		t.Errorf("the association's ResourceArn = %q (%v), want the stage's ARN", arn, err)
	}
	for value, want := range map[string]bool{"3000": true, "0": false} {
		withParameters(t, tp, map[string]string{"WafRateLimit": value}, func() {
			if on, err := tp.condition("HasFirewall"); err != nil || on != want {
				t.Errorf("WafRateLimit=%s: HasFirewall %v (%v), want %v", value, on, err, want)
			}
		})
	}
	for value, refused := range map[string]bool{"0": false, "5": true, "10": false, "3000": false} {
		withParameters(t, tp, map[string]string{"WafRateLimit": value}, func() {
			if got := slices.Contains(failedRules(t, tp), "WafRateLimitIsWafs"); got != refused {
				t.Errorf("WafRateLimit=%s: refused %v, want %v (WAF's lowest limit is 10)", value, got, refused)
			}
		})
	}
	if d, _ := tp.Parameters["WafRateLimit"].(map[string]any)["Default"].(int); d < 10 {
		t.Errorf("WafRateLimit defaults to %d: no backstop unless the operator asks", d)
	}

	backstop := false
	settings, _ := tp.Resources["GenApi"].Properties["MethodSettings"].([]any)
	for _, s := range settings {
		if dig(s, "ResourcePath") == "/*" && dig(s, "HttpMethod") == "*" {
			backstop = mustJSON(t, dig(s, "ThrottlingRateLimit")) == `{"Ref":"ApiThrottleRateLimit"}` &&
				mustJSON(t, dig(s, "ThrottlingBurstLimit")) == `{"Ref":"ApiThrottleBurstLimit"}`
		}
	}
	if !backstop {
		t.Errorf("GenApi.MethodSettings has no stage-wide throttle of ApiThrottleRateLimit and ApiThrottleBurstLimit")
	}
	// High: above what the per-method public throttle allows.
	for _, pair := range [][2]string{{"ApiThrottleRateLimit", "PublicRateLimit"}, {"ApiThrottleBurstLimit", "PublicBurstLimit"}} {
		hi, _ := tp.Parameters[pair[0]].(map[string]any)["Default"].(int)
		lo, _ := tp.Parameters[pair[1]].(map[string]any)["Default"].(int)
		if hi <= lo {
			t.Errorf("%s defaults to %d, not above %s's %d: a backstop, not a limit", pair[0], hi, pair[1], lo)
		}
	}

	doc, err := os.ReadFile(filepath.Join(root, "infra", "docs", "deploy.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Don't rely on usage plans to control costs", "WafRateLimit", "ApiThrottleRateLimit"} {
		if !strings.Contains(string(doc), want) {
			t.Errorf("deploy.md does not say %q", want)
		}
	}
}

// lambdaEnvLimit is Lambda's bound on a function's environment: "4 KB,
// for all environment variables associated with the function, combined"
// (Lambda quotas, https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html,
// as issue 34 cites it; keys and values counted together).
const lambdaEnvLimit = 4096

// routesRoom is what the template promises Routes and Models together
// (infra/docs/deploy.md, "Lambda's 4 KB environment").
const routesRoom = 2600

// TestEnvironmentFitsLambda (issue 34, defect 9): Routes and Models are
// JSON in the environment of the functions that read them, which Lambda
// bounds at 4 KB: a deploy with many routes failed at CloudFormation, far
// from the cause. Every function's environment, with the other
// parameters' longest plausible values, leaves routesRoom bytes for the
// two, which deploy.md states; an example of that size (three routes,
// two declared models) fits; and past that, with ProviderConfigSecretArn,
// every function's environment fits whatever the routes weigh.
func TestEnvironmentFitsLambda(t *testing.T) {
	tp := loadTemplate(t)
	routes := `{"routes": [{"name": "vertex-east", "kind": "vertex", "project": "my-video-project-123", "location": "us-east4"},` +
		`{"name": "gemini", "kind": "gemini", "apiKeySecretArn": "arn:aws:secretsmanager:us-east-1:123456789012:secret:gen-gemini-key-AbCdEf"},` +
		`{"name": "wan", "kind": "openai", "profile": "vllm-omni", "endpoint": "https://gpu.internal.example.com:8000", "usdPerSecond": 0.02,` +
		`"models": {"wan-2.2-720p": "Wan-AI/Wan2.2-T2V-A14B-Diffusers"}}],` +
		`"models": {"gen-3.1-fast-generate-001": ["vertex-east", "gemini"], "wan-2.2-720p": ["wan"]}}`
	models := `{"models": [{"modelId": "wan-2.2-720p", "name": "Wan 2.2 (720p)", "description": "Open model on our own GPU.",` +
		`"capabilities": ["text-to-video"], "resolutions": ["720p"], "pricing": {"creditsPerVideo": 40, "creditsPerVideoNoAudio": 30}},` +
		`{"modelId": "ltx-2-fast", "name": "LTX 2 Fast", "description": "A second open model, priced by the second.",` +
		`"capabilities": ["text-to-video", "image-to-video"], "resolutions": ["720p"], "pricing": {"creditsPerVideo": 50, "creditsPerVideoNoAudio": 50},` +
		`"provider": {"durations": [4, 8], "aspectRatios": ["16:9"], "audio": "never", "usdPerSecond": 0.05}}]}`
	long := map[string]string{"ProviderModels": "gen-3.1-generate-001=veo-3.1-generate-001,gen-3.1-fast-generate-001=veo-3.1-fast-generate-001",
		"VertexProject": "my-video-project-123", "GeminiApiKeySecretArn": "arn:aws:secretsmanager:us-east-1:123456789012:secret:gen-gemini-key-AbCdEf"}
	// largestEnv is the function whose environment is largest with the
	// parameters at values, and its size.
	largestEnv := func(values map[string]string) (id string, size int) {
		withParameters(t, tp, values, func() {
			for _, f := range tp.ofType("AWS::Serverless::Function") {
				n := 0
				for k, v := range functionEnv(t, tp, f) {
					n += len(k) + len(v)
				}
				if n > size {
					id, size = f, n
				}
			}
		})
		return id, size
	}
	largestID, largest := largestEnv(long)
	t.Logf("largest environment without Routes and Models: %s, %d bytes", largestID, largest)
	if room := lambdaEnvLimit - largest; room < routesRoom {
		t.Errorf("%s's environment is %d bytes without Routes and Models: %d left of Lambda's %d, want %d (deploy.md)",
			largestID, largest, room, lambdaEnvLimit, routesRoom)
	}
	if n := len(routes) + len(models); n > routesRoom {
		t.Fatalf("the example is %d bytes, more than the %d promised", n, routesRoom)
	}
	long["Routes"], long["Models"] = routes, models
	if id, size := largestEnv(long); size > lambdaEnvLimit {
		t.Errorf("%s's environment is %d bytes with three routes and two models, over Lambda's %d", id, size, lambdaEnvLimit)
	}

	// Past that, ProviderConfigSecretArn: the routes and models are in
	// the secret, and every function's environment holds its ARN alone,
	// whatever they weigh. The functions given it take a secret of 500
	// routes (ParseEnvWith: what each reads at cold start), and the
	// template refuses Routes or Models beside it.
	secret := awsstacktest.ManyRoutes(500)
	if len(secret) < 4*lambdaEnvLimit || len(secret) > 64<<10 {
		t.Fatalf("the secret is %d bytes, want far past the environment's 4 KB and within a secret string's 64 KB", len(secret))
	}
	long["Routes"], long["Models"] = "", ""
	long["ProviderConfigSecretArn"] = "arn:aws:secretsmanager:us-east-1:123456789012:secret:gen-production-provider-configuration-AbCdEf"
	withParameters(t, tp, long, func() {
		if failed := failedRules(t, tp); len(failed) > 0 {
			t.Errorf("the rules refuse the secret alone: %v", failed)
		}
		readers := 0
		for _, f := range tp.ofType("AWS::Serverless::Function") {
			env := functionEnv(t, tp, f)
			n := 0
			for k, v := range env {
				n += len(k) + len(v)
			}
			if n > largest+len(long["ProviderConfigSecretArn"]) {
				t.Errorf("%s's environment is %d bytes with the secret, more than %d without Routes and Models and the ARN", f, n, largest+len(long["ProviderConfigSecretArn"]))
			}
			if env[awsstack.EnvProviderConfigSecretARN] == "" {
				continue
			}
			readers++
			if _, err := awsstack.ParseEnvWith(func(k string) (string, bool) { v, ok := env[k]; return v, ok }, secret); err != nil {
				t.Errorf("%s with a secret of 500 routes: %v", f, err)
			}
		}
		if readers != len(providerConfigFunctions) {
			t.Errorf("%d functions are given the secret, want %d", readers, len(providerConfigFunctions))
		}
	})
	long["Routes"] = routes
	withParameters(t, tp, long, func() {
		if failed := failedRules(t, tp); !slices.Equal(failed, []string{"ProviderConfigInOnePlace"}) {
			t.Errorf("the secret and Routes: failed rules %v, want ProviderConfigInOnePlace", failed)
		}
	})
}
