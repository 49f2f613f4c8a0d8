package main

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/genvideo/gen/infra/awslocal/localdeploy"
	"github.com/genvideo/gen/infra/awslocal/samlocal"
	"github.com/genvideo/gen/infra/awslocal/samtemplate"
	"github.com/genvideo/gen/shared/admin"
	"github.com/genvideo/gen/shared/awsstack"
	"github.com/genvideo/gen/shared/awsstack/lambdaruntime"
	"github.com/genvideo/gen/shared/domain"
	"github.com/genvideo/gen/shared/params"
	"github.com/genvideo/gen/shared/ratelimit"
	"github.com/genvideo/gen/shared/task"
)

// invokeDirName is where invoke-env writes in the data directory:
// env.json and events/<function>.json.
const invokeDirName = "invoke"

// What the sample events (functions/<name>/testdata/event.json) refer to,
// which exists only in the tables of the functions' tests; invoke-env
// puts the assembly's own in their place.
var (
	testdataKey   = "gen_TestdataKeyForLocalInvokeOnly00000000001"
	testdataKeyID = "key_testdata0001"
	testdataAcct  = "acct_testdata"
	testdataTask1 = "gen_1767225600000_testdata01"
	testdataTask2 = "gen_1767225600000_testdata02"
	testdataTask3 = "gen_1767225600000_testdata03"
)

func invokeEnv(opts *options) *cobra.Command {
	var root string
	cmd := &cobra.Command{
		Use:   "invoke-env",
		Short: "Write env.json and signed events for sam local invoke against the running make run-aws-local",
		Long: "Write, in <data-dir>/invoke, the env.json of `sam local invoke --env-vars` for every function\n" +
			"(the running AWS assembly's table prefix, bucket, state machine and signer secret ARNs, and its\n" +
			"endpoint as AWS_ENDPOINT_URL) and events/<function>.json: each function's sample event with an\n" +
			"API key created now in the assembly (a Pro key with credits) and three pending tasks of its account.\n" +
			"make invoke-<name> runs it (infra/docs/lambdas.md, \"sam local invoke\").",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			d, ok, err := localdeploy.Read(opts.dataDir)
			if err != nil {
				return err
			}
			if !ok || d.Endpoint == "" {
				return fmt.Errorf("no AWS assembly runs on %s: start `make run-aws-local` first (with the same GEN_DATA_DIR)", opts.dataDir)
			}
			dir, err := writeInvokeEnv(cmd.Context(), opts, root, d)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "env.json: %s\nevents:   %s\n", filepath.Join(dir, "env.json"), filepath.Join(dir, "events"))
			return nil
		},
	}
	cmd.Flags().StringVar(&root, "root", ".", "the repository (template.yaml, functions/)")
	return cmd
}

