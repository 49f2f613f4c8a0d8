package faults

import (
	"context"

	"github.com/genvideo/gen/shared/provider"
)

var _ provider.Generator = (*Generator)(nil)

// Generator is a provider.Generator whose calls go through an Injector,
// named "Generator.Generate". A Delay that outlasts the task's deadline
// is a generation that times out.
type Generator struct {
	g  provider.Generator
	in *Injector
}

// WrapGenerator returns g with the faults in decides.
func WrapGenerator(g provider.Generator, in *Injector) *Generator {
	return &Generator{g: g, in: in}
}

// Generate renders the job's videos.
func (g *Generator) Generate(ctx context.Context, job provider.Job) (res provider.Result, err error) {
	err = g.in.call(ctx, "Generator.Generate", plainFailure, func() error {
		res, err = g.g.Generate(ctx, job)
		return err
	})
	return res, err
}
