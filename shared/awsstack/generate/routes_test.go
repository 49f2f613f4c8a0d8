package generate

import (
	"bytes"
	"image"
	imagepng "image/png"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/genvideo/gen/shared/awsstack"
	"github.com/genvideo/gen/shared/catalog"
	"github.com/genvideo/gen/shared/params"
	"github.com/genvideo/gen/shared/provider"
	"github.com/genvideo/gen/shared/settings"
	"github.com/genvideo/gen/shared/task"
	"github.com/genvideo/gen/shared/testing/awsstacktest"
	"github.com/genvideo/gen/shared/testing/veotest"
)

// With GEN_ROUTES, each route has its own credentials, a key read from
// the secret the route names; a route that refuses its credentials at
// cold start is logged, not fatal, and starts skip it: the job goes to
// the next route.
func TestStepsRoutes(t *testing.T) {
	const arn = "arn:aws:secretsmanager:us-east-1:123456789012:secret:route-key-AbCdEf"
	secrets := awsstacktest.NewSecrets(t)
	secrets.Put(arn, "AIza-route\n")
	vertex := veotest.New(veotest.Config{Token: "ya29.token"})
	vsrv := httptest.NewServer(vertex)
	t.Cleanup(vsrv.Close)
	gemini := veotest.New(veotest.Config{APIKey: "AIza-route"})
	gsrv := httptest.NewServer(gemini)
	t.Cleanup(gsrv.Close)
	cfg := aws.Config{Region: "us-east-1", BaseEndpoint: aws.String(secrets.URL),
		Credentials: credentials.NewStaticCredentialsProvider("AKIDTEST", "secret", "")}
	r := settings.NewReader(settings.Vars{settings.Routes: `{"routes": [
		{"name": "vertex", "kind": "vertex", "project": "p", "endpoint": "` + vsrv.URL + `", "accessToken": "ya29.expired"},
		{"name": "gemini", "kind": "gemini", "endpoint": "` + gsrv.URL + `", "apiKeySecretArn": "` + arn + `"}],
		"models": {"gen-3.1-fast-generate-001": ["vertex", "gemini"]}}`}.Lookup)
	p := r.ProviderConfig()
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	s, err := awsstack.New(awsstack.Env{TablePrefix: "gen-", Bucket: "media", FFmpegPath: "ffmpeg", Provider: p}, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	st, err := Steps(s)
	if err != nil {
		t.Fatalf("Steps with the first route refusing its credentials = %v, want a start", err)
	}
	job := provider.Job{TaskID: "gen_1_x", Model: "gen-3.1-fast-generate-001", Prompt: "p", Type: catalog.ImageToVideo,
		Params: params.Parameters{SampleCount: 1, DurationSeconds: 8, AspectRatio: "16:9", Resolution: "720p",
			GenerateAudio: true, EnhancePrompt: true, PersonGeneration: "allow_adult"}}
	// An image to video: allow_adult on both APIs.
	var png bytes.Buffer
	if err := imagepng.Encode(&png, image.NewRGBA(image.Rect(0, 0, 64, 36))); err != nil {
		t.Fatal(err)
	}
	job.Images = map[string]string{task.RoleImage: filepath.Join(t.TempDir(), "in.png")}
	if err := os.WriteFile(job.Images[task.RoleImage], png.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	op, err := st.Provider.Submit(t.Context(), job)
	if err != nil || !strings.HasPrefix(op.Name, "route:gemini:") {
		t.Fatalf("Submit = %+v, %v; want the job on the gemini route", op, err)
	}
	if n := len(vertex.Submits()); n != 0 {
		t.Errorf("the route that failed its cold-start check saw %d submits, want none within its cool-down", n)
	}
}
