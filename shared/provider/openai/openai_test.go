package openai_test

import (
	"bytes"
	"errors"
	"image"
	"image/color"
	"image/png"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/genvideo/gen/shared/catalog"
	"github.com/genvideo/gen/shared/params"
	"github.com/genvideo/gen/shared/provider"
	"github.com/genvideo/gen/shared/provider/openai"
	"github.com/genvideo/gen/shared/settings"
	"github.com/genvideo/gen/shared/task"
	"github.com/genvideo/gen/shared/testing/openaitest"
)

const key = "sk-test-key"

func newProvider(t *testing.T, cfg openaitest.Config) (*openaitest.Server, *openai.Provider) {
	t.Helper()
	cfg.Key = key
	fake := openaitest.New(cfg)
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	p, err := openai.New(openai.Config{APIKey: key, Endpoint: srv.URL, Profile: cfg.Profile, PollAfter: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return fake, p
}

func pngFile(t *testing.T) string {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 1280, 720))
	img.Set(1, 1, color.RGBA{200, 0, 0, 255})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "picture.png")
	if err := os.WriteFile(path, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func job(t interface{ TempDir() string }, prompt string) provider.Job {
	seed := int64(42)
	return provider.Job{TaskID: "gen_1_x", Type: catalog.TextToVideo, Model: "gen-3.1-fast-generate-001", Prompt: prompt,
		Params: params.Parameters{SampleCount: 1, DurationSeconds: 8, AspectRatio: "16:9", Resolution: "720p",
			GenerateAudio: true, EnhancePrompt: true, NegativePrompt: "blur", Seed: &seed},
		OutDir: t.TempDir()}
}

// run submits job and polls it until done or an error, and answers the
// progress each poll saw.
func run(t *testing.T, p *openai.Provider, j provider.Job) (provider.Operation, []int, error) {
	t.Helper()
	op, err := p.Submit(t.Context(), j)
	var seen []int
	for i := 0; err == nil && !op.Done; i++ {
		if i > 20 {
			t.Fatal("the job never finished")
		}
		seen = append(seen, op.Progress)
		op, err = p.Poll(t.Context(), op.Name, j)
	}
	return op, seen, err
}

// TestSubmitFields: a start becomes OpenAI's fields (seconds a string,
// size from aspect ratio and resolution, the model mapped, the image as
// input_reference), and nothing the API does not define: the strict
// fake refuses an unknown parameter, so seed and negative prompt, which
// OpenAI's table does not take, never reach it; vLLM-Omni takes both.
func TestSubmitFields(t *testing.T) {
	for _, tt := range []struct {
		profile string
		want    map[string]string
	}{
		{settings.ProfileOpenAI, map[string]string{"prompt": "a boat", "model": "sora-2", "seconds": "8", "size": "1280x720"}},
		{settings.ProfileVLLMOmni, map[string]string{"prompt": "a boat", "seconds": "8", "size": "1280x720",
			"seed": "42", "negative_prompt": "blur"}},
	} {
		t.Run(tt.profile, func(t *testing.T) {
			fake, p := newProvider(t, openaitest.Config{Profile: tt.profile, Polls: 3})
			j := job(t, "a boat")
			if tt.profile == settings.ProfileOpenAI {
				j.Params.Seed, j.Params.NegativePrompt = nil, "" // the service refuses them at start there
			}
			j.Type, j.Images = catalog.ImageToVideo, map[string]string{task.RoleImage: pngFile(t)}
			op, progress, err := run(t, p, j)
			if err != nil || !op.Done || len(op.Result.Paths) != 1 {
				t.Fatalf("run = %+v, %v; want done with one video", op, err)
			}
			if b, err := os.ReadFile(op.Result.Paths[0]); err != nil || !bytes.Equal(b, openaitest.Video) {
				t.Errorf("video: %d bytes, %v; want the fake's", len(b), err)
			}
			if want := []int{0, 33, 66}; !slices.Equal(progress, want) {
				t.Errorf("progress %v, want %v", progress, want)
			}
			subs := fake.Submits()
			if len(subs) != 1 {
				t.Fatalf("%d submits, want 1", len(subs))
			}
			if !maps.Equal(subs[0].Fields, tt.want) || subs[0].Reference != "image/png" {
				t.Errorf("fields %v, reference %q; want %v and image/png", subs[0].Fields, subs[0].Reference, tt.want)
			}
			if n := fake.Downloads(subs[0].Video); n != 1 {
				t.Errorf("content downloaded %d times, want once", n)
			}
			for _, r := range fake.Requests() {
				if r.Header.Get("Authorization") != "Bearer "+key {
					t.Errorf("%s %s without the bearer key", r.Method, r.Path)
				}
			}
		})
	}
}

// TestOutcomes: every answer is classified into the outcomes of
// providers.md.
func TestOutcomes(t *testing.T) {
	tests := []struct {
		prompt  string
		outcome openaitest.Outcome
		key     string // the key sent, when not the right one
		model   string // the host's model, when not the default
		// done; else the error's classification.
		done     bool
		busy     bool
		operator bool
		wait     time.Duration
		code     string
		unknown  bool
		accepted int
	}{
		{prompt: "all good", done: true, accepted: 1},
		{prompt: "throttled", outcome: openaitest.Outcome{SubmitStatus: 429, RetryAfter: 37}, busy: true, wait: 37 * time.Second},
		{prompt: "unavailable", outcome: openaitest.Outcome{SubmitStatus: 503}, busy: true, wait: time.Second},
		{prompt: "refused prompt", outcome: openaitest.Outcome{SubmitStatus: 400, Code: openaitest.ModerationCode}, code: task.FailContentPolicy},
		{prompt: "invalid", outcome: openaitest.Outcome{SubmitStatus: 400, Code: "invalid_value"}, code: task.FailGeneration},
		{prompt: "wrong key", key: "sk-wrong", code: task.FailGeneration},
		{prompt: "retired", model: "sora-2-2025-10-06", code: task.FailModelUnavailable},
		{prompt: "dropped", outcome: openaitest.Outcome{Drop: true}, unknown: true, accepted: 1},
		{prompt: "moderated job", outcome: openaitest.Outcome{FailCode: openaitest.ModerationCode}, code: task.FailContentPolicy, accepted: 1},
		{prompt: "failed job", outcome: openaitest.Outcome{FailCode: "internal_error"}, code: task.FailGeneration, accepted: 1},
	}
	fake := openaitest.New(openaitest.Config{Key: key, Retired: []string{"sora-2-2025-10-06"}})
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	for _, tt := range tests {
		fake.When(tt.prompt, tt.outcome)
	}
	for _, tt := range tests {
		t.Run(tt.prompt, func(t *testing.T) {
			models := map[string]string{"gen-3.1-fast-generate-001": "sora-2"}
			if tt.model != "" {
				models["gen-3.1-fast-generate-001"] = tt.model
			}
			p, err := openai.New(openai.Config{APIKey: cmpOr(tt.key, key), Endpoint: srv.URL, Models: models})
			if err != nil {
				t.Fatal(err)
			}
			j := job(t, tt.prompt)
			j.Params.Seed, j.Params.NegativePrompt = nil, ""
			op, _, err := run(t, p, j)
			var unknown interface{ OutcomeUnknown() bool }
			if got := errors.As(err, &unknown) && unknown.OutcomeUnknown(); got != tt.unknown {
				t.Fatalf("error %v: outcome unknown %v, want %v", err, got, tt.unknown)
			}
			var busy interface{ RetryAfter() time.Duration }
			if got := errors.As(err, &busy) && !tt.unknown; got != tt.busy {
				t.Fatalf("error %v: busy %v, want %v", err, got, tt.busy)
			}
			if tt.busy && busy.RetryAfter() != tt.wait {
				t.Errorf("wait %s, want %s", busy.RetryAfter(), tt.wait)
			}
			var coded interface{ FailureCode() string }
			switch {
			case tt.code != "" && (!errors.As(err, &coded) || coded.FailureCode() != tt.code):
				t.Errorf("error %v, want failure code %s", err, tt.code)
			case tt.done && (err != nil || !op.Done):
				t.Errorf("run = %+v, %v; want done", op, err)
			}
			if n := fake.Accepted(tt.prompt); n != tt.accepted {
				t.Errorf("the fake accepted %d jobs, want %d", n, tt.accepted)
			}
		})
	}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// TestPollKeyRefused: a key refused while a job runs is waited out for
// the operator, not a failed paid job.
func TestPollKeyRefused(t *testing.T) {
	fake, p := newProvider(t, openaitest.Config{})
	j := job(t, "a boat")
	j.Params.Seed, j.Params.NegativePrompt = nil, ""
	op, err := p.Submit(t.Context(), j)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	other, err := openai.New(openai.Config{APIKey: "sk-revoked", Endpoint: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	_, err = other.Poll(t.Context(), op.Name, j)
	var op2 interface{ NeedsOperator() bool }
	if !errors.As(err, &op2) || !op2.NeedsOperator() {
		t.Errorf("Poll with a refused key = %v, want a wait for the operator", err)
	}
}

// TestCheck: the start-up check names the key when it is refused, and
// reports models the host does not serve without failing.
func TestCheck(t *testing.T) {
	fake := openaitest.New(openaitest.Config{Key: key, Retired: []string{"sora-2-pro"}})
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	p, _ := openai.New(openai.Config{APIKey: "sk-wrong", Endpoint: srv.URL})
	if err := p.Check(t.Context()); err == nil || !strings.Contains(err.Error(), settings.OpenAIAPIKey) {
		t.Errorf("Check with a wrong key = %v, want an error naming %s", err, settings.OpenAIAPIKey)
	}
	p, _ = openai.New(openai.Config{APIKey: key, Endpoint: srv.URL})
	err := p.Check(t.Context())
	var u *provider.UnavailableModelsError
	if !errors.As(err, &u) || len(u.Models) != 1 || u.Models[0] != "sora-2-pro" {
		t.Errorf("Check = %v, want sora-2-pro unavailable", err)
	}
}

// TestIDsStayOnTheHost: an id the host answers is one path segment, or
// the job's outcome is unknown (never a request elsewhere).
func TestIDsStayOnTheHost(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"id":"../../admin","status":"queued"}`))
	}))
	t.Cleanup(srv.Close)
	p, _ := openai.New(openai.Config{APIKey: key, Endpoint: srv.URL})
	j := job(t, "x")
	_, err := p.Submit(t.Context(), j)
	var unknown interface{ OutcomeUnknown() bool }
	if !errors.As(err, &unknown) {
		t.Errorf("Submit = %v, want outcome unknown", err)
	}
	if _, err := p.Poll(t.Context(), "../x", j); err == nil {
		t.Error("Poll of ../x did not fail")
	}
}

// TestBilling: a completed job names the openai route and the host's
// model, and costs the host's price of a second × the seconds the fake
// recorded: OpenAI's list price (openaimodels), or a self-hosted host's
// own price per second.
func TestBilling(t *testing.T) {
	tests := []struct {
		name, profile string
		models        map[string]string
		usdPerSecond  float64
		audio         bool
		duration      int
		// price is the price of a second the table gives.
		price float64
	}{
		{name: "sora-2", models: map[string]string{"gen-3.1-fast-generate-001": "sora-2"}, audio: true, duration: 8, price: 0.10},
		{name: "sora-2-pro", models: map[string]string{"gen-3.1-fast-generate-001": "sora-2-pro"}, audio: true, duration: 4, price: 0.30},
		{name: "vllm-omni", profile: settings.ProfileVLLMOmni, models: map[string]string{}, usdPerSecond: 0.02, duration: 6, price: 0.02},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := openaitest.New(openaitest.Config{Key: key, Profile: tt.profile})
			srv := httptest.NewServer(fake)
			t.Cleanup(srv.Close)
			p, err := openai.New(openai.Config{APIKey: key, Endpoint: srv.URL, Profile: tt.profile,
				Models: tt.models, USDPerSecond: tt.usdPerSecond})
			if err != nil {
				t.Fatal(err)
			}
			j := job(t, "billed "+tt.name)
			j.Params.DurationSeconds, j.Params.GenerateAudio = tt.duration, tt.audio
			if tt.profile == "" {
				j.Params.Seed, j.Params.NegativePrompt = nil, ""
			}
			op, _, err := run(t, p, j)
			if err != nil || !op.Done {
				t.Fatalf("run = %+v, %v; want done", op, err)
			}
			subs := fake.Submits()
			seconds, _ := strconv.Atoi(subs[len(subs)-1].Fields["seconds"])
			want := provider.Billing{Route: settings.GeneratorOpenAI, ProviderModel: tt.models["gen-3.1-fast-generate-001"],
				CostUSD: tt.price * float64(seconds)}
			if op.Billing != want || seconds != tt.duration {
				t.Errorf("Billing = %+v, want %+v (the fake recorded %d s)", op.Billing, want, seconds)
			}
		})
	}
}
