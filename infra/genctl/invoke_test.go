package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/genvideo/gen/infra/awslocal/assembly"
	"github.com/genvideo/gen/infra/awslocal/samlocal"
	"github.com/genvideo/gen/shared/awsstack"
	"github.com/genvideo/gen/shared/awsstack/lambdaruntime"
	"github.com/genvideo/gen/shared/store/dynamostore/dynamolocal"
	"github.com/genvideo/gen/shared/testing/awsstacktest"
	"github.com/genvideo/gen/shared/testing/logtest"
)

// invokeOrder runs the workflow's steps on the first task before the
// endpoints that read it, as a developer walking through would.
var invokeOrder = []string{
	"models", "docs", "playground", "quote", "credits", "history", "uploads", "authorizer",
	"mark-processing", "generate", "poll", "complete", "fail",
	"status", "status-events", "download", "openai-video", "openai-content", "mcp",
	"text-to-video", "image-to-video", "first-last-frame", "openai-videos", "extend", "openai-extensions",
	"webhooks", "webhook-secret", "webhook-deliveries", "webhook-replay", "webhook-delete", "webhooks-deliver",
	"cancel", "delete-task", "task-expiry", "sweeper", "model-check", "rotate-signer",
}

// TestMakeInvoke is `make invoke-<name>` for every function of
// template.yaml: invoke-env on a running AWS assembly, then each function
// run with exactly the environment sam local would give it (the template
// resolved as SAM resolves it, env.json over the variables it declares)
// and its event, answering without an error.
//
// The assembly keeps its routes and models in the secret
// ProviderConfigSecretArn names (issue 34, defect 9; every route the
// built-in generator, as without it): each function given the secret
// must read it through env.json's AWS_ENDPOINT_URL, and one that does not
// read it must not be given it (awsstack.FromEnv refuses it).
func TestMakeInvoke(t *testing.T) {
	if os.Getenv(dynamolocal.SkipEnv) == "1" {
		t.Skipf("%s=1: the assembly needs DynamoDB Local", dynamolocal.SkipEnv)
	}
	if testing.Short() {
		t.Skip("-short: the assembly builds every function and starts DynamoDB Local")
	}
	ctx := context.Background()
	dir := t.TempDir()
	logs := &logtest.Buffer{}
	a, err := assembly.Start(ctx, assembly.Config{Root: "../..", Addr: "127.0.0.1:0", DataDir: dir, Log: logs,
		Parameters: map[string]string{"ProviderConfigSecretArn": awsstacktest.ProviderConfigSecretARN},
		Secrets:    map[string]string{awsstacktest.ProviderConfigSecretARN: awsstacktest.ManyRoutes(100)}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		a.Close()
		if t.Failed() {
			t.Logf("the assembly's log:\n%s", logs.String())
		}
	})
	fns, err := samlocal.Functions("../../template.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	ordered := map[string]bool{}
	for _, n := range invokeOrder {
		ordered[n] = true
	}
	for id, f := range fns {
		if !ordered[filepath.Base(f.Dir)] {
			t.Errorf("%s (functions/%s) is not in invokeOrder: every function must be invoked", id, filepath.Base(f.Dir))
		}
	}
	if len(invokeOrder) != len(fns) {
		t.Errorf("invokeOrder has %d functions, the template %d", len(invokeOrder), len(fns))
	}

	// The defect: with SAM's values alone (no env.json) an endpoint's
	// cold start refuses GEN_STATE_MACHINE_ARN=GenerationStateMachine.
	t.Run("without env.json", func(t *testing.T) {
		var log bytes.Buffer
		_, err := invokeFunction(ctx, invocation{root: "../..", name: "status", event: []byte(`{}`),
			creds: samlocal.Creds{Region: "us-east-1", AccessKeyID: "defaultkey", SecretAccessKey: "defaultsecret"},
			shell: noShell, work: filepath.Join(dir, invokeDirName), log: &log})
		if !errors.Is(err, lambdaruntime.ErrExited) || !strings.Contains(log.String(), "GEN_STATE_MACHINE_ARN") {
			t.Errorf("status without env.json: %v, log %q; want a failed cold start naming GEN_STATE_MACHINE_ARN", err, log.String())
		}
	})

	if out, err := run(t, "--data-dir", dir, "invoke-env", "--root", "../.."); err != nil {
		t.Fatalf("invoke-env: %v\n%s", err, out)
	}
	envVars, err := samlocal.ReadEnvVars(filepath.Join(dir, invokeDirName, "env.json"))
	if err != nil {
		t.Fatal(err)
	}
	readers := 0
	for id, f := range fns {
		if ign := samlocal.Ignored(f, samlocal.EnvVars{id: envVars[id]}); len(ign) > 0 {
			t.Errorf("env.json sets %v for %s, which sam local would drop: the template does not declare them", ign, id)
		}
		if envVars[id][awsstack.EnvProviderConfigSecretARN] == awsstacktest.ProviderConfigSecretARN {
			readers++
		}
	}
	if readers == 0 {
		t.Errorf("env.json gives no function the provider configuration's secret")
	}

	for _, name := range invokeOrder {
		t.Run(name, func(t *testing.T) {
			event, err := os.ReadFile(filepath.Join(dir, invokeDirName, "events", name+".json"))
			if err != nil {
				t.Fatal(err)
			}
			if bytes.Contains(event, []byte(testdataKey)) || bytes.Contains(event, []byte(testdataTask1)) {
				t.Errorf("events/%s.json still names the test tables' key or task", name)
			}
			var log bytes.Buffer
			res, err := invokeFunction(ctx, invocation{root: "../..", name: name, envVars: envVars, event: event,
				creds: samlocal.Creds{Region: "us-east-1", AccessKeyID: "local", SecretAccessKey: "local"},
				shell: noShell, work: filepath.Join(dir, invokeDirName), log: &log})
			if err != nil {
				t.Fatalf("invoke %s: %v\n%s", name, err, log.String())
			}
			want := invokeWant[name]
			if want.errorMessage != "" {
				if !res.IsError || !strings.Contains(res.ErrorMessage, want.errorMessage) {
					t.Fatalf("%s = %s %s %.300s, want the function error %q", name, res.ErrorType, res.ErrorMessage, res.Payload, want.errorMessage)
				}
				return
			}
			if res.IsError {
				t.Fatalf("%s: function error %s: %s\n%s", name, res.ErrorType, res.ErrorMessage, log.String())
			}
			var out map[string]any
			if err := json.Unmarshal(res.Payload, &out); err != nil {
				// A streamed answer: its prelude, 8 zero bytes, the body.
				head, _, ok := bytes.Cut(res.Payload, make([]byte, 8))
				if !ok || json.Unmarshal(head, &out) != nil {
					t.Fatalf("%s answered %.300q, want a JSON object", name, res.Payload)
				}
			}
			for _, k := range want.keys {
				if _, ok := out[k]; !ok {
					t.Errorf("%s answered %.300s, without %q", name, res.Payload, k)
				}
			}
			if want.status != 0 {
				if code, _ := out["statusCode"].(float64); int(code) != want.status {
					t.Errorf("%s answered HTTP %v: %.400s; want %d", name, out["statusCode"], res.Payload, want.status)
				}
			}
			if name == "models" && !strings.Contains(fmt.Sprint(out["body"]), `"`+awsstacktest.DeclaredModelID+`"`) {
				t.Errorf("models answered %.400s, without the secret's model %s", res.Payload, awsstacktest.DeclaredModelID)
			}
		})
	}
}

// invokeWant is each function's answer to its event: an endpoint's HTTP
// status, the members of a step's or a batch's answer.
var invokeWant = map[string]struct {
	status int
	keys   []string
	// errorMessage, if set, is the function error expected instead.
	errorMessage string
}{
	"models": {status: 200}, "docs": {status: 200}, "playground": {status: 200}, "quote": {status: 200},
	"credits": {status: 200}, "history": {status: 200}, "uploads": {status: 201},
	"authorizer":      {keys: []string{"principalId", "policyDocument", "context"}},
	"mark-processing": {keys: []string{"taskId", "status"}},
	"generate":        {keys: []string{"taskId", "videos", "done"}},
	"poll":            {keys: []string{"taskId", "videos", "done"}},
	"complete":        {keys: []string{"taskId", "status"}},
	"fail":            {keys: []string{"taskId", "status"}},
	"status":          {status: 200}, "status-events": {status: 200}, "download": {status: 200},
	"openai-video": {status: 200}, "openai-content": {status: 302}, "mcp": {status: 200},
	"text-to-video": {status: 202}, "image-to-video": {status: 202}, "first-last-frame": {status: 202},
	"openai-videos": {status: 200}, "webhooks": {status: 200}, "webhook-secret": {status: 200},
	// The sample events name a webhook (wh_testdata0001) that invoke-env
	// does not make: the endpoint's answer for a webhook not found.
	"webhook-deliveries": {status: 404}, "webhook-replay": {status: 404}, "webhook-delete": {status: 404},
	"webhooks-deliver": {keys: []string{"trigger", "records", "attempted"}},
	"cancel":           {status: 200}, "delete-task": {status: 204},
	"task-expiry": {keys: []string{"records", "expired"}},
	"sweeper":     {keys: []string{"unfinished", "failed", "started"}},
	"model-check": {keys: []string{"routes"}},
	// Its cold start passes; the rotation itself needs Secrets Manager's
	// rotation calls and IAM, which the assembly does not emulate.
	"rotate-signer": {errorMessage: "only GetSecretValue is served here"},
}

// noShell is a shell without any of the template's variables: sam local
// would take a declared variable from the caller's environment.
func noShell(string) (string, bool) { return "", false }
