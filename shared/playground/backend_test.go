package playground_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/genvideo/gen/shared/admin"
	"github.com/genvideo/gen/shared/devstack"
	"github.com/genvideo/gen/shared/nodetools"
	"github.com/genvideo/gen/shared/settings"
	"github.com/genvideo/gen/shared/testing/openaitest"
	"github.com/genvideo/gen/shared/testing/openapitest"
	"github.com/genvideo/gen/shared/testing/veotest"
)

// TestPlaygroundFollowsBackendLimits: on the Gemini API (the strict
// fake), the form offers what the backend takes for the model, mode and
// duration: 1080p at 8 s only, one video, no seed, allow_all for text
// and allow_adult for images; and a start left at the form's defaults
// is accepted, not refused.
func TestPlaygroundFollowsBackendLimits(t *testing.T) {
	fake := httptest.NewServer(veotest.New(veotest.Config{Delay: time.Second}))
	t.Cleanup(fake.Close)
	stdout := runOnBackend(t, "testdata/backend.cjs", settings.Vars{settings.Generator: settings.GeneratorGemini,
		settings.GeminiAPIKey: "AIza-fake", settings.GeminiEndpoint: fake.URL}, true, nil)
	var got struct {
		ResolutionsAt8, ResolutionsAt4, PersonText, PersonImage, SampleCounts []string
		SeedDisabled                                                          bool
		StartStatus                                                           int
		StartBody                                                             string
	}
	if err := json.Unmarshal(stdout, &got); err != nil {
		t.Fatalf("report %s: %v", stdout, err)
	}
	for _, c := range []struct {
		name      string
		got, want []string
	}{
		{"resolutions at 8 s", got.ResolutionsAt8, []string{"1080p", "720p"}},
		{"resolutions at 4 s", got.ResolutionsAt4, []string{"720p"}},
		{"people, text", got.PersonText, []string{"allow_all"}},
		{"people, image", got.PersonImage, []string{"allow_adult"}},
		{"videos", got.SampleCounts, []string{"1"}},
	} {
		if !slices.Equal(c.got, c.want) {
			t.Errorf("%s offered %v, want %v", c.name, c.got, c.want)
		}
	}
	if !got.SeedDisabled {
		t.Errorf("the seed field is open on a backend that takes no seed")
	}
	if got.StartStatus != 202 {
		t.Errorf("the form's default start = %d %s, want 202", got.StartStatus, got.StartBody)
	}
}

// TestPlaygroundShowsProviderProgress: on a host that reports how far a
// job is (the OpenAI videos shape, its strict fake), the task's card
// shows the provider's percentage, rising, while it processes.
func TestPlaygroundShowsProviderProgress(t *testing.T) {
	fake := httptest.NewServer(openaitest.New(openaitest.Config{Polls: 12}))
	t.Cleanup(fake.Close)
	stdout := runOnBackend(t, "testdata/progress.cjs", settings.Vars{settings.Generator: settings.GeneratorOpenAI,
		settings.OpenAIEndpoint: fake.URL, settings.OpenAIAPIKey: "sk-fake", settings.OpenAIProfile: settings.ProfileOpenAI, settings.ProviderPollInterval: "1s"}, false, nil)
	var got struct {
		Seen []struct {
			Bar  float64
			Text string
		}
		Finished string
	}
	if err := json.Unmarshal(stdout, &got); err != nil {
		t.Fatalf("report %s: %v", stdout, err)
	}
	// Before the host's first report the card estimates from the
	// elapsed time; from then on it shows the host's percentage.
	done := regexp.MustCompile(`; (\d+)% done\.$`)
	var percents []int
	for _, s := range got.Seen {
		m := done.FindStringSubmatch(s.Text)
		if m == nil {
			if len(percents) > 0 {
				t.Errorf("after the host's progress, the card went back to %q", s.Text)
			}
			continue
		}
		p, _ := strconv.Atoi(m[1])
		if s.Bar != float64(p) {
			t.Errorf("the bar shows %v with the line %q", s.Bar, s.Text)
		}
		percents = append(percents, p)
	}
	if len(percents) == 0 || !slices.IsSorted(percents) || percents[0] < 1 || percents[len(percents)-1] > 99 {
		t.Errorf("percentages shown %v (cards %+v), want the host's, rising", percents, got.Seen)
	}
	if !strings.HasPrefix(got.Finished, "Done in") {
		t.Errorf("the card ended with %q, want the completion", got.Finished)
	}
}

