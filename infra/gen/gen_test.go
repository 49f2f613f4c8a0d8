package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/genvideo/gen/shared/client"
	"github.com/genvideo/gen/shared/httpapi"
	"github.com/genvideo/gen/shared/store"
	"github.com/genvideo/gen/shared/testing/devstacktest"
	"github.com/genvideo/gen/shared/testing/openapitest"
)

// stack is the real local service the command talks to.
var stack *devstacktest.Env

func TestMain(m *testing.M) {
	var err error
	// Some tests fail or stall generations with prompt directives.
	if stack, err = devstacktest.New(devstacktest.FaultInjection); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	stack.Close()
	os.Exit(code)
}

// result is what one run of the command did.
type result struct {
	code           int
	stdout, stderr string
}

// gen runs the command in-process with GEN_API_KEY=key against the stack.
// Every exchange is checked against the OpenAPI document, and so is
// every request unless the run sends an invalid one on purpose.
func gen(t *testing.T, key string, args ...string) result {
	t.Helper()
	return genWith(t, map[string]string{"GEN_API_KEY": key, "GEN_BASE_URL": stack.URL}, true, args...)
}

func genWith(t *testing.T, vars map[string]string, checkRequests bool, args ...string) result {
	t.Helper()
	var stdout, stderr bytes.Buffer
	env := environment{
		getenv: func(k string) string { return vars[k] },
		stdout: &stdout,
		stderr: &stderr,
		newClient: func(base, key string, opts ...client.Option) (*client.Client, error) {
			hc := &http.Client{Transport: &openapitest.Transport{TB: t, CheckRequests: checkRequests}}
			return client.New(base, key, append(opts, client.WithHTTPClient(hc))...)
		},
	}
	code := run(context.Background(), args, env)
	return result{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
}

func pngFile(t *testing.T) string {
	t.Helper()
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewGray(image.Rect(0, 0, 64, 36))); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "grey.png")
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func writeFile(t *testing.T, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestGenerateShowsProgressAndSavesTheVideos(t *testing.T) {
	t.Parallel()
	k := stack.Key(t, 1000, store.KeyLimits{})
	out := t.TempDir()
	r := gen(t, k.APIKey, "generate", "a paper boat drifting on a pond", "--model", "lite", "--duration", "4",
		"--no-audio", "--seed", "7", "--samples", "2", "--out", out)
	if r.code != exitOK {
		t.Fatalf("generate: %v", r)
	}
	paths := strings.Fields(r.stdout)
	if len(paths) != 2 {
		t.Fatalf("stdout = %q, want the 2 saved files", r.stdout)
	}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil || len(b) < 1000 || string(b[4:8]) != "ftyp" || filepath.Dir(p) != out {
			t.Errorf("%s: %d bytes (%v), want an MP4 file in %s", p, len(b), err, out)
		}
	}
	// stderr is not a terminal: plain lines, no control codes.
	if strings.ContainsAny(r.stderr, "\r\x1b") {
		t.Errorf("stderr has control codes: %q", r.stderr)
	}
	id := strings.TrimSuffix(filepath.Base(paths[0]), "-1.mp4")
	progress := regexp.MustCompile(`(?m)^Started ` + id + `: 70 credits \(930 left\)\. Estimated wait: \d+-\d+ seconds\.\n` +
		`(` + id + `: (pending|processing), \d+s elapsed \(estimated \d+-\d+ seconds\)\n)+` +
		id + `: completed in \d+s\n$`)
	if !progress.MatchString(r.stderr) {
		t.Errorf("stderr = %q, want the start, a line per poll and the completion", r.stderr)
	}

	// The task, its history line, and its videos again.
	st := gen(t, k.APIKey, "status", id)
	for _, want := range []string{"Status: completed", "Model: gen-3.1-lite-generate-001", "2 x 4s, 16:9 720p, audio false, seed 7", "Videos: 2"} {
		if st.code != exitOK || !strings.Contains(squash(st.stdout), want) {
			t.Errorf("status lacks %q: %v", want, st)
		}
	}
	h := gen(t, k.APIKey, "history")
	if h.code != exitOK || !strings.Contains(squash(h.stdout), id+" completed lite 70 2") || !strings.Contains(h.stdout, "1-1 of 1") {
		t.Errorf("history: %v", h)
	}
	again := t.TempDir()
	d := gen(t, k.APIKey, "download", id, "--out", again)
	if want := filepath.Join(again, id+"-1.mp4") + "\n" + filepath.Join(again, id+"-2.mp4") + "\n"; d.code != exitOK || d.stdout != want {
		t.Errorf("download: %v\nwant stdout %q", d, want)
	}
}

