package devstack

import (
	"fmt"
	"image/color"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/genvideo/gen/shared/settings"
	"github.com/genvideo/gen/shared/store"
	"github.com/genvideo/gen/shared/testing/openaitest"
	"github.com/genvideo/gen/shared/testing/storetest"
	"github.com/genvideo/gen/shared/testing/veotest"
)

// fakeAt runs a strict Veo fake over real TCP and answers its URL.
func fakeAt(t *testing.T, cfg veotest.Config) (*veotest.Server, string) {
	t.Helper()
	fake := veotest.New(veotest.Credentials(cfg))
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	return fake, srv.URL
}

// routedSettings are GEN_ROUTES as an operator writes it, read as the
// server reads it: the fast model on routes, in order.
func routedSettings(t *testing.T, routes string, models ...string) settings.ProviderConfig {
	t.Helper()
	return readRoutes(t, fmt.Sprintf(`{"routes": [%s], "models": {"gen-3.1-fast-generate-001": ["%s"]}}`,
		routes, strings.Join(models, `", "`)))
}

// readRoutes reads GEN_ROUTES as the server reads it, polling each
// second.
func readRoutes(t *testing.T, routes string) settings.ProviderConfig {
	t.Helper()
	r := settings.NewReader(settings.Vars{settings.ProviderPollInterval: "1s", settings.Routes: routes}.Lookup)
	p := r.ProviderConfig()
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	return p
}

// wanRoute is infra/docs/providers.md's self-hosted route: vLLM-Omni
// serving a text-only Wan 2.2 for Lite at url.
func wanRoute(url string) string {
	return `{"name": "wan", "kind": "openai", "profile": "vllm-omni", "endpoint": "` + url + `", "usdPerSecond": 0.02,
		"modes": ["text-to-video"], "models": {"gen-3.1-lite-generate-001": "Wan-AI/Wan2.2-T2V-A14B-Diffusers"}}`
}

func vertexRoute(name, project, url string) string {
	return fmt.Sprintf(`{"name": %q, "kind": "vertex", "project": %q, "endpoint": %q, "accessToken": %q}`, name, project, url, fakeToken)
}

func geminiRoute(name, url string) string {
	return fmt.Sprintf(`{"name": %q, "kind": "gemini", "endpoint": %q, "apiKey": %q}`, name, url, fakeKey)
}

