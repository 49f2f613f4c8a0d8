package playground_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/genvideo/gen/shared/admin"
	"github.com/genvideo/gen/shared/client"
	"github.com/genvideo/gen/shared/devstack"
	"github.com/genvideo/gen/shared/nodetools"
	"github.com/genvideo/gen/shared/store"
	"github.com/genvideo/gen/shared/testing/logtest"
	"github.com/genvideo/gen/shared/testing/openapitest"
)

// The browser test drives Debian's Chromium with Playwright (npm, pinned)
// against the service as `make run` serves it.
const (
	playwrightPkg = "playwright-core@1.65.1"
	chromiumPath  = "/usr/bin/chromium"
	// updateScreenshotsEnv=1 writes the screenshots into the docs
	// (infra/docs/playground), which playground.md and the README show.
	updateScreenshotsEnv = "GEN_UPDATE_SCREENSHOTS"
	screenshotsDir       = "../../infra/docs/playground"
)

// checked wraps the served handler: each exchange under /api/ is checked
// against the OpenAPI document, the request as a client's (its
// parameters, key and body) and the response as the contract's; every
// path is recorded.
type checked struct {
	t    *testing.T
	v    *openapitest.Validator
	next http.Handler

	mu    sync.Mutex
	paths []string
}

func (c *checked) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c.mu.Lock()
	c.paths = append(c.paths, r.Method+" "+r.URL.Path)
	c.mu.Unlock()
	if !strings.HasPrefix(r.URL.Path, "/api/") {
		c.next.ServeHTTP(w, r)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	if err != nil {
		c.t.Errorf("%s %s: read the body: %v", r.Method, r.URL.Path, err)
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	// The validator routes by absolute URL, as a client's request has.
	abs := r.Clone(r.Context())
	abs.URL.Scheme, abs.URL.Host = "http", r.Host
	if startPath.MatchString(r.URL.Path) && r.Header.Get("Idempotency-Key") == "" {
		c.t.Errorf("POST %s without an Idempotency-Key", r.URL.Path)
	}
	if err := c.v.ValidateRequest(r.Context(), abs, body); err != nil {
		c.t.Errorf("openapi: the page's request does not match the document: %v", err)
	}
	rec := httptest.NewRecorder()
	c.next.ServeHTTP(rec, r)
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.Code)
	w.Write(rec.Body.Bytes())
	openapitest.CheckResponse(c.t, abs, rec.Code, rec.Header(), rec.Body.Bytes())
}

// startPath is a start's path, an extension's too: each carries an
// Idempotency-Key (a cancel is idempotent by itself; an upload is not a
// charge).
var startPath = regexp.MustCompile(`^/api/gen/(text-to-video|image-to-video|first-last-frame|extend/[^/]+)$`)

