package awsstack

import (
	"context"
	"testing"
)

func TestLambdaConfig(t *testing.T) {
	env := map[string]string{
		"AWS_REGION":                       "eu-west-1",
		"AWS_ACCESS_KEY_ID":                "AKIDEXAMPLE",
		"AWS_SECRET_ACCESS_KEY":            "secret",
		"AWS_SESSION_TOKEN":                "token",
		"AWS_ENDPOINT_URL":                 "http://everything",
		"AWS_ENDPOINT_URL_SECRETS_MANAGER": "http://secrets",
		"AWS_ENDPOINT_URL_SFN":             "",
	}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	cfg := LambdaConfig(lookup)
	if cfg.Region != "eu-west-1" || cfg.BaseEndpoint == nil || *cfg.BaseEndpoint != "http://everything" {
		t.Errorf("region %q, base endpoint %v; want eu-west-1, http://everything", cfg.Region, cfg.BaseEndpoint)
	}
	creds, err := cfg.Credentials.Retrieve(context.Background())
	if err != nil || creds.AccessKeyID != "AKIDEXAMPLE" || creds.SecretAccessKey != "secret" || creds.SessionToken != "token" {
		t.Errorf("credentials %+v, %v; want the role's from the environment", creds, err)
	}
	src := cfg.ConfigSources[0].(envEndpoints)
	for _, tt := range []struct {
		sdkID, want string
		found       bool
	}{
		{"Secrets Manager", "http://secrets", true},
		{"SFN", "", false}, // set but empty: not configured
		{"DynamoDB", "", false},
	} {
		got, found, err := src.GetServiceBaseEndpoint(context.Background(), tt.sdkID)
		if err != nil || got != tt.want || found != tt.found {
			t.Errorf("endpoint of %q = %q, %v, %v; want %q, %v", tt.sdkID, got, found, err, tt.want, tt.found)
		}
	}
	if cfg := LambdaConfig(func(string) (string, bool) { return "", false }); cfg.Credentials != nil {
		t.Error("credentials made from an environment without a key")
	}
}
