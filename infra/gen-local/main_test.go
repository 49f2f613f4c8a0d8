package main

import (
	"bufio"
	"context"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/genvideo/gen/shared/client"
	"github.com/genvideo/gen/shared/devstack"
	"github.com/genvideo/gen/shared/domain"
	"github.com/genvideo/gen/shared/settings"
	"github.com/genvideo/gen/shared/testing/logtest"
	"github.com/genvideo/gen/shared/testing/rendertest"
	"github.com/genvideo/gen/shared/testing/storetest"
	"github.com/genvideo/gen/shared/testing/veotest"
)

// server is gen-local running in this process, as `make run` starts it.
type server struct {
	url, key, account string
	logs              *logtest.Buffer
	// stop ends the server and returns its exit status.
	stop func() int
}

// banner is what Serve prints once it listens.
var (
	runningRE = regexp.MustCompile(`gen is running on (http://\S+)`)
	keyRE     = regexp.MustCompile(`dev API key: (\S+)\s+\[\w+ \(account (\S+), \d+ credits\)`)
)

// start runs gen-local with the environment vars on a real TCP port, and
// reads its address and dev key from what it prints.
func start(t *testing.T, vars map[string]string) *server {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	out, printed := io.Pipe()
	logs := &logtest.Buffer{}
	exited := make(chan int, 1)
	go func() {
		code := run(ctx, settings.Vars(vars).Lookup, printed, logs)
		printed.Close()
		exited <- code
	}()
	s := &server{logs: logs, stop: sync.OnceValue(func() int { cancel(); return <-exited })}
	t.Cleanup(func() { s.stop() })

	lines := bufio.NewScanner(out)
	for s.key == "" && lines.Scan() {
		if m := runningRE.FindStringSubmatch(lines.Text()); m != nil {
			s.url = m[1]
		}
		if m := keyRE.FindStringSubmatch(lines.Text()); m != nil {
			s.key, s.account = m[1], m[2]
		}
	}
	if s.url == "" || s.key == "" {
		t.Fatalf("gen-local did not print its address and dev key (exit %d); its log:\n%s", s.stop(), logs)
	}
	go io.Copy(io.Discard, out)
	return s
}

// With the configuration `make run` gives it (the Makefile sets GEN_ADDR
// and GEN_DATA_DIR, nothing else), the service has no fault injection: a
// prompt that asks for a fault is only a prompt, and its generation
// completes with its videos, charged and not refunded.
func TestFaultDirectivesAreWordsByDefault(t *testing.T) {
	dir := t.TempDir()
	s := start(t, map[string]string{"GEN_ADDR": "127.0.0.1:0", "GEN_DATA_DIR": dir})
	c, err := client.New(s.url, s.key)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	prompts := []struct {
		prompt  string
		samples int
	}{
		{"[fail] a storm at sea", 1},
		{"[slow:3600] a slow sunrise", 1},
		{"[policy] something forbidden", 1},
		{"[transient] [filter] two kites", 2},
	}
	charged := 0
	for _, p := range prompts {
		started, err := c.TextToVideo(ctx, client.Request{Prompt: p.prompt, Model: client.ModelLite,
			DurationSeconds: 4, SampleCount: p.samples})
		if err != nil {
			t.Fatalf("start %q: %v", p.prompt, err)
		}
		charged += started.CreditsUsed
		// Bounded, so that an obeyed [slow:3600] fails the test rather
		// than hangs it.
		tk, err := c.Wait(ctx, started.TaskID, client.WaitOptions{Timeout: 3 * time.Minute, MaxInterval: time.Second})
		if err != nil {
			t.Fatalf("%q: %v", p.prompt, err)
		}
		if tk.Status != client.StatusCompleted || len(tk.Videos) != p.samples || tk.CreditsRefunded != nil || tk.Error != nil {
			t.Errorf("%q: status %s, %d videos, %d credits refunded, error %+v; want completed with %d videos and no refund",
				p.prompt, tk.Status, len(tk.Videos), tk.Refunded(), tk.Error, p.samples)
		}
		paths, err := c.SaveVideos(ctx, started.TaskID, t.TempDir())
		if err != nil {
			t.Fatalf("%q: save videos: %v", p.prompt, err)
		}
		w, h := frameSize(t, tk.Parameters)
		for _, path := range paths {
			rendertest.Check(t, path, rendertest.Want{Width: w, Height: h, Seconds: 4, Audio: tk.Parameters.GenerateAudio})
		}
	}
	if code := s.stop(); code != 0 {
		t.Errorf("gen-local exited with %d, want 0; its log:\n%s", code, s.logs)
	}

	// The ledger: every generation charged, none refunded.
	st, err := devstack.OpenStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	acct, err := st.Account(ctx, s.account)
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(devstack.DevCredits - charged); acct.Credits != want {
		t.Errorf("balance = %d, want %d (%d charged, nothing refunded)", acct.Credits, want, charged)
	}
	entries, err := st.Ledger(ctx, s.account)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Kind == domain.EntryRefund {
			t.Errorf("ledger entry %+v: a refund, want none", e)
		}
	}
	storetest.CheckInvariants(t, st, s.account)
}