// report is what the browser script saw.
type report struct {
	Requests       []string  `json:"requests"`
	KeyInStorage   bool      `json:"keyInStorage"`
	Cookies        string    `json:"cookies"`
	URLs           []string  `json:"urls"`
	KeyboardFocus  []string  `json:"keyboardFocus"`
	Cost           string    `json:"cost"`
	LiteFirstLast  bool      `json:"liteInFirstLast"`
	Durations      []float64 `json:"durations"`
	Played         []float64 `json:"played"`
	Downloads      []string  `json:"downloads"`
	HistoryPages   []string  `json:"historyPages"`
	HistoryRows    []int     `json:"historyRows"`
	Completed      string    `json:"completed"`
	Message402     string    `json:"message402"`
	Message429     string    `json:"message429"`
	Countdown429   int       `json:"countdown429"`
	TaskStatuses   []string  `json:"taskStatuses"`
	ImageRefusal   string    `json:"imageRefusal"`
	CSPViolations  []string  `json:"cspViolations"`
	ConsoleErrors  []string  `json:"consoleErrors"`
	PhoneOverflows bool      `json:"phoneOverflows"`
	// TasksAfterSwitch counts the task cards shown after another key
	// replaced the first: none of the first account's may stay.
	TasksAfterSwitch int `json:"tasksAfterSwitch"`

	// Cancel: the credits view before, during and after, the card.
	BalanceBefore      string   `json:"balanceBefore"`
	BalanceDuringSlow  string   `json:"balanceDuringSlow"`
	HeldDuringSlow     string   `json:"heldDuringSlow"`
	CancelStatus       string   `json:"cancelStatus"`
	CancelledActions   []string `json:"cancelledActions"`
	FocusAfterCancel   string   `json:"focusAfterCancel"`
	BalanceAfterCancel string   `json:"balanceAfterCancel"`
	LedgerTop          string   `json:"ledgerTop"`
	CancelledTaskID    string   `json:"cancelledTaskId"`
	// Delete: the dialog's focus, Escape, what went, the stale tab's 404.
	DialogFocus        []string `json:"dialogFocus"`
	KeptOnEscape       bool     `json:"keptOnEscape"`
	HistoryAfterDelete string   `json:"historyAfterDelete"`
	DeletedRowGone     bool     `json:"deletedRowGone"`
	DeletedCardGone    bool     `json:"deletedCardGone"`
	DeleteNote         string   `json:"deleteNote"`
	Message404         string   `json:"message404"`
	// The ledger paged two entries at a time: older, then newer.
	LedgerPages []string `json:"ledgerPages"`
	LedgerRows  []string `json:"ledgerRows"`
}

