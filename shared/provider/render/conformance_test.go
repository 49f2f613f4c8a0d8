package render_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/genvideo/gen/shared/catalog"
	"github.com/genvideo/gen/shared/params"
	"github.com/genvideo/gen/shared/provider"
	"github.com/genvideo/gen/shared/provider/render"
	"github.com/genvideo/gen/shared/testing/providertest"
)

// counted is the renderer as the suite's fake: it counts the jobs it
// rendered, and breaks the jobs of the prompts it is told to (the
// renderer has no provider to set an answer on).
type counted struct {
	g provider.Generator

	mu       sync.Mutex
	rendered map[string]int
	broken   []string
}

func (c *counted) Generate(ctx context.Context, job provider.Job) (provider.Result, error) {
	c.mu.Lock()
	for _, b := range c.broken {
		if strings.Contains(job.Prompt, b) {
			job.Params.DurationSeconds = 0 // a job ffmpeg cannot render
		}
	}
	c.mu.Unlock()
	res, err := c.g.Generate(ctx, job)
	if err == nil {
		c.mu.Lock()
		c.rendered[job.Prompt]++
		c.mu.Unlock()
	}
	return res, err
}

func (c *counted) Accepted(text string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for prompt, k := range c.rendered {
		if strings.Contains(prompt, text) {
			n += k
		}
	}
	return n
}

// TestConformance: the built-in renderer, run as a provider, passes the
// providers' suite: a job is done at submit, and a job it cannot render
// fails.
func TestConformance(t *testing.T) {
	r, err := render.New(render.Config{})
	if err != nil {
		t.Skip(err)
	}
	providertest.Run(t, providertest.Harness{
		Start: func(providertest.T, providertest.Setup) (provider.Provider, providertest.Fake) {
			c := &counted{g: r, rendered: map[string]int{}}
			return provider.Rendered(c), c
		},
		Job: func(t providertest.T, prompt string) provider.Job {
			return provider.Job{TaskID: "gen_1_x", Type: catalog.TextToVideo, Model: "gen-3.1-lite-generate-001", Prompt: prompt,
				Params: params.Parameters{SampleCount: 1, DurationSeconds: 4, AspectRatio: "16:9", Resolution: "720p",
					PersonGeneration: "allow_adult"}, OutDir: t.TempDir()}
		},
		Submit: map[provider.Class]func(providertest.Fake, string){
			provider.Failed: func(f providertest.Fake, prompt string) {
				c := f.(*counted)
				c.mu.Lock()
				defer c.mu.Unlock()
				c.broken = append(c.broken, prompt)
			},
		},
		Local: true,
	})
}