// TestRoutesFailover: with Vertex AI first and the Gemini API second
// for a model, a first route that refuses every submit before accepting
// it (503, 429 past its retries, its model retired) leaves every start
// to complete on the second: one accepted job per task, on the second
// route, which the task's operation names; nothing refunded.
func TestRoutesFailover(t *testing.T) {
	picture := testImage(t, 1280, 720, color.RGBA{200, 40, 40, 255}, color.RGBA{20, 20, 220, 255})
	tests := []struct {
		name    string
		cfg     veotest.Config
		outcome veotest.Outcome
	}{
		{"503", veotest.Config{}, veotest.Outcome{SubmitStatus: http.StatusServiceUnavailable}},
		{"429", veotest.Config{}, veotest.Outcome{SubmitStatus: http.StatusTooManyRequests, RetryDelay: "30s"}},
		{"retired model", veotest.Config{Retired: []string{"veo-3.1-fast-generate-001"}}, veotest.Outcome{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			vertex, vertexURL := fakeAt(t, tt.cfg)
			vertex.When("", tt.outcome)
			gemini, geminiURL := fakeAt(t, veotest.Config{Delay: time.Second})
			p := routedSettings(t, vertexRoute("vertex-east", "demo-project", vertexURL)+","+geminiRoute("gemini", geminiURL),
				"vertex-east", "gemini")
			e := startEnv(t, "", func(c *Config) { c.Provider = p })
			k := e.key(10000, store.KeyLimits{})

			// Image to video: personGeneration allow_adult on both APIs.
			// One start after the other, so that the health memory has
			// the first one's answer for the next.
			for i := range 3 {
				r := e.postForm("/api/gen/image-to-video", k.APIKey,
					map[string]string{"prompt": fmt.Sprintf("failover %d", i), "model": "gen-3.1-fast-generate-001"},
					map[string][]byte{"image": picture})
				if r.status != http.StatusAccepted {
					t.Fatalf("start = %d: %s", r.status, r.raw)
				}
				id := str(r.body["taskId"])
				done := waitTask(t, e, id, time.Minute)
				if done.Status != "completed" {
					t.Fatalf("task %s ended %s: %+v", id, done.Status, done.Failure)
				}
				prompt := fmt.Sprintf("failover %d", i)
				if a, b := vertex.Accepted(prompt), gemini.Accepted(prompt); a != 0 || b != 1 {
					t.Errorf("task %s: %d jobs on Vertex AI, %d on the Gemini API, want one on the Gemini API", id, a, b)
				}
				if !strings.HasPrefix(done.Operation, "route:gemini:models/veo-3.1-fast-generate-001/operations/") {
					t.Errorf("task %s has operation %q, want the gemini route's", id, done.Operation)
				}
				// The client reads the route from status (an extension).
				st := e.do(http.MethodGet, "/api/gen/status/"+id, k.APIKey, "", nil)
				if got := str(st.body["route"]); got != "gemini" || str(st.body["providerModel"]) != "veo-3.1-fast-generate-001" {
					t.Errorf("status of %s names route %q, provider model %v; want gemini, veo-3.1-fast-generate-001", id, got, st.body["providerModel"])
				}
			}
			// The first start found Vertex AI refusing; the health memory
			// kept the later ones off it.
			if n := len(vertex.Submits()); n != 1 {
				t.Errorf("Vertex AI saw %d submits, want 1: the later starts skip it", n)
			}
			storetest.CheckInvariants(t, e.stack.Store, k.AccountID)
		})
	}
}

// testClock is the health memory's clock, moved by the test.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *testClock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// TestRoutesHealthMemory: a route failing for minutes (every submit
// answered 503) sees one submit per cool-down while starts keep coming,
// each completing on the second route (two Vertex AI projects), and once
// it answers again, it is tried and takes the jobs.
func TestRoutesHealthMemory(t *testing.T) {
	east, eastURL := fakeAt(t, veotest.Config{Delay: time.Second})
	east.When("storm", veotest.Outcome{SubmitStatus: http.StatusServiceUnavailable})
	west, westURL := fakeAt(t, veotest.Config{Delay: time.Second})
	p := routedSettings(t, vertexRoute("east", "project-a", eastURL)+","+vertexRoute("west", "project-b", westURL), "east", "west")
	clock := &testClock{t: time.Now()}
	e := startEnv(t, "", func(c *Config) { c.Provider, c.Hooks.RouteClock = p, clock.now })
	k := e.key(100000, store.KeyLimits{})

	start := func(prompt string) string {
		t.Helper()
		r := e.postJSON("/api/gen/text-to-video", k.APIKey,
			fmt.Sprintf(`{"prompt": %q, "model": "gen-3.1-fast-generate-001"}`, prompt))
		if r.status != http.StatusAccepted {
			t.Fatalf("start = %d: %s", r.status, r.raw)
		}
		id := str(r.body["taskId"])
		if done := waitTask(t, e, id, time.Minute); done.Status != "completed" {
			t.Fatalf("task %s ended %s: %+v", id, done.Status, done.Failure)
		}
		return storedTask(t, e, id).Operation
	}
	// Minutes of failure: a start every 10 s for 2 minutes.
	for i := range 12 {
		if op := start(fmt.Sprintf("storm %02d", i)); !strings.HasPrefix(op, "route:west:projects/project-b/") {
			t.Fatalf("start %d went to %q, want the west route", i, op)
		}
		clock.add(10 * time.Second)
	}
	// 0 s, then probes at 30 s and, the cool-down doubling, 90 s.
	if n := len(east.Submits()); n != 3 {
		t.Errorf("the failing route saw %d submits in 2 minutes, want 3: no storm", n)
	}
	// Healthy again: the next probe is accepted, and so are the rest.
	clock.add(2 * time.Minute)
	for i := range 2 {
		if op := start(fmt.Sprintf("calm %d", i)); !strings.HasPrefix(op, "route:east:projects/project-a/") {
			t.Errorf("start after recovery went to %q, want the east route", op)
		}
	}
	if a := east.Accepted("calm"); a != 2 {
		t.Errorf("the recovered route accepted %d jobs, want 2", a)
	}
	for i := range 12 {
		if a := west.Accepted(fmt.Sprintf("storm %02d", i)); a != 1 {
			t.Errorf("start %d: %d jobs on the west route, want 1", i, a)
		}
	}
}

