package devstack

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image/color"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/genvideo/gen/shared/catalog"
	"github.com/genvideo/gen/shared/domain"
	"github.com/genvideo/gen/shared/provider/render"
	"github.com/genvideo/gen/shared/provider/veo/veomodels"
	"github.com/genvideo/gen/shared/settings"
	"github.com/genvideo/gen/shared/store"
	"github.com/genvideo/gen/shared/task"
	"github.com/genvideo/gen/shared/testing/openaitest"
	"github.com/genvideo/gen/shared/testing/storetest"
	"github.com/genvideo/gen/shared/testing/veotest"
)

const (
	fakeToken = veotest.TestToken
	fakeKey   = veotest.TestAPIKey
)

// veoEnv is the local stack with a Veo backend pointed at the fake.
type veoEnv struct {
	*env
	fake *veotest.Server
	url  string
}

// startVeo runs the fake provider and the stack with generator api
// (settings.GeneratorVertex or GeneratorGemini) against it, on dataDir
// (fresh when empty). The fake's operations take delay.
func startVeo(t *testing.T, api string, fakeCfg veotest.Config, dataDir string, mutate func(*Config)) *veoEnv {
	t.Helper()
	fake := veotest.New(veotest.Credentials(fakeCfg))
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	return &veoEnv{env: restartVeo(t, api, srv.URL, dataDir, mutate), fake: fake, url: srv.URL}
}

func restartVeo(t *testing.T, api, url, dataDir string, mutate func(*Config)) *env {
	t.Helper()
	return startEnv(t, dataDir, func(c *Config) {
		c.Provider = providerSettings(api, url)
		if mutate != nil {
			mutate(c)
		}
	})
}

// providerSettings are the variables an operator sets, read as the
// server reads them.
func providerSettings(api, url string) settings.ProviderConfig {
	vars := veotest.Vars(api, url)
	vars[settings.OpenAIAPIKey] = fakeKey
	vars[settings.OpenAIEndpoint] = url
	vars[settings.OpenAIProfile] = settings.ProfileOpenAI
	r := settings.NewReader(vars.Lookup)
	p := r.ProviderConfig()
	if err := r.Err(); err != nil {
		panic(err)
	}
	return p
}

var veoAPIs = []string{settings.GeneratorVertex, settings.GeneratorGemini}

func price(model string, audio bool) int64 {
	m, _ := catalog.Lookup(model)
	return int64(m.Price(audio))
}

