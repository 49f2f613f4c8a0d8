package devstack

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/genvideo/gen/shared/provider/render"
	"github.com/genvideo/gen/shared/settings"
	"github.com/genvideo/gen/shared/store"
	"github.com/genvideo/gen/shared/task"
	"github.com/genvideo/gen/shared/testing/openaitest"
	"github.com/genvideo/gen/shared/testing/storetest"
)

// openAIEnv is the local stack with GEN_GENERATOR=openai pointed at the
// strict fake of OpenAI's videos shape.
type openAIEnv struct {
	*env
	fake *openaitest.Server
}

func startOpenAI(t *testing.T, fakeCfg openaitest.Config, mutate func(*Config)) *openAIEnv {
	t.Helper()
	fakeCfg.Key = fakeKey
	fake := openaitest.New(fakeCfg)
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	e := startEnv(t, "", func(c *Config) {
		c.Provider = providerSettings(settings.GeneratorOpenAI, srv.URL)
		if mutate != nil {
			mutate(c)
		}
	})
	return &openAIEnv{env: e, fake: fake}
}

// TestOpenAIREADMEWalkThrough runs the README's walk-through with
// GEN_GENERATOR=openai against the strict fake (rendering with the
// built-in generator, so that its probes of the video hold): every
// start completes, or is refused at start, uncharged, naming the field
// (one video a job: step 7's two); the host refuses nothing.
func TestOpenAIREADMEWalkThrough(t *testing.T) {
	r, err := render.New(render.Config{})
	if err != nil {
		t.Fatal(err)
	}
	for _, profile := range []string{settings.ProfileOpenAI, settings.ProfileVLLMOmni} {
		t.Run(profile, func(t *testing.T) {
			e := startOpenAI(t, openaitest.Config{Polls: 3, Renderer: r, Profile: profile},
				func(c *Config) { c.Provider.OpenAIProfile = profile })
			// One video a job: step 7's two are refused at start;
			// vLLM-Omni's Wan makes no audio.
			checkWalkThrough(t, e.env, []string{"sampleCount", "url"}, profile == settings.ProfileOpenAI)
			checkHostRefusedNothing(t, e)
		})
	}
}

// checkHostRefusedNothing: every submit the host received was accepted,
// and each video downloaded once.
func checkHostRefusedNothing(t *testing.T, e *openAIEnv) {
	t.Helper()
	subs := e.fake.Submits()
	if len(subs) == 0 {
		t.Fatal("the host received no submit")
	}
	for _, s := range subs {
		if s.Status != http.StatusOK {
			t.Errorf("the host refused a submit (%d): %v", s.Status, s.Fields)
		}
		// The walk-through's last start may still be running when it
		// ends: wait for its download before counting.
		for end := time.Now().Add(time.Minute); e.fake.Downloads(s.Video) == 0 && time.Now().Before(end); {
			time.Sleep(50 * time.Millisecond)
		}
		if n := e.fake.Downloads(s.Video); n != 1 {
			t.Errorf("video %s downloaded %d times, want once", s.Video, n)
		}
	}
}

