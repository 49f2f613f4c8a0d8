package playground_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
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
		settings.GeminiAPIKey: "AIza-fake", settings.GeminiEndpoint: fake.URL})
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
		settings.OpenAIEndpoint: fake.URL, settings.OpenAIAPIKey: "sk-fake", settings.OpenAIProfile: settings.ProfileOpenAI, settings.ProviderPollInterval: "1s"})
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
// generator settings vars, makes a key, and runs the Playwright script
// against it with {base, key, chromium} on its stdin; it answers the
// script's stdout (its JSON report).
func runOnBackend(t *testing.T, script string, vars settings.Vars) []byte {
	t.Helper()
	if os.Getenv(nodetools.SkipEnv) == "1" {
		t.Skipf("%s=1: skipping the browser test (it needs npm and Chromium)", nodetools.SkipEnv)
	}
	if _, err := os.Stat(chromiumPath); err != nil {
		t.Fatalf("no Chromium at %s (make tools installs it), or set %s=1", chromiumPath, nodetools.SkipEnv)
	}
	tools := nodetools.Require(t, playwrightPkg)
	r := settings.NewReader(vars.Lookup)
	provider := r.Provider()
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cfg := devstack.Config{Addr: "127.0.0.1:0", DataDir: dir, SweepInterval: time.Hour,
		Logger: slog.New(slog.DiscardHandler), Provider: provider}
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
	input, _ := json.Marshal(map[string]any{"base": base, "key": k.APIKey, "chromium": chromiumPath})
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
	return stdout.Bytes()
}