// TestPlaygroundInChromium: a person with a key, in a real browser, on a
// fresh stack served as `make run` serves it: starts a text-to-video, an
// image-to-video and a first-last-frame generation (one frame large enough
// to go through a direct upload) and one that fails, watches them end,
// reads the failure and its refund, plays the videos,
// meets a 402 and a 429 and reads their messages, and pages the history.
// The page asks nothing of any other origin, and its every exchange with
// the API matches the OpenAPI document.
func TestPlaygroundInChromium(t *testing.T) {
	if os.Getenv(nodetools.SkipEnv) == "1" {
		t.Skipf("%s=1: skipping the browser test (it needs npm and Chromium)", nodetools.SkipEnv)
	}
	if _, err := os.Stat(chromiumPath); err != nil {
		t.Fatalf("no Chromium at %s: install Debian's chromium (make tools does, as root), or set %s=1 to skip the tests that need Node.js tools and a browser",
			chromiumPath, nodetools.SkipEnv)
	}
	if _, err := exec.LookPath("ffmpeg"); err != nil {
		t.Fatalf("no ffmpeg: make tools installs it")
	}
	tools := nodetools.Require(t, playwrightPkg)

	v, err := openapitest.NewValidator()
	if err != nil {
		t.Fatal(err)
	}
	rec := &checked{t: t, v: v}
	dir := t.TempDir()
	cfg := devstack.Config{
		Addr:          "127.0.0.1:0",
		DataDir:       dir,
		SweepInterval: time.Hour,
		Logger:        slog.New(slog.DiscardHandler),
		// A prompt with [fail] fails, to show a failure and its refund.
		FaultInjection: true,
		Hooks: devstack.Hooks{WrapHandler: func(h http.Handler) http.Handler {
			rec.next = h
			return rec
		}},
	}
	base := serve(t, cfg)
	devKey, err := os.ReadFile(devstack.DevKeyPath(dir))
	if err != nil {
		t.Fatal(err)
	}

	// Three more accounts, made as genctl makes them beside a running
	// server: a Pro one for the main walk (the page follows five
	// generations, the credits and the history in a second tab; a
	// Standard key's 60 requests a minute leave too little margin on a
	// busy machine), one too poor for any generation, and one whose key
	// may make three requests a minute.
	st, err := devstack.OpenStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	a := admin.New(st)
	pro, err := a.CreateKey(context.Background(), admin.KeyRequest{Name: "playground", Credits: 10000, Tier: "pro"})
	if err != nil {
		t.Fatal(err)
	}
	poor, err := a.CreateKey(context.Background(), admin.KeyRequest{Name: "poor", Credits: 10})
	if err != nil {
		t.Fatal(err)
	}
	tight, err := a.CreateKey(context.Background(), admin.KeyRequest{Name: "tight", Credits: 1000, Tier: "enterprise",
		Limits: store.KeyLimits{RequestsPerMinute: 3, RequestsPerDay: 1000, StartsPerMinute: 10, MaxInFlight: 5}})
	if err != nil {
		t.Fatal(err)
	}
	st.Close()

	work := t.TempDir()
	picture := filepath.Join(work, "picture.png")
	writePicture(t, picture, 640, 360, false)
	// Over half of what a start request may carry: first-last-frame sends
	// it through a direct upload.
	large := filepath.Join(work, "noise.png")
	writePicture(t, large, 1024, 1024, true)
	if fi, err := os.Stat(large); err != nil || fi.Size() <= client.DefaultDirectUploadAbove/2 {
		t.Fatalf("the large picture is %v bytes, want over %d (%v)", fi.Size(), client.DefaultDirectUploadAbove/2, err)
	}
	shots := filepath.Join(work, "screenshots")
	if os.Getenv(updateScreenshotsEnv) == "1" {
		shots, _ = filepath.Abs(screenshotsDir)
	}
	if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}
	input, _ := json.Marshal(map[string]any{
		"base": base, "mainKey": pro.APIKey, "poorKey": poor.APIKey, "tightKey": tight.APIKey,
		"picture": picture, "largePicture": large, "screenshots": shots, "chromium": chromiumPath, "userDataDir": filepath.Join(work, "profile"),
		"duration": 4,
	})
	script, _ := filepath.Abs("testdata/browser.cjs")
	runCtx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := tools.Command(runCtx, script)
	cmd.Stdin = bytes.NewReader(input)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("browser script: %v\nstderr:\n%s\nstdout:\n%s", err, stderr.String(), stdout.String())
	}
	t.Logf("browser script:\n%s", stderr.String())
	var r report
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		t.Fatalf("browser script's report: %v\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	checkReport(t, r, base, []string{pro.APIKey, strings.TrimSpace(string(devKey)), poor.APIKey, tight.APIKey})
	t.Logf("screenshots in %s", shots)

	// The page made the requests a client makes, and every one reached
	// the server checked.
	rec.mu.Lock()
	defer rec.mu.Unlock()
	seen := strings.Join(rec.paths, "\n")
	for _, want := range []string{"GET /\n", "GET /playground/app.js", "GET /api/gen/models", "POST /api/gen/text-to-video",
		"POST /api/gen/image-to-video", "POST /api/gen/first-last-frame", "POST /api/gen/uploads", "POST /uploads", "GET /api/gen/status/", "GET /api/gen/download/", "GET /api/gen/history", "GET /files/",
		"POST /api/gen/cancel/", "DELETE /api/gen/tasks/", "GET /api/gen/credits"} {
		if !strings.Contains(seen+"\n", want) {
			t.Errorf("the server saw no %q; it saw:\n%s", want, seen)
		}
	}
}

