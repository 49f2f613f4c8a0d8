package settings_test

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/genvideo/gen/shared/settings"
)

func TestProvider(t *testing.T) {
	tests := []struct {
		name    string
		vars    settings.Vars
		want    settings.ProviderConfig
		errs    []string // variables named in the error
		notInIt string   // text the error must not contain
	}{
		{"default", settings.Vars{}, settings.ProviderConfig{}, nil, ""},
		{"vertex", settings.Vars{settings.Generator: "vertex", settings.VertexProject: "proj", settings.VertexLocation: "europe-west4",
			settings.VertexStorageURI: "gs://bucket/out", settings.VertexEndpoint: "http://127.0.0.1:8090", settings.VertexAccessToken: "ya29.x",
			settings.ProviderModels: "gen-3.1-lite-generate-001=veo-3.1-lite-preview"},
			settings.ProviderConfig{Generator: settings.GeneratorVertex, VertexProject: "proj", VertexLocation: "europe-west4",
				VertexStorageURI: "gs://bucket/out", VertexEndpoint: "http://127.0.0.1:8090", VertexAccessToken: "ya29.x",
				Models: "gen-3.1-lite-generate-001=veo-3.1-lite-preview"}, nil, ""},
		{"gemini", settings.Vars{settings.Generator: "gemini", settings.GeminiAPIKey: "AIza-secret", settings.GeminiEndpoint: "https://example.test", settings.ProviderPollInterval: "2s"},
			settings.ProviderConfig{Generator: settings.GeneratorGemini, GeminiAPIKey: "AIza-secret", GeminiEndpoint: "https://example.test", PollInterval: 2 * time.Second}, nil, ""},
		{"omni, on the Gemini API's key", settings.Vars{settings.Generator: "omni", settings.GeminiAPIKey: "AIza-secret"},
			settings.ProviderConfig{Generator: settings.GeneratorOmni, GeminiAPIKey: "AIza-secret"}, nil, ""},
		{"omni on Vertex AI", settings.Vars{settings.Generator: "omni-vertex", settings.VertexProject: "proj", settings.VertexLocation: "global"},
			settings.ProviderConfig{Generator: settings.GeneratorOmniVertex, VertexProject: "proj", VertexLocation: "global"}, nil, ""},
		{"omni on Vertex AI without project", settings.Vars{settings.Generator: "omni-vertex"}, settings.ProviderConfig{}, []string{settings.VertexProject}, ""},
		{"openai on vllm-omni", settings.Vars{settings.Generator: "openai", settings.OpenAIEndpoint: "http://gpu.internal:8091",
			settings.OpenAIAPIKey: "sk-secret", settings.OpenAIProfile: "vllm-omni"},
			settings.ProviderConfig{Generator: settings.GeneratorOpenAI, OpenAIEndpoint: "http://gpu.internal:8091",
				OpenAIAPIKey: "sk-secret", OpenAIProfile: settings.ProfileVLLMOmni}, nil, ""},
		{"vllm-omni without its URL", settings.Vars{settings.Generator: "openai", settings.OpenAIProfile: "vllm-omni"},
			settings.ProviderConfig{}, []string{settings.OpenAIEndpoint}, ""},
		{"unknown openai profile", settings.Vars{settings.Generator: "openai", settings.OpenAIProfile: "sglang", settings.OpenAIAPIKey: "sk-secret"},
			settings.ProviderConfig{}, []string{settings.OpenAIProfile}, "sk-secret"},
		// Issue 33: the old default profile, OpenAI itself, is a
		// shut-down API; the error names the choices.
		{"openai without a profile", settings.Vars{settings.Generator: "openai", settings.OpenAIAPIKey: "sk-secret"},
			settings.ProviderConfig{}, []string{settings.OpenAIProfile, "vllm-omni", "shut down on " + settings.SoraShutDown}, "sk-secret"},
		{"openai with its profile said", settings.Vars{settings.Generator: "openai", settings.OpenAIProfile: "openai"},
			settings.ProviderConfig{Generator: settings.GeneratorOpenAI, OpenAIProfile: settings.ProfileOpenAI}, nil, ""},
		{"vertex without project", settings.Vars{settings.Generator: "vertex"}, settings.ProviderConfig{}, []string{settings.VertexProject}, ""},
		// Issue 24: a poll interval of 0 or of milliseconds would poll as
		// fast as the workflow loops, each poll a request and, on AWS, a
		// Lambda run and three state transitions.
		{"poll interval 0s", settings.Vars{settings.ProviderPollInterval: "0s"}, settings.ProviderConfig{}, []string{settings.ProviderPollInterval}, ""},
		{"poll interval of milliseconds", settings.Vars{settings.ProviderPollInterval: "100ms"}, settings.ProviderConfig{}, []string{settings.ProviderPollInterval}, ""},
		{"poll interval over a minute", settings.Vars{settings.ProviderPollInterval: "2m"}, settings.ProviderConfig{}, []string{settings.ProviderPollInterval}, ""},
		{"unknown generator", settings.Vars{settings.Generator: "sora"}, settings.ProviderConfig{}, []string{settings.Generator}, ""},
		{"every bad value at once", settings.Vars{settings.VertexLocation: "us central", settings.VertexStorageURI: "s3://b",
			settings.VertexEndpoint: "http://x/v1", settings.GeminiEndpoint: "ftp://x", settings.ProviderModels: "gen-9=veo"},
			settings.ProviderConfig{}, []string{settings.VertexLocation, settings.VertexStorageURI, settings.VertexEndpoint, settings.GeminiEndpoint, settings.ProviderModels}, ""},
		{"a key is never shown", settings.Vars{settings.Generator: "nope", settings.GeminiAPIKey: "AIza-secret", settings.VertexAccessToken: "ya29.secret"},
			settings.ProviderConfig{}, []string{settings.Generator}, "secret"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := settings.NewReader(tt.vars.Lookup)
			got := r.ProviderConfig()
			err := r.Err()
			if len(tt.errs) == 0 {
				if got.Models != "" && got.ModelMap()["gen-3.1-lite-generate-001"] != "veo-3.1-lite-preview" {
					t.Errorf("ModelMap() = %v, want the lite mapping", got.ModelMap())
				}
				if err != nil || !reflect.DeepEqual(got, tt.want) {
					t.Errorf("settings.ProviderConfig() = %+v, %v; want %+v", got, err, tt.want)
				}
				return
			}
			if err == nil {
				t.Fatalf("settings.ProviderConfig() = %+v, want an error naming %v", got, tt.errs)
			}
			for _, name := range tt.errs {
				if !strings.Contains(err.Error(), name) {
					t.Errorf("error %q does not name %s", err, name)
				}
			}
			if tt.notInIt != "" && strings.Contains(err.Error(), tt.notInIt) {
				t.Errorf("error %q shows %q", err, tt.notInIt)
			}
		})
	}
}
