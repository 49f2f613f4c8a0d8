package openai_test

import (
	"net/http/httptest"
	"testing"
	"time"

	"github.com/genvideo/gen/shared/provider"
	"github.com/genvideo/gen/shared/provider/openai"
	"github.com/genvideo/gen/shared/testing/openaitest"
	"github.com/genvideo/gen/shared/testing/providertest"
)

// TestConformance: the OpenAI-shaped adapter passes the providers'
// suite against openaitest.
func TestConformance(t *testing.T) {
	when := func(o openaitest.Outcome) func(providertest.Fake, string) {
		return func(f providertest.Fake, prompt string) { f.(*openaitest.Server).When(prompt, o) }
	}
	providertest.Run(t, providertest.Harness{
		Start: func(t providertest.T, s providertest.Setup) (provider.Provider, providertest.Fake) {
			cfg := openaitest.Config{Key: key}
			if s.Retired {
				cfg.Retired = []string{"sora-2"}
			}
			fake := openaitest.New(cfg)
			srv := httptest.NewServer(fake)
			t.Cleanup(srv.Close)
			k := key
			if s.WrongCredentials {
				k = "sk-wrong"
			}
			p, err := openai.New(openai.Config{APIKey: k, Endpoint: srv.URL, PollAfter: time.Second})
			if err != nil {
				t.Fatalf("openai: %v", err)
			}
			return p, fake
		},
		Job: func(t providertest.T, prompt string) provider.Job {
			j := job(t, prompt)
			j.Params.Seed, j.Params.NegativePrompt = nil, ""
			return j
		},
		Submit: map[provider.Class]func(providertest.Fake, string){
			provider.Busy:           when(openaitest.Outcome{SubmitStatus: 429, RetryAfter: 2}),
			provider.Refused:        when(openaitest.Outcome{SubmitStatus: 400, Code: openaitest.ModerationCode}),
			provider.Invalid:        when(openaitest.Outcome{SubmitStatus: 400, Code: "invalid_value"}),
			provider.OutcomeUnknown: when(openaitest.Outcome{Drop: true}),
		},
		Done: map[provider.Class]func(providertest.Fake, string){
			provider.Refused: when(openaitest.Outcome{FailCode: openaitest.ModerationCode}),
			provider.Failed:  when(openaitest.Outcome{FailCode: "internal_error"}),
		},
		BusyAfter: 2 * time.Second,
	})
}