func checkReport(t *testing.T, r report, base string, keys []string) {
	t.Helper()
	for _, u := range r.Requests {
		if !strings.HasPrefix(u, base+"/") && !strings.HasPrefix(u, "data:") && !strings.HasPrefix(u, "blob:"+base+"/") {
			t.Errorf("the page requested %s, outside %s", u, base)
		}
	}
	if len(r.Requests) == 0 {
		t.Error("the script logged no request")
	}
	for _, k := range keys {
		for _, where := range append([]string{r.Cookies}, r.URLs...) {
			if strings.Contains(where, k) {
				t.Errorf("a key is in a cookie or URL: %q", where)
			}
		}
	}
	if !r.KeyInStorage || r.Cookies != "" {
		t.Errorf("key in session storage %v, cookies %q; want the key there and no cookie", r.KeyInStorage, r.Cookies)
	}
	if strings.Join(r.KeyboardFocus, ",") != "skip,docs,api-key" {
		t.Errorf("Tab moved focus through %v, want the skip link, the docs link, then the key field", r.KeyboardFocus)
	}
	if r.Cost != "Cost: 65 credits (Gen 3.1 Lite (720p), with audio: 65 x 1 video)." {
		t.Errorf("cost shown %q", r.Cost)
	}
	if r.LiteFirstLast {
		t.Error("the Lite model is offered for first-last-frame, which it does not support")
	}
	if !strings.Contains(r.ImageRefusal, "not a JPEG or PNG") {
		t.Errorf("a text file as the image: %q, want it refused before upload", r.ImageRefusal)
	}
	if len(r.Durations) != 3 {
		t.Fatalf("durations %v, want three videos", r.Durations)
	}
	for i, d := range r.Durations {
		if d < 3.8 || d > 4.3 {
			t.Errorf("video %d lasts %.2f s, want about 4", i, d)
		}
		if r.Played[i] <= 0 {
			t.Errorf("video %d did not play (currentTime %v)", i, r.Played[i])
		}
	}
	var completed, failed int
	for _, s := range r.TaskStatuses {
		switch {
		case strings.HasPrefix(s, "Completed: 1 video."):
			completed++
		case strings.HasPrefix(s, "Failed (GENERATION_FAILED): ") && strings.HasSuffix(s, " Refunded: 65 credits."):
			failed++
		default:
			t.Errorf("task status %q", s)
		}
	}
	if completed != 3 || failed != 1 {
		t.Errorf("task statuses %q, want three completed and one failed with its refund", r.TaskStatuses)
	}
	if len(r.Downloads) != 3 {
		t.Errorf("download links %v, want three", r.Downloads)
	}
	if len(r.HistoryPages) != 2 || r.HistoryPages[0] != "Page 1 of 2 (4 generations)" || r.HistoryPages[1] != "Page 2 of 2 (4 generations)" ||
		len(r.HistoryRows) != 2 || r.HistoryRows[0] != 2 || r.HistoryRows[1] != 2 {
		t.Errorf("history pages %q with rows %v, want two pages of two", r.HistoryPages, r.HistoryRows)
	}
	if r.Completed != "Page 1 of 1 (3 generations)" {
		t.Errorf("history of completed generations: %q", r.Completed)
	}
	if !strings.Contains(r.Message402, "Not enough credits") || !strings.Contains(r.Message402, "costs 65 credits; the account has 10") {
		t.Errorf("402 shown as %q", r.Message402)
	}
	if !strings.Contains(r.Message429, "Rate limit reached.") || r.Countdown429 < 1 || r.Countdown429 > 60 {
		t.Errorf("429 shown as %q with a countdown of %d s", r.Message429, r.Countdown429)
	}
	if len(r.CSPViolations) > 0 || len(r.ConsoleErrors) > 0 {
		t.Errorf("CSP violations %v, console errors %v", r.CSPViolations, r.ConsoleErrors)
	}
	if r.TasksAfterSwitch != 0 {
		t.Errorf("%d task cards of the first key's account still shown under another key", r.TasksAfterSwitch)
	}
	if r.PhoneOverflows {
		t.Error("on a phone-sized screen the page is wider than the screen")
	}
	checkCancelDelete(t, r)
}

