package workflow_test

import (
	"context"
	"os/exec"
	"testing"
	"testing/synctest"

	"github.com/genvideo/gen/shared/faults"
	"github.com/genvideo/gen/shared/provider/render"
	"github.com/genvideo/gen/shared/task"
)

// TestWithRenderer runs the workflow with the real ffmpeg generator, with
// the prompt directives of shared/faults around it as the local service
// has them when fault injection is on. It proves that their errors are
// classified through the interfaces this package declares (Transient,
// FailureCode) and that provider.Job converts to render.Job: if either
// drifts, this test fails or stops compiling.
func TestWithRenderer(t *testing.T) {
	if _, err := exec.LookPath("ffmpeg"); err != nil {
		t.Skip("ffmpeg is not installed")
	}
	tests := []struct {
		prompt     string
		samples    int
		wantStatus task.Status
		wantCode   string
		wantVideos int
	}{
		{"[transient] a kite over the dunes", 1, task.Completed, "", 1},
		{"[filter] two kites", 2, task.Completed, "", 1},
		{"[policy] a kite", 1, task.Failed, task.FailContentPolicy, 0},
		{"[fail] a kite", 1, task.Failed, task.FailGeneration, 0},
	}
	for _, tt := range tests {
		t.Run(tt.prompt, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				r, err := render.New(render.Config{MaxConcurrent: 2})
				if err != nil {
					t.Fatalf("render.New: %v", err)
				}
				gen, err := faults.WrapDirectives(r, faults.DirectiveConfig{})
				if err != nil {
					t.Fatal(err)
				}
				e := newEnv(t, nil)
				steps := *e.steps
				steps.Generator = gen
				runner := e.newRunner(&steps)
				tk := e.newTask(tt.prompt, tt.samples, func(tk *task.Task) {
					// Small and short: the test is about the workflow.
					tk.Model = "gen-3.1-lite-generate-001"
					tk.Params.Resolution = "720p"
					tk.Params.DurationSeconds = 4
					tk.Params.GenerateAudio = false
					tk.CreditsCost = 35 * tt.samples
				})
				if _, err := runner.Run(context.Background(), tk); err != nil {
					t.Fatalf("Run: %v", err)
				}
				got := e.task(tk.ID)
				if got.Status != tt.wantStatus {
					t.Fatalf("status = %s (failure %+v), want %s", got.Status, got.Failure, tt.wantStatus)
				}
				if tt.wantCode != "" && (got.Failure == nil || got.Failure.Code != tt.wantCode) {
					t.Errorf("failure = %+v, want code %s", got.Failure, tt.wantCode)
				}
				if len(got.Videos) != tt.wantVideos {
					t.Fatalf("%d videos, want %d", len(got.Videos), tt.wantVideos)
				}
				for _, v := range got.Videos {
					data, _, ok := e.blobs.Object(v.Key)
					// An MP4 file opens with an ftyp box.
					if !ok || len(data) < 12 || string(data[4:8]) != "ftyp" || int64(len(data)) != v.Size {
						t.Errorf("video %s is not the stored MP4 (present %v, %d bytes, size %d)", v.Key, ok, len(data), v.Size)
					}
				}
				if want := tk.CreditsCost - 35*tt.wantVideos; got.CreditsRefunded != want {
					t.Errorf("creditsRefunded = %d, want %d", got.CreditsRefunded, want)
				}
				e.checkWorkDirEmpty()
			})
		})
	}
}
