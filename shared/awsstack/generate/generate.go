// Package generate builds the Generate step of the state machine: the
// generator GEN_GENERATOR selects (the ffmpeg renderer, or Veo on Vertex
// AI or the Gemini API) storing videos in S3. Only the generate Lambda
// imports it, so that no other binary links the renderer or the
// providers.
package generate

import (
	"context"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/genvideo/gen/shared/awsstack"
	"github.com/genvideo/gen/shared/awsstack/media"
	"github.com/genvideo/gen/shared/awsstack/steps"
	"github.com/genvideo/gen/shared/render"
	"github.com/genvideo/gen/shared/settings"
	"github.com/genvideo/gen/shared/veo"
	"github.com/genvideo/gen/shared/veomodels"
	"github.com/genvideo/gen/shared/workflow"
)

// Steps returns the workflow steps with blob storage and the generator,
// for Generate. It needs GEN_BUCKET; the built-in generator needs ffmpeg
// at GEN_FFMPEG_PATH, Vertex AI a workload identity federation config
// (GEN_VERTEX_WIF_CONFIG) or a token, and the Gemini API its key's
// secret (GEN_GEMINI_API_KEY_SECRET_ARN), all checked now, and the
// provider asked for its models' metadata (veo.Verify), so that a
// missing or refused one fails the cold start rather than every task.
func Steps(s *awsstack.Deployment) (*workflow.Steps, error) {
	blobs, err := media.Store(s)
	if err != nil {
		return nil, err
	}
	st := steps.New(s)
	st.Blobs = blobs
	// Each video's poster frame is made with the layer's ffmpeg, whichever
	// generator made the video.
	st.Posters = workflow.FFmpegPosters{Path: s.Env.FFmpegPath}
	p := s.Env.Provider
	switch p.Generator {
	case settings.GeneratorVertex:
		ctx := context.Background()
		if _, err := veomodels.Capabilities(p); err != nil {
			return nil, err
		}
		v, err := veo.NewVertex(ctx, veo.VertexConfig{Project: p.VertexProject, Location: p.VertexLocation,
			StorageURI: p.VertexStorageURI, Endpoint: p.VertexEndpoint, AccessToken: p.VertexAccessToken,
			WIFConfig: []byte(s.Env.VertexWIFConfig), Models: veomodels.WithDefaults(p.Generator, p.ModelMap()), PollAfter: p.PollInterval})
		if err != nil {
			return nil, err
		}
		if err := veo.Verify(ctx, v, s.Logger); err != nil {
			return nil, err
		}
		st.Provider = v
		return st, nil
	case settings.GeneratorGemini, settings.GeneratorOpenAI:
		// The openai generator's key comes from GEN_OPENAI_API_KEY for
		// now; its secret, as the Gemini API's, is a later step.
		if p.Generator == settings.GeneratorGemini && p.GeminiAPIKey == "" {
			if p.GeminiAPIKey, err = geminiKey(s); err != nil {
				return nil, err
			}
		}
		st.Provider, err = veo.FromSettings(context.Background(), p, s.Env.FFmpegPath)
		if err == nil {
			err = veo.Verify(context.Background(), st.Provider, s.Logger)
		}
		if err != nil {
			return nil, err
		}
		return st, nil
	}
	r, err := render.New(render.Config{FFmpegPath: s.Env.FFmpegPath, FontFile: s.Env.FontFile})
	if err != nil {
		return nil, fmt.Errorf("generator (%s=%q): %w", awsstack.EnvFFmpegPath, s.Env.FFmpegPath, err)
	}
	st.Generator = r
	return st, nil
}

// geminiKey reads the Gemini API key from its secret. The error never
// quotes the secret.
func geminiKey(s *awsstack.Deployment) (string, error) {
	arn := s.Env.GeminiKeySecretARN
	if arn == "" {
		return "", fmt.Errorf("the gemini generator needs %s", awsstack.EnvGeminiKeySecretARN)
	}
	out, err := secretsmanager.NewFromConfig(s.AWS).GetSecretValue(context.Background(),
		&secretsmanager.GetSecretValueInput{SecretId: &arn})
	if err != nil {
		return "", fmt.Errorf("read the Gemini API key secret %s: %w", arn, err)
	}
	key := strings.TrimSpace(aws.ToString(out.SecretString))
	if key == "" {
		return "", fmt.Errorf("the Gemini API key secret %s is empty", arn)
	}
	return key, nil
}
