package veo_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/genvideo/gen/shared/catalog"
	"github.com/genvideo/gen/shared/params"
	"github.com/genvideo/gen/shared/provider"
	"github.com/genvideo/gen/shared/provider/capability"
	"github.com/genvideo/gen/shared/provider/veo"
	"github.com/genvideo/gen/shared/provider/veo/veomodels"
	"github.com/genvideo/gen/shared/settings"
	"github.com/genvideo/gen/shared/task"
	"github.com/genvideo/gen/shared/testing/veotest"
)

const (
	token = "ya29.test-token"
	key   = "AIza-test-key"
)

var (
	png  = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR a first frame")
	jpeg = []byte("\xff\xd8\xff\xe0\x00\x10JFIF\x00 a last frame")
)

type backend struct {
	name     string
	provider func(t *testing.T, url string) provider.Provider
	// full: the API takes generateAudio.
	full bool
}

// caps is what the service accepts on the backend with its default
// models.
func (b backend) caps(t *testing.T) capability.Table {
	t.Helper()
	c, err := veomodels.Capabilities(settings.ProviderConfig{Generator: b.name})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// valid are parameters every backend takes for text-to-video, as the
// service fills them in on b.
func valid(t *testing.T, b backend, samples int) params.Parameters {
	t.Helper()
	r := params.Request{Type: catalog.TextToVideo, Model: "gen-3.1-fast-generate-001",
		Params: params.Parameters{SampleCount: samples, DurationSeconds: 8, AspectRatio: "16:9",
			Resolution: "720p", GenerateAudio: true, EnhancePrompt: true, Seed: new(int64(1))},
		Sent: map[string]bool{"prompt": true}} // the rest: the backend's defaults
	if err := b.caps(t).Apply(&r); err != nil {
		t.Fatalf("%s refuses %+v: %v", b.name, r.Params, err)
	}
	return r.Params
}

var backends = []backend{
	{"vertex", func(t *testing.T, url string) provider.Provider {
		v, err := veo.NewVertex(t.Context(), veo.VertexConfig{Project: "proj-1", Location: "europe-west4",
			Endpoint: url, AccessToken: token})
		if err != nil {
			t.Fatal(err)
		}
		return v
	}, true},
	{"gemini", func(t *testing.T, url string) provider.Provider {
		g, err := veo.NewGemini(veo.GeminiConfig{APIKey: key, Endpoint: url})
		if err != nil {
			t.Fatal(err)
		}
		return g
	}, false},
}

func newFake(t *testing.T) (*veotest.Server, string) {
	fake := veotest.New(veotest.Config{Token: token, APIKey: key})
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	return fake, srv.URL
}

func writeImage(t *testing.T, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestSubmitParameters checks, from the requests the fake recorded, that
// every parameter of a start the service accepts on the backend
// (veo.Capabilities) reaches the provider exactly and is accepted by
// the strict fake: the model mapped, the prompt, each parameter the API
// takes with its JSON type, seeds over the whole 0..4294967295 range on
// Vertex AI, and the images with their bytes and type. A case the
// backend refuses at start is not submitted.
func TestSubmitParameters(t *testing.T) {
	// No seed and no personGeneration: the backend's defaults.
	base := params.Parameters{SampleCount: 1, DurationSeconds: 8, AspectRatio: "16:9", Resolution: "1080p",
		GenerateAudio: true, EnhancePrompt: true}
	with := func(f func(*params.Parameters)) params.Parameters { p := base; f(&p); return p }
	first := writeImage(t, "first.png", png)
	last := writeImage(t, "last.jpg", jpeg)
	tests := []struct {
		name   string
		model  string
		prompt string
		p      params.Parameters
		images map[string]string
		// wantModel is the provider's model id.
		wantModel string
	}{
		{"defaults", "gen-3.1-fast-generate-001", "a paper boat", base, nil, "veo-3.1-fast-generate-001"},
		{"quality model", "gen-3.1-generate-001", "a lighthouse", base, nil, "veo-3.1-generate-001"},
		{"lite model at 720p", "gen-3.1-lite-generate-001", "a fox", with(func(p *params.Parameters) { p.Resolution = "720p" }), nil, "veo-3.1-lite-generate-001"},
		{"largest seed", "gen-3.1-fast-generate-001", "seed", with(func(p *params.Parameters) { p.Seed = new(int64(params.MaxSeed)) }), nil, "veo-3.1-fast-generate-001"},
		{"seed above int32", "gen-3.1-fast-generate-001", "seed", with(func(p *params.Parameters) { p.Seed = new(int64(1<<31 + 7)) }), nil, "veo-3.1-fast-generate-001"},
		{"seed zero", "gen-3.1-fast-generate-001", "seed", with(func(p *params.Parameters) { p.Seed = new(int64(0)) }), nil, "veo-3.1-fast-generate-001"},
		{"four samples", "gen-3.1-fast-generate-001", "many", with(func(p *params.Parameters) { p.SampleCount = 4 }), nil, "veo-3.1-fast-generate-001"},
		{"short portrait", "gen-3.1-fast-generate-001", "tall", with(func(p *params.Parameters) {
			p.DurationSeconds, p.AspectRatio, p.Resolution = 4, "9:16", "720p"
		}), nil, "veo-3.1-fast-generate-001"},
		{"no audio", "gen-3.1-fast-generate-001", "quiet", with(func(p *params.Parameters) { p.GenerateAudio = false }), nil, "veo-3.1-fast-generate-001"},
		{"negative prompt", "gen-3.1-fast-generate-001", "sky", with(func(p *params.Parameters) {
			p.NegativePrompt = "birds, \"planes\" & ünïcode"
		}), nil, "veo-3.1-fast-generate-001"},
		{"no people", "gen-3.1-fast-generate-001", "empty street", with(func(p *params.Parameters) { p.PersonGeneration = "dont_allow" }), nil, "veo-3.1-fast-generate-001"},
		{"people of all ages", "gen-3.1-fast-generate-001", "a crowd", with(func(p *params.Parameters) { p.PersonGeneration = "allow_all" }), nil, "veo-3.1-fast-generate-001"},
		{"a seed", "gen-3.1-fast-generate-001", "seeded", with(func(p *params.Parameters) { p.Seed = new(int64(42)) }), nil, "veo-3.1-fast-generate-001"},
		{"adults only", "gen-3.1-fast-generate-001", "adults", with(func(p *params.Parameters) { p.PersonGeneration = "allow_adult" }), nil, "veo-3.1-fast-generate-001"},
		{"image to video", "gen-3.1-fast-generate-001", "zoom in", base, map[string]string{task.RoleImage: first}, "veo-3.1-fast-generate-001"},
		{"first and last frame", "gen-3.1-generate-001", "morph", base,
			map[string]string{task.RoleFirstFrame: first, task.RoleLastFrame: last}, "veo-3.1-generate-001"},
	}
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			fake, url := newFake(t)
			p := b.provider(t, url)
			caps := b.caps(t)
			submitted := 0
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					kind := catalog.TextToVideo
					if len(tt.images) == 1 {
						kind = catalog.ImageToVideo
					} else if len(tt.images) == 2 {
						kind = catalog.FirstLastFrame
					}
					// As the client sent them: no default to fill in.
					r := params.Request{Type: kind, Model: tt.model, Params: tt.p, Sent: map[string]bool{
						"sampleCount": true, "durationSeconds": true, "aspectRatio": true, "resolution": true,
						"personGeneration": tt.p.PersonGeneration != "", "seed": tt.p.Seed != nil,
						"enhancePrompt": true, "generateAudio": true}}
					if err := caps.Apply(&r); err != nil {
						t.Skipf("refused at start on %s: %v", b.name, err)
					}
					submitted++
					job := provider.Job{TaskID: "gen_1_x", Model: tt.model, Prompt: tt.prompt, Params: r.Params, Images: tt.images}
					op, err := p.Submit(t.Context(), job)
					if err != nil || op.Name == "" || op.Done {
						t.Fatalf("Submit = %+v, %v; want a running operation", op, err)
					}
					subs := fake.Submits()
					got := subs[len(subs)-1]
					if got.API != b.name || got.Model != tt.wantModel || got.Operation != op.Name {
						t.Errorf("submit reached %s model %q as %q, want %s model %q as %q",
							got.API, got.Model, got.Operation, b.name, tt.wantModel, op.Name)
					}
					checkInstance(t, got.Instance, tt.prompt, tt.images)
					checkParameters(t, got.Parameters, r.Params, b.full, caps.Models[tt.model])
				})
			}
			if submitted < len(tests)/2 {
				t.Errorf("%s accepted %d of %d starts: the test checks too little there", b.name, submitted, len(tests))
			}
		})
	}
}