// TestRoutesRestart: a job accepted on the second route is polled there
// after the server restarts, by a process that knows nothing of the
// first route's failure: the route is in the task's operation.
func TestRoutesRestart(t *testing.T) {
	east, eastURL := fakeAt(t, veotest.Config{})
	east.When("", veotest.Outcome{SubmitStatus: http.StatusServiceUnavailable})
	west, westURL := fakeAt(t, veotest.Config{Delay: 4 * time.Second})
	p := routedSettings(t, vertexRoute("east", "project-a", eastURL)+","+vertexRoute("west", "project-b", westURL), "east", "west")
	dir := t.TempDir()
	e := startEnv(t, dir, func(c *Config) { c.Provider = p })
	k := e.key(10000, store.KeyLimits{})
	r := e.postJSON("/api/gen/text-to-video", k.APIKey, `{"prompt": "across a restart", "model": "gen-3.1-fast-generate-001"}`)
	if r.status != http.StatusAccepted {
		t.Fatalf("start = %d: %s", r.status, r.raw)
	}
	id := str(r.body["taskId"])
	for end := time.Now().Add(30 * time.Second); !strings.HasPrefix(storedTask(t, e, id).Operation, "route:west:"); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("task %s never submitted to the west route: %q", id, storedTask(t, e, id).Operation)
		}
	}
	e.stop()

	e = startEnv(t, dir, func(c *Config) { c.Provider = p })
	if done := waitTask(t, e, id, time.Minute); done.Status != "completed" {
		t.Fatalf("task %s ended %s: %+v", id, done.Status, done.Failure)
	}
	if a, b := east.Accepted("across a restart"), west.Accepted("across a restart"); a != 0 || b != 1 {
		t.Errorf("%d jobs on the east route, %d on the west, want the one on the west", a, b)
	}
	if n := len(east.Submits()); n != 1 {
		t.Errorf("the east route saw %d submits, want the first only", n)
	}
	storetest.CheckInvariants(t, e.stack.Store, k.AccountID)
}

