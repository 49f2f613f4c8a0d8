package omni_test

import (
	"bytes"
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/genvideo/gen/shared/catalog"
	"github.com/genvideo/gen/shared/params"
	"github.com/genvideo/gen/shared/provider"
	"github.com/genvideo/gen/shared/provider/omni"
	"github.com/genvideo/gen/shared/provider/omni/omnitest"
	"github.com/genvideo/gen/shared/provider/providertest"
	"github.com/genvideo/gen/shared/task"
)

const key = "AIza-test-key"

func newProvider(t testing.TB, cfg omnitest.Config) (*omnitest.Server, *omni.Provider) {
	t.Helper()
	cfg.Key = key
	fake := omnitest.New(cfg)
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	p, err := omni.New(omni.Config{APIKey: key, Endpoint: srv.URL, PollAfter: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return fake, p
}

func job(t interface{ TempDir() string }, prompt string) provider.Job {
	seed := int64(42)
	return provider.Job{TaskID: "gen_1_x", Type: catalog.TextToVideo, Model: "gen-3.1-fast-generate-001", Prompt: prompt,
		Params: params.Parameters{SampleCount: 1, DurationSeconds: 8, AspectRatio: "9:16", Resolution: "1080p",
			GenerateAudio: true, EnhancePrompt: true, PersonGeneration: "allow_adult", Seed: &seed},
		OutDir: t.TempDir()}
}

func pngFile(t *testing.T) string {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 64, 36))
	img.Set(1, 1, color.RGBA{200, 0, 0, 255})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "first.png")
	if err := os.WriteFile(path, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// run submits j and polls it until done or an error.
func run(t *testing.T, p *omni.Provider, j provider.Job) (provider.Operation, error) {
	t.Helper()
	op, err := p.Submit(t.Context(), j)
	for i := 0; err == nil && !op.Done; i++ {
		if i > 10 {
			t.Fatal("the interaction never ended")
		}
		op, err = p.Poll(t.Context(), op.Name, j)
	}
	return op, err
}

// TestSubmitFields: what a start asks reaches the API in its fields
// (omnimodels [sdk]), the key in its header only, and the video comes
// back inline or by URI, priced as the table says.
func TestSubmitFields(t *testing.T) {
	tests := []struct {
		name   string
		cfg    omnitest.Config
		typ    string
		images bool
		task   string
	}{
		{"text, inline", omnitest.Config{}, catalog.TextToVideo, false, "text_to_video"},
		{"an image, by URI", omnitest.Config{URIVideos: true}, catalog.ImageToVideo, true, "image_to_video"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake, p := newProvider(t, tt.cfg)
			j := job(t, "a lighthouse at dusk")
			j.Type = tt.typ
			if tt.images {
				j.Images = map[string]string{task.RoleImage: pngFile(t)}
			}
			op, err := run(t, p, j)
			if err != nil {
				t.Fatalf("run = %v", err)
			}
			if len(op.Result.Paths) != 1 {
				t.Fatalf("videos %v, want one", op.Result.Paths)
			}
			if b, err := os.ReadFile(op.Result.Paths[0]); err != nil || !bytes.Equal(b, omnitest.Video) {
				t.Errorf("video = %d bytes, %v; want the fake's", len(b), err)
			}
			subs := fake.Submits()
			if len(subs) != 1 {
				t.Fatalf("submits %d, want 1", len(subs))
			}
			s := subs[0]
			want := omnitest.Format{Type: "video", AspectRatio: "9:16", Resolution: "1080p", Duration: "8s"}
			if s.Format != want || s.Model != "gemini-omni-1.2-flash" || !s.Background || s.Task != tt.task ||
				s.Seed == nil || *s.Seed != 42 || s.Prompt != "a lighthouse at dusk" {
				t.Errorf("submit %+v (format %+v), want model gemini-omni-1.2-flash, background, task %s, seed 42, format %+v", s, s.Format, tt.task, want)
			}
			if tt.images && (len(s.Images) != 1 || s.Images[0] != "image/png") {
				t.Errorf("images %v, want one PNG", s.Images)
			}
			for _, r := range fake.Requests() {
				if r.Header.Get("x-goog-api-key") != key {
					t.Errorf("%s %s went without the key", r.Method, r.Path)
				}
			}
			want2 := provider.Billing{Route: "omni", ProviderModel: "gemini-omni-1.2-flash", CostUSD: 0.105 * 8}
			if op.Billing != want2 {
				t.Errorf("billing %+v, want %+v", op.Billing, want2)
			}
		})
	}
}

// TestKeyStaysOnOrigin: a video's URI on another origin is fetched
// without the key (the Gemini API's files may redirect to storage).
func TestKeyStaysOnOrigin(t *testing.T) {
	var leaked []string
	storage := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if k := r.Header.Get("x-goog-api-key"); k != "" {
			leaked = append(leaked, r.URL.Path)
		}
		w.Write(omnitest.Video)
	}))
	t.Cleanup(storage.Close)
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(omni.Interaction{ID: "v1_x", Status: omni.StatusCompleted, Steps: []omni.Step{
			{Type: "model_output", Content: []omni.Content{{Type: "video", URI: storage.URL + "/video.mp4"}}}}})
	}))
	t.Cleanup(api.Close)
	p, err := omni.New(omni.Config{APIKey: key, Endpoint: api.URL})
	if err != nil {
		t.Fatal(err)
	}
	op, err := p.Submit(t.Context(), job(t, "elsewhere"))
	if err != nil || !op.Done {
		t.Fatalf("Submit = %+v, %v; want done at once", op, err)
	}
	if len(leaked) > 0 {
		t.Errorf("the key left the API's origin: %v", leaked)
	}
}

// TestConformance: the Omni adapter passes the providers' suite
// against omnitest.
func TestConformance(t *testing.T) {
	when := func(o omnitest.Outcome) func(providertest.Fake, string) {
		return func(f providertest.Fake, prompt string) { f.(*omnitest.Server).When(prompt, o) }
	}
	providertest.Run(t, providertest.Harness{
		Start: func(t providertest.T, s providertest.Setup) (provider.Provider, providertest.Fake) {
			cfg := omnitest.Config{Key: key}
			if s.Retired {
				cfg.Retired = []string{"gemini-omni-1.2-flash"}
			}
			fake := omnitest.New(cfg)
			srv := httptest.NewServer(fake)
			t.Cleanup(srv.Close)
			k := key
			if s.WrongCredentials {
				k = "AIza-wrong"
			}
			p, err := omni.New(omni.Config{APIKey: k, Endpoint: srv.URL, PollAfter: time.Second})
			if err != nil {
				t.Fatalf("omni: %v", err)
			}
			return p, fake
		},
		Job: func(t providertest.T, prompt string) provider.Job { return job(t, prompt) },
		Submit: map[provider.Class]func(providertest.Fake, string){
			provider.Busy:           when(omnitest.Outcome{SubmitStatus: 429, RetryAfter: 2}),
			provider.Refused:        when(omnitest.Outcome{SubmitStatus: 400, Reason: "the prompt was blocked by safety filters"}),
			provider.Invalid:        when(omnitest.Outcome{SubmitStatus: 400, Reason: "bad request"}),
			provider.OutcomeUnknown: when(omnitest.Outcome{Drop: true}),
		},
		Done: map[provider.Class]func(providertest.Fake, string){
			provider.Refused: when(omnitest.Outcome{FailCode: omnitest.SafetyCode, Reason: "blocked"}),
			provider.Failed:  when(omnitest.Outcome{FailCode: "INTERNAL", Reason: "model error"}),
		},
		BusyAfter: 2 * time.Second,
	})
}