// frameSize is the size of the videos of a task with parameters p.
func frameSize(t *testing.T, p client.Parameters) (w, h int) {
	t.Helper()
	sizes := map[string][2]int{"720p": {1280, 720}, "1080p": {1920, 1080}}
	wh, ok := sizes[p.Resolution]
	if !ok {
		t.Fatalf("resolution %q", p.Resolution)
	}
	if p.AspectRatio == "9:16" {
		return wh[1], wh[0]
	}
	return wh[0], wh[1]
}

// A configuration error stops gen-local before it listens, with status 2
// and every bad value named; a fault rate without fault injection is one.
func TestConfigurationErrors(t *testing.T) {
	var out, logs strings.Builder
	code := run(context.Background(), settings.Vars{
		"GEN_ADDR": "127.0.0.1:0", "GEN_DATA_DIR": t.TempDir(),
		"GEN_FAULT_RATE": "0.3", "GEN_LOG_LEVEL": "LOUD",
	}.Lookup, &out, &logs)
	if code != 2 {
		t.Errorf("exit status %d, want 2", code)
	}
	for _, want := range []string{`GEN_FAULT_RATE="0.3"`, "GEN_FAULT_INJECTION=on", `GEN_LOG_LEVEL="LOUD"`} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("stderr %q does not name %s", logs.String(), want)
		}
	}
	if out.Len() != 0 {
		t.Errorf("stdout %q, want nothing: the service must not start", out.String())
	}
}

// A Veo backend whose credentials the API refuses stops `make run` at
// start-up, with a non-zero exit and a message naming the setting to
// fix, before it takes a single start.
func TestMisconfiguredBackendStopsStartUp(t *testing.T) {
	fake := httptest.NewServer(veotest.New(veotest.Config{Token: "ya29.good", APIKey: "AIza-good"}))
	t.Cleanup(fake.Close)
	tests := []struct {
		name string
		vars map[string]string
		want string
	}{
		{"gemini key refused", map[string]string{settings.Generator: settings.GeneratorGemini,
			settings.GeminiEndpoint: fake.URL, settings.GeminiAPIKey: "AIza-revoked"}, settings.GeminiAPIKey},
		{"vertex token expired", map[string]string{settings.Generator: settings.GeneratorVertex,
			settings.VertexEndpoint: fake.URL, settings.VertexProject: "p", settings.VertexAccessToken: "ya29.expired"},
			settings.VertexAccessToken},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.vars["GEN_ADDR"], tt.vars["GEN_DATA_DIR"] = "127.0.0.1:0", t.TempDir()
			var stdout, stderr strings.Builder
			code := run(t.Context(), settings.Vars(tt.vars).Lookup, &stdout, &stderr)
			if code == 0 || !strings.Contains(stderr.String(), tt.want) {
				t.Errorf("run = %d with %q; want a non-zero exit naming %s", code, stderr.String(), tt.want)
			}
			if strings.Contains(stdout.String(), "gen is running") || strings.Contains(stderr.String(), "AIza-revoked") {
				t.Errorf("the server started, or showed the key: %q %q", stdout.String(), stderr.String())
			}
		})
	}
}