// TestRoutesSelfHostedFirst is infra/docs/providers.md's self-hosted
// Wan behind gen, on the strict fakes: vLLM-Omni serving a text-only
// model first for Lite, Vertex AI after it. Text starts go to the GPU;
// image starts, which it cannot honour, to Vertex AI without asking it;
// and while the GPU answers 503, text starts fail over to Vertex AI too.
func TestRoutesSelfHostedFirst(t *testing.T) {
	gpu := openaitest.New(openaitest.Config{Profile: settings.ProfileVLLMOmni, Polls: 1})
	gpu.When("busy gpu", openaitest.Outcome{SubmitStatus: http.StatusServiceUnavailable})
	gsrv := httptest.NewServer(gpu)
	t.Cleanup(gsrv.Close)
	vertex, vertexURL := fakeAt(t, veotest.Config{Delay: time.Second})
	p := readRoutes(t, `{"routes": [`+wanRoute(gsrv.URL)+`, `+vertexRoute("vertex", "demo-project", vertexURL)+`],
		"models": {"gen-3.1-lite-generate-001": ["wan", "vertex"]}}`)
	e := startEnv(t, "", func(c *Config) { c.Provider = p })
	k := e.key(10000, store.KeyLimits{})
	picture := testImage(t, 1280, 720, color.RGBA{200, 40, 40, 255}, color.RGBA{20, 20, 220, 255})

	for _, tt := range []struct {
		prompt, kind, route string
	}{
		{"a lantern on the GPU", "text-to-video", "wan"},
		{"a picture comes alive", "image-to-video", "vertex"},
		{"busy gpu lantern", "text-to-video", "vertex"},
	} {
		var r response
		if tt.kind == "image-to-video" {
			r = e.postForm("/api/gen/image-to-video", k.APIKey,
				map[string]string{"prompt": tt.prompt, "model": "gen-3.1-lite-generate-001"}, map[string][]byte{"image": picture})
		} else {
			r = e.postJSON("/api/gen/text-to-video", k.APIKey, fmt.Sprintf(`{"prompt": %q, "model": "gen-3.1-lite-generate-001"}`, tt.prompt))
		}
		if r.status != http.StatusAccepted {
			t.Fatalf("%s: start = %d: %s", tt.prompt, r.status, r.raw)
		}
		done := waitTask(t, e, str(r.body["taskId"]), time.Minute)
		if done.Status != "completed" || !strings.HasPrefix(done.Operation, "route:"+tt.route+":") {
			t.Errorf("%s: ended %s on %q (%+v), want completed on the %s route", tt.prompt, done.Status, done.Operation, done.Failure, tt.route)
		}
		want := map[string]int{"wan": 0, "vertex": 0}
		want[tt.route] = 1
		if got := map[string]int{"wan": gpu.Accepted(tt.prompt), "vertex": vertex.Accepted(tt.prompt)}; got["wan"] != want["wan"] || got["vertex"] != want["vertex"] {
			t.Errorf("%s: accepted jobs %v, want %v", tt.prompt, got, want)
		}
	}
	storetest.CheckInvariants(t, e.stack.Store, k.AccountID)
}

// TestSelfHostedFailureWithIntegerCode (issue 33): a vLLM-Omni job that
// fails carries error.code as an integer (its VideoError.code is
// `int | str`). The task ends GENERATION_FAILED, refunded, at the poll
// that sees the failure; before, the answer failed to decode, was taken
// for a busy host, and the job was polled until the task's deadline
// (TIMEOUT).
func TestSelfHostedFailureWithIntegerCode(t *testing.T) {
	gpu := openaitest.New(openaitest.Config{Profile: settings.ProfileVLLMOmni, Polls: 1})
	gpu.When("a broken gpu", openaitest.Outcome{FailCode: "500"})
	gsrv := httptest.NewServer(gpu)
	t.Cleanup(gsrv.Close)
	p := readRoutes(t, `{"routes": [`+wanRoute(gsrv.URL)+`], "models": {"gen-3.1-lite-generate-001": ["wan"]}}`)
	e := startEnv(t, "", func(c *Config) { c.Provider = p })
	k := e.key(10000, store.KeyLimits{})
	r := e.postJSON("/api/gen/text-to-video", k.APIKey, `{"prompt": "a broken gpu lantern", "model": "gen-3.1-lite-generate-001"}`)
	if r.status != http.StatusAccepted {
		t.Fatalf("start = %d: %s", r.status, r.raw)
	}
	done := waitTask(t, e, str(r.body["taskId"]), time.Minute)
	if done.Status != "failed" || done.Failure == nil || done.Failure.Code != "GENERATION_FAILED" {
		t.Fatalf("task ended %s (%+v), want failed with GENERATION_FAILED", done.Status, done.Failure)
	}
	// The fake fails the job at its first poll, one interval (1 s) after
	// the submit; a few intervals leave room for a loaded machine.
	if took := done.CompletedAt.Sub(done.CreatedAt); took > 5*time.Second {
		t.Errorf("the task failed %s after its start, want within a poll interval of the failure", took)
	}
	if n := gpu.Accepted("a broken gpu"); n != 1 {
		t.Errorf("%d jobs on the host, want 1", n)
	}
	if b := e.balance(k.AccountID); b != 10000 {
		t.Errorf("balance %d after the failure, want 10000: refunded", b)
	}
	storetest.CheckInvariants(t, e.stack.Store, k.AccountID)
}
