package samtemplate

import (
	"strings"
	"testing"
)

// TestLoadTemplate reads the repository's template.yaml as infra/aws-local
// does and checks what the assembly depends on.
func TestLoadTemplate(t *testing.T) {
	names := Names{StackName: "gen", Region: "us-east-1", Account: "123456789012",
		Refs: map[string]string{"MediaBucket": "gen-media"}, Parameters: map[string]string{"FFmpegLayerArn": "arn:aws:lambda:us-east-1:123456789012:layer:ffmpeg:1"}}
	tp, err := Load("../../../template.yaml", names)
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]Function{}
	for _, f := range tp.Functions {
		byID[f.LogicalID] = f
	}
	tests := []struct {
		id, dir, route, method, auth string
		key                          bool
		env                          map[string]string
	}{
		{"StatusFunction", "../../../functions/status", "/api/gen/status/{taskId}", "GET", "ApiKeyAuthorizer", true,
			map[string]string{"GEN_BUCKET": "gen-media", "GEN_TABLE_PREFIX": "gen-", "GEN_GENERATION_TIMEOUT": "10m",
				"GEN_STATE_MACHINE_ARN": "arn:aws:states:us-east-1:123456789012:stateMachine:gen-GenerationStateMachine"}},
		{"DocsFunction", "../../../functions/docs", "/docs", "GET", "", false, nil},
	}
	for _, tc := range tests {
		f, ok := byID[tc.id]
		if !ok {
			t.Fatalf("no %s", tc.id)
		}
		if f.Dir != tc.dir {
			t.Errorf("%s dir %q, want %q", tc.id, f.Dir, tc.dir)
		}
		found := false
		for _, r := range f.Routes {
			if r.Path == tc.route && r.Method == tc.method {
				found = true
				if r.Authorizer != tc.auth || r.APIKeyRequired != tc.key {
					t.Errorf("%s %s %s: authorizer %q key %v, want %q %v", tc.id, r.Method, r.Path, r.Authorizer, r.APIKeyRequired, tc.auth, tc.key)
				}
			}
		}
		if !found {
			t.Errorf("%s: no route %s %s in %+v", tc.id, tc.method, tc.route, f.Routes)
		}
		for k, v := range tc.env {
			if f.Env[k] != v {
				t.Errorf("%s env %s = %q, want %q", tc.id, k, f.Env[k], v)
			}
		}
	}
	if s := byID["SweeperFunction"].Schedules; len(s) != 1 || s[0].Expression != "rate(5 minutes)" {
		t.Errorf("sweeper schedules %+v", s)
	}
	if s := byID["WebhooksDeliverFunction"].Streams; len(s) != 1 || s[0].Table != names.StackName+"-webhooks" ||
		s[0].StartingPosition != "LATEST" || s[0].BatchSize != 10 || s[0].MaximumRetryAttempts != 2 ||
		len(s[0].Filters) != 2 || !strings.Contains(s[0].Filters[0], `"INSERT"`) || !strings.Contains(s[0].Filters[1], `"replayAt"`) {
		t.Errorf("webhooks-deliver streams %+v", s)
	}
	if o := byID["WebhooksDeliverFunction"].OtherEvents; len(o) != 0 {
		t.Errorf("webhooks-deliver events not emulated: %v", o)
	}
	if _, ok := byID["RotateSignerFunction"]; !ok {
		t.Error("the rotate-signer function (CreateSigner) is missing")
	}
	a := tp.API
	if a.StageName != "v1" || a.APIKeySource != "AUTHORIZER" || len(a.BinaryMediaTypes) != 1 || a.BinaryMediaTypes[0] != "multipart/form-data" {
		t.Errorf("api %+v", a)
	}
	au := a.Authorizers["ApiKeyAuthorizer"]
	if au.Function != "AuthorizerFunction" || au.PayloadType != "REQUEST" || au.TTLSeconds != 300 || len(au.Headers) != 1 {
		t.Errorf("authorizer %+v", au)
	}
	th := a.GatewayResponses["THROTTLED"]
	if th.StatusCode != 429 || th.Headers["Retry-After"] != "1" || !strings.Contains(th.Templates["application/json"], "RATE_LIMIT_EXCEEDED") {
		t.Errorf("THROTTLED %+v", th)
	}
	if !strings.Contains(a.GatewayResponses["REQUEST_TOO_LARGE"].Templates["application/json"], `"maxBytes":4194304`) {
		t.Errorf("REQUEST_TOO_LARGE %+v", a.GatewayResponses["REQUEST_TOO_LARGE"])
	}
	if len(tp.UsagePlans) != 2 {
		t.Fatalf("usage plans %+v", tp.UsagePlans)
	}
	if sub := tp.StateMachine.Substitutions["GenerateFunctionArn"]; sub != names.FunctionARN("GenerateFunction") {
		t.Errorf("substitution %q", sub)
	}
}