func decode(t *testing.T, raw json.RawMessage) map[string]any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
	return m
}

func checkInstance(t *testing.T, raw json.RawMessage, prompt string, images map[string]string) {
	t.Helper()
	in := decode(t, raw)
	if in["prompt"] != prompt {
		t.Errorf("prompt = %q, want %q", in["prompt"], prompt)
	}
	want := map[string]string{} // field -> path
	if p, ok := images[task.RoleImage]; ok {
		want["image"] = p
	}
	if p, ok := images[task.RoleFirstFrame]; ok {
		want["image"] = p
	}
	if p, ok := images[task.RoleLastFrame]; ok {
		want["lastFrame"] = p
	}
	for _, field := range []string{"image", "lastFrame"} {
		got, present := in[field].(map[string]any)
		path, wanted := want[field]
		if present != wanted {
			t.Errorf("%s present %v, want %v", field, present, wanted)
			continue
		}
		if !wanted {
			continue
		}
		b, _ := os.ReadFile(path)
		mime := "image/png"
		if strings.HasSuffix(path, ".jpg") {
			mime = "image/jpeg"
		}
		if got["bytesBase64Encoded"] != base64.StdEncoding.EncodeToString(b) || got["mimeType"] != mime {
			t.Errorf("%s = %v, want the %d bytes of %s as %s", field, got, len(b), path, mime)
		}
	}
	if len(in) != 1+len(want) {
		t.Errorf("instance has fields %v, want prompt and %v", keys(in), want)
	}
}