// TestVeoWalkThrough runs the README's walk-through against each Veo
// backend on the fake: text-to-video, status, download, image-to-video,
// first and last frame, history; every video is the provider's, every
// start charged once and nothing refunded.
func TestVeoWalkThrough(t *testing.T) {
	for _, api := range veoAPIs {
		t.Run(api, func(t *testing.T) {
			t.Parallel()
			e := startVeo(t, api, veotest.Config{Delay: time.Second}, "", nil)
			k := e.key(10000, store.KeyLimits{})
			fast := "gen-3.1-fast-generate-001"

			r := e.postJSON("/api/gen/text-to-video", k.APIKey,
				`{"prompt":"a paper boat drifting on a pond at dawn","durationSeconds":4}`)
			if r.status != http.StatusAccepted {
				t.Fatalf("text-to-video = %d: %s", r.status, r.raw)
			}
			// A Veo job takes minutes: the estimate is the service's, as
			// on AWS, not the built-in renderer's seconds.
			if got := r.body["estimatedWaitTime"]; got != "60-180 seconds" {
				t.Errorf("estimatedWaitTime %v, want the Veo estimate 60-180 seconds", got)
			}
			boat := str(r.body["taskId"])
			if done := e.wait(k.APIKey, boat); done.body["status"] != "completed" {
				t.Fatalf("text-to-video ended %s", done.raw)
			}
			d := e.do(http.MethodGet, "/api/gen/download/"+boat, k.APIKey, "", nil)
			videos, _ := d.body["videos"].([]any)
			if d.status != http.StatusOK || len(videos) != 1 {
				t.Fatalf("download = %d: %s", d.status, d.raw)
			}
			got, _ := os.ReadFile(e.fetch(str(videos[0].(map[string]any)["url"])))
			if !bytes.Equal(got, veotest.Video) {
				t.Errorf("downloaded %d bytes, want the provider's %d-byte video", len(got), len(veotest.Video))
			}

			picture := testImage(t, 1280, 720, color.RGBA{200, 40, 40, 255}, color.RGBA{20, 20, 220, 255})
			r = e.postForm("/api/gen/image-to-video", k.APIKey,
				map[string]string{"prompt": "the test card comes alive", "durationSeconds": "4"},
				map[string][]byte{"image": picture})
			if r.status != http.StatusAccepted {
				t.Fatalf("image-to-video = %d: %s", r.status, r.raw)
			}
			animated := str(r.body["taskId"])
			last := testImage(t, 1280, 720, color.RGBA{10, 200, 10, 255}, color.RGBA{250, 250, 250, 255})
			// 8 seconds: the Gemini API makes a first and a last frame
			// at no other duration (veomodels [gemini-interp]).
			r = e.postForm("/api/gen/first-last-frame", k.APIKey,
				map[string]string{"prompt": "from red to green", "durationSeconds": "8"},
				map[string][]byte{"firstFrame": picture, "lastFrame": last})
			if r.status != http.StatusAccepted {
				t.Fatalf("first-last-frame = %d: %s", r.status, r.raw)
			}
			morph := str(r.body["taskId"])
			for _, id := range []string{animated, morph} {
				if done := e.wait(k.APIKey, id); done.body["status"] != "completed" {
					t.Errorf("task %s ended %s", id, done.raw)
				}
			}
			h := e.do(http.MethodGet, "/api/gen/history?limit=5", k.APIKey, "", nil)
			if h.status != http.StatusOK || !strings.Contains(string(h.raw), boat) || !strings.Contains(string(h.raw), morph) {
				t.Errorf("history = %d: %s", h.status, h.raw)
			}

			// The images reached the provider as they were uploaded.
			for _, sub := range e.fake.Submits() {
				inst := string(sub.Instance)
				if strings.Contains(inst, "from red to green") && !strings.Contains(inst, `"lastFrame"`) {
					t.Errorf("first-last-frame reached the provider without its last frame")
				}
			}
			for _, id := range []string{boat, animated, morph} {
				if n := e.fake.Accepted(storedTask(t, e.env, id).Prompt); n != 1 {
					t.Errorf("task %s was submitted %d times, want once", id, n)
				}
			}
			want := 10000 - price(fast, true)*3
			if b := e.balance(k.AccountID); b != want {
				t.Errorf("balance %d, want %d: three starts charged, nothing refunded", b, want)
			}
			storetest.CheckInvariants(t, e.stack.Store, k.AccountID)
		})
	}
}

// maxSamples is the most videos a start may ask for on api.
func maxSamples(t *testing.T, api string) int {
	t.Helper()
	caps, err := veomodels.Capabilities(settings.ProviderConfig{Generator: api})
	if err != nil {
		t.Fatal(err)
	}
	return caps.Models["gen-3.1-fast-generate-001"].SampleCounts()
}

// TestVeoREADMEWalkThrough runs the README's walk-through, as a reader
// pastes it, against each Veo backend on the strict fake (rendering with
// the built-in generator, so that its probes of the video hold): every
// start either completes or is refused at start, uncharged, with a 400
// naming the field; the provider refuses nothing, so that no start is
// charged and then failed by the provider.
func TestVeoREADMEWalkThrough(t *testing.T) {
	r, err := render.New(render.Config{})
	if err != nil {
		t.Fatal(err)
	}
	for _, api := range veoAPIs {
		t.Run(api, func(t *testing.T) {
			t.Parallel()
			e := startVeo(t, api, veotest.Config{Delay: time.Second, Renderer: r}, "", nil)
			// On the Gemini API the two-video start of step 7 is refused.
			want := []string{"url"} // step 10's loopback webhook
			if api == settings.GeneratorGemini {
				want = []string{"sampleCount", "url"}
			}
			checkProviderWalkThrough(t, e.env, want)
			for _, s := range e.fake.Submits() {
				if s.Status != http.StatusOK {
					t.Errorf("the provider refused a submit (%d): %s", s.Status, s.Body)
				}
			}
		})
	}
}

// checkProviderWalkThrough runs the README's walk-through against e, on
// a provider's fake that renders with the built-in generator: the
// videos are probed as the built-in stack's are, the starts refused at
// start name the fields refused (in order), and every task completed or
// was cancelled, with the ledger's invariants holding.
func checkProviderWalkThrough(t *testing.T, e *env, refused []string) {
	t.Helper()
	checkWalkThrough(t, e, refused, true)
}

