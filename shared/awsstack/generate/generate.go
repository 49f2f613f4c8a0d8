// Package generate builds the Generate step of the state machine: the
// generator GEN_GENERATOR selects (the ffmpeg renderer, or Veo on Vertex
// AI or the Gemini API), or the models' routes (GEN_ROUTES,
// shared/provider/routing), storing videos in S3. Only the generate Lambda
// imports it, so that no other binary links the renderer or the
// providers.
package generate

import (
	"context"
	"fmt"

	"github.com/genvideo/gen/shared/awsstack"
	"github.com/genvideo/gen/shared/awsstack/media"
	"github.com/genvideo/gen/shared/awsstack/providerkeys"
	"github.com/genvideo/gen/shared/awsstack/steps"
	"github.com/genvideo/gen/shared/provider"
	"github.com/genvideo/gen/shared/provider/factory"
	"github.com/genvideo/gen/shared/provider/render"
	"github.com/genvideo/gen/shared/provider/veo"
	"github.com/genvideo/gen/shared/settings"
	"github.com/genvideo/gen/shared/workflow"
)

// Steps returns the workflow steps with blob storage and the generator,
// for Generate. It needs GEN_BUCKET; the built-in generator needs ffmpeg
// at GEN_FFMPEG_PATH, Vertex AI a workload identity federation config
// (GEN_VERTEX_WIF_CONFIG) or a token, and the Gemini API its key's
// secret (GEN_GEMINI_API_KEY_SECRET_ARN), all checked now, and the
// provider asked for its models' metadata (provider.Verify), so that a
// missing or refused one fails the cold start rather than every task.
// With GEN_ROUTES, each route is built with its own credentials (a key
// from the secret its apiKeySecretArn names); a route that does not
// answer at cold start is logged and skipped until it does
// (routing.Router.Verify), but a route that is wrong fails it.
func Steps(s *awsstack.Deployment) (*workflow.Steps, error) {
	blobs, err := media.Store(s)
	if err != nil {
		return nil, err
	}
	st := steps.New(s)
	st.Blobs = blobs
	// Each video's poster frame is made with the layer's ffmpeg, whichever
	// generator made the video.
	st.Posters = workflow.NewFFmpegPosters(s.Env.FFmpegPath, 0)
	p := s.Env.Provider
	ctx := context.Background()
	// The ffmpeg renderer, when a model has the built-in generator for
	// a route (the default one, or one of GEN_ROUTES).
	var gen provider.Generator
	if rendersVideos(p) {
		r, err := render.New(render.Config{FFmpegPath: s.Env.FFmpegPath, FontFile: s.Env.FontFile})
		if err != nil {
			return nil, fmt.Errorf("generator (%s=%q): %w", awsstack.EnvFFmpegPath, s.Env.FFmpegPath, err)
		}
		gen = r
	}
	if (p.Generator == settings.GeneratorGemini || p.Generator == settings.GeneratorOmni) && p.GeminiAPIKey == "" {
		if p.GeminiAPIKey, err = providerkeys.GeminiKey(ctx, s, settings.GeneratorGemini); err != nil {
			return nil, err
		}
	}
	// The openai generator's key comes from GEN_OPENAI_API_KEY; an
	// openai route's may come from its own secret (apiKeySecretArn).
	routes, err := factory.FromSettings(ctx, p, factory.Options{Builtin: gen,
		Veo:    veo.Options{FFmpegPath: s.Env.FFmpegPath, VertexWIFConfig: []byte(s.Env.VertexWIFConfig)},
		Secret: providerkeys.RouteKey(s),
		Logger: s.Logger})
	if err == nil {
		err = routes.Verify(ctx)
	}
	if err != nil {
		return nil, err
	}
	st.Provider, st.Generator = routes.Provider, gen
	return st, nil
}

// rendersVideos reports whether some model has the built-in generator
// for a route.
func rendersVideos(p settings.ProviderConfig) bool {
	for _, r := range p.AllRoutes() {
		if r.Provider.Generator == settings.GeneratorBuiltin || r.Provider.Generator == "" {
			return true
		}
	}
	return false
}
