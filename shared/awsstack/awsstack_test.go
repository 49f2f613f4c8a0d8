package awsstack

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/genvideo/gen/shared/httpapi"
	"github.com/genvideo/gen/shared/openapi"
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
	want := Env{GenerationTimeout: 10 * time.Minute, MaxImageBytes: 4 << 20, FFmpegPath: "ffmpeg", LogLevel: slog.LevelInfo}
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
		GenerationTimeout: 12*time.Minute + 30*time.Second, MaxImageBytes: 3 << 20,
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

// The builders refuse to start without the variables they need, naming
// every missing one.
func TestBuildersNameMissingVariables(t *testing.T) {
	cfg := aws.Config{Region: "us-east-1"}
	if _, err := New(Env{}, cfg, nil); err == nil || !strings.Contains(err.Error(), EnvTablePrefix) {
		t.Errorf("New without a table prefix = %v, want an error naming %s", err, EnvTablePrefix)
	}
	s, err := New(Env{TablePrefix: "gen-"}, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Endpoint(httpapi.EndpointStatus)
	for _, name := range []string{EnvBucket, EnvStateMachineARN, EnvSignerSecretARN} {
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("Endpoint without configuration = %v, want an error naming %s", err, name)
		}
	}
	if _, err := s.Sweeper(); err == nil || !strings.Contains(err.Error(), EnvStateMachineARN) {
		t.Errorf("Sweeper without a state machine = %v, want an error naming %s", err, EnvStateMachineARN)
	}
	if _, err := s.GenerateSteps(); err == nil || !strings.Contains(err.Error(), EnvBucket) {
		t.Errorf("GenerateSteps without a bucket = %v, want an error naming %s", err, EnvBucket)
	}
	s.Env.Bucket, s.Env.FFmpegPath = "media", "/nonexistent/ffmpeg"
	if _, err := s.GenerateSteps(); err == nil || !strings.Contains(err.Error(), EnvFFmpegPath) {
		t.Errorf("GenerateSteps without ffmpeg = %v, want an error naming %s", err, EnvFFmpegPath)
	}
	if steps := s.Steps(); steps.Store == nil {
		t.Error("Steps has no store")
	}
}

func TestEndpointNeedsAKnownName(t *testing.T) {
	s, err := New(Env{TablePrefix: "gen-", Bucket: "media", SignerSecretARN: "arn:aws:secretsmanager:x",
		StateMachineARN: "arn:aws:states:us-east-1:123456789012:stateMachine:gen"}, aws.Config{Region: "us-east-1"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Endpoint("upload"); err == nil {
		t.Error(`Endpoint("upload"): no error`)
	}
	if h, err := s.Endpoint(httpapi.EndpointModels); err != nil || h == nil {
		t.Errorf("Endpoint(models) = %v, %v", h, err)
	}
}

func TestParseSignerSecret(t *testing.T) {
	creds, err := parseSignerSecret(`{"accessKeyId":"AKIAEXAMPLE","secretAccessKey":"s3cr3t"}`)
	if err != nil || creds.AccessKeyID != "AKIAEXAMPLE" || creds.SecretAccessKey != "s3cr3t" || creds.SessionToken != "" {
		t.Errorf("parseSignerSecret = %+v, %v; want the keys, no session token", creds, err)
	}
	for _, s := range []string{``, `AKIA:secret`, `{"accessKeyId":"AKIA"}`, `{"AccessKeyId":" ","secretAccessKey":"x"}`} {
		_, err := parseSignerSecret(s)
		if err == nil {
			t.Errorf("parseSignerSecret(%q): no error", s)
			continue
		}
		if strings.Contains(err.Error(), "secret\"") || (s != "" && strings.Contains(err.Error(), s)) {
			t.Errorf("error %q quotes the secret", err)
		}
	}
}

func TestSignerWithoutARN(t *testing.T) {
	_, err := (&secretSigner{}).Retrieve(context.Background())
	if err == nil || !strings.Contains(err.Error(), EnvSignerSecretARN) {
		t.Errorf("Retrieve without a secret ARN = %v, want an error naming %s", err, EnvSignerSecretARN)
	}
}

func TestImageLimitMessage(t *testing.T) {
	msg := ImageLimitMessage(4 << 20)
	for _, want := range []string{"4 MiB", "API Gateway", "AWS Lambda", "6 MB", "20 MiB", "first-last-frame"} {
		if !strings.Contains(msg, want) {
			t.Errorf("ImageLimitMessage(4 MiB) = %q, lacks %q", msg, want)
		}
	}
	if msg := ImageLimitMessage(1000); !strings.Contains(msg, "1000 bytes") {
		t.Errorf("ImageLimitMessage(1000) = %q, lacks 1000 bytes", msg)
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

// The docs handler needs none of the variables the other functions need,
// and logs at the level GEN_LOG_LEVEL sets.
func TestDocs(t *testing.T) {
	var buf bytes.Buffer
	h, _, err := docs(lookup(nil), &buf)
	if err != nil {
		t.Fatalf("docs without any variable: %v", err)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/openapi.json", nil))
	if rec.Code != http.StatusOK || !bytes.Equal(rec.Body.Bytes(), openapi.JSON()) {
		t.Errorf("GET /openapi.json = %d with %d bytes, want 200 with the document", rec.Code, rec.Body.Len())
	}
	var line struct {
		Message, Path string
		Status        int
	}
	if err := json.Unmarshal(buf.Bytes(), &line); err != nil || line.Message != "request" || line.Path != "/openapi.json" || line.Status != 200 {
		t.Errorf("log %q, want one JSON request line for GET /openapi.json 200 (%v)", buf.String(), err)
	}

	buf.Reset()
	h, _, err = docs(lookup(map[string]string{EnvLogLevel: "WARN"}), &buf)
	if err != nil {
		t.Fatal(err)
	}
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/docs", nil))
	if buf.Len() != 0 {
		t.Errorf("at WARN the request was logged: %s", buf.String())
	}
	if _, _, err := docs(lookup(map[string]string{EnvLogLevel: "LOUD"}), &buf); err == nil || !strings.Contains(err.Error(), EnvLogLevel) {
		t.Errorf("docs with %s=LOUD = %v, want an error naming it", EnvLogLevel, err)
	}
}