// TestOpenAIProgress: while the host reports a job's progress, status
// shows it (an extension field, 1 to 100, checked against the OpenAPI
// document by the client of these tests), and no longer once completed.
func TestOpenAIProgress(t *testing.T) {
	e := startOpenAI(t, openaitest.Config{Polls: 5}, nil)
	k := e.key(1000, store.KeyLimits{})
	r := e.postJSON("/api/gen/text-to-video", k.APIKey, `{"prompt":"a slow boat","durationSeconds":4}`)
	if r.status != http.StatusAccepted {
		t.Fatalf("start = %d: %s", r.status, r.raw)
	}
	id := str(r.body["taskId"])
	var seen []int64
	deadline := time.Now().Add(time.Minute)
	for {
		s := e.do(http.MethodGet, "/api/gen/status/"+id, k.APIKey, "", nil)
		p, has := s.body["progress"]
		if status := str(s.body["status"]); status != "processing" && has {
			t.Errorf("a %s task shows progress %v", status, p)
		}
		if has && (len(seen) == 0 || seen[len(seen)-1] != num(p)) {
			seen = append(seen, num(p))
		}
		if str(s.body["status"]) == "completed" || str(s.body["status"]) == "failed" {
			if str(s.body["status"]) != "completed" {
				t.Fatalf("task ended %s", s.raw)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %s still %v after a minute", id, s.body["status"])
		}
		time.Sleep(100 * time.Millisecond)
	}
	if len(seen) == 0 || !slices.IsSorted(seen) || seen[0] < 1 || seen[len(seen)-1] > 99 {
		t.Errorf("progress seen %v, want rising percentages while processing", seen)
	}
}

// TestOpenAIOutcomes: each outcome of the host ends with the balance the
// contract requires, refunded once at most: a refusal at submit and a
// job failed by moderation are content-policy failures; a submit whose
// answer was lost costs one job and ends PROVIDER_OUTCOME_UNKNOWN; a
// throttled submit is retried after its Retry-After and completes with
// one job.
func TestOpenAIOutcomes(t *testing.T) {
	fast := "gen-3.1-fast-generate-001"
	p := price(fast, true)
	tests := []struct {
		prompt   string
		outcome  openaitest.Outcome
		status   string
		code     string
		refund   int64
		accepted int
	}{
		{"refused prompt", openaitest.Outcome{SubmitStatus: 400, Code: openaitest.ModerationCode}, "failed", task.FailContentPolicy, p, 0},
		{"moderated job", openaitest.Outcome{FailCode: openaitest.ModerationCode}, "failed", task.FailContentPolicy, p, 1},
		{"failed job", openaitest.Outcome{FailCode: "internal_error"}, "failed", task.FailGeneration, p, 1},
		{"answer lost", openaitest.Outcome{Drop: true}, "failed", task.FailProviderOutcomeUnknown, p, 1},
		{"throttled once", openaitest.Outcome{SubmitStatus: 429, RetryAfter: 1, Times: 1}, "completed", "", 0, 1},
		{"unavailable once", openaitest.Outcome{SubmitStatus: 503, Times: 1}, "completed", "", 0, 1},
	}
	e := startOpenAI(t, openaitest.Config{Polls: 1}, nil)
	for _, tt := range tests {
		e.fake.When(tt.prompt, tt.outcome)
	}
	ids := make([][2]string, len(tests))
	for i, tt := range tests {
		k := e.key(1000, store.KeyLimits{})
		r := e.postJSON("/api/gen/text-to-video", k.APIKey, fmt.Sprintf(`{"prompt":%q,"model":%q,"durationSeconds":4}`, tt.prompt, fast))
		if r.status != http.StatusAccepted {
			t.Fatalf("%s: start = %d: %s", tt.prompt, r.status, r.raw)
		}
		ids[i] = [2]string{str(r.body["taskId"]), k.AccountID}
	}
	for i, tt := range tests {
		t.Run(tt.prompt, func(t *testing.T) {
			tk := waitTask(t, e.env, ids[i][0], time.Minute)
			if string(tk.Status) != tt.status || tt.code != "" && (tk.Failure == nil || tk.Failure.Code != tt.code) {
				t.Fatalf("task is %s (%+v), want %s %s", tk.Status, tk.Failure, tt.status, tt.code)
			}
			if tk.Failure != nil && (strings.Contains(tk.Failure.Message, "fake") || strings.Contains(tk.Failure.Message, "moderation_blocked")) {
				t.Errorf("the client sees the host's message: %q", tk.Failure.Message)
			}
			if b := e.balance(ids[i][1]); b != 1000-p+tt.refund {
				t.Errorf("balance %d, want %d", b, 1000-p+tt.refund)
			}
			if n := e.fake.Accepted(tt.prompt); n != tt.accepted {
				t.Errorf("the host accepted %d jobs, want %d", n, tt.accepted)
			}
			storetest.CheckInvariants(t, e.stack.Store, ids[i][1])
		})
	}
}

// TestOpenAIAudio: each host's audio rule holds over the stack. GET
// /api/gen/models shows it; a start asking for audio the host cannot
// honour (none from Sora, which always makes it; some from vLLM-Omni's
// Wan, which makes none) is refused naming generateAudio, uncharged and
// never submitted; a start that leaves it out gets what the host makes
// and is charged that price, audio or silent.
func TestOpenAIAudio(t *testing.T) {
	lite := "gen-3.1-lite-generate-001"
	for _, tt := range []struct {
		profile string
		audio   bool // what the host makes
	}{{settings.ProfileOpenAI, true}, {settings.ProfileVLLMOmni, false}} {
		t.Run(tt.profile, func(t *testing.T) {
			e := startOpenAI(t, openaitest.Config{Profile: tt.profile, Polls: 1}, func(c *Config) { c.Provider.OpenAIProfile = tt.profile })
			k := e.key(1000, store.KeyLimits{})
			models := e.do(http.MethodGet, "/api/gen/models", k.APIKey, "", nil)
			want := fmt.Sprintf(`"generateAudio":[%v]`, tt.audio)
			if n := strings.Count(string(models.raw), want); n != 3 {
				t.Errorf("models show %s for %d models, want 3: %s", want, n, models.raw)
			}
			r := e.postJSON("/api/gen/text-to-video", k.APIKey, fmt.Sprintf(`{"prompt":"a","model":%q,"durationSeconds":8,"generateAudio":%v}`, lite, !tt.audio))
			if r.status != http.StatusBadRequest || r.body["error"] != "VALIDATION_ERROR" || r.body["field"] != "generateAudio" {
				t.Errorf("generateAudio %v = %d %s, want 400 VALIDATION_ERROR naming generateAudio", !tt.audio, r.status, r.raw)
			}
			if b := e.balance(k.AccountID); b != 1000 {
				t.Errorf("a refused start changed the balance to %d", b)
			}
			if n := len(e.fake.Submits()); n != 0 {
				t.Errorf("a refused start reached the host (%d submits)", n)
			}
			r = e.postJSON("/api/gen/text-to-video", k.APIKey, fmt.Sprintf(`{"prompt":"a","model":%q,"durationSeconds":8}`, lite))
			if r.status != http.StatusAccepted {
				t.Fatalf("start = %d: %s", r.status, r.raw)
			}
			tk := waitTask(t, e.env, str(r.body["taskId"]), time.Minute)
			if tk.Status != task.Completed || tk.Params.GenerateAudio != tt.audio {
				t.Errorf("task %s with generateAudio %v, want completed with %v", tk.Status, tk.Params.GenerateAudio, tt.audio)
			}
			if b, p := e.balance(k.AccountID), price(lite, tt.audio); b != 1000-p {
				t.Errorf("balance %d, want %d (charged %d)", b, 1000-p, p)
			}
			storetest.CheckInvariants(t, e.stack.Store, k.AccountID)
		})
	}
}
