package client_test

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/genvideo/gen/infra/awslocal/awslocaltest"
	"github.com/genvideo/gen/shared/admin"
	"github.com/genvideo/gen/shared/client"
	"github.com/genvideo/gen/shared/store"
	"github.com/genvideo/gen/shared/testing/devstacktest"
	"github.com/genvideo/gen/shared/testing/openapitest"
)

// liveStack is the service every test and example talks to: the embedded
// stack of `make run` (devstacktest), or with GEN_E2E_STACK=aws-local the
// AWS assembly of `make run-aws-local` (awslocaltest). Each test makes
// its own account.
type liveStack interface {
	Key(tb testing.TB, credits int64, limits store.KeyLimits) admin.CreatedKey
	Balance(tb testing.TB, accountID string) int64
}

var (
	stack liveStack
	// baseURL is the service's base URL (on the assembly it ends with /v1).
	baseURL string
	// local is the embedded stack, nil on the assembly.
	local *devstacktest.Env
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	var k admin.CreatedKey
	var err error
	if awslocaltest.Selected() {
		// The assembly starts on first use; the examples need it now.
		a := awslocaltest.Shared(&mainTB{})
		stack, baseURL = a, a.URL
		k, err = a.NewKey(10000, "enterprise", awslocaltest.Roomy)
	} else {
		// Some tests fail or stall generations with prompt directives.
		local, err = devstacktest.New(devstacktest.FaultInjection)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer local.Close()
		stack, baseURL = local, local.URL
		k, err = local.NewKey(10000, store.KeyLimits{})
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	// The examples read the service's address and key from the
	// environment, as a program would.
	os.Setenv("GEN_BASE_URL", baseURL)
	os.Setenv("GEN_API_KEY", k.APIKey)
	code := awslocaltest.Main(m)
	if code == 0 && wholeSuite() {
		// Every answer the client received was decoded into its type with
		// no member left over (openapitest); the whole suite receives
		// every success answer the document describes, on either stack.
		missing, err := openapitest.Undecoded("/api/gen/")
		if err != nil || len(missing) > 0 {
			fmt.Fprintf(os.Stderr, "the suite received none of these documented answers, so did not check that the client decodes them: %v %v\n", missing, err)
			return 1
		}
	}
	return code
}

// wholeSuite reports whether every test ran: no -run or -skip.
func wholeSuite() bool {
	for _, name := range []string{"test.run", "test.skip"} {
		if f := flag.Lookup(name); f != nil && f.Value.String() != "" {
			return false
		}
	}
	return true
}

// mainTB is the testing.TB of TestMain, where a failure ends the run.
type mainTB struct{ testing.TB }

func (mainTB) Helper() {}
func (mainTB) Fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, format+"\n", args...)
	os.Exit(1)
}

// needsFaults skips a test that steers generations with prompt
// directives on the assembly, whose functions run with fault injection
// off, as deployed.
func needsFaults(t *testing.T) {
	t.Helper()
	if local == nil {
		t.Skipf("%s=aws-local: the test steers generations with prompt directives ([fail], [slow:N], [policy]); the assembly's functions run with fault injection off, as on AWS", awslocaltest.StackEnv)
	}
}

// newClient is a client of the stack with the key. Its requests and the
// answers it gets are checked against the OpenAPI document.
func newClient(t *testing.T, key string, opts ...client.Option) *client.Client {
	t.Helper()
	return clientOf(t, baseURL, key, true, opts...)
}

