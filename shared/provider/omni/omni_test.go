package omni_test

import (
	"bytes"
	"context"
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
	"github.com/genvideo/gen/shared/provider/vertexauth"
	"github.com/genvideo/gen/shared/task"
	"github.com/genvideo/gen/shared/testing/omnitest"
	"github.com/genvideo/gen/shared/testing/providertest"
)

const (
	key     = "AIza-test-key"
	token   = "ya29.test-token"
	project = "proj-1"
)

// apis are the two APIs Omni is served on: each builds the adapter of
// its own against a fake, with the credentials given, and says what
// every request to it must carry and what it must not.
var apis = []struct {
	name string
	// kind is the route kind billing names.
	kind string
	new  func(t providertest.T, endpoint, credential string) *omni.Provider
	// right is the credential the fake takes; the header and its value
	// every request carries; absent is the other API's header.
	right, header, value, absent string
	// delivery is the response_format.delivery the adapter asks.
	delivery string
}{
	{"Gemini API", "omni", func(t providertest.T, endpoint, k string) *omni.Provider {
		p, err := omni.New(omni.Config{APIKey: k, Endpoint: endpoint, PollAfter: time.Second})
		if err != nil {
			t.Fatalf("omni.New: %v", err)
		}
		return p
	}, key, "x-goog-api-key", key, "Authorization", ""},
	{"Vertex AI", "omni-vertex", func(t providertest.T, endpoint, tok string) *omni.Provider {
		p, err := omni.NewVertex(context.Background(), omni.VertexConfig{Project: project, Location: "us-central1", Endpoint: endpoint,
			Credentials: vertexauth.Credentials{AccessToken: tok}, PollAfter: time.Second})
		if err != nil {
			t.Fatalf("omni.NewVertex: %v", err)
		}
		return p
	}, token, "Authorization", "Bearer " + token, "x-goog-api-key", "inline"},
}

// newFake is a fake that takes both APIs' right credentials.
func newFake(t providertest.T, cfg omnitest.Config) (*omnitest.Server, string) {
	cfg.Key, cfg.Token, cfg.Project = key, token, project
	fake := omnitest.New(cfg)
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	return fake, srv.URL
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

// TestSubmitFields: what a start asks reaches each API in its fields
// (omnimodels [sdk]), its credentials in their header only (never the
// other API's), and the video comes back inline or by URI, priced as the
// table says and billed to the API's route kind.
func TestSubmitFields(t *testing.T) {
	tests := []struct {
		name   string
		cfg    omnitest.Config
		typ    string
		images bool
		task   string
	}{
		{"text", omnitest.Config{}, catalog.TextToVideo, false, "text_to_video"},
		// URIVideos: a URI where the API chooses; Vertex is asked inline.
		{"an image, by URI where the API chooses", omnitest.Config{URIVideos: true}, catalog.ImageToVideo, true, "image_to_video"},
	}
	for _, a := range apis {
		for _, tt := range tests {
			t.Run(a.name+"/"+tt.name, func(t *testing.T) {
				fake, endpoint := newFake(t, tt.cfg)
				p := a.new(t, endpoint, a.right)
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
				want := omnitest.Format{Type: "video", AspectRatio: "9:16", Resolution: "1080p", Duration: "8s", Delivery: a.delivery}
				if s.Format != want || s.Model != "gemini-omni-1.2-flash" || !s.Background || s.Task != tt.task ||
					s.Seed == nil || *s.Seed != 42 || s.Prompt != "a lighthouse at dusk" {
					t.Errorf("submit %+v (format %+v), want model gemini-omni-1.2-flash, background, task %s, seed 42, format %+v", s, s.Format, tt.task, want)
				}
				if tt.images && (len(s.Images) != 1 || s.Images[0] != "image/png") {
					t.Errorf("images %v, want one PNG", s.Images)
				}
				for _, r := range fake.Requests() {
					if r.Header.Get(a.header) != a.value || r.Header.Get(a.absent) != "" {
						t.Errorf("%s %s: %s %q, %s %q; want %s only", r.Method, r.Path, a.header, r.Header.Get(a.header),
							a.absent, r.Header.Get(a.absent), a.header)
					}
				}
				want2 := provider.Billing{Route: a.kind, ProviderModel: "gemini-omni-1.2-flash", CostUSD: 0.105 * 8}
				if op.Billing != want2 {
					t.Errorf("billing %+v, want %+v", op.Billing, want2)
				}
			})
		}
	}
}

// TestKeyStaysOnOrigin: a video's URI on another origin is fetched
// without the credentials (the Gemini API's files may redirect to
// storage), on either API.
func TestKeyStaysOnOrigin(t *testing.T) {
	for _, a := range apis {
		t.Run(a.name, func(t *testing.T) {
			var leaked []string
			storage := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Header.Get("x-goog-api-key") != "" || r.Header.Get("Authorization") != "" {
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
			op, err := a.new(t, api.URL, a.right).Submit(t.Context(), job(t, "elsewhere"))
			if err != nil || !op.Done {
				t.Fatalf("Submit = %+v, %v; want done at once", op, err)
			}
			if len(leaked) > 0 {
				t.Errorf("the credentials left the API's origin: %v", leaked)
			}
		})
	}
}

// TestConformance: the Omni adapter passes the providers' suite
// against omnitest, on each API.
func TestConformance(t *testing.T) {
	when := func(o omnitest.Outcome) func(providertest.Fake, string) {
		return func(f providertest.Fake, prompt string) { f.(*omnitest.Server).When(prompt, o) }
	}
	for _, a := range apis {
		t.Run(a.name, func(t *testing.T) {
			providertest.Run(t, providertest.Harness{
				Start: func(t providertest.T, s providertest.Setup) (provider.Provider, providertest.Fake) {
					var cfg omnitest.Config
					if s.Retired {
						cfg.Retired = []string{"gemini-omni-1.2-flash"}
					}
					fake, endpoint := newFake(t, cfg)
					credential := a.right
					if s.WrongCredentials {
						credential = "wrong"
					}
					return a.new(t, endpoint, credential), fake
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
		})
	}
}
