package generate

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/genvideo/gen/shared/awsstack"
	"github.com/genvideo/gen/shared/params"
	"github.com/genvideo/gen/shared/provider"
	"github.com/genvideo/gen/shared/settings"
	"github.com/genvideo/gen/shared/testing/awsstacktest"
	"github.com/genvideo/gen/shared/testing/veotest"
)

// Generate refuses to start without its bucket or its ffmpeg, naming the
// variable; its steps keep the store of the others.
func TestStepsNameMissingConfiguration(t *testing.T) {
	s, err := awsstack.New(awsstack.Env{TablePrefix: "gen-"}, aws.Config{Region: "us-east-1"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Steps(s); err == nil || !strings.Contains(err.Error(), awsstack.EnvBucket) {
		t.Errorf("GenerateSteps without a bucket = %v, want an error naming %s", err, awsstack.EnvBucket)
	}
	s.Env.Bucket, s.Env.FFmpegPath = "media", "/nonexistent/ffmpeg"
	if _, err := Steps(s); err == nil || !strings.Contains(err.Error(), awsstack.EnvFFmpegPath) {
		t.Errorf("GenerateSteps without ffmpeg = %v, want an error naming %s", err, awsstack.EnvFFmpegPath)
	}
}

// The Veo generators: the Gemini API's key is read from its secret, and
// each provider reaches its API with what the environment says.
func TestStepsProviders(t *testing.T) {
	const arn = "arn:aws:secretsmanager:us-east-1:123456789012:secret:gemini-key-AbCdEf"
	secrets := awsstacktest.NewSecrets(t)
	secrets.Put(arn, "AIza-from-secrets\n")
	fake := veotest.New(veotest.Config{APIKey: "AIza-from-secrets", Token: "ya29.token"})
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	cfg := aws.Config{Region: "us-east-1", BaseEndpoint: aws.String(secrets.URL),
		Credentials: credentials.NewStaticCredentialsProvider("AKIDTEST", "secret", "")}
	tests := []struct {
		api string
		env awsstack.Env
	}{
		{"gemini", awsstack.Env{Provider: settings.ProviderConfig{Generator: settings.GeneratorGemini, GeminiEndpoint: srv.URL},
			GeminiKeySecretARN: arn}},
		{"vertex", awsstack.Env{Provider: settings.ProviderConfig{Generator: settings.GeneratorVertex, VertexProject: "p",
			VertexEndpoint: srv.URL, VertexAccessToken: "ya29.token"}}},
	}
	for _, tt := range tests {
		t.Run(tt.api, func(t *testing.T) {
			tt.env.TablePrefix, tt.env.Bucket = "gen-", "media"
			s, err := awsstack.New(tt.env, cfg, nil)
			if err != nil {
				t.Fatal(err)
			}
			st, err := Steps(s)
			if err != nil || st.Provider == nil {
				t.Fatalf("Steps = %v, %v; want the %s provider", st, err, tt.api)
			}
			job := provider.Job{TaskID: "gen_1_x", Model: "gen-3.1-fast-generate-001", Prompt: "p",
				Params: params.Parameters{SampleCount: 1, DurationSeconds: 8, AspectRatio: "16:9", Resolution: "720p",
					PersonGeneration: "allow_adult"}}
			if tt.api == settings.GeneratorGemini {
				job.Params.PersonGeneration = "allow_all" // the Gemini API's only value for text-to-video
			}
			if _, err := st.Provider.Submit(t.Context(), job); err != nil {
				t.Fatalf("Submit: %v", err)
			}
			if subs := fake.Submits(); subs[len(subs)-1].API != tt.api {
				t.Errorf("the submit reached the %s API, want %s", subs[len(subs)-1].API, tt.api)
			}
		})
	}

	s, err := awsstack.New(awsstack.Env{TablePrefix: "gen-", Bucket: "media", GeminiKeySecretARN: arn + "-gone",
		Provider: settings.ProviderConfig{Generator: settings.GeneratorGemini}}, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Steps(s); err == nil || !strings.Contains(err.Error(), arn+"-gone") {
		t.Errorf("Steps without the key's secret = %v, want an error naming it", err)
	}

	// Credentials the API refuses fail the cold start (the models'
	// metadata is read), naming what to fix.
	secrets.Put(arn+"-old", "AIza-revoked")
	refused := []struct {
		env  awsstack.Env
		want string
	}{
		{awsstack.Env{GeminiKeySecretARN: arn + "-old", Provider: settings.ProviderConfig{Generator: settings.GeneratorGemini,
			GeminiEndpoint: srv.URL}}, settings.GeminiAPIKey},
		{awsstack.Env{Provider: settings.ProviderConfig{Generator: settings.GeneratorVertex, VertexProject: "p",
			VertexEndpoint: srv.URL, VertexAccessToken: "ya29.expired"}}, settings.VertexAccessToken},
	}
	for _, tt := range refused {
		tt.env.TablePrefix, tt.env.Bucket = "gen-", "media"
		s, err := awsstack.New(tt.env, cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Steps(s); err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "AIza-revoked") {
			t.Errorf("Steps with refused credentials = %v, want an error naming %s", err, tt.want)
		}
	}
}
