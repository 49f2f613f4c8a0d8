package awsstack

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/lambdacontext"
)

func lookup(vars map[string]string) func(string) (string, bool) {
	return func(name string) (string, bool) {
		v, ok := vars[name]
		return v, ok
	}
}

func TestParseEnvDefaults(t *testing.T) {
	e, err := ParseEnv(lookup(nil))
	if err != nil {
		t.Fatalf("ParseEnv of an empty environment: %v", err)
	}
	want := Env{GenerationTimeout: 10 * time.Minute, MaxImageBytes: 4 << 20, MaxEventStreams: 5, FFmpegPath: "ffmpeg", LogLevel: slog.LevelInfo}
	if e != want {
		t.Errorf("ParseEnv() = %+v, want %+v", e, want)
	}
}

func TestParseEnvValues(t *testing.T) {
	e, err := ParseEnv(lookup(map[string]string{
		EnvTablePrefix:       "gen-prod-",
		EnvBucket:            "gen-prod-media",
		EnvStateMachineARN:   "arn:aws:states:eu-west-1:123456789012:stateMachine:gen-generation",
		EnvSignerSecretARN:   "arn:aws:secretsmanager:eu-west-1:123456789012:secret:gen-signer-AbCdEf",
		EnvGenerationTimeout: "12m30s",
		EnvMaxImageBytes:     "3145728",
		EnvMaxEventStreams:   "3",
		EnvFFmpegPath:        "/opt/bin/ffmpeg",
		EnvFontFile:          "/opt/fonts/DejaVuSans.ttf",
		EnvLogLevel:          "debug",
	}))
	if err != nil {
		t.Fatal(err)
	}
	want := Env{
		TablePrefix: "gen-prod-", Bucket: "gen-prod-media",
		StateMachineARN:   "arn:aws:states:eu-west-1:123456789012:stateMachine:gen-generation",
		SignerSecretARN:   "arn:aws:secretsmanager:eu-west-1:123456789012:secret:gen-signer-AbCdEf",
		GenerationTimeout: 12*time.Minute + 30*time.Second, MaxImageBytes: 3 << 20, MaxEventStreams: 3,
		FFmpegPath: "/opt/bin/ffmpeg", FontFile: "/opt/fonts/DejaVuSans.ttf", LogLevel: slog.LevelDebug,
	}
	if e != want {
		t.Errorf("ParseEnv = %+v, want %+v", e, want)
	}
}

// Every malformed value is reported, each naming its variable.
func TestParseEnvErrorsNameTheVariable(t *testing.T) {
	bad := map[string]string{
		EnvTablePrefix:       "gen prod",
		EnvBucket:            "s3://gen-media",
		EnvStateMachineARN:   "arn:aws:lambda:eu-west-1:123456789012:function:x",
		EnvSignerSecretARN:   "gen-signer",
		EnvGenerationTimeout: "10",
		EnvMaxImageBytes:     "4MB",
		EnvLogLevel:          "LOUD",
	}
	_, err := ParseEnv(lookup(bad))
	if err == nil {
		t.Fatal("ParseEnv of malformed values: no error")
	}
	for name, value := range bad {
		if !strings.Contains(err.Error(), name+"=") || !strings.Contains(err.Error(), value) {
			t.Errorf("error %q does not name %s=%q", err, name, value)
		}
	}
	for _, v := range []string{"0s", "-1m", "25h"} {
		if _, err := ParseEnv(lookup(map[string]string{EnvGenerationTimeout: v})); err == nil {
			t.Errorf("%s=%s: no error", EnvGenerationTimeout, v)
		}
	}
	for _, v := range []string{"0", "-5"} {
		if _, err := ParseEnv(lookup(map[string]string{EnvMaxImageBytes: v})); err == nil {
			t.Errorf("%s=%s: no error", EnvMaxImageBytes, v)
		}
	}
}

func TestLoggerAddsRequestID(t *testing.T) {
	var buf bytes.Buffer
	log := NewLogger(&buf, slog.LevelInfo).With("fn", "status")
	ctx := lambdacontext.NewContext(context.Background(), &lambdacontext.LambdaContext{AwsRequestID: "req-1"})
	log.InfoContext(ctx, "served", "status", 200)
	log.DebugContext(ctx, "hidden")
	log.Info("outside an invocation")

	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines, want 2 (debug is below the level):\n%s", len(lines), buf.String())
	}
	var first, second map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &first); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(lines[1]), &second); err != nil {
		t.Fatal(err)
	}
	if first["requestId"] != "req-1" || first["message"] != "served" || first["fn"] != "status" || first["timestamp"] == nil {
		t.Errorf("line %s, want requestId, message, timestamp and the logger's attributes", lines[0])
	}
	if _, ok := second["requestId"]; ok {
		t.Errorf("line %s has a requestId outside an invocation", lines[1])
	}
}

// The generator's variables: the Gemini API needs its key's secret, and
// a Vertex credential configuration must be a federation one, never a
// key file, which the error does not repeat.
func TestParseEnvGenerator(t *testing.T) {
	keyFile := `{"type": "service_account", "private_key": "-----BEGIN PRIVATE KEY-----\nMIIE"}`
	tests := []struct {
		vars map[string]string
		bad  string // the variable the error names; "" for none
	}{
		{map[string]string{EnvGenerator: "gemini", EnvGeminiKeySecretARN: "arn:aws:secretsmanager:us-east-1:1:secret:k"}, ""},
		{map[string]string{EnvGenerator: "gemini"}, EnvGeminiKeySecretARN},
		{map[string]string{EnvGenerator: "vertex", EnvVertexProject: "p",
			EnvVertexWIFConfig: `{"type": "external_account", "audience": "//iam.googleapis.com/x"}`}, ""},
		{map[string]string{EnvGenerator: "vertex", EnvVertexProject: "p", EnvVertexWIFConfig: keyFile}, EnvVertexWIFConfig},
		// Issue 31: two types, or a key file after the configuration,
		// read one way here and maybe another by Google's library.
		{map[string]string{EnvGenerator: "vertex", EnvVertexProject: "p",
			EnvVertexWIFConfig: `{"type": "external_account", "type": "service_account"}`}, EnvVertexWIFConfig},
		{map[string]string{EnvGenerator: "vertex", EnvVertexProject: "p",
			EnvVertexWIFConfig: `{"type": "external_account"}` + keyFile}, EnvVertexWIFConfig},
		{map[string]string{EnvGenerator: "vertex"}, EnvVertexProject},
	}
	for _, tt := range tests {
		e, err := ParseEnv(lookup(tt.vars))
		if tt.bad == "" {
			if err != nil || e.Provider.Generator != tt.vars[EnvGenerator] {
				t.Errorf("ParseEnv(%v) = %+v, %v; want the %s generator", tt.vars, e.Provider, err, tt.vars[EnvGenerator])
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tt.bad) || strings.Contains(err.Error(), "PRIVATE KEY") {
			t.Errorf("ParseEnv(%v) = %v, want an error naming %s and showing no key", tt.vars, err, tt.bad)
		}
	}
}