// clientOf is a client of the service at base; checkRequests also checks
// its requests against the document (not for requests that are invalid
// on purpose).
func clientOf(t *testing.T, base, key string, checkRequests bool, opts ...client.Option) *client.Client {
	t.Helper()
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	// On the assembly the API is under its stage, /v1.
	hc := &http.Client{Transport: &openapitest.Transport{TB: t, CheckRequests: checkRequests, Prefix: u.Path}}
	c, err := client.New(base, key, append([]client.Option{client.WithHTTPClient(hc)}, opts...)...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return c
}

// gatewayClient is clientOf the stack for a test that meets, on the
// assembly, an answer of API Gateway's own that the document does not
// describe (its usage plan's 429s come without X-RateLimit-* headers;
// an encoded slash in a task id is an unknown route to it): there its
// exchanges are not checked against the document.
func gatewayClient(t *testing.T, key string, opts ...client.Option) *client.Client {
	t.Helper()
	if local != nil {
		return clientOf(t, baseURL, key, true, opts...)
	}
	c, err := client.New(baseURL, key, opts...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return c
}

func pngImage(t *testing.T, c color.RGBA) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 64, 36))
	for i := 0; i < len(img.Pix); i += 4 {
		img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = c.R, c.G, c.B, c.A
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// lite is the cheapest, quickest request: 35 credits.
func lite(prompt string) client.Request {
	return client.Request{Prompt: prompt, Model: client.ModelLite, DurationSeconds: 4, GenerateAudio: new(false)}
}

// startLite starts the lite generation of prompt with c, and fails the
// test if the service refuses it.
func startLite(t *testing.T, c *client.Client, prompt string) *client.Started {
	t.Helper()
	s, err := c.TextToVideo(t.Context(), lite(prompt))
	if err != nil {
		t.Fatalf("TextToVideo(%q): %v", prompt, err)
	}
	return s
}

func TestTextToVideoWaitAndSave(t *testing.T) {
	t.Parallel()
	k := stack.Key(t, 1000, store.KeyLimits{})
	c := newClient(t, k.APIKey)
	ctx := context.Background()

	req := lite("a paper boat on a pond")
	req.SampleCount = 2
	req.Seed = new(int64(42))
	s, err := c.TextToVideo(ctx, req)
	if err != nil {
		t.Fatalf("TextToVideo: %v", err)
	}
	if s.Status != client.StatusPending || s.CreditsUsed != 70 || s.RemainingCredits != 930 {
		t.Errorf("started = %+v, want pending, 70 credits used, 930 left", s)
	}
	if lo, hi, ok := s.EstimatedWait(); !ok || lo <= 0 || hi < lo {
		t.Errorf("EstimatedWait(%q) = %v, %v, %v, want a range", s.EstimatedWaitTime, lo, hi, ok)
	}

	var polls int
	task, err := c.Wait(ctx, s.TaskID, client.WaitOptions{Timeout: 2 * time.Minute, OnPoll: func(*client.Task) { polls++ }})
	if err != nil {
		t.Fatalf("Wait: %v", err)
	}
	if task.Status != client.StatusCompleted || len(task.Videos) != 2 || task.CompletedAt.IsZero() || polls == 0 {
		t.Fatalf("task = %+v after %d polls, want completed with 2 videos", task, polls)
	}
	if task.Parameters.Seed == nil || *task.Parameters.Seed != 42 || task.CreditsCost != 70 || task.Model != client.ModelLite {
		t.Errorf("task = %+v, want seed 42, 70 credits, the lite model", task)
	}
	if task.Route != "builtin" || task.ProviderModel != "" {
		t.Errorf("task made on route %q, provider model %q; want the built-in generator's route and no provider model", task.Route, task.ProviderModel)
	}
	// The history shows it as the status does, the route included.
	page, err := c.History(ctx, client.HistoryQuery{Limit: 1})
	if err != nil || page.Pagination.Total != 1 || len(page.Items) != 1 || page.Pagination.HasMore {
		t.Fatalf("History = %+v, %v; want this key's one task", page, err)
	}
	if it := page.Items[0]; it.TaskID != s.TaskID || it.Status != client.StatusCompleted || it.VideoCount != 2 || it.Route != "builtin" {
		t.Errorf("history item = %+v, want the task, completed with 2 videos on the built-in route", it)
	}

	dir := t.TempDir()
	paths, err := c.SaveVideos(ctx, s.TaskID, dir)
	if err != nil {
		t.Fatalf("SaveVideos: %v", err)
	}
	want := []string{filepath.Join(dir, s.TaskID+"-1.mp4"), filepath.Join(dir, s.TaskID+"-2.mp4")}
	if !slices.Equal(paths, want) {
		t.Errorf("SaveVideos = %v, want %v", paths, want)
	}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil || len(b) < 1000 || string(b[4:8]) != "ftyp" {
			t.Errorf("%s: %d bytes (%v), want an MP4 file", p, len(b), err)
		}
		// Readable like any file the user makes, as the umask allows, not
		// private like a temp file: the mode of a 0644 file made here.
		ref := filepath.Join(t.TempDir(), "ref")
		if err := os.WriteFile(ref, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		want, _ := os.Stat(ref)
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != want.Mode().Perm() {
			t.Errorf("%s: mode %v (%v), want %v like any file the user makes", p, fi.Mode(), err, want.Mode())
		}
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".*")); len(left) != 0 {
		t.Errorf("partial files left behind: %v", left)
	}
}