// runOnBackend serves the stack as `make run` builds it with the
// generator settings vars, makes a key (1000 credits), and runs the
// Playwright script against it with {base, key, chromium} and extra on
// its stdin; it answers the script's stdout (its JSON report). With
// checkAPI every exchange under /api/ is checked against the OpenAPI
// document, as in TestPlaygroundInChromium; the check holds each answer
// until it is whole, so a test that watches a live event stream goes
// without it.
func runOnBackend(t *testing.T, script string, vars settings.Vars, checkAPI bool, extra map[string]any) []byte {
	t.Helper()
	if os.Getenv(nodetools.SkipEnv) == "1" {
		t.Skipf("%s=1: skipping the browser test (it needs npm and Chromium)", nodetools.SkipEnv)
	}
	if _, err := os.Stat(chromiumPath); err != nil {
		t.Fatalf("no Chromium at %s (make tools installs it), or set %s=1", chromiumPath, nodetools.SkipEnv)
	}
	tools := nodetools.Require(t, playwrightPkg)
	r := settings.NewReader(vars.Lookup)
	provider := r.ProviderConfig()
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cfg := devstack.Config{Addr: "127.0.0.1:0", DataDir: dir, SweepInterval: time.Hour,
		Logger: slog.New(slog.DiscardHandler), Provider: provider}
	if checkAPI {
		v, err := openapitest.NewValidator()
		if err != nil {
			t.Fatal(err)
		}
		rec := &checked{t: t, v: v}
		cfg.Hooks.WrapHandler = func(h http.Handler) http.Handler {
			rec.next = h
			return rec
		}
	}
	base := serve(t, cfg)
	st, err := devstack.OpenStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	k, err := admin.New(st).CreateKey(context.Background(), admin.KeyRequest{Name: "backend", Credits: 1000})
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	in := map[string]any{"base": base, "key": k.APIKey, "chromium": chromiumPath}
	maps.Copy(in, extra)
	input, _ := json.Marshal(in)
	path, _ := filepath.Abs(script)
	runCtx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := tools.Command(runCtx, path)
	cmd.Stdin = bytes.NewReader(input)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("browser script: %v\nstderr:\n%s", err, stderr.String())
	}
	t.Logf("browser script:\n%s", stderr.String())
	return stdout.Bytes()
}