// writeInvokeEnv writes env.json and the events, and returns their
// directory.
func writeInvokeEnv(ctx context.Context, opts *options, root string, d localdeploy.Deployment) (string, error) {
	fns, err := samlocal.Functions(filepath.Join(root, "template.yaml"), nil)
	if err != nil {
		return "", err
	}
	dir := filepath.Join(opts.dataDir, invokeDirName)
	if err := os.MkdirAll(filepath.Join(dir, "events"), 0o755); err != nil {
		return "", err
	}

	envVars := samlocal.EnvVars{}
	for id, vars := range d.Functions {
		m := map[string]string{}
		for k, v := range vars {
			m[k] = v
		}
		m[awsstack.EnvEndpointURL] = d.Endpoint
		envVars[id] = m
	}
	b, err := json.MarshalIndent(envVars, "", "  ")
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "env.json"), append(b, '\n'), 0o600); err != nil {
		return "", err
	}

	var repl *strings.Replacer
	err = withBackend(ctx, opts, func(b *backend) error {
		if b.dynamo == nil || b.plans == nil {
			return errors.New("invoke-env works on the running AWS assembly only")
		}
		k, err := b.admin.CreateKey(ctx, admin.KeyRequest{Name: "sam-local-invoke", Credits: 100000, Tier: ratelimit.Pro})
		if err != nil {
			return err
		}
		if _, err := b.plans.Wire(ctx, storeKey(k)); err != nil {
			return err
		}
		now := time.Now().UTC().Truncate(time.Millisecond)
		var ids [3]string
		for i := range ids {
			ids[i] = task.NewID(now)
			tk := task.Task{ID: ids[i], AccountID: k.AccountID, KeyName: k.Name, Type: "text-to-video",
				Model: "gen-3.1-lite-generate-001", Prompt: "A paper boat drifting on a pond",
				Params: params.Parameters{SampleCount: 1, DurationSeconds: 4, AspectRatio: "16:9", Resolution: "720p",
					PersonGeneration: "allow_adult"},
				CreditsCost: 35, Status: task.Pending, CreatedAt: now, Deadline: now.Add(10 * time.Minute)}
			if _, err := b.dynamo.CreateTask(ctx, tk, domain.StartGuard{}); err != nil {
				return fmt.Errorf("create task %s: %w", ids[i], err)
			}
		}
		repl = strings.NewReplacer(testdataKey, k.APIKey, testdataKeyID, k.KeyID, testdataAcct, k.AccountID,
			testdataTask1, ids[0], testdataTask2, ids[1], testdataTask3, ids[2])
		return nil
	})
	if err != nil {
		return "", err
	}
	for _, f := range fns {
		name := filepath.Base(f.Dir)
		ev, err := os.ReadFile(filepath.Join(root, "functions", name, "testdata", "event.json"))
		switch {
		case errors.Is(err, os.ErrNotExist):
			if ev = extraEvent(name); ev == nil {
				return "", fmt.Errorf("%s: no functions/%s/testdata/event.json", f.LogicalID, name)
			}
		case err != nil:
			return "", err
		}
		if err := os.WriteFile(filepath.Join(dir, "events", name+".json"), []byte(repl.Replace(string(ev))), 0o600); err != nil {
			return "", err
		}
	}
	return dir, nil
}

// extraEvent is the event of a function that has no testdata event: Poll
// takes what Generate takes; task-expiry a TTL deletion from the tasks
// table's stream (of a task that is no longer there).
func extraEvent(name string) []byte {
	switch name {
	case "poll":
		return []byte(`{"taskId": "` + testdataTask1 + `", "timeoutSeconds": 600}` + "\n")
	case "task-expiry":
		return []byte(`{"Records": [{"eventID": "1", "eventName": "REMOVE", "eventSource": "aws:dynamodb", "awsRegion": "us-east-1",
  "userIdentity": {"type": "Service", "principalId": "dynamodb.amazonaws.com"},
  "dynamodb": {"Keys": {"pk": {"S": "T#gen_1767225600000_expired001"}}, "OldImage": {"id": {"S": "gen_1767225600000_expired001"},
    "acct": {"S": "` + testdataAcct + `"}, "status": {"S": "completed"}}, "StreamViewType": "OLD_IMAGE"},
  "eventSourceARN": "arn:aws:dynamodb:us-east-1:123456789012:table/local-tasks/stream/2026-01-01T00:00:00.000"}]}` + "\n")
	}
	return nil
}