// checkWalkThrough is checkProviderWalkThrough on a provider whose
// videos have audio or, silent (vLLM-Omni's Wan), none.
func checkWalkThrough(t *testing.T, e *env, refused []string, audio bool) {
	t.Helper()
	got, account := runWalkThrough(t, e)
	wants := []string{`"status":"completed"`, `(?m)^h264,\d+,\d+$`, `"prompt":"the test card comes alive"`}
	if audio {
		wants = append(wants, `(?m)^aac$`)
	} else if regexp.MustCompile(`(?m)^aac$`).MatchString(got) {
		t.Error("a silent provider's video has an audio stream")
	}
	for _, want := range wants {
		if !regexp.MustCompile(want).MatchString(got) {
			t.Errorf("the output has no match for %s", want)
		}
	}
	var fields []string
	for _, m := range regexp.MustCompile(`"error":"VALIDATION_ERROR"[^\n]*?"field":"(\w+)"`).FindAllStringSubmatch(got, -1) {
		fields = append(fields, m[1])
	}
	if !slices.Equal(fields, refused) {
		t.Errorf("refused fields %v, want %v", fields, refused)
	}
	tasks, _, err := e.stack.Store.Tasks(context.Background(), account, store.TaskQuery{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	for _, tk := range tasks {
		if tk.Status == task.Failed && tk.Failure.Code != task.FailCancelled {
			t.Errorf("task %s (%q) failed: %+v", tk.ID, tk.Prompt, tk.Failure)
		}
	}
	storetest.CheckInvariants(t, e.stack.Store, account)
}

// TestVeoDefaults: a start that leaves every optional field out
// completes on each backend, in each mode, with the backend's defaults:
// on the Gemini API personGeneration allow_all for text, allow_adult for
// images, and no seed echoed (it takes none).
func TestVeoDefaults(t *testing.T) {
	picture := testImage(t, 1280, 720, color.RGBA{200, 40, 40, 255}, color.RGBA{20, 20, 220, 255})
	last := testImage(t, 1280, 720, color.RGBA{10, 200, 10, 255}, color.RGBA{250, 250, 250, 255})
	for _, api := range veoAPIs {
		t.Run(api, func(t *testing.T) {
			t.Parallel()
			e := startVeo(t, api, veotest.Config{Delay: time.Second}, "", nil)
			k := e.key(10000, store.KeyLimits{})
			starts := []struct {
				mode   string
				r      response
				person string
			}{
				{catalog.TextToVideo, e.postJSON("/api/gen/text-to-video", k.APIKey, `{"prompt":"defaults"}`), "allow_adult"},
				{catalog.ImageToVideo, e.postForm("/api/gen/image-to-video", k.APIKey, map[string]string{"prompt": "defaults"},
					map[string][]byte{"image": picture}), "allow_adult"},
				{catalog.FirstLastFrame, e.postForm("/api/gen/first-last-frame", k.APIKey, map[string]string{"prompt": "defaults"},
					map[string][]byte{"firstFrame": picture, "lastFrame": last}), "allow_adult"},
			}
			if api == settings.GeneratorGemini {
				starts[0].person = "allow_all"
			}
			for _, st := range starts {
				if st.r.status != http.StatusAccepted {
					t.Fatalf("%s = %d: %s", st.mode, st.r.status, st.r.raw)
				}
				done := e.wait(k.APIKey, str(st.r.body["taskId"]))
				p, _ := done.body["parameters"].(map[string]any)
				_, seeded := p["seed"]
				if done.body["status"] != "completed" || p["personGeneration"] != st.person || p["resolution"] != "1080p" ||
					seeded != (api == settings.GeneratorVertex) {
					t.Errorf("%s ended %s, want completed at 1080p with personGeneration %s and a seed only on vertex", st.mode, done.raw, st.person)
				}
			}
			for _, s := range e.fake.Submits() {
				if s.Status != http.StatusOK {
					t.Errorf("the provider refused a submit (%d): %s", s.Status, s.Body)
				}
			}
		})
	}
}

// TestVeoRefusedAtStart: a start the backend cannot honour is a 400
// VALIDATION_ERROR naming the field and what the backend allows, charges
// nothing, creates no task and reaches no provider (Veo on either API,
// or the openai generator).
func TestVeoRefusedAtStart(t *testing.T) {
	tests := []struct {
		api, body, field, allowed string
	}{
		{settings.GeneratorGemini, `{"prompt":"x","durationSeconds":4,"resolution":"1080p"}`, "resolution", `"720p"`},
		{settings.GeneratorGemini, `{"prompt":"x","sampleCount":2}`, "sampleCount", "allowed: 1"},
		{settings.GeneratorGemini, `{"prompt":"x","seed":42}`, "seed", "takes no seed"},
		{settings.GeneratorGemini, `{"prompt":"x","personGeneration":"allow_adult"}`, "personGeneration", `"allow_all"`},
		{settings.GeneratorGemini, `{"prompt":"x","enhancePrompt":false}`, "enhancePrompt", "allowed: true"},
		{settings.GeneratorVertex, `{"prompt":"x","personGeneration":"allow_all"}`, "personGeneration", `"allow_adult", "dont_allow"`},
		{settings.GeneratorVertex, `{"prompt":"x","enhancePrompt":false}`, "enhancePrompt", "allowed: true"},
		{settings.GeneratorOpenAI, `{"prompt":"x","durationSeconds":6}`, "durationSeconds", "allowed: 4, 8"},
		{settings.GeneratorOpenAI, `{"prompt":"x","durationSeconds":4,"resolution":"1080p"}`, "resolution", `"720p"`},
		{settings.GeneratorOpenAI, `{"prompt":"x","durationSeconds":4,"seed":42}`, "seed", "takes no seed"},
		{settings.GeneratorOpenAI, `{"prompt":"x","durationSeconds":4,"negativePrompt":"rain"}`, "negativePrompt", "leave it out"},
	}
	for _, api := range slices.Concat(veoAPIs, []string{settings.GeneratorOpenAI}) {
		t.Run(api, func(t *testing.T) {
			t.Parallel()
			var e *env
			var submits func() int
			if api == settings.GeneratorOpenAI {
				o := startOpenAI(t, openaitest.Config{}, nil)
				e, submits = o.env, func() int { return len(o.fake.Submits()) }
			} else {
				v := startVeo(t, api, veotest.Config{Delay: time.Second}, "", nil)
				e, submits = v.env, func() int { return len(v.fake.Submits()) }
			}
			k := e.key(1000, store.KeyLimits{})
			for _, tt := range tests {
				if tt.api != api {
					continue
				}
				r := e.postJSON("/api/gen/text-to-video", k.APIKey, tt.body)
				msg := str(r.body["message"])
				if r.status != http.StatusBadRequest || r.body["error"] != "VALIDATION_ERROR" || r.body["field"] != tt.field ||
					!strings.Contains(msg, tt.allowed) {
					t.Errorf("%s = %d %s, want 400 VALIDATION_ERROR naming %s and %s", tt.body, r.status, r.raw, tt.field, tt.allowed)
				}
			}
			if api == settings.GeneratorGemini {
				// Issue 33: a first and a last frame are 8 seconds only
				// there ("Must be 8 when using extension or
				// interpolation"), which the fake refuses too.
				frame := testImage(t, 1280, 720, color.RGBA{200, 40, 40, 255}, color.RGBA{20, 20, 220, 255})
				r := e.postForm("/api/gen/first-last-frame", k.APIKey, map[string]string{"prompt": "x", "durationSeconds": "4"},
					map[string][]byte{"firstFrame": frame, "lastFrame": frame})
				if r.status != http.StatusBadRequest || r.body["field"] != "durationSeconds" || !strings.HasSuffix(str(r.body["message"]), "allowed: 8") {
					t.Errorf("first-last-frame at 4 s = %d %s, want 400 naming durationSeconds and 8", r.status, r.raw)
				}
			}
			if b := e.balance(k.AccountID); b != 1000 {
				t.Errorf("balance %d, want 1000: nothing charged", b)
			}
			if tasks, n, _ := e.stack.Store.Tasks(context.Background(), k.AccountID, store.TaskQuery{Limit: 10}); n != 0 {
				t.Errorf("%d tasks created: %+v", n, tasks)
			}
			if n := submits(); n != 0 {
				t.Errorf("the provider received %d submits", n)
			}
		})
	}
}

// TestVeoModelsShowLimits: GET /api/gen/models tells each backend's real
// limits, the contract's fields as they are.
func TestVeoModelsShowLimits(t *testing.T) {
	type limits struct {
		Backend          string
		Resolutions      map[string][]string
		MaxSampleCount   int
		PersonGeneration map[string][]string
		Seed             bool
		DurationsByMode  map[string][]int
		// How long a video stays extendable: the Gemini API keeps it
		// two days; Vertex AI extends gen's own copy.
		ExtendWithinSeconds int
	}
	type model struct {
		ModelID string
		Pricing struct{ CreditsPerVideo int }
		Limits  *limits
	}
	want := map[string]limits{
		"builtin": {"the built-in generator", map[string][]string{"4": {"1080p", "720p"}, "8": {"1080p", "720p"}}, 2,
			map[string][]string{"text-to-video": {"allow_adult", "dont_allow", "allow_all"}}, true, nil, 0},
		// Reference images and extensions at 8 seconds only (issue 37).
		settings.GeneratorVertex: {"Vertex AI", map[string][]string{"4": {"1080p", "720p"}, "8": {"1080p", "720p"}}, 2,
			map[string][]string{"text-to-video": {"allow_adult", "dont_allow"}, "image-to-video": {"allow_adult", "dont_allow"}}, true,
			map[string][]int{"reference-images": {8}, "video-extension": {8}}, 0},
		settings.GeneratorGemini: {"the Gemini API", map[string][]string{"4": {"720p"}, "8": {"1080p", "720p"}}, 1,
			map[string][]string{"text-to-video": {"allow_all"}, "image-to-video": {"allow_adult"}, "reference-images": {"allow_adult"},
				"video-extension": {"allow_all"}}, false,
			map[string][]int{"first-last-frame": {8}, "reference-images": {8}, "video-extension": {8}}, 172800},
		// OpenAI's shape: 4 and 8 of our durations, 720p, one video, no seed.
		settings.GeneratorOpenAI: {"OpenAI", map[string][]string{"4": {"720p"}, "8": {"720p"}}, 1,
			map[string][]string{"text-to-video": {"allow_adult"}, "image-to-video": {"allow_adult"}}, false, nil, 0},
	}
	for backend, w := range want {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			var e *env
			if backend == "builtin" {
				if os.Getenv("GEN_E2E_GENERATOR") != "" {
					t.Skip("GEN_E2E_GENERATOR puts the built-in stacks on a Veo backend")
				}
				e = startEnv(t, "", nil)
			} else if backend == settings.GeneratorOpenAI {
				e = startOpenAI(t, openaitest.Config{}, nil).env
			} else {
				e = startVeo(t, backend, veotest.Config{}, "", nil).env
			}
			k := e.key(0, store.KeyLimits{})
			r := e.do(http.MethodGet, "/api/gen/models", k.APIKey, "", nil)
			var body struct{ Models []model }
			if err := json.Unmarshal(r.raw, &body); err != nil || r.status != http.StatusOK {
				t.Fatalf("models = %d %s", r.status, r.raw)
			}
			for _, m := range body.Models {
				if m.ModelID != "gen-3.1-fast-generate-001" {
					continue
				}
				l := m.Limits
				if m.Pricing.CreditsPerVideo != 190 || l == nil || l.Backend != w.Backend || l.MaxSampleCount != w.MaxSampleCount || l.Seed != w.Seed {
					t.Fatalf("fast = %+v (limits %+v), want 190 credits and %+v", m, l, w)
				}
				for d, res := range w.Resolutions {
					if !slices.Equal(l.Resolutions[d], res) {
						t.Errorf("resolutions at %s s = %v, want %v", d, l.Resolutions[d], res)
					}
				}
				if l.ExtendWithinSeconds != w.ExtendWithinSeconds {
					t.Errorf("extendWithinSeconds = %d, want %d", l.ExtendWithinSeconds, w.ExtendWithinSeconds)
				}
				if !reflect.DeepEqual(l.DurationsByMode, w.DurationsByMode) {
					t.Errorf("durationsByMode = %v, want %v", l.DurationsByMode, w.DurationsByMode)
				}
				for mode, values := range w.PersonGeneration {
					if !slices.Equal(l.PersonGeneration[mode], values) {
						t.Errorf("personGeneration for %s = %v, want %v", mode, l.PersonGeneration[mode], values)
					}
				}
				return
			}
			t.Errorf("no fast model in %s", r.raw)
		})
	}
}