// TestPlaygroundReferencesAndExtension (issue 37): on the Gemini API
// (the strict Veo fake), the form offers reference images for the models
// whose /models entry takes them and 4k where the model renders it, at
// its price; a person adds reference images (one sent as a form's file,
// two through direct uploads), starts, sees both complete, extends the
// first video from its card after reading the quote, and sees the
// extension complete as a task of its own with the balance down by the
// three charges. An extension of a task another client deleted while
// the dialog was open is refused with the contract's message and
// charges nothing.
func TestPlaygroundReferencesAndExtension(t *testing.T) {
	fake := veotest.New(veotest.Config{Delay: time.Second, APIKey: "AIza-fake"})
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	work := t.TempDir()
	picture, large := filepath.Join(work, "picture.png"), filepath.Join(work, "noise.png")
	writePicture(t, picture, 640, 360, false)
	// Over half of what a start request may carry: with a second image,
	// both go through direct uploads.
	writePicture(t, large, 1024, 1024, true)
	shots := filepath.Join(work, "screenshots")
	if os.Getenv(updateScreenshotsEnv) == "1" {
		shots, _ = filepath.Abs(screenshotsDir)
	}
	if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}
	stdout := runOnBackend(t, "testdata/extend.cjs", settings.Vars{settings.Generator: settings.GeneratorGemini,
		settings.GeminiAPIKey: "AIza-fake", settings.GeminiEndpoint: srv.URL, settings.ProviderPollInterval: "1s"},
		true, map[string]any{"picture": picture, "largePicture": large, "screenshots": shots})
	var got struct {
		Resolutions      map[string][]string
		Cost4K, CostRefs string
		RefsShown        map[string]bool
		RefsDurations    []string
		RefsAspects      []string
		RefsPeople       []string
		Starts           []struct {
			Status            int
			ContentType, Body string
		}
		Completed     []string
		ExtendButtons int
		Quote         string
		ExtendStart   struct {
			Status int
			Body   string
		}
		ExtensionCard       string
		ExtensionStatus     string
		ExtensionHistory    bool
		Balance             string
		RefusedQuote        string
		RefusedStatus       int
		RefusedMessage      string
		BalanceAfterRefusal string
		FirstTaskID         string
		StaleRowGone        bool
	}
	if err := json.Unmarshal(stdout, &got); err != nil {
		t.Fatalf("report %s: %v", stdout, err)
	}
	// What the form offers comes from /models: 4k for Quality alone, at
	// 8 s, priced apart; reference images for the models that take them
	// in text to video; at 8 s, 16:9 and allow_adult with them on the
	// Gemini API.
	if r := got.Resolutions; !slices.Contains(r["quality"], "4k") || slices.Contains(r["fast"], "4k") || slices.Contains(r["quality4s"], "4k") {
		t.Errorf("resolutions offered %v: want 4k for Quality at 8 s only", r)
	}
	if got.Cost4K != "Cost: 750 credits (Gen 3.1 Quality at 4k, with audio: 750 x 1 video)." {
		t.Errorf("the cost at 4k reads %q", got.Cost4K)
	}
	if want := map[string]bool{"fast": true, "quality": true, "lite": false, "image": false}; !maps.Equal(got.RefsShown, want) {
		t.Errorf("reference images offered %v, want %v", got.RefsShown, want)
	}
	if !slices.Equal(got.RefsDurations, []string{"8"}) || !slices.Equal(got.RefsAspects, []string{"16:9"}) || !slices.Equal(got.RefsPeople, []string{"allow_adult"}) {
		t.Errorf("with reference images the form offers durations %v, aspect ratios %v, people %v; want 8, 16:9, allow_adult",
			got.RefsDurations, got.RefsAspects, got.RefsPeople)
	}
	if got.CostRefs != "Cost: 190 credits (Gen 3.1 Fast, with audio: 190 x 1 video, with 1 reference image)." {
		t.Errorf("the cost with a reference image reads %q", got.CostRefs)
	}
	if len(got.Starts) != 2 || got.Starts[0].Status != 202 || got.Starts[1].Status != 202 ||
		!strings.HasPrefix(got.Starts[0].ContentType, "multipart/form-data") || got.Starts[1].ContentType != "application/json" ||
		!strings.Contains(got.Starts[1].Body, `"referenceImages":["upl_`) {
		t.Fatalf("the starts with reference images: %+v; want a form, then a JSON body naming uploads, both 202", got.Starts)
	}
	// What reached Google: each start's images, in order, as asset images.
	pic, _ := os.ReadFile(picture)
	noise, _ := os.ReadFile(large)
	for prompt, want := range map[string][][]byte{"the fox in the dress": {pic}, "the fox and the noise": {pic, noise}} {
		refs := submittedRefs(t, fake, prompt)
		if len(refs) != len(want) {
			t.Errorf("%q reached Google with %d reference images, want %d", prompt, len(refs), len(want))
			continue
		}
		for i := range want {
			if !bytes.Equal(refs[i], want[i]) {
				t.Errorf("%q: reference image %d is not the file picked", prompt, i+1)
			}
		}
	}
	if len(got.Completed) != 2 || !strings.HasPrefix(got.Completed[0], "Completed: 1 video.") || !strings.HasPrefix(got.Completed[1], "Completed: 1 video.") {
		t.Errorf("the starts ended %q", got.Completed)
	}
	if got.ExtendButtons < 2 {
		t.Errorf("%d finished cards offer Extend, want both 720p videos", got.ExtendButtons)
	}
	// The extension: its quote, its start, its own card and history entry.
	var started struct {
		TaskID, ExtendsTaskID string
		CreditsUsed           int
	}
	json.Unmarshal([]byte(got.ExtendStart.Body), &started)
	if got.ExtendStart.Status != 202 || started.ExtendsTaskID != got.FirstTaskID || started.CreditsUsed != 190 {
		t.Fatalf("the extension's start answered %d %s", got.ExtendStart.Status, got.ExtendStart.Body)
	}
	if want := "Cost: 190 credits; the balance would go from 620 to 430."; got.Quote != want {
		t.Errorf("the extension's quote reads %q, want %q", got.Quote, want)
	}
	if !strings.Contains(got.ExtensionCard, "video-extension") || !strings.Contains(got.ExtensionCard, started.TaskID) ||
		!strings.HasPrefix(got.ExtensionStatus, "Completed: 1 video.") || !got.ExtensionHistory {
		t.Errorf("the extension's card %q ended %q (in the history: %v)", got.ExtensionCard, got.ExtensionStatus, got.ExtensionHistory)
	}
	if _, p := submitted(t, fake, "and then she dances"); p == nil {
		t.Error("the extension did not reach Google")
	}
	if got.Balance != "430 credits" {
		t.Errorf("the balance after two starts and an extension reads %q, want 1000 - 3 x 190", got.Balance)
	}
	// The refusal: the contract's message in the dialog, nothing charged.
	if !strings.HasPrefix(got.RefusedQuote, "Cost: 190 credits;") {
		t.Errorf("the quote before the delete read %q", got.RefusedQuote)
	}
	if got.RefusedStatus != 400 || !strings.Contains(got.RefusedMessage, "(field taskId)") || got.BalanceAfterRefusal != got.Balance {
		t.Errorf("the extension of a deleted task: %d, %q, balance %q (before %q); want a 400 naming taskId and nothing charged",
			got.RefusedStatus, got.RefusedMessage, got.BalanceAfterRefusal, got.Balance)
	}
	if !got.StaleRowGone {
		t.Error("after the refusal the history still shows the deleted task")
	}
	if n := fake.Accepted("not after the delete"); n != 0 {
		t.Errorf("the refused extension reached Google %d times", n)
	}
}