func checkParameters(t *testing.T, raw json.RawMessage, p params.Parameters, full bool, lim capability.Limits) {
	t.Helper()
	got := decode(t, raw)
	want := map[string]any{
		"sampleCount":      json.Number(itoa(int64(p.SampleCount))),
		"durationSeconds":  json.Number(itoa(int64(p.DurationSeconds))),
		"aspectRatio":      p.AspectRatio,
		"resolution":       p.Resolution,
		"personGeneration": p.PersonGeneration,
	}
	if p.NegativePrompt != "" {
		want["negativePrompt"] = p.NegativePrompt
	}
	// Veo 3.1 takes no enhancePrompt false (veomodels [enhance]):
	// the default, true, is left to the API.
	if lim.EnhancePromptOff {
		want["enhancePrompt"] = p.EnhancePrompt
	}
	if lim.Seed && p.Seed != nil {
		want["seed"] = json.Number(itoa(*p.Seed))
	}
	if full {
		want["generateAudio"] = p.GenerateAudio
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("parameters.%s = %#v, want %#v", k, got[k], v)
		}
	}
	if len(got) != len(want) {
		t.Errorf("parameters are %v, want exactly %v", keys(got), keys(want))
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func keys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestOutcomes maps what the provider answers to what the workflow
// sees: videos (some filtered), a content-policy refusal with its
// category in each of Google's three forms, a failed operation, a busy
// provider to wait out (after Google's RetryInfo), a refusal, and a
// submit whose answer was lost.
func TestOutcomes(t *testing.T) {
	const refused = veotest.RefusedPrompt
	tests := []struct {
		prompt  string
		outcome veotest.Outcome
		samples int
		// videos when done; else the error's classification.
		videos   int
		busy     bool
		code     string
		category string
		// wait: the busy error's RetryAfter.
		wait time.Duration
		// unknown: the submit's outcome is unknown.
		unknown bool
	}{
		{prompt: "all good", samples: 2, videos: 2},
		{prompt: "one filtered", outcome: veotest.Outcome{Filtered: 1}, samples: 3, videos: 2},
		{prompt: "all filtered", outcome: veotest.Outcome{Filtered: 2, Reason: "Support codes: 29310472"}, samples: 2,
			code: task.FailContentPolicy, category: "celebrity"},
		{prompt: "unknown code", outcome: veotest.Outcome{Filtered: 1, Reason: "Support codes: 12345678"}, samples: 1,
			code: task.FailContentPolicy, category: "other"},
		{prompt: "refused at submit", outcome: veotest.Outcome{SubmitStatus: 400, Reason: refused}, samples: 1,
			code: task.FailContentPolicy, category: "violence"},
		{prompt: "refused when done", outcome: veotest.Outcome{ErrorCode: 3, Reason: "Veo could not generate videos because the input image violates Vertex AI's usage guidelines. Support codes: 15236754"},
			samples: 1, code: task.FailContentPolicy, category: "celebrity"},
		{prompt: "done with error", outcome: veotest.Outcome{ErrorCode: 3}, samples: 1, code: task.FailGeneration},
		{prompt: "throttled", outcome: veotest.Outcome{SubmitStatus: 429, RetryDelay: "37s"}, samples: 1, busy: true, wait: 37 * time.Second},
		{prompt: "hint in ms", outcome: veotest.Outcome{SubmitStatus: 429, RetryDelay: "1.500s"}, samples: 1, busy: true, wait: 1500 * time.Millisecond},
		{prompt: "unavailable", outcome: veotest.Outcome{SubmitStatus: 503}, samples: 1, busy: true},
		{prompt: "poll unavailable", outcome: veotest.Outcome{PollStatus: 500}, samples: 1, busy: true},
		{prompt: "poll unauthorized", outcome: veotest.Outcome{PollStatus: 401}, samples: 1, busy: true},
		{prompt: "poll denied", outcome: veotest.Outcome{PollStatus: 403}, samples: 1, busy: true},
		{prompt: "invalid", outcome: veotest.Outcome{SubmitStatus: 400}, samples: 1, code: task.FailGeneration},
		{prompt: "denied", outcome: veotest.Outcome{SubmitStatus: 403}, samples: 1, code: task.FailGeneration},
		{prompt: "dropped", outcome: veotest.Outcome{Drop: true}, samples: 1, unknown: true},
		{prompt: "truncated", outcome: veotest.Outcome{Truncate: true}, samples: 1, unknown: true},
		{prompt: "gateway timeout", outcome: veotest.Outcome{SubmitStatus: 504}, samples: 1, unknown: true},
	}
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			fake, url := newFake(t)
			p := b.provider(t, url)
			for _, tt := range tests {
				fake.When(tt.prompt, tt.outcome)
			}
			for _, tt := range tests {
				t.Run(tt.prompt, func(t *testing.T) {
					if max := b.caps(t).Models["gen-3.1-fast-generate-001"].MaxSampleCount; tt.samples > max {
						t.Skipf("%s makes at most %d videos a request", b.name, max)
					}
					job := provider.Job{TaskID: "gen_1_x", Model: "gen-3.1-fast-generate-001", Prompt: tt.prompt,
						Params: valid(t, b, tt.samples), OutDir: t.TempDir()}
					op, err := p.Submit(t.Context(), job)
					var unknown interface{ OutcomeUnknown() bool }
					if isUnknown := errors.As(err, &unknown) && unknown.OutcomeUnknown(); isUnknown != tt.unknown {
						t.Fatalf("Submit error %v: outcome unknown %v, want %v", err, isUnknown, tt.unknown)
					}
					if tt.unknown {
						if n := fake.Accepted(tt.prompt); n != 1 {
							t.Errorf("the fake accepted %d jobs, want the one whose answer was lost", n)
						}
						return
					}
					if err == nil {
						op, err = p.Poll(t.Context(), op.Name, job)
					}
					var busy interface{ RetryAfter() time.Duration }
					if isBusy := errors.As(err, &busy); isBusy != tt.busy {
						t.Fatalf("error %v: busy %v, want %v", err, isBusy, tt.busy)
					}
					if tt.busy {
						if got := busy.RetryAfter(); got != tt.wait {
							t.Errorf("wait %s, want %s", got, tt.wait)
						}
						return
					}
					if tt.code != "" {
						var e *veo.Error
						if !errors.As(err, &e) || e.FailureCode() != tt.code || e.PolicyCategory() != tt.category {
							t.Fatalf("error %v, want a *veo.Error of code %s, category %q", err, tt.code, tt.category)
						}
						return
					}
					if err != nil || !op.Done || len(op.Result.Paths) != tt.videos {
						t.Fatalf("Poll = %+v, %v; want done with %d videos", op, err, tt.videos)
					}
					for _, path := range op.Result.Paths {
						if b, err := os.ReadFile(path); err != nil || !bytes.Equal(b, veotest.Video) {
							t.Errorf("video %s: %d bytes, %v; want the fake's %d", path, len(b), err, len(veotest.Video))
						}
					}
				})
			}
		})
	}
}

