package devstack

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/genvideo/gen/shared/settings"
	"github.com/genvideo/gen/shared/store"
)

// walkThrough is the README's walk-through: the first sh block after its
// heading, as a reader pastes it.
func walkThrough(t *testing.T) string {
	t.Helper()
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(readme), "\n## Walk-through\n")
	if !ok {
		t.Fatal(`README.md has no "## Walk-through" section`)
	}
	_, block, ok := strings.Cut(after, "\n```sh\n")
	if !ok {
		t.Fatal("the walk-through has no sh block")
	}
	script, _, ok := strings.Cut(block, "\n```\n")
	if !ok {
		t.Fatal("the walk-through's sh block does not end")
	}
	return script
}

// TestREADMEWalkThrough runs the README's walk-through with bash, curl,
// sed and ffprobe against the stack, as a reader does against `make run`
// (or, with GEN_E2E_STACK=aws-local, `make run-aws-local` with BASE
// pointed at it): only BASE and the key file differ. It fails on a step
// whose answer changed, a tool the README does not name, or a command
// that is not there.
func TestREADMEWalkThrough(t *testing.T) {
	e := startEnv(t, "", nil)
	got, _ := runWalkThrough(t, e)
	step7 := `"code":"CANCELLED"|"error":"TASK_NOT_CANCELLABLE"`
	if os.Getenv("GEN_E2E_GENERATOR") == settings.GeneratorGemini {
		// The two-video start is refused there, as the README says.
		step7 = `"error":"VALIDATION_ERROR"[^\n]*"field":"sampleCount"`
	}
	for _, want := range []struct {
		step string
		re   string
	}{
		{"1: the models", `"success":true,"models":\[\{"modelId"`},
		{"2-3: a video, completed, downloaded and probed", `(?m)^h264,\d+,\d+$`},
		{"3: its audio track", `(?m)^aac$`},
		{"4: image-to-video started", `"prompt":"the test card comes alive"`},
		{"7: cancel, or too late to", step7},
		{"8: credits", `"success":true,"balance":\d+,"held":\d+`},
		{"9: delete, then the old link", `(?m)^204\n404$`},
		{"9: status after delete", `"error":"TASK_NOT_FOUND"`},
		{"10: a loopback webhook refused", `"error":"VALIDATION_ERROR".*"field":"url"`},
	} {
		if !regexp.MustCompile(want.re).MatchString(got) {
			t.Errorf("step %s: the output has no match for %s", want.step, want.re)
		}
	}
	if n := strings.Count(got, `"status":"completed"`); n < 2 {
		t.Errorf("%d completed tasks shown, want at least the first and the [fail] one (fault injection off)", n)
	}
}

// runWalkThrough runs the README's walk-through with bash against e
// with a new key of 10,000 credits, and returns what it printed and the
// key's account; it fails the test if the script fails or writes to
// stderr.
func runWalkThrough(t *testing.T, e *env) (string, string) {
	t.Helper()
	for _, tool := range []string{"bash", "curl", "sed", "ffprobe"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("the walk-through needs %s: %v (make tools installs it)", tool, err)
		}
	}
	k := e.key(10000, store.KeyLimits{})
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, ".gen"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".gen", "dev-api-key"), []byte(k.APIKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	script := walkThrough(t)
	const baseLine = "BASE=http://127.0.0.1:8080\n"
	if !strings.HasPrefix(script, baseLine) {
		t.Fatalf("the walk-through does not start with %q", baseLine)
	}
	script = "BASE=" + e.url + "\n" + strings.TrimPrefix(script, baseLine)

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "TMPDIR="+dir)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	got := out.String()
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the walk-through printed:\n%s\nand on stderr:\n%s", got, errOut.String())
		}
	})
	if err != nil {
		t.Fatalf("bash: %v", err)
	}
	if errOut.Len() > 0 {
		t.Errorf("the walk-through wrote to stderr: %s", errOut.String())
	}
	return got, k.AccountID
}