func invoke(opts *options) *cobra.Command {
	var root, envFile, eventFile string
	cmd := &cobra.Command{
		Use:   "invoke NAME",
		Short: "Run functions/NAME once as sam local invoke would, with env.json and its event from invoke-env",
		Long: "Run functions/NAME once as `sam local invoke <LogicalId> -e <event> --env-vars env.json` would,\n" +
			"without the SAM CLI or Docker: its binary, built for this machine, behind a Lambda Runtime API, with\n" +
			"exactly the environment SAM gives it (the template resolved as SAM resolves it, the shell's and\n" +
			"env.json's values for the variables it declares, SAM's AWS_* variables). The answer is printed on\n" +
			"stdout, the function's log on stderr; a function error fails the command.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			dir := filepath.Join(opts.dataDir, invokeDirName)
			if !cmd.Flags().Changed("env-vars") {
				envFile = filepath.Join(dir, "env.json")
			}
			if eventFile == "" {
				eventFile = filepath.Join(dir, "events", name+".json")
			}
			var ev samlocal.EnvVars
			if envFile != "" {
				var err error
				if ev, err = samlocal.ReadEnvVars(envFile); err != nil {
					return fmt.Errorf("%w (write it with `make invoke-env` while `make run-aws-local` runs)", err)
				}
			}
			event, err := os.ReadFile(eventFile)
			if err != nil {
				return fmt.Errorf("event: %w", err)
			}
			// The caller's credentials, as sam local passes them: those of
			// the assembly when it runs (genctl has put them in the
			// environment), else the shell's.
			creds := samlocal.CredsFromEnv(os.LookupEnv)
			res, err := invokeFunction(cmd.Context(), invocation{root: root, name: name, envVars: ev, event: event,
				creds: creds, shell: os.LookupEnv, work: dir, log: cmd.ErrOrStderr()})
			if err != nil {
				return err
			}
			if res.IsError {
				out, _ := json.Marshal(map[string]string{"errorType": res.ErrorType, "errorMessage": res.ErrorMessage})
				fmt.Fprintln(cmd.OutOrStdout(), string(out))
				return fmt.Errorf("%s: function error %s", name, res.ErrorType)
			}
			fmt.Fprintln(cmd.OutOrStdout(), string(res.Payload))
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&root, "root", ".", "the repository (template.yaml, functions/)")
	f.StringVar(&envFile, "env-vars", "", "env.json (default <data-dir>/invoke/env.json; \"\" for none, as sam local without --env-vars)")
	f.StringVarP(&eventFile, "event", "e", "", "the event (default <data-dir>/invoke/events/NAME.json)")
	return cmd
}

// invocation is one run of a function as sam local would run it.
type invocation struct {
	root, name string
	envVars    samlocal.EnvVars
	event      []byte
	creds      samlocal.Creds
	shell      func(string) (string, bool)
	// work keeps the built binary; log receives the function's output.
	work string
	log  io.Writer
}

// invokeFunction builds functions/<name> and runs the event in one
// process with the environment sam local would give it.
func invokeFunction(ctx context.Context, in invocation) (lambdaruntime.Result, error) {
	fns, err := samlocal.Functions(filepath.Join(in.root, "template.yaml"), nil)
	if err != nil {
		return lambdaruntime.Result{}, err
	}
	var f samtemplate.Function
	var names []string
	for _, fn := range fns {
		names = append(names, filepath.Base(fn.Dir))
		if filepath.Base(fn.Dir) == in.name {
			f = fn
		}
	}
	if f.LogicalID == "" {
		sort.Strings(names)
		return lambdaruntime.Result{}, fmt.Errorf("no function %q in template.yaml; functions: %s", in.name, strings.Join(names, " "))
	}
	bins, err := lambdaruntime.Build(ctx, in.root, "./functions/"+in.name, filepath.Join(in.work, "bin", in.name))
	if err != nil {
		return lambdaruntime.Result{}, err
	}
	for _, k := range samlocal.Ignored(f, samlocal.EnvVars{f.LogicalID: in.envVars[f.LogicalID]}) {
		fmt.Fprintf(in.log, "sam local would ignore %s for %s: the template does not declare it\n", k, f.LogicalID)
	}
	tmp, err := os.MkdirTemp("", "invoke-"+in.name)
	if err != nil {
		return lambdaruntime.Result{}, err
	}
	defer os.RemoveAll(tmp)
	// The image's own environment (provided.al2023 has PATH; /tmp is
	// the writable directory), then SAM's.
	env := map[string]string{"PATH": os.Getenv("PATH"), "TMPDIR": tmp, "HOME": tmp}
	for k, v := range samlocal.Environment(f, in.envVars, in.shell, in.creds) {
		env[k] = v
	}
	p, err := lambdaruntime.Start(lambdaruntime.Config{Name: f.LogicalID, Binary: bins[in.name], Env: samlocal.List(env),
		Output: in.log, Timeout: time.Duration(f.Timeout) * time.Second, MemoryMB: f.MemorySize})
	if err != nil {
		return lambdaruntime.Result{}, err
	}
	defer p.Kill()
	res, err := p.Invoke(ctx, newRequestID(), in.event)
	if errors.Is(err, lambdaruntime.ErrExited) {
		return res, fmt.Errorf("%s exited before it answered (its cold start failed; its log is above): %w", in.name, err)
	}
	return res, err
}

func newRequestID() string {
	b := make([]byte, 16)
	rand.Read(b)
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
}