// TestVertexStorageURI: with a storage bucket, Vertex AI answers gs://
// objects, which Poll copies.
func TestVertexStorageURI(t *testing.T) {
	fake, url := newFake(t)
	v, err := veo.NewVertex(t.Context(), veo.VertexConfig{Project: "p", Endpoint: url, AccessToken: token,
		StorageURI: "gs://videos-bucket/out"})
	if err != nil {
		t.Fatal(err)
	}
	job := provider.Job{TaskID: "gen_1_x", Model: "gen-3.1-fast-generate-001", Prompt: "to storage",
		Params: valid(t, backends[0], 2), OutDir: t.TempDir()}
	op, err := v.Submit(t.Context(), job)
	if err != nil {
		t.Fatal(err)
	}
	subs := fake.Submits()
	if got := decode(t, subs[0].Parameters)["storageUri"]; got != "gs://videos-bucket/out/gen_1_x/" {
		t.Errorf("storageUri = %v, want the task's folder under the bucket", got)
	}
	op, err = v.Poll(t.Context(), op.Name, job)
	if err != nil || len(op.Result.Paths) != 2 {
		t.Fatalf("Poll = %+v, %v; want two videos", op, err)
	}
	if b, _ := os.ReadFile(op.Result.Paths[1]); !bytes.Equal(b, veotest.Video) {
		t.Errorf("copied video has %d bytes, want the fake's %d", len(b), len(veotest.Video))
	}
}

