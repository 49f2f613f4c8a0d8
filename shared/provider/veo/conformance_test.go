package veo_test

import (
	"context"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/genvideo/gen/shared/catalog"
	"github.com/genvideo/gen/shared/provider"
	"github.com/genvideo/gen/shared/provider/veo"
	"github.com/genvideo/gen/shared/testing/providertest"
	"github.com/genvideo/gen/shared/testing/veotest"
)

// harness is the Veo adapter on backend b, against veotest.
func harness(t *testing.T, b backend) providertest.Harness {
	p := valid(t, b, 1)
	when := func(o veotest.Outcome) func(providertest.Fake, string) {
		return func(f providertest.Fake, prompt string) { f.(*veotest.Server).When(prompt, o) }
	}
	return providertest.Harness{
		Start: func(t providertest.T, s providertest.Setup) (provider.Provider, providertest.Fake) {
			cfg := veotest.Config{Token: token, APIKey: key}
			if s.Retired {
				cfg.Retired = []string{"veo-3.1-fast-generate-001"}
			}
			fake := veotest.New(cfg)
			srv := httptest.NewServer(fake)
			t.Cleanup(srv.Close)
			tok, k := token, key
			if s.WrongCredentials {
				tok, k = "ya29.wrong", "AIza-wrong"
			}
			var (
				prov provider.Provider
				err  error
			)
			if b.name == "vertex" {
				prov, err = veo.NewVertex(t.Context(), veo.VertexConfig{Project: "proj-1", Endpoint: srv.URL, AccessToken: tok})
			} else {
				prov, err = veo.NewGemini(veo.GeminiConfig{APIKey: k, Endpoint: srv.URL})
			}
			if err != nil {
				t.Fatalf("%s: %v", b.name, err)
			}
			return prov, fake
		},
		Job: func(t providertest.T, prompt string) provider.Job {
			return provider.Job{TaskID: "gen_1_x", Type: catalog.TextToVideo, Model: "gen-3.1-fast-generate-001",
				Prompt: prompt, Params: p, OutDir: t.TempDir()}
		},
		Submit: map[provider.Class]func(providertest.Fake, string){
			provider.Busy:           when(veotest.Outcome{SubmitStatus: 429, RetryDelay: "2s"}),
			provider.Refused:        when(veotest.Outcome{SubmitStatus: 400, Reason: veotest.RefusedPrompt}),
			provider.Invalid:        when(veotest.Outcome{SubmitStatus: 400}),
			provider.OutcomeUnknown: when(veotest.Outcome{Drop: true}),
		},
		Done: map[provider.Class]func(providertest.Fake, string){
			provider.Refused: when(veotest.Outcome{Filtered: 1}),
			provider.Failed:  when(veotest.Outcome{ErrorCode: 13}),
		},
		BusyAfter: 2 * time.Second,
	}
}

// TestConformance: both Veo APIs pass the providers' suite.
func TestConformance(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) { providertest.Run(t, harness(t, b)) })
	}
}

// misreading is a broken adapter: it takes a content-policy refusal for
// a busy provider, which would send the customer's refused prompt to
// the next route and wait on it until the deadline.
type misreading struct{ provider.Provider }

func (m misreading) Submit(ctx context.Context, job provider.Job) (provider.Operation, error) {
	op, err := m.Provider.Submit(ctx, job)
	if provider.Classify(err).Class == provider.Refused {
		err = &provider.Error{Answer: provider.Answer{Class: provider.Busy}, Err: err}
	}
	return op, err
}

// TestConformanceFailsAMisreadRefusal: the suite catches the broken
// adapter.
func TestConformanceFailsAMisreadRefusal(t *testing.T) {
	h := harness(t, backends[0])
	start := h.Start
	h.Start = func(t providertest.T, s providertest.Setup) (provider.Provider, providertest.Fake) {
		p, f := start(t, s)
		return misreading{p}, f
	}
	failures := providertest.Failures(t, h)
	if !slices.ContainsFunc(failures, func(f string) bool { return strings.Contains(f, "submit answered refused") }) {
		t.Errorf("the suite passed an adapter that reads a refusal as busy: %q", failures)
	}
}