func TestImageStarts(t *testing.T) {
	t.Parallel()
	k := stack.Key(t, 10000, store.KeyLimits{})
	c := newClient(t, k.APIKey)
	ctx := context.Background()
	red := pngImage(t, color.RGBA{200, 20, 20, 255})
	path := filepath.Join(t.TempDir(), "red.png")
	if err := os.WriteFile(path, red, 0o600); err != nil {
		t.Fatal(err)
	}

	s, err := c.ImageToVideo(ctx, lite("the red flag waves"), client.ImageFile(path))
	if err != nil {
		t.Fatalf("ImageToVideo: %v", err)
	}
	if want := (client.ImageInfo{OriginalName: "red.png", Size: int64(len(red)), MimeType: "image/png"}); s.ImageInfo == nil || *s.ImageInfo != want {
		t.Errorf("imageInfo = %+v, want %+v", s.ImageInfo, want)
	}

	req := client.Request{Prompt: "red to blue", Model: client.ModelFast, DurationSeconds: 4, Resolution: "720p", GenerateAudio: new(false)}
	blue := pngImage(t, color.RGBA{20, 20, 200, 255})
	s, err = c.FirstLastFrame(ctx, req, client.ImageBytes("first.png", red), client.ImageReader("last.png", bytes.NewReader(blue)))
	if err != nil {
		t.Fatalf("FirstLastFrame: %v", err)
	}
	if s.FirstFrame == nil || s.FirstFrame.OriginalName != "first.png" || s.LastFrame == nil || s.LastFrame.Size != int64(len(blue)) {
		t.Errorf("frames = %+v, %+v, want first.png and last.png of %d bytes", s.FirstFrame, s.LastFrame, len(blue))
	}
	if s.CreditsUsed != 120 {
		t.Errorf("creditsUsed = %d, want 120 (fast, no audio)", s.CreditsUsed)
	}
	task, err := c.Wait(ctx, s.TaskID, client.WaitOptions{Timeout: 2 * time.Minute})
	if err != nil || task.Type != "first-last-frame" || len(task.Videos) != 1 {
		t.Fatalf("Wait = %+v, %v, want a completed first-last-frame task with a video", task, err)
	}
}

func TestModels(t *testing.T) {
	t.Parallel()
	k := stack.Key(t, 0, store.KeyLimits{})
	l, err := newClient(t, k.APIKey).Models(context.Background())
	if err != nil {
		t.Fatalf("Models: %v", err)
	}
	if len(l.Models) != 3 || l.DefaultModel != client.ModelFast {
		t.Fatalf("models = %+v, want 3 and the fast default", l)
	}
	m, ok := l.Find(client.ModelLite)
	if !ok || m.Pricing.Price(true) != 65 || m.Pricing.Price(false) != 35 || m.Supports("first-last-frame") {
		t.Errorf("lite = %+v, want 65/35 credits and no first-last-frame", m)
	}
	// The built-in generator's limits: the contract's whole range.
	if lim := m.Limits; lim == nil || lim.MaxSampleCount != 2 || !lim.Seed || len(lim.Resolutions["4"]) != 1 ||
		len(lim.PersonGeneration["text-to-video"]) != 3 || lim.PersonGeneration["text-to-video"][0] != "allow_adult" {
		t.Errorf("lite limits = %+v, want the built-in generator's whole range at 720p", lim)
	}
}

