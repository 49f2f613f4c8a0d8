package samlocal

import "testing"

// TestEnvironment checks the template as sam local resolves it and the
// order of SAM's sources: env.json's function object over its
// "Parameters" over the shell over the template, for declared variables
// only.
func TestEnvironment(t *testing.T) {
	fns, err := Functions("../../../template.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	status, ok := fns["StatusFunction"]
	if !ok {
		t.Fatal("no StatusFunction")
	}
	shell := map[string]string{"GEN_LOG_LEVEL": "DEBUG", "GEN_BUCKET": "from-shell", "GEN_NOT_DECLARED": "x"}
	lookup := func(k string) (string, bool) { v, ok := shell[k]; return v, ok }
	ev := EnvVars{
		"Parameters":     {"GEN_BUCKET": "from-parameters", "GEN_TABLE_PREFIX": "p-"},
		"StatusFunction": {"GEN_TABLE_PREFIX": "gen-local-", "GEN_UNDECLARED": "dropped"},
	}
	tests := []struct {
		name string
		ev   EnvVars
		want map[string]string
	}{
		{"SAM's values alone", nil, map[string]string{
			"GEN_STATE_MACHINE_ARN": "GenerationStateMachine", "GEN_SIGNER_SECRET_ARN": "SignerSecret",
			"GEN_TABLE_PREFIX": "local-", "GEN_LOG_LEVEL": "DEBUG", "GEN_BUCKET": "from-shell",
			"AWS_ENDPOINT_URL": "", "AWS_LAMBDA_FUNCTION_NAME": "StatusFunction", "AWS_SAM_LOCAL": "true",
			"AWS_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": "defaultkey", "AWS_LAMBDA_LOG_GROUP_NAME": "FunctionLogGroup",
			"GEN_NOT_DECLARED": "", "GEN_UNDECLARED": ""}},
		{"with env.json", ev, map[string]string{
			"GEN_TABLE_PREFIX": "gen-local-", "GEN_BUCKET": "from-parameters", "GEN_LOG_LEVEL": "DEBUG",
			"GEN_STATE_MACHINE_ARN": "GenerationStateMachine", "GEN_UNDECLARED": ""}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := Environment(status, tc.ev, lookup, CredsFromEnv(func(string) (string, bool) { return "", false }))
			for k, want := range tc.want {
				if got, ok := env[k]; got != want || (want == "" && ok && k != "AWS_ENDPOINT_URL") {
					t.Errorf("%s = %q (set %v), want %q", k, got, ok, want)
				}
			}
		})
	}
	if ign := Ignored(status, ev); len(ign) != 1 || ign[0] != "GEN_UNDECLARED" {
		t.Errorf("Ignored = %v, want [GEN_UNDECLARED]", ign)
	}
	// The playground's origin: SAM's URL suffix is "localhost".
	if got := fns["PlaygroundFunction"].Env["GEN_PLAYGROUND_MEDIA_ORIGINS"]; got != "https://MediaBucket.s3.us-east-1.localhost" {
		t.Errorf("GEN_PLAYGROUND_MEDIA_ORIGINS = %q", got)
	}
}