// storedTask is the task as the store has it.
func storedTask(t *testing.T, e *env, id string) task.Task {
	t.Helper()
	tk, err := e.stack.Store.Task(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return tk
}

// TestVeoOutcomes: each outcome of the provider ends with the balance
// the contract requires, refunded once at most: each of Google's three
// forms of a safety refusal is a content-policy failure with its
// category; a submit whose answer was lost costs one job and ends
// PROVIDER_OUTCOME_UNKNOWN; credentials refused on a poll are waited out.
func TestVeoOutcomes(t *testing.T) {
	fast := "gen-3.1-fast-generate-001"
	p := price(fast, true)
	tests := []struct {
		prompt  string
		outcome veotest.Outcome
		samples int
		status  string
		code    string
		videos  int
		refund  int64
		// message: text the failure's message must contain.
		message string
	}{
		{"partly filtered", veotest.Outcome{Filtered: 1}, 2, "completed", "", 1, p, ""},
		{"all filtered", veotest.Outcome{Filtered: 2, Reason: "blocked. Support codes: 61493863"}, 2, "failed", task.FailContentPolicy, 0, 2 * p, "violence"},
		{"refused at submit", veotest.Outcome{SubmitStatus: 400, Reason: "The prompt couldn't be submitted. Support codes: 29310472"},
			2, "failed", task.FailContentPolicy, 0, 2 * p, "celebrity"},
		{"refused when done", veotest.Outcome{ErrorCode: 3, Reason: "Veo could not generate videos. Support codes: 90789179"},
			1, "failed", task.FailContentPolicy, 0, p, "sexual"},
		{"answer lost", veotest.Outcome{Drop: true}, 1, "failed", task.FailProviderOutcomeUnknown, 0, p, "did not confirm"},
		{"answer cut short", veotest.Outcome{Truncate: true}, 1, "failed", task.FailProviderOutcomeUnknown, 0, p, "did not confirm"},
		{"token expired on a poll", veotest.Outcome{PollStatus: 401, PollFailures: 1}, 1, "completed", "", 1, 0, ""},
		{"invalid argument", veotest.Outcome{SubmitStatus: 400}, 1, "failed", task.FailGeneration, 0, p, ""},
		{"permission denied", veotest.Outcome{SubmitStatus: 403}, 1, "failed", task.FailGeneration, 0, p, ""},
		{"done with an error", veotest.Outcome{ErrorCode: 13}, 1, "failed", task.FailGeneration, 0, p, ""},
		{"unavailable until the deadline", veotest.Outcome{PollStatus: 503}, 1, "failed", task.FailTimeout, 0, p, ""},
		{"never done", veotest.Outcome{Never: true}, 1, "failed", task.FailTimeout, 0, p, ""},
	}
	for _, api := range veoAPIs {
		t.Run(api, func(t *testing.T) {
			t.Parallel()
			e := startVeo(t, api, veotest.Config{Delay: time.Second}, "", func(c *Config) {
				c.GenerationTimeout = 8 * time.Second
			})
			for _, tt := range tests {
				e.fake.When(tt.prompt, tt.outcome)
			}
			type started struct {
				id, account string
			}
			ids := make([]started, len(tests))
			for i, tt := range tests {
				if tt.samples > maxSamples(t, api) {
					continue // refused at start (TestVeoRefusedAtStart)
				}
				k := e.key(1000, store.KeyLimits{})
				r := e.postJSON("/api/gen/text-to-video", k.APIKey, fmt.Sprintf(
					`{"prompt":%q,"model":%q,"sampleCount":%d,"durationSeconds":4}`, tt.prompt, fast, tt.samples))
				if r.status != http.StatusAccepted {
					t.Fatalf("%s: start = %d: %s", tt.prompt, r.status, r.raw)
				}
				ids[i] = started{str(r.body["taskId"]), k.AccountID}
			}
			for i, tt := range tests {
				t.Run(tt.prompt, func(t *testing.T) {
					if ids[i].id == "" {
						t.Skipf("%s makes at most %d videos a request", api, maxSamples(t, api))
					}
					tk := waitTask(t, e.env, ids[i].id, time.Minute)
					if string(tk.Status) != tt.status || len(tk.Videos) != tt.videos {
						t.Fatalf("task is %s with %d videos (%+v), want %s with %d", tk.Status, len(tk.Videos), tk.Failure, tt.status, tt.videos)
					}
					if tt.code != "" && (tk.Failure == nil || tk.Failure.Code != tt.code ||
						!strings.Contains(tk.Failure.Message, tt.message) ||
						strings.Contains(tk.Failure.Message, "fake") || strings.Contains(tk.Failure.Message, "Support")) {
						t.Errorf("failure %+v, want code %s with a client-safe message mentioning %q", tk.Failure, tt.code, tt.message)
					}
					entries, err := e.stack.Store.Ledger(context.Background(), ids[i].account)
					if err != nil {
						t.Fatal(err)
					}
					var refunds []int64
					for _, en := range entries {
						if en.Kind == domain.EntryRefund {
							refunds = append(refunds, en.Amount)
						}
					}
					if tt.refund == 0 && len(refunds) != 0 || tt.refund != 0 && (len(refunds) != 1 || refunds[0] != tt.refund) {
						t.Errorf("refunds %v, want exactly one of %d", refunds, tt.refund)
					}
					if b := e.balance(ids[i].account); b != 1000-p*int64(tt.samples)+tt.refund {
						t.Errorf("balance %d, want %d", b, 1000-p*int64(tt.samples)+tt.refund)
					}
					if n := e.fake.Accepted(tt.prompt); n > 1 || (tt.outcome.Drop || tt.outcome.Truncate) && n != 1 {
						t.Errorf("the provider accepted %d jobs, want once at most (the lost answer's one)", n)
					}
					storetest.CheckInvariants(t, e.stack.Store, ids[i].account)
				})
			}
		})
	}
}

// TestVeoGeminiKeyStaysWithGoogle: the Gemini API's downloads redirect
// to another origin, as Google's do; the videos arrive, and the key
// reached the API's origin only.
func TestVeoGeminiKeyStaysWithGoogle(t *testing.T) {
	t.Parallel()
	e := startVeo(t, settings.GeneratorGemini, veotest.Config{Delay: time.Second}, "", nil)
	storage := httptest.NewServer(e.fake.Storage())
	t.Cleanup(storage.Close)
	e.fake.RedirectDownloads(storage.URL)
	k := e.key(10000, store.KeyLimits{})
	r := e.postJSON("/api/gen/text-to-video", k.APIKey, `{"prompt":"a kite over the dunes","durationSeconds":4}`)
	if r.status != http.StatusAccepted {
		t.Fatalf("text-to-video = %d: %s", r.status, r.raw)
	}
	if tk := waitTask(t, e.env, str(r.body["taskId"]), time.Minute); tk.Status != task.Completed || len(tk.Videos) != 1 {
		t.Fatalf("task %s with %d videos (%+v), want completed with 1", tk.Status, len(tk.Videos), tk.Failure)
	}
	away := 0
	for _, req := range e.fake.Requests() {
		if req.Origin != "storage" {
			continue
		}
		away++
		if req.Header.Get("X-Goog-Api-Key") != "" {
			t.Errorf("%s %s on the other origin carried the Gemini API key", req.Method, req.Path)
		}
	}
	if away != 1 {
		t.Errorf("%d downloads reached the other origin, want 1", away)
	}
}

// waitTask waits for a task to be terminal, reading the store.
func waitTask(t *testing.T, e *env, id string, limit time.Duration) task.Task {
	t.Helper()
	end := time.Now().Add(limit)
	for {
		tk := storedTask(t, e, id)
		if tk.Status.Terminal() {
			return tk
		}
		if time.Now().After(end) {
			t.Fatalf("task %s still %s after %s", id, tk.Status, limit)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestVeoRestart kills the server while the provider works on every task,
// and starts it again: each task ends completed, and the provider was
// asked for (and paid) exactly one job per task.
func TestVeoRestart(t *testing.T) {
	for _, api := range veoAPIs {
		t.Run(api, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			e := startVeo(t, api, veotest.Config{Delay: 4 * time.Second}, dir, nil)
			k := e.key(10000, store.KeyLimits{})
			var ids []string
			for i := range 4 {
				r := e.postJSON("/api/gen/text-to-video", k.APIKey,
					fmt.Sprintf(`{"prompt":"interrupted %d","durationSeconds":4}`, i))
				if r.status != http.StatusAccepted {
					t.Fatalf("start = %d: %s", r.status, r.raw)
				}
				ids = append(ids, str(r.body["taskId"]))
			}
			// Stop once every task has its operation: the jobs are paid
			// for and under way at the provider.
			for _, id := range ids {
				for storedTask(t, e.env, id).Handle() == "" {
					time.Sleep(20 * time.Millisecond)
				}
			}
			e.stop()

			e2 := restartVeo(t, api, e.url, dir, nil)
			for i, id := range ids {
				if done := e2.wait(k.APIKey, id); done.body["status"] != "completed" {
					t.Errorf("task %s after restart: %s", id, done.raw)
				}
				if n := e.fake.Accepted(fmt.Sprintf("interrupted %d", i)); n != 1 {
					t.Errorf("task %s was submitted %d times, want once", id, n)
				}
			}
			if n := len(e.fake.Submits()); n != len(ids) {
				t.Errorf("the provider received %d submits for %d tasks", n, len(ids))
			}
			storetest.CheckInvariants(t, e2.stack.Store, k.AccountID)
		})
	}
}

// TestVeoBurst starts 30 generations at once against a provider that
// accepts 10 submits a minute, as a project's quota does: the starts
// queue in the workflow until the quota lets them through, and all 30
// complete, none refunded.
func TestVeoBurst(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for three quota windows of a minute")
	}
	t.Parallel()
	e := startVeo(t, settings.GeneratorVertex, veotest.Config{Delay: time.Second, SubmitsPerWindow: 10, Window: time.Minute}, "", nil)
	k := e.key(100000, store.KeyLimits{})
	ids := make([]string, 30)
	var wg sync.WaitGroup
	for i := range ids {
		wg.Go(func() {
			r := e.postJSON("/api/gen/text-to-video", k.APIKey,
				fmt.Sprintf(`{"prompt":"burst %02d","model":"gen-3.1-lite-generate-001","durationSeconds":4}`, i))
			if r.status != http.StatusAccepted {
				t.Errorf("start %d = %d: %s", i, r.status, r.raw)
			}
			ids[i] = str(r.body["taskId"])
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	for i, id := range ids {
		tk := waitTask(t, e.env, id, 9*time.Minute)
		if tk.Status != task.Completed || tk.CreditsRefunded != 0 {
			t.Errorf("task %d is %s, %d refunded (%+v), want completed with nothing refunded", i, tk.Status, tk.CreditsRefunded, tk.Failure)
		}
		if n := e.fake.Accepted(fmt.Sprintf("burst %02d", i)); n != 1 {
			t.Errorf("task %d was accepted %d times, want once", i, n)
		}
	}
	throttled := 0
	for _, s := range e.fake.Submits() {
		if s.Status == http.StatusTooManyRequests {
			throttled++
		}
	}
	if throttled == 0 {
		t.Errorf("no submit was throttled: the test did not exercise the quota")
	}
	storetest.CheckInvariants(t, e.stack.Store, k.AccountID)
}

// e2eGenerators are the fakes GEN_E2E_GENERATOR starts, one per test so
// that a restarted stack finds its operations.
var e2eGenerators sync.Map // *testing.T -> URL of its fake

// e2eGenerator points every stack of the suite that runs the built-in
// generator without fault injection at a fake Veo provider, when
// GEN_E2E_GENERATOR is vertex or gemini (tests that inject faults or
// fake the generator keep theirs): the contract's end-to-end checks
// then run against that backend (GEN_E2E_GENERATOR=vertex go test
// ./shared/devstack/). The fake renders with the built-in generator, so
// that the checks of the videos' shapes and frames hold there too.
func e2eGenerator(t *testing.T, cfg *Config) {
	api := os.Getenv("GEN_E2E_GENERATOR")
	// A test that injects faults, or fakes the generator, means the
	// built-in one.
	if api == "" || cfg.Provider != (settings.ProviderConfig{}) || cfg.FaultInjection || cfg.Hooks.WrapGenerator != nil || cfg.Hooks.WrapProvider != nil {
		return
	}
	url, ok := e2eGenerators.Load(t)
	if !ok {
		r, err := render.New(render.Config{})
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(veotest.New(veotest.Config{Delay: time.Second, Token: fakeToken, APIKey: fakeKey, Renderer: r}))
		t.Cleanup(func() { srv.Close(); e2eGenerators.Delete(t) })
		url, _ = e2eGenerators.LoadOrStore(t, srv.URL)
	}
	cfg.Provider = providerSettings(api, url.(string))
}