// One variant of the models answer names the id "id" and lists a model
// twice: the client reads both names and merges the twins. The local
// service never answers so, hence a stand-in server here.
func TestModelsVariant(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"success":true,"models":[
			{"id":"gen-3.1-fast-generate-001","name":"Fast","description":"first","capabilities":["text-to-video"],"pricing":{"creditsPerVideo":190,"creditsPerVideoNoAudio":120}},
			{"modelId":"gen-3.1-lite-generate-001","name":"Lite","description":"lite","capabilities":["text-to-video"],"pricing":{"creditsPerVideo":65,"creditsPerVideoNoAudio":35}},
			{"id":"gen-3.1-fast-generate-001","name":"Fast","description":"second","capabilities":["image-to-video","text-to-video"],"pricing":{"creditsPerVideo":190,"creditsPerVideoNoAudio":120}}]}`)
	}))
	defer srv.Close()
	c, err := client.New(srv.URL, "k")
	if err != nil {
		t.Fatal(err)
	}
	l, err := c.Models(context.Background())
	if err != nil {
		t.Fatalf("Models: %v", err)
	}
	if len(l.Models) != 2 {
		t.Fatalf("%d models, want 2 (the twins merged): %+v", len(l.Models), l.Models)
	}
	fast := l.Models[0]
	if fast.ID != client.ModelFast || fast.Description != "first" || !slices.Equal(fast.Capabilities, []string{"text-to-video", "image-to-video"}) {
		t.Errorf("fast = %+v, want the first description and both capabilities", fast)
	}
	if l.Models[1].ID != client.ModelLite {
		t.Errorf("second model = %q, want %q (read from modelId)", l.Models[1].ID, client.ModelLite)
	}
}

func TestAllHistoryPages(t *testing.T) {
	needsFaults(t)
	t.Parallel()
	k := stack.Key(t, 10000, store.KeyLimits{})
	c := newClient(t, k.APIKey)
	ctx := context.Background()
	// [fail] tasks fail at once, without rendering.
	var started []string
	for i := range 5 {
		s, err := c.TextToVideo(ctx, lite(fmt.Sprintf("[fail] number %d", i)))
		if err != nil {
			t.Fatalf("start %d: %v", i, err)
		}
		started = append(started, s.TaskID)
	}
	slices.Reverse(started) // newest first

	var got []string
	for it, err := range c.AllHistory(ctx, client.HistoryQuery{Limit: 2}) {
		if err != nil {
			t.Fatalf("AllHistory: %v", err)
		}
		got = append(got, it.TaskID)
	}
	if !slices.Equal(got, started) {
		t.Errorf("AllHistory = %v, want %v", got, started)
	}

	// Stopping early stops the paging.
	n := 0
	for range c.AllHistory(ctx, client.HistoryQuery{Limit: 2}) {
		if n++; n == 3 {
			break
		}
	}
	if n != 3 {
		t.Errorf("broke out after %d items, want 3", n)
	}

	page, err := c.History(ctx, client.HistoryQuery{Limit: 2, Skip: 4})
	if err != nil || len(page.Items) != 1 || page.Pagination.Total != 5 || page.Pagination.HasMore || page.Items[0].TaskID != started[4] {
		t.Errorf("last page = %+v, %v, want 1 of 5 items, the oldest, no more", page, err)
	}
	it := page.Items[0]
	if it.APIKey != "test" || it.CreditsCost != 35 || it.Model != client.ModelLite {
		t.Errorf("history item = %+v, want key name test, 35 credits, lite", it)
	}

	// A page's NextCursor gets the next page.
	first, err := c.History(ctx, client.HistoryQuery{Limit: 2})
	if err != nil || first.Pagination.NextCursor == "" {
		t.Fatalf("first page = %+v, %v; want a NextCursor", first, err)
	}
	next, err := c.History(ctx, client.HistoryQuery{Limit: 2, Cursor: first.Pagination.NextCursor})
	if err != nil || len(next.Items) != 2 || next.Items[0].TaskID != started[2] || next.Items[1].TaskID != started[3] {
		t.Errorf("page after the cursor = %+v, %v; want %v", next, err, started[2:4])
	}

	// An error ends the sequence after being yielded once.
	var errs int
	for _, err := range newClient(t, "gen_nope").AllHistory(ctx, client.HistoryQuery{}) {
		if err != nil {
			errs++
		}
	}
	if errs != 1 {
		t.Errorf("%d errors from a refused history, want 1", errs)
	}
}

// A generation that fails comes back from Wait as a *GenerationError,
// refunded.
func TestWaitForAFailedTask(t *testing.T) {
	needsFaults(t)
	t.Parallel()
	k := stack.Key(t, 100, store.KeyLimits{})
	c := newClient(t, k.APIKey)
	ctx := context.Background()
	s := startLite(t, c, "[policy] something forbidden")
	task, err := c.Wait(ctx, s.TaskID, client.WaitOptions{Timeout: time.Minute})
	var ge *client.GenerationError
	if !errors.As(err, &ge) || ge.Code != "CONTENT_POLICY_VIOLATION" || ge.TaskID != s.TaskID || ge.CreditsRefunded != 35 {
		t.Fatalf("Wait = %v, want a *GenerationError CONTENT_POLICY_VIOLATION refunding 35", err)
	}
	if task == nil || task.Status != client.StatusFailed {
		t.Errorf("task = %+v, want the failed task", task)
	}
	if got := stack.Balance(t, k.AccountID); got != 100 {
		t.Errorf("balance = %d, want 100", got)
	}
}

// A wait that runs out returns the task id and the last status, and the
// task goes on. The service says how long to wait between polls: a wait of
// 1.5 s polls no more often than that, however short MinInterval is.
func TestWaitTimesOut(t *testing.T) {
	needsFaults(t)
	t.Parallel()
	k := stack.Key(t, 100, store.KeyLimits{})
	c := newClient(t, k.APIKey)
	ctx := context.Background()
	s := startLite(t, c, "[slow:60] a very slow sunrise")
	var polls atomic.Int32
	task, err := c.Wait(ctx, s.TaskID, client.WaitOptions{Timeout: 1500 * time.Millisecond,
		MinInterval: 10 * time.Millisecond, OnPoll: func(*client.Task) { polls.Add(1) }})
	var te *client.WaitTimeoutError
	if !errors.As(err, &te) || te.TaskID != s.TaskID || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Wait = %v, want a *WaitTimeoutError naming %s", err, s.TaskID)
	}
	if task == nil || task.Status.Terminal() || te.Status != task.Status {
		t.Errorf("task = %+v, error status %q, want the unfinished task", task, te.Status)
	}
	if task.RetryAfter < time.Second {
		t.Fatalf("RetryAfter = %v, want the service's hint (at least 1 s)", task.RetryAfter)
	}
	// MinInterval alone would allow ~150 polls; the hint allows one per
	// RetryAfter.
	if n, most := polls.Load(), 1+int32(1500*time.Millisecond/task.RetryAfter); n > most {
		t.Errorf("%d polls in 1.5 s, want at most %d: Retry-After: %v was not honoured", n, most, task.RetryAfter)
	}
	if _, err := c.Status(ctx, s.TaskID); err != nil {
		t.Errorf("Status after the timeout: %v", err)
	}
}

// A context that ends is not a timeout of the wait.
func TestWaitCancelled(t *testing.T) {
	needsFaults(t)
	t.Parallel()
	k := stack.Key(t, 100, store.KeyLimits{})
	c := newClient(t, k.APIKey)
	s := startLite(t, c, "[slow:60] patience")
	ctx, cancel := context.WithCancel(context.Background())
	_, err := c.Wait(ctx, s.TaskID, client.WaitOptions{OnPoll: func(*client.Task) { cancel() }})
	var te *client.WaitTimeoutError
	if !errors.Is(err, context.Canceled) || errors.As(err, &te) {
		t.Errorf("Wait = %v, want context.Canceled", err)
	}
}

// An image over the direct-upload size goes through POST /api/gen/uploads
// and the storage's signed form, by itself, and the start names it; one
// under it is sent in the start's own request. WithDirectUploadAbove(-1)
// never uploads directly.
func TestLargeImagesUploadDirectly(t *testing.T) {
	t.Parallel()
	k := stack.Key(t, 10000, store.KeyLimits{})
	ctx := context.Background()
	red := pngImage(t, color.RGBA{200, 20, 20, 255})
	for _, c := range []struct {
		name   string
		above  int64
		direct bool
	}{
		{"larger than the threshold", int64(len(red)) - 1, true},
		{"at the threshold", int64(len(red)), false},
		{"never", -1, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			cl := newClient(t, k.APIKey, client.WithDirectUploadAbove(c.above))
			s, err := cl.ImageToVideo(ctx, lite("the red flag waves"), client.ImageBytes("red.png", red))
			if err != nil {
				t.Fatalf("ImageToVideo: %v", err)
			}
			// A direct upload is named by its id, a sent file by its name.
			if direct := strings.HasPrefix(s.ImageInfo.OriginalName, "upl_"); direct != c.direct || s.ImageInfo.Size != int64(len(red)) {
				t.Errorf("imageInfo = %+v, want a direct upload: %v", s.ImageInfo, c.direct)
			}
		})
	}
	// An upload made already is named by its id, whatever the threshold,
	// and started from as a file is.
	cl := newClient(t, k.APIKey, client.WithDirectUploadAbove(-1))
	id, err := cl.UploadImage(ctx, client.ImageBytes("red.png", red))
	if err != nil {
		t.Fatalf("UploadImage: %v", err)
	}
	s, err := cl.ImageToVideo(ctx, lite("the red flag waves"), client.UploadedImage(id))
	if err != nil {
		t.Fatalf("ImageToVideo(UploadedImage(%q)): %v", id, err)
	}
	if s.ImageInfo == nil || s.ImageInfo.OriginalName != id || s.ImageInfo.Size != int64(len(red)) {
		t.Errorf("imageInfo = %+v, want the upload %s of %d bytes", s.ImageInfo, id, len(red))
	}
	if _, err := newClient(t, k.APIKey).UploadImage(ctx, client.ImageBytes("x.gif", []byte("GIF89a..."))); err == nil || !strings.Contains(err.Error(), "not a JPEG or PNG") {
		t.Errorf("UploadImage of a GIF = %v, want an error naming JPEG or PNG", err)
	}
}
