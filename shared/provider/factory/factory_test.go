package factory_test

import (
	"context"
	"testing"

	"github.com/genvideo/gen/shared/params"
	"github.com/genvideo/gen/shared/provider"
	"github.com/genvideo/gen/shared/provider/factory"
	"github.com/genvideo/gen/shared/settings"
)

// rendered is a built-in generator that makes one video per job.
type rendered struct{}

func (rendered) Generate(context.Context, provider.Job) (provider.Result, error) {
	return provider.Result{Paths: []string{"video.mp4"}}, nil
}

// A model GEN_ROUTES does not list has the generator variables' route,
// the built-in generator when GEN_GENERATOR is unset: its jobs render
// (the route was once built with no provider at all).
func TestUnlistedModelRenders(t *testing.T) {
	r := settings.NewReader(settings.Vars{settings.Routes: `{"routes": [
		{"name": "vertex", "kind": "vertex", "project": "p", "endpoint": "http://127.0.0.1:1", "accessToken": "ya29.t"}],
		"models": {"gen-3.1-fast-generate-001": ["vertex"]}}`}.Lookup)
	p := r.Provider()
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	s, err := factory.FromSettings(t.Context(), p, factory.Options{Builtin: rendered{}})
	if err != nil {
		t.Fatal(err)
	}
	job := provider.Job{TaskID: "gen_1_x", Model: "gen-3.1-lite-generate-001", Prompt: "p", Type: "text-to-video",
		Params: params.Parameters{SampleCount: 1, DurationSeconds: 8, AspectRatio: "16:9", Resolution: "720p"}}
	op, err := s.Provider.Submit(t.Context(), job)
	if err != nil || !op.Done || op.Billing.Route != settings.GeneratorBuiltin {
		t.Errorf("Submit of a model on the default route = %+v, %v; want done on the built-in route", op, err)
	}
}