// TestCredentialsRefused: a wrong token or key is a failure, not a busy
// provider, and the key is in no error.
func TestCredentialsRefused(t *testing.T) {
	_, url := newFake(t)
	g, _ := veo.NewGemini(veo.GeminiConfig{APIKey: "AIza-wrong", Endpoint: url})
	_, err := g.Submit(t.Context(), provider.Job{Model: "gen-3.1-fast-generate-001", Params: params.Parameters{SampleCount: 1}})
	var e *veo.Error
	if !errors.As(err, &e) || e.FailureCode() != task.FailGeneration || strings.Contains(err.Error(), "AIza-wrong") {
		t.Errorf("Submit with a wrong key = %v, want a generation failure that does not show the key", err)
	}
	v, _ := veo.NewVertex(t.Context(), veo.VertexConfig{Project: "p", Endpoint: url, AccessToken: "wrong"})
	_, err = v.Submit(t.Context(), provider.Job{Model: "gen-3.1-fast-generate-001", Params: params.Parameters{SampleCount: 1}})
	if !errors.As(err, &e) || e.HTTPStatus != 401 {
		t.Errorf("Submit with a wrong token = %v, want the 401", err)
	}
}

// TestRetiredModel: a model Google no longer serves fails the task with
// MODEL_UNAVAILABLE, not GENERATION_FAILED, on either API.
func TestRetiredModel(t *testing.T) {
	fake := veotest.New(veotest.Config{Token: token, APIKey: key, Retired: []string{"veo-3.1-fast-generate-001"}})
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			_, err := b.provider(t, srv.URL).Submit(t.Context(), provider.Job{TaskID: "gen_1_x", Model: "gen-3.1-fast-generate-001",
				Prompt: "a retired model", Params: valid(t, b, 1)})
			var e *veo.Error
			if !errors.As(err, &e) || e.FailureCode() != task.FailModelUnavailable {
				t.Errorf("Submit to a retired model = %v, want a *veo.Error of code %s", err, task.FailModelUnavailable)
			}
		})
	}
}