// TestJSONSettingsMeanOneThing (issue 31, defect 5 and its class): a JSON
// setting written so that it could be read two ways stops gen-local
// before it listens, with status 2, naming the setting and the member at
// fault and never the secret it holds: a second object after the first
// (which started the service on the first), a member in another case, one
// given twice, a null, an unknown one. The same value written plainly is
// taken. GEN_ROUTES is the JSON setting both stacks read
// (settings.Reader); the AWS-only ones are checked in their packages.
func TestJSONSettingsMeanOneThing(t *testing.T) {
	const secret = "sk-SECRET-31"
	route := `{"name":"wan","kind":"openai","profile":"vllm-omni","endpoint":"http://127.0.0.1:9","apiKey":"` + secret +
		`","usdPerSecond":0.02,"models":{"gen-3.1-lite-generate-001":"Wan-AI/Wan2.2-T2V-A14B-Diffusers"}}`
	models := `"models":{"gen-3.1-lite-generate-001":["wan","builtin"]}`
	valid := `{"routes":[` + route + `],` + models + `}`
	r := settings.NewReader(settings.Vars{settings.Routes: valid}.Lookup)
	if r.ProviderConfig(); r.Err() != nil {
		t.Fatalf("the plain GEN_ROUTES is refused: %v", r.Err())
	}
	for _, tt := range []struct {
		name, value, member string
	}{
		{"a second object after the first", valid + `{"routes":[]}`, ""},
		{"a stray brace after it", valid + `}`, ""},
		{"routes in another case", `{"Routes":[` + route + `],` + models + `}`, "Routes"},
		{"a route's name in another case", `{"routes":[` + strings.Replace(route, `"name"`, `"Name"`, 1) + `],` + models + `}`, "routes[0].Name"},
		{"models twice", `{"routes":[` + route + `],` + models + `,` + models + `}`, "models"},
		{"a route's apiKey twice", `{"routes":[` + strings.Replace(route, `"kind"`, `"apiKey":"sk-other","kind"`, 1) + `],` + models + `}`, "routes[0]"},
		{"routes null", `{"routes":null,` + models + `}`, "routes"},
		{"a route's profile null", `{"routes":[` + strings.Replace(route, `"vllm-omni"`, `null`, 1) + `],` + models + `}`, "routes[0].profile"},
		{"an unknown member", `{"routes":[` + route + `],` + models + `,"fallback":"builtin"}`, "fallback"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			// A setting taken after all would start the service: the
			// deadline stops it, and the test fails rather than hangs.
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			var out, logs strings.Builder
			code := run(ctx, settings.Vars{"GEN_ADDR": "127.0.0.1:0", "GEN_DATA_DIR": t.TempDir(),
				settings.Routes: tt.value}.Lookup, &out, &logs)
			if code != 2 || out.Len() != 0 {
				t.Fatalf("exit status %d, stdout %q; want 2 and nothing: the service must not start", code, out.String())
			}
			msg := logs.String()
			if !strings.Contains(msg, settings.Routes) || (tt.member != "" && !strings.Contains(msg, `"`+tt.member+`"`)) {
				t.Errorf("stderr %q names neither %s nor %q", msg, settings.Routes, tt.member)
			}
			if strings.Contains(msg, secret) || strings.Contains(msg, "sk-other") {
				t.Errorf("stderr shows the route's key: %q", msg)
			}
		})
	}
}

func TestTraceIsOptIn(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name    string
		env     map[string]string
		file    string // the trace expected, or none
		wantErr bool
	}{
		{"unset: no trace", map[string]string{}, "", false},
		{"empty: no trace", map[string]string{"GEN_TRACE": ""}, "", false},
		{"a file", map[string]string{"GEN_TRACE": filepath.Join(dir, "gen.trace")}, filepath.Join(dir, "gen.trace"), false},
		{"a file that cannot be made", map[string]string{"GEN_TRACE": filepath.Join(dir, "missing", "gen.trace")}, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			end, err := startTrace(func(k string) (string, bool) { v, ok := tt.env[k]; return v, ok })
			if (err != nil) != tt.wantErr {
				t.Fatalf("startTrace: %v, want an error: %v", err, tt.wantErr)
			}
			if err != nil {
				return
			}
			if err := end(); err != nil {
				t.Fatal(err)
			}
			if tt.file == "" {
				return
			}
			b, err := os.ReadFile(tt.file)
			if err != nil {
				t.Fatal(err)
			}
			// A runtime trace starts with its magic line.
			if !strings.HasPrefix(string(b), "go 1.") || !strings.Contains(string(b[:16]), "trace") {
				t.Errorf("%s starts %q, want a runtime trace", tt.file, b[:min(16, len(b))])
			}
		})
	}
}
