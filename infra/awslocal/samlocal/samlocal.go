// Package samlocal is what `sam local invoke <LogicalId> -e event.json
// --env-vars env.json` gives a function, for `make invoke-<name>` where
// the SAM CLI and Docker are not installed: the template's variables
// resolved as SAM resolves them (samtemplate.SAMLocalNames), then the
// shell's and env.json's values for those variables, and the AWS_*
// variables SAM sets itself.
//
// Read in the SAM CLI's source (github.com/aws/aws-sam-cli at
// fe8f8dbb1160abce8ae13e0a4c5f8b456658afd3, files last changed
// 2026-04-02; read 2026-07): samcli/commands/local/lib/local_lambda.py
// (_make_env_vars) and samcli/local/lambdafn/env_vars.py
// (EnvironmentVariables.resolve, _get_aws_variables). What matters:
//
//   - env.json's "Parameters" object applies to every function, the
//     object named by the function's logical id over it;
//   - a value from the shell's environment, then one from env.json,
//     replaces the template's, but ONLY for a variable the template
//     declares for that function: env.json cannot add a variable (so the
//     template declares AWS_ENDPOINT_URL, empty, for env.json to set);
//   - AWS_REGION and the credentials are the caller's (its profile or
//     shell), us-east-1/"defaultkey"/"defaultsecret" when it has none.
package samlocal

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"sort"
	"strconv"

	"github.com/genvideo/gen/infra/awslocal/samtemplate"
)

// EnvVars is an env.json: variables by function logical id, and under
// "Parameters" for every function.
type EnvVars map[string]map[string]string

// ReadEnvVars reads an env.json.
func ReadEnvVars(file string) (EnvVars, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("env vars: %w", err)
	}
	var ev EnvVars
	if err := json.Unmarshal(b, &ev); err != nil {
		return nil, fmt.Errorf("env vars %s: want {\"<LogicalId>\": {\"NAME\": \"value\"}, ...}: %w", file, err)
	}
	return ev, nil
}

// Creds are the AWS credentials and region sam local hands the function:
// the caller's.
type Creds struct {
	Region, AccessKeyID, SecretAccessKey, SessionToken string
}

// CredsFromEnv reads the caller's credentials from its environment, as
// boto3 would first; SAM's placeholders where there are none.
func CredsFromEnv(lookup func(string) (string, bool)) Creds {
	get := func(k string) string { v, _ := lookup(k); return v }
	c := Creds{Region: get("AWS_REGION"), AccessKeyID: get("AWS_ACCESS_KEY_ID"),
		SecretAccessKey: get("AWS_SECRET_ACCESS_KEY"), SessionToken: get("AWS_SESSION_TOKEN")}
	if c.Region == "" {
		c.Region = get("AWS_DEFAULT_REGION")
	}
	if c.Region == "" {
		c.Region = samtemplate.SAMLocalRegion
	}
	if c.AccessKeyID == "" {
		c.AccessKeyID, c.SecretAccessKey, c.SessionToken = "defaultkey", "defaultsecret", ""
	}
	return c
}

// Functions reads the template as sam local resolves it.
func Functions(templateFile string, parameters map[string]string) (map[string]samtemplate.Function, error) {
	tp, err := samtemplate.Load(templateFile, samtemplate.SAMLocalNames(parameters))
	if err != nil {
		return nil, err
	}
	out := map[string]samtemplate.Function{}
	for _, f := range tp.Functions {
		out[f.LogicalID] = f
	}
	return out, nil
}

// Environment is the environment sam local starts f with, given env.json
// (nil for none) and the shell's environment (shell).
func Environment(f samtemplate.Function, envVars EnvVars, shell func(string) (string, bool), creds Creds) map[string]string {
	name := f.LogicalID
	env := map[string]string{
		"AWS_SAM_LOCAL":                   "true",
		"AWS_LAMBDA_FUNCTION_MEMORY_SIZE": strconv.Itoa(f.MemorySize),
		"AWS_LAMBDA_FUNCTION_TIMEOUT":     strconv.Itoa(f.Timeout),
		"AWS_LAMBDA_FUNCTION_HANDLER":     "bootstrap",
		"AWS_LAMBDA_FUNCTION_NAME":        name,
		"AWS_LAMBDA_FUNCTION_VERSION":     "$LATEST",
		"AWS_LAMBDA_LOG_GROUP_NAME":       "aws/lambda/" + name,
		"AWS_LAMBDA_LOG_STREAM_NAME":      "$LATEST",
		"AWS_REGION":                      creds.Region,
		"AWS_DEFAULT_REGION":              creds.Region,
		"AWS_ACCESS_KEY_ID":               creds.AccessKeyID,
		"AWS_SECRET_ACCESS_KEY":           creds.SecretAccessKey,
		"AWS_ACCOUNT_ID":                  samtemplate.SAMLocalAccount,
		"AWS_LAMBDA_INITIALIZATION_TYPE":  "on-demand",
	}
	if creds.SessionToken != "" {
		env["AWS_SESSION_TOKEN"] = creds.SessionToken
	}
	if f.LogGroup != "" {
		env["AWS_LAMBDA_LOG_GROUP_NAME"] = f.LogGroup
	}
	if f.LogFormat != "" {
		env["AWS_LAMBDA_LOG_FORMAT"] = f.LogFormat
		if f.LogFormat == "JSON" {
			env["AWS_LAMBDA_LOG_LEVEL"] = "INFO"
		}
	}
	overrides := map[string]string{}
	maps.Copy(overrides, envVars["Parameters"])
	maps.Copy(overrides, envVars[name])
	for k, v := range f.Env {
		if s, ok := shell(k); ok {
			v = s
		}
		if o, ok := overrides[k]; ok {
			v = o
		}
		env[k] = v
	}
	return env
}

// Ignored lists the variables env.json sets for f that sam local drops,
// since f's template does not declare them.
func Ignored(f samtemplate.Function, envVars EnvVars) []string {
	var out []string
	for _, src := range []map[string]string{envVars["Parameters"], envVars[f.LogicalID]} {
		for k := range src {
			if _, ok := f.Env[k]; !ok {
				out = append(out, k)
			}
		}
	}
	sort.Strings(out)
	return out
}

// List turns an environment into NAME=value entries, sorted.
func List(env map[string]string) []string {
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}