// TestSubmitNeverReached: a submit that never reached the API (nothing
// listens) is a busy provider to wait out, not an unknown outcome.
func TestSubmitNeverReached(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	srv.Close()
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			_, err := b.provider(t, srv.URL).Submit(t.Context(), provider.Job{TaskID: "gen_1_x", Model: "gen-3.1-fast-generate-001",
				Prompt: "nobody there", Params: params.Parameters{SampleCount: 1}})
			var busy interface{ RetryAfter() time.Duration }
			var unknown interface{ OutcomeUnknown() bool }
			if !errors.As(err, &busy) || errors.As(err, &unknown) {
				t.Errorf("Submit to a closed port = %v, want a busy provider whose outcome is known", err)
			}
		})
	}
}

// TestGeminiKeyStaysWithGoogle: the file download redirects to another
// origin, which gets the video's request without the API key; the API's
// own origin gets it on every request. Inline videos are read as well.
func TestGeminiKeyStaysWithGoogle(t *testing.T) {
	fake, url := newFake(t)
	storage := httptest.NewServer(fake.Storage())
	t.Cleanup(storage.Close)
	fake.RedirectDownloads(storage.URL)
	g, err := veo.NewGemini(veo.GeminiConfig{APIKey: key, Endpoint: url})
	if err != nil {
		t.Fatal(err)
	}
	job := provider.Job{TaskID: "gen_1_x", Model: "gen-3.1-fast-generate-001", Prompt: "far away",
		Params: valid(t, backends[1], 1), OutDir: t.TempDir()}
	op, err := g.Submit(t.Context(), job)
	if err == nil {
		op, err = g.Poll(t.Context(), op.Name, job)
	}
	if err != nil || len(op.Result.Paths) != 1 {
		t.Fatalf("Poll = %+v, %v; want the video", op, err)
	}
	for _, path := range op.Result.Paths {
		if b, _ := os.ReadFile(path); !bytes.Equal(b, veotest.Video) {
			t.Errorf("video %s has %d bytes, want the fake's %d", path, len(b), len(veotest.Video))
		}
	}
	fromStorage := 0
	for _, r := range fake.Requests() {
		switch {
		case r.Origin == "storage":
			fromStorage++
			if r.Header.Get("X-Goog-Api-Key") != "" {
				t.Errorf("%s %s on the other origin carried the API key", r.Method, r.Path)
			}
		case r.Header.Get("X-Goog-Api-Key") != key:
			t.Errorf("%s %s on the API's origin without the key", r.Method, r.Path)
		}
	}
	if fromStorage != 1 {
		t.Errorf("%d downloads reached the other origin, want 1: the test did not redirect", fromStorage)
	}

	inline := veotest.New(veotest.Config{APIKey: key, InlineVideos: true})
	srv := httptest.NewServer(inline)
	t.Cleanup(srv.Close)
	g, _ = veo.NewGemini(veo.GeminiConfig{APIKey: key, Endpoint: srv.URL})
	op, err = g.Submit(t.Context(), job)
	if err == nil {
		op, err = g.Poll(t.Context(), op.Name, job)
	}
	if err != nil || len(op.Result.Paths) != 1 {
		t.Fatalf("Poll of inline videos = %+v, %v; want the video", op, err)
	}
	if b, _ := os.ReadFile(op.Result.Paths[0]); !bytes.Equal(b, veotest.Video) {
		t.Errorf("inline video has %d bytes, want the fake's %d", len(b), len(veotest.Video))
	}
}

// hosts is a transport that records the hosts asked and answers 503.
type hosts struct{ seen []string }

func (h *hosts) RoundTrip(r *http.Request) (*http.Response, error) {
	h.seen = append(h.seen, r.URL.Host)
	return &http.Response{StatusCode: 503, Body: io.NopCloser(strings.NewReader("{}")), Header: http.Header{}, Request: r}, nil
}

// TestVertexHost: a region's host has its prefix; the global endpoint
// has none.
func TestVertexHost(t *testing.T) {
	for location, want := range map[string]string{"": "us-central1-aiplatform.googleapis.com",
		"europe-west4": "europe-west4-aiplatform.googleapis.com", "global": "aiplatform.googleapis.com"} {
		h := &hosts{}
		v, err := veo.NewVertex(t.Context(), veo.VertexConfig{Project: "p", Location: location, AccessToken: token,
			HTTP: &http.Client{Transport: h}})
		if err != nil {
			t.Fatal(err)
		}
		v.Submit(t.Context(), provider.Job{Model: "gen-3.1-fast-generate-001", Params: params.Parameters{SampleCount: 1}})
		if len(h.seen) != 1 || h.seen[0] != want {
			t.Errorf("location %q reached %v, want %s", location, h.seen, want)
		}
	}
}