// checkCancelDelete: the cancelled generation failed with CANCELLED and
// its 65 credits came back, in the balance and at the top of the ledger;
// the deleted task left the history and the page, with the keyboard
// alone; a stale tab got the contract's 404; the ledger paged.
func checkCancelDelete(t *testing.T, r report) {
	t.Helper()
	var before, during, after int
	if _, err := fmt.Sscanf(r.BalanceBefore, "%d credits", &before); err != nil {
		t.Errorf("balance before the cancel %q: %v", r.BalanceBefore, err)
	}
	fmt.Sscanf(r.BalanceDuringSlow, "%d credits", &during)
	fmt.Sscanf(r.BalanceAfterCancel, "%d credits", &after)
	if during != before-65 || after != before {
		t.Errorf("balance %d, then %d while the slow generation ran, %d after its cancel; want %d, %d, %d",
			before, during, after, before, before-65, before)
	}
	if r.HeldDuringSlow != "65 credits (1 generation)" {
		t.Errorf("held while the slow generation ran: %q", r.HeldDuringSlow)
	}
	if !strings.HasPrefix(r.CancelStatus, "Failed (CANCELLED): ") || !strings.HasSuffix(r.CancelStatus, " Refunded: 65 credits.") {
		t.Errorf("the cancelled card says %q, want failed with CANCELLED and the refund", r.CancelStatus)
	}
	if strings.Join(r.CancelledActions, ",") != "Delete" {
		t.Errorf("the cancelled card offers %v, want Delete", r.CancelledActions)
	}
	if r.FocusAfterCancel != "Delete in its card" {
		t.Errorf("after the cancel the focus is on %q, want the card's Delete that replaced Cancel", r.FocusAfterCancel)
	}
	if want := "Refunded (CANCELLED) | +65 | " + strconv.Itoa(after) + " | " + r.CancelledTaskID; r.LedgerTop != want {
		t.Errorf("the ledger's newest entry is %q, want %q", r.LedgerTop, want)
	}
	if strings.Join(r.DialogFocus, ",") != "confirm-keep,confirm-yes" || !r.KeptOnEscape {
		t.Errorf("the delete dialog's focus went %v (want Keep it, then Tab to Delete for good); Escape kept the task: %v", r.DialogFocus, r.KeptOnEscape)
	}
	if r.HistoryAfterDelete != "Page 1 of 1 (4 generations)" || !r.DeletedRowGone || !r.DeletedCardGone || !strings.HasPrefix(r.DeleteNote, "Deleted ") {
		t.Errorf("after the delete: history %q, row gone %v, card gone %v, note %q", r.HistoryAfterDelete, r.DeletedRowGone, r.DeletedCardGone, r.DeleteNote)
	}
	if !strings.HasSuffix(r.Message404, "(TASK_NOT_FOUND)") {
		t.Errorf("a stale tab's delete of the deleted task shows %q, want the contract's 404", r.Message404)
	}
	if strings.Join(r.LedgerPages, ",") != "Page 1,Page 2,Page 1" || len(r.LedgerRows) != 3 ||
		r.LedgerRows[0] != r.LedgerRows[2] || r.LedgerRows[0] == r.LedgerRows[1] || !strings.HasPrefix(r.LedgerRows[0], "Refunded (CANCELLED) | +65") {
		t.Errorf("ledger pages %q with rows %q, want page 1 (the refund first), an older page 2, and page 1 again", r.LedgerPages, r.LedgerRows)
	}
}

// writePicture writes a w x h PNG: a gradient, or noise, which PNG
// cannot compress (3 bytes a pixel).
func writePicture(t *testing.T, path string, w, h int, noise bool) {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	rnd := rand.New(rand.NewPCG(1, 2))
	for y := range h {
		for x := range w {
			c := color.RGBA{uint8(x * 255 / w), uint8(y * 255 / h), 160, 255}
			if noise {
				c = color.RGBA{uint8(rnd.Uint32()), uint8(rnd.Uint32()), uint8(rnd.Uint32()), 255}
			}
			img.Set(x, y, c)
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// serve runs devstack.Serve, as make run does, until the test ends, and
// answers the base URL it prints.
func serve(t *testing.T, cfg devstack.Config) string {
	t.Helper()
	ctx, stop := context.WithCancel(context.Background())
	out := &logtest.Buffer{}
	ready := out.Seen("Try:") // Serve prints how to use it once it listens
	done := make(chan error, 1)
	go func() { done <- devstack.Serve(ctx, cfg, out) }()
	select {
	case <-ready:
	case err := <-done:
		stop()
		t.Fatalf("Serve ended before it served: %v\n%s", err, out)
	}
	t.Cleanup(func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	m := regexp.MustCompile(`gen is running on (http://\S+)`).FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("Serve's output names no address:\n%s", out)
	}
	return m[1]
}