// submitted is the instance and parameters of the fake's accepted submit
// of prompt (nil when there is none).
func submitted(t *testing.T, fake *veotest.Server, prompt string) (map[string]any, map[string]any) {
	t.Helper()
	for _, s := range fake.Submits() {
		var in, p map[string]any
		json.Unmarshal(s.Instance, &in)
		json.Unmarshal(s.Parameters, &p)
		if in["prompt"] == prompt && s.Status == http.StatusOK {
			return in, p
		}
	}
	return nil, nil
}

// submittedRefs are the bytes of the reference images prompt's submit
// carried, as asset images.
func submittedRefs(t *testing.T, fake *veotest.Server, prompt string) [][]byte {
	t.Helper()
	in, _ := submitted(t, fake, prompt)
	var out [][]byte
	refs, _ := in["referenceImages"].([]any)
	for _, r := range refs {
		ref, _ := r.(map[string]any)
		img, _ := ref["image"].(map[string]any)
		b, err := base64.StdEncoding.DecodeString(fmt.Sprint(img["bytesBase64Encoded"]))
		if ref["referenceType"] != "asset" || err != nil {
			t.Errorf("%q: reference image %v is not an asset image with its bytes", prompt, ref["referenceType"])
		}
		out = append(out, b)
	}
	return out
}