// TestCheck: the start-up check passes on good credentials, and fails
// naming the setting to fix on refused credentials or a retired model.
func TestCheck(t *testing.T) {
	retiredIDs := []string{"veo-2.0-generate-001", "veo-3.1-lite-generate-preview"}
	fake := veotest.New(veotest.Config{Token: token, APIKey: key, Retired: retiredIDs})
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	type checker interface{ Check(context.Context) error }
	vertex := func(tok string, models map[string]string) checker {
		v, err := veo.NewVertex(t.Context(), veo.VertexConfig{Project: "p", Endpoint: srv.URL, AccessToken: tok, Models: models})
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	gemini := func(k string, models map[string]string) checker {
		g, err := veo.NewGemini(veo.GeminiConfig{APIKey: k, Endpoint: srv.URL, Models: models})
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	retired := func(api, model string) map[string]string {
		return veomodels.WithDefaults(api, map[string]string{"gen-3.1-lite-generate-001": model})
	}
	tests := []struct {
		name string
		c    checker
		want string // "" for no error
	}{
		{"vertex", vertex(token, nil), ""},
		{"vertex, token refused", vertex("expired", nil), "GEN_VERTEX_ACCESS_TOKEN"},
		{"vertex, retired model", vertex(token, retired(settings.GeneratorVertex, "veo-2.0-generate-001")), "GEN_PROVIDER_MODELS"},
		{"gemini", gemini(key, nil), ""},
		{"gemini, key refused", gemini("AIza-wrong", nil), "GEN_GEMINI_API_KEY"},
		{"gemini, retired model", gemini(key, retired(settings.GeneratorGemini, "veo-3.1-lite-generate-preview")), "GEN_PROVIDER_MODELS"},
	}
	for _, tt := range tests {
		err := tt.c.Check(t.Context())
		if (err == nil) != (tt.want == "") || (err != nil && !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("%s: Check = %v, want an error naming %q", tt.name, err, tt.want)
		}
		if err != nil && strings.Contains(err.Error(), "AIza-wrong") {
			t.Errorf("%s: the error shows the key: %v", tt.name, err)
		}
		// A model not found leaves the others running.
		var unavailable *provider.UnavailableModelsError
		if retiredOnly := strings.Contains(tt.name, "retired"); errors.As(err, &unavailable) != retiredOnly ||
			(retiredOnly && (len(unavailable.Models) != 1 || !slices.Contains(retiredIDs, unavailable.Models[0]))) {
			t.Errorf("%s: Check = %v, want an *UnavailableModelsError of the retired model alone: %v", tt.name, err, retiredOnly)
		}
	}
}

// TestFakeAnswersInGoogleShapes: a path the fake does not serve answers
// a google.rpc.Status, as Google's APIs do, not a plain-text 404.
func TestFakeAnswersInGoogleShapes(t *testing.T) {
	_, url := newFake(t)
	resp, err := http.Get(url + "/v1/projects/p/locations/l/nothing")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Error struct {
			Code   int    `json:"code"`
			Status string `json:"status"`
		} `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || resp.StatusCode != 404 ||
		body.Error.Code != 404 || body.Error.Status != "NOT_FOUND" {
		t.Errorf("unknown path = %d %+v (%v), want 404 with a google.rpc.Status NOT_FOUND", resp.StatusCode, body, err)
	}
}

// TestBilling: a done operation names the API as its route, Google's
// model, and costs the price table's price per second × the seconds the
// fake recorded × the samples generated, the filtered ones included
// (veo's billing says why).
func TestBilling(t *testing.T) {
	tests := []struct {
		prompt   string
		samples  int
		filtered int
	}{
		{"billed whole", 1, 0},
		{"billed two", 2, 0},
		{"billed one filtered", 3, 1},
	}
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			fake, url := newFake(t)
			p := b.provider(t, url)
			for _, tt := range tests {
				fake.When(tt.prompt, veotest.Outcome{Filtered: tt.filtered})
			}
			for _, tt := range tests {
				t.Run(tt.prompt, func(t *testing.T) {
					if max := b.caps(t).Models["gen-3.1-fast-generate-001"].MaxSampleCount; tt.samples > max {
						t.Skipf("%s makes at most %d videos a request", b.name, max)
					}
					job := provider.Job{TaskID: "gen_1_x", Model: "gen-3.1-fast-generate-001", Prompt: tt.prompt,
						Params: valid(t, b, tt.samples), OutDir: t.TempDir()}
					op, err := p.Submit(t.Context(), job)
					if err == nil {
						op, err = p.Poll(t.Context(), op.Name, job)
					}
					if err != nil || !op.Done {
						t.Fatalf("Poll = %+v, %v; want done", op, err)
					}
					subs := fake.Submits()
					sub := subs[len(subs)-1]
					var par struct {
						DurationSeconds int    `json:"durationSeconds"`
						SampleCount     int    `json:"sampleCount"`
						Resolution      string `json:"resolution"`
					}
					if err := json.Unmarshal(sub.Parameters, &par); err != nil {
						t.Fatal(err)
					}
					m, _, _ := veomodels.Lookup(b.name, sub.Model)
					price := m.Silent[par.Resolution]
					if job.Params.GenerateAudio {
						price = m.Audio[par.Resolution]
					}
					want := provider.Billing{Route: b.name, ProviderModel: sub.Model,
						CostUSD: price * float64(par.DurationSeconds*par.SampleCount)}
					if op.Billing != want || price == 0 {
						t.Errorf("Billing = %+v, want %+v (%d videos, %d filtered)", op.Billing, want, len(op.Result.Paths), tt.filtered)
					}
				})
			}
		})
	}
}

// Issue 34, defect 5: a done operation's inline videos (Vertex AI
// without a storageUri, the Gemini API's encodedVideo) are streamed into
// their files. Decoded whole, four of them, with the answer around them,
// took several times their size of heap, and the Poll Lambda has 256 MB:
// an out-of-memory kill fails a task Google bills. What the poll
// allocates in all, a bound on its peak, stays under half a video's
// size (a few hundred KiB when streamed; 370 MiB when not). The videos
// are twice an 8 s 1080p Veo video's few MB, and small enough that the
// race detector's slower decoding stays within seconds.
func TestInlineVideosAreStreamed(t *testing.T) {
	if testing.Short() {
		t.Skip("polls four 12 MiB videos")
	}
	video := make([]byte, 12<<20)
	for i := range video {
		video[i] = byte(i * 7 / 3) // every byte value, every base64 letter
	}
	fake := veotest.New(veotest.Config{Token: token, APIKey: key, InlineVideos: true, Video: video})
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	// The most samples each API answers in one operation (veomodels).
	samples := map[string]int{"vertex": 4, "gemini": 1}
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			p := b.provider(t, srv.URL)
			job := provider.Job{TaskID: "t-inline", Type: catalog.TextToVideo, Model: "gen-3.1-fast-generate-001",
				Prompt: "a lighthouse", Params: valid(t, b, samples[b.name]), OutDir: filepath.Join(t.TempDir(), "out")}
			op, err := p.Submit(t.Context(), job)
			if err != nil {
				t.Fatal(err)
			}
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			done, err := p.Poll(t.Context(), op.Name, job)
			runtime.ReadMemStats(&after)
			if err != nil || !done.Done {
				t.Fatalf("Poll = %+v, %v; want the videos", done, err)
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > uint64(len(video)/2) {
				t.Errorf("a poll of %d inline videos of %d MiB allocated %d KiB, want under %d KiB",
					samples[b.name], len(video)>>20, alloc>>10, len(video)/2>>10)
			}
			if len(done.Result.Paths) != samples[b.name] {
				t.Fatalf("%d videos, want %d", len(done.Result.Paths), samples[b.name])
			}
			for _, path := range done.Result.Paths {
				if got, _ := os.ReadFile(path); !bytes.Equal(got, video) {
					t.Errorf("%s has %d bytes, not the video's %d", path, len(got), len(video))
				}
			}
			// Only the videos are left: no spooled file stays behind.
			if entries, _ := os.ReadDir(job.OutDir); len(entries) != samples[b.name] {
				t.Errorf("%s holds %d files, want the %d videos", job.OutDir, len(entries), samples[b.name])
			}
		})
	}
}
