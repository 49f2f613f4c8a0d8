package playground_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/genvideo/gen/shared/admin"
	"github.com/genvideo/gen/shared/devstack"
	"github.com/genvideo/gen/shared/nodetools"
	"github.com/genvideo/gen/shared/settings"
	"github.com/genvideo/gen/shared/veo/veotest"
)

// TestPlaygroundFollowsBackendLimits: on the Gemini API (the strict
// fake), the form offers what the backend takes for the model, mode and
// duration: 1080p at 8 s only, one video, no seed, allow_all for text
// and allow_adult for images; and a start left at the form's defaults
// is accepted, not refused.
func TestPlaygroundFollowsBackendLimits(t *testing.T) {
	if os.Getenv(nodetools.SkipEnv) == "1" {
		t.Skipf("%s=1: skipping the browser test (it needs npm and Chromium)", nodetools.SkipEnv)
	}
	if _, err := os.Stat(chromiumPath); err != nil {
		t.Fatalf("no Chromium at %s (make tools installs it), or set %s=1", chromiumPath, nodetools.SkipEnv)
	}
	tools := nodetools.Require(t, playwrightPkg)
	fake := httptest.NewServer(veotest.New(veotest.Config{Delay: time.Second}))
	t.Cleanup(fake.Close)
	r := settings.NewReader(settings.Vars{settings.Generator: settings.GeneratorGemini,
		settings.GeminiAPIKey: "AIza-fake", settings.GeminiEndpoint: fake.URL}.Lookup)
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
	k, err := admin.New(st).CreateKey(context.Background(), admin.KeyRequest{Name: "gemini", Credits: 1000})
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	input, _ := json.Marshal(map[string]any{"base": base, "key": k.APIKey, "chromium": chromiumPath})
	script, _ := filepath.Abs("testdata/backend.cjs")
	runCtx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := tools.Command(runCtx, script)
	cmd.Stdin = bytes.NewReader(input)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("browser script: %v\nstderr:\n%s", err, stderr.String())
	}
	var got struct {
		ResolutionsAt8, ResolutionsAt4, PersonText, PersonImage, SampleCounts []string
		SeedDisabled                                                          bool
		StartStatus                                                           int
		StartBody                                                             string
	}
	if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
		t.Fatalf("report %s: %v", stdout.String(), err)
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