// --json prints the result on stdout; --progress bar draws the bar a
// terminal gets on stderr, redrawn in place.
func TestGenerateJSONWithABar(t *testing.T) {
	t.Parallel()
	k := stack.Key(t, 1000, store.KeyLimits{})
	r := gen(t, k.APIKey, "--json", "generate", "json please", "--model", "lite", "--duration", "4", "--out", t.TempDir(), "--progress", "bar")
	if r.code != exitOK {
		t.Fatalf("generate --json: %v", r)
	}
	var got struct {
		Started struct {
			TaskID         string `json:"taskId"`
			CreditsUsed    int    `json:"creditsUsed"`
			IdempotencyKey string `json:"idempotencyKey"`
		} `json:"started"`
		Task struct {
			Status string `json:"status"`
			Videos []any  `json:"videos"`
		} `json:"task"`
		Files []string `json:"files"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, r.stdout)
	}
	if got.Started.CreditsUsed != 65 || got.Started.IdempotencyKey == "" || got.Task.Status != "completed" || len(got.Files) != 1 {
		t.Errorf("result = %+v, want 65 credits, a key, completed, one file", got)
	}
	if !strings.Contains(r.stderr, "\r") || !strings.Contains(r.stderr, "100%") || !strings.Contains(r.stderr, "completed") {
		t.Errorf("stderr = %q, want a bar redrawn with \\r that ends at 100%% completed", r.stderr)
	}

	var models struct {
		Models []struct {
			ID string `json:"modelId"`
		} `json:"models"`
		DefaultModel string `json:"defaultModel"`
	}
	m := gen(t, k.APIKey, "--json", "models")
	if err := json.Unmarshal([]byte(m.stdout), &models); err != nil || len(models.Models) != 3 || models.DefaultModel != client.ModelFast {
		t.Errorf("models --json = %v (%v)", m, err)
	}
}

func TestGenerateFromImages(t *testing.T) {
	t.Parallel()
	k := stack.Key(t, 1000, store.KeyLimits{})
	img := pngFile(t)
	r := gen(t, k.APIKey, "generate", "the grey wall", "--image", img, "--model", "lite", "--duration", "4", "--no-wait")
	if r.code != exitOK || !strings.HasPrefix(r.stdout, "gen_") {
		t.Fatalf("generate --image --no-wait: %v", r)
	}
	st := gen(t, k.APIKey, "status", strings.TrimSpace(r.stdout))
	if !strings.Contains(squash(st.stdout), "Type: image-to-video") {
		t.Errorf("status: %v", st)
	}
	r = gen(t, k.APIKey, "generate", "grey to grey", "--first", img, "--last", img, "--model", "fast", "--resolution", "720p",
		"--duration", "4", "--no-audio", "--no-wait")
	if r.code != exitOK || !strings.Contains(r.stderr, ": 120 credits") {
		t.Errorf("generate --first --last: %v", r)
	}
	for _, args := range [][]string{{"--first", img}, {"--image", img, "--first", img, "--last", img}} {
		r := gen(t, k.APIKey, append([]string{"generate", "x"}, args...)...)
		if r.code != exitError || !strings.Contains(r.stderr, "--first") {
			t.Errorf("generate %v: %v, want a usage error naming --first", args, r)
		}
	}
}

// A wait that runs out says how to get the videos later, and exits 3.
func TestGenerateWaitTimesOut(t *testing.T) {
	t.Parallel()
	k := stack.Key(t, 1000, store.KeyLimits{})
	r := gen(t, k.APIKey, "generate", "[slow:60] a slow one", "--model", "lite", "--duration", "4", "--wait-timeout", "1s")
	if r.code != exitWaiting {
		t.Fatalf("exit %d, want %d: %v", r.code, exitWaiting, r)
	}
	id := strings.Fields(strings.TrimPrefix(r.stderr, "Started "))[0]
	id = strings.TrimSuffix(id, ":")
	for _, want := range []string{"still ", "gen status " + id, "gen download " + id} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q: %s", want, r.stderr)
		}
	}
	if r.stdout != "" {
		t.Errorf("stdout = %q, want nothing", r.stdout)
	}
}

// Every contract error gets a message that says what to do.
func TestErrorMessages(t *testing.T) {
	t.Parallel()
	// The daily limit's retry hint is the time until midnight UTC, hours
	// away but for the day's last seconds, when gen would wait it out.
	if time.Until(time.Now().UTC().Truncate(24*time.Hour).Add(24*time.Hour)) < time.Minute {
		t.Skip("too close to midnight UTC")
	}
	rich := stack.Key(t, 10000, store.KeyLimits{})
	poor := stack.Key(t, 10, store.KeyLimits{})
	daily := stack.Key(t, 1000, store.KeyLimits{RequestsPerMinute: 100, RequestsPerDay: 1, StartsPerMinute: 10, MaxInFlight: 5})
	if r := gen(t, daily.APIKey, "models"); r.code != exitOK {
		t.Fatalf("first request of the day: %v", r)
	}
	slow := gen(t, rich.APIKey, "generate", "[slow:60] not yet", "--model", "lite", "--duration", "4", "--no-wait")
	if slow.code != exitOK {
		t.Fatalf("start: %v", slow)
	}
	slowID := strings.TrimSpace(slow.stdout)
	img := pngFile(t)
	gif := writeFile(t, "a.gif", []byte("GIF89a\x01\x00\x01\x00\x00\x00\x00;"))
	huge := writeFile(t, "huge.png", []byte("\x89PNG\r\n\x1a\n"))
	if err := os.Truncate(huge, httpapi.DefaultMaxImageBytes+1); err != nil {
		t.Fatal(err)
	}
	key := client.NewIdempotencyKey()
	if r := gen(t, rich.APIKey, "generate", "[fail] one", "--model", "lite", "--idempotency-key", key, "--no-wait"); r.code != exitOK {
		t.Fatalf("start: %v", r)
	}

	tests := []struct {
		name  string
		key   string
		valid bool // the request is valid, and checked against the document
		args  []string
		want  []string
	}{
		{"no key", "", false, []string{"models"}, []string{"no API key: set GEN_API_KEY"}},
		{"bad key", "gen_wrong", false, []string{"models"}, []string{"GEN_API_KEY was refused (Invalid API key)"}},
		{"credits", poor.APIKey, true, []string{"generate", "x", "--model", "lite"}, []string{"costs 65 credits and the balance is 10"}},
		{"daily limit", daily.APIKey, true, []string{"models"}, []string{"rate limited (DAILY_LIMIT_EXCEEDED)", "Retry in ", "(at "}},
		{"validation", rich.APIKey, false, []string{"generate", "x", "--samples", "9"}, []string{"invalid request: ", "(sampleCount = 9)"}},
		{"model", rich.APIKey, false, []string{"generate", "x", "--model", "turbo"}, []string{"invalid request: ", "`gen models`"}},
		{"lite first-last", rich.APIKey, false, []string{"generate", "x", "--model", "lite", "--first", img, "--last", img}, []string{"invalid request: ", "does not support first-last-frame"}},
		{"image type", rich.APIKey, true, []string{"generate", "x", "--image", gif}, []string{"the image was refused: ", "JPEG or PNG"}},
		{"image size", rich.APIKey, true, []string{"generate", "x", "--image", huge}, []string{"the image is too large: ", "20 MiB"}},
		{"no image file", rich.APIKey, true, []string{"generate", "x", "--image", "/nonexistent.png"}, []string{"open image", "no such file"}},
		{"unknown task", rich.APIKey, true, []string{"status", "gen_1700000000000_abcdefghij"}, []string{"no such task in this account", "`gen history`"}},
		{"not ready", rich.APIKey, true, []string{"download", slowID}, []string{"the videos are not ready: ", "gen status ID"}},
		{"key reused", rich.APIKey, true, []string{"generate", "[fail] two", "--model", "lite", "--idempotency-key", key}, []string{"already used for a different request"}},
		{"failed", rich.APIKey, true, []string{"generate", "[fail] broken", "--model", "lite"}, []string{"failed: ", "(GENERATION_FAILED)", "65 credits were refunded"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := genWith(t, map[string]string{"GEN_API_KEY": tt.key, "GEN_BASE_URL": stack.URL}, tt.valid, tt.args...)
			if r.code != exitError {
				t.Fatalf("exit %d, want %d: %v", r.code, exitError, r)
			}
			for _, w := range tt.want {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("stderr = %q, want it to contain %q", r.stderr, w)
				}
			}
		})
	}
	if got := stack.Balance(t, poor.AccountID); got != 10 {
		t.Errorf("balance = %d after a refused start, want 10", got)
	}
}

func TestErrorJSON(t *testing.T) {
	t.Parallel()
	poor := stack.Key(t, 10, store.KeyLimits{})
	r := gen(t, poor.APIKey, "--json", "generate", "x", "--model", "lite", "--no-audio")
	var got struct {
		Error struct {
			Status    int    `json:"status"`
			Code      string `json:"code"`
			Required  int    `json:"required"`
			Available int    `json:"available"`
			Message   string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil || r.code != exitError {
		t.Fatalf("stdout is not a JSON error (%v): %v", err, r)
	}
	if e := got.Error; e.Status != 402 || e.Code != client.CodeInsufficientCredits || e.Required != 35 || e.Available != 10 || e.Message == "" {
		t.Errorf("error = %+v, want 402 INSUFFICIENT_CREDITS, 35 required, 10 available", e)
	}
}

func TestUnreachableService(t *testing.T) {
	t.Parallel()
	// A port nothing listens on.
	r := genWith(t, map[string]string{"GEN_API_KEY": "k", "GEN_BASE_URL": "http://127.0.0.1:1"}, true, "--json", "history")
	if r.code != exitError || !strings.Contains(r.stderr, "cannot reach the service at http://127.0.0.1:1") || !strings.Contains(r.stderr, "GEN_BASE_URL") {
		t.Errorf("unreachable: %v", r)
	}
}

func TestHistoryAndModels(t *testing.T) {
	t.Parallel()
	k := stack.Key(t, 1000, store.KeyLimits{})
	var ids []string
	for i := range 3 {
		r := gen(t, k.APIKey, "generate", fmt.Sprintf("[fail] %d", i), "--model", "lite", "--no-wait")
		if r.code != exitOK {
			t.Fatal(r)
		}
		ids = append(ids, strings.TrimSpace(r.stdout))
	}
	r := gen(t, k.APIKey, "history", "--limit", "2")
	if r.code != exitOK || !strings.Contains(r.stdout, ids[2]) || !strings.Contains(r.stdout, ids[1]) || strings.Contains(r.stdout, ids[0]) ||
		!strings.Contains(r.stdout, "1-2 of 3; next page: --skip 2") {
		t.Errorf("history --limit 2: %v", r)
	}
	r = gen(t, k.APIKey, "history", "--all", "--limit", "1")
	if r.code != exitOK || strings.Count(r.stdout, "gen_") != 3 || !strings.Contains(r.stdout, "1-3 of 3") {
		t.Errorf("history --all: %v", r)
	}
	r = gen(t, k.APIKey, "history", "--status", "completed")
	if r.code != exitOK || !strings.Contains(r.stdout, "No tasks.") {
		t.Errorf("history --status completed: %v", r)
	}
	r = gen(t, k.APIKey, "models")
	for _, want := range []string{"gen-3.1-lite-generate-001 Gen 3.1 Lite (720p) 65 35", "Gen 3.1 Fast (default) 190 120", "Short names for --model"} {
		if r.code != exitOK || !strings.Contains(squash(r.stdout), want) {
			t.Errorf("models lacks %q: %v", want, r)
		}
	}
}

func TestServiceErrorMessage(t *testing.T) {
	opts := &options{baseURL: "http://x", key: "k"}
	for _, e := range []*client.Error{
		{Status: 503, Code: client.CodeUnavailable, Message: "The service is temporarily unavailable; nothing was charged."},
		{Status: 500, Code: client.CodeInternal, Message: "An internal error occurred."},
	} {
		got := explain(opts, fmt.Errorf("wrapped: %w", e))
		if !strings.HasPrefix(got, "the service has a problem ("+fmt.Sprint(e.Status)+" "+e.Code+"): ") || !strings.Contains(got, e.Message) {
			t.Errorf("explain(%d) = %q", e.Status, got)
		}
	}
}

// squash is s with every run of white space made one space, so that
// checks do not depend on column widths.
func squash(s string) string { return strings.Join(strings.Fields(s), " ") }

// An image larger than a request through API Gateway and Lambda can carry
// (4 MiB) goes through a direct upload by itself: the task's input is the
// upload, named by its id.
func TestGenerateUploadsLargeImagesDirectly(t *testing.T) {
	t.Parallel()
	k := stack.Key(t, 1000, store.KeyLimits{})
	img := image.NewRGBA(image.Rect(0, 0, 1400, 1300))
	for i := range img.Pix {
		img.Pix[i] = byte(i*7919>>3) | 1
	}
	for i := 3; i < len(img.Pix); i += 4 {
		img.Pix[i] = 255
	}
	var buf bytes.Buffer
	if err := (&png.Encoder{CompressionLevel: png.NoCompression}).Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	if buf.Len() <= client.DefaultDirectUploadAbove {
		t.Fatalf("test image of %d bytes is not over %d", buf.Len(), client.DefaultDirectUploadAbove)
	}
	path := writeFile(t, "large.png", buf.Bytes())
	r := gen(t, k.APIKey, "generate", "the noise", "--image", path, "--model", "lite", "--duration", "4", "--no-wait")
	if r.code != exitOK || !strings.HasPrefix(r.stdout, "gen_") {
		t.Fatalf("generate --image of %d bytes: %v", buf.Len(), r)
	}
	tk, err := stack.Stack.Store.Task(context.Background(), strings.TrimSpace(r.stdout))
	if err != nil {
		t.Fatal(err)
	}
	if len(tk.Inputs) != 1 || !strings.HasPrefix(tk.Inputs[0].OriginalName, "upl_") || tk.Inputs[0].Size != int64(buf.Len()) {
		t.Errorf("task inputs %+v, want the direct upload of %d bytes", tk.Inputs, buf.Len())
	}
}

func TestQuote(t *testing.T) {
	t.Parallel()
	k := stack.Key(t, 100, store.KeyLimits{})
	r := gen(t, k.APIKey, "quote", "a kite over the dunes", "--model", "lite", "--no-audio", "--samples", "2", "--image", pngFile(t))
	if want := "image-to-video with gen-3.1-lite-generate-001: 70 credits; balance 100, after 30."; r.code != exitOK || !strings.Contains(r.stdout, want) {
		t.Errorf("quote: %v\nwant %q", r, want)
	}
	r = gen(t, k.APIKey, "quote", "a kite over the dunes", "--model", "quality", "--json")
	var q client.Quote
	if err := json.Unmarshal([]byte(r.stdout), &q); err != nil || r.code != exitOK || q.Allowed || q.Refusal == nil || q.Refusal.Code != "INSUFFICIENT_CREDITS" {
		t.Errorf("quote of a generation over the balance: %v (%v)", r, err)
	}
	if r := gen(t, k.APIKey, "credits", "--json"); !strings.Contains(r.stdout, `"balance": 100`) {
		t.Errorf("the quotes moved credits: %v", r)
	}
}

func TestWatch(t *testing.T) {
	t.Parallel()
	k := stack.Key(t, 1000, store.KeyLimits{})
	r := gen(t, k.APIKey, "generate", "a windmill turning", "--model", "lite", "--no-wait")
	if r.code != exitOK {
		t.Fatal(r)
	}
	id := strings.TrimSpace(r.stdout)
	r = gen(t, k.APIKey, "watch", id)
	if r.code != exitOK || !strings.Contains(r.stdout, "1000  pending\n2000  processing\n3000  completed\n") || !strings.Contains(squash(r.stdout), "Status: completed") {
		t.Errorf("watch: %v", r)
	}
	r = gen(t, k.APIKey, "watch", id, "--last-event-id", "2000", "--json")
	if r.code != exitOK || strings.Count(r.stdout, "\n") != 1 || !strings.Contains(r.stdout, `"event":"completed"`) {
		t.Errorf("watch --json resumed after processing: %v; want the completed event alone", r)
	}
}

func TestGenerateMaxCredits(t *testing.T) {
	t.Parallel()
	k := stack.Key(t, 1000, store.KeyLimits{})
	r := gen(t, k.APIKey, "generate", "a red kite", "--model", "lite", "--samples", "2", "--max-credits", "100", "--no-wait")
	if r.code != exitError || !strings.Contains(r.stderr, "more than maxCredits (100)") || !strings.Contains(r.stderr, "gen quote") {
		t.Errorf("generate over --max-credits: %v", r)
	}
	if r := gen(t, k.APIKey, "credits", "--json"); !strings.Contains(r.stdout, `"balance": 1000`) {
		t.Errorf("a refused start moved credits: %v", r)
	}
	if r := gen(t, k.APIKey, "generate", "a red kite", "--model", "lite", "--max-credits", "65", "--no-wait"); r.code != exitOK {
		t.Errorf("generate at --max-credits: %v", r)
	}
}
