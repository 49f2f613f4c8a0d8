// Package modelchecklambda builds the scheduled model check of the AWS stack
// (functions/model-check): it asks each provider route which of the
// models it maps ours to it serves, and writes what each found to the
// store (shared/availability), where the API's functions, which run no
// provider, read it before charging a start. It builds the routes' providers
// as the generate step does (their credentials and secrets, Vertex AI's
// workload identity under the same role), without the renderer.
package modelchecklambda

import (
	"context"
	"time"

	"github.com/genvideo/gen/shared/availability/routecheck"
	"github.com/genvideo/gen/shared/awsstack"
	"github.com/genvideo/gen/shared/awsstack/providerkeys"
	"github.com/genvideo/gen/shared/provider/factory"
	"github.com/genvideo/gen/shared/provider/veo"
	"github.com/genvideo/gen/shared/settings"
)

// Check is the scheduled check.
type Check struct {
	checker *routecheck.Checker
}

// Report is what a run checked: the routes, by name.
type Report struct {
	Routes []string `json:"routes"`
}

// New builds the check of s's routes; a route that cannot be built (a
// secret that cannot be read) fails the cold start, naming it.
func New(ctx context.Context, s *awsstack.Deployment) (*Check, error) {
	p := s.Env.Provider
	if (p.Generator == settings.GeneratorGemini || p.Generator == settings.GeneratorOmni) && p.GeminiAPIKey == "" {
		key, err := providerkeys.GeminiKey(ctx, s, settings.GeneratorGemini)
		if err != nil {
			return nil, err
		}
		p.GeminiAPIKey = key
	}
	probes, err := factory.Probes(ctx, p, factory.Options{
		Veo:    veo.Options{FFmpegPath: s.Env.FFmpegPath, VertexWIFConfig: []byte(s.Env.VertexWIFConfig)},
		Secret: providerkeys.RouteKey(s),
		Logger: s.Logger})
	if err != nil {
		return nil, err
	}
	return &Check{checker: &routecheck.Checker{Store: s.Store, Probes: probes, Logger: s.Logger, Now: time.Now}}, nil
}

// Scheduled checks every route once, each within
// routecheck.DefaultTimeout. A route that does not answer is logged
// and written as lacking nothing; only a write to the store that failed
// fails the run (the next run, an hour later, tries again).
func (c *Check) Scheduled(ctx context.Context) (Report, error) {
	var r Report
	for _, p := range c.checker.Probes {
		r.Routes = append(r.Routes, p.Route)
	}
	return r, c.checker.Check(ctx)
}
