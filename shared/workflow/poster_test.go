package workflow_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/genvideo/gen/shared/blob"
	"github.com/genvideo/gen/shared/provider"
	"github.com/genvideo/gen/shared/testing/logtest"
	"github.com/genvideo/gen/shared/workflow"
)

// fakePosterFFmpeg writes a shell script standing for ffmpeg: it runs
// body, then writes its last argument (the poster) as "jpeg".
func fakePosterFFmpeg(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "ffmpeg")
	script := "#!/bin/sh\nfor a; do out=$a; done\n" + body + "\nprintf jpeg > \"$out\"\n"
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// A burst of posters runs no more ffmpeg at once than the bound: each
// fake run holds a lock directory for a while, and a second run at the
// same time finds it taken and leaves a mark.
func TestFFmpegPostersBounded(t *testing.T) {
	tmp := t.TempDir()
	lock, overlap := filepath.Join(tmp, "lock"), filepath.Join(tmp, "overlap")
	body := fmt.Sprintf(`if mkdir %[1]s 2>/dev/null; then sleep 0.1; rmdir %[1]s; else : > %[2]s; fi`, lock, overlap)
	posters := workflow.NewFFmpegPosters(fakePosterFFmpeg(t, body), 1)

	const burst = 4
	var wg sync.WaitGroup
	errs := make([]error, burst)
	for i := range burst {
		wg.Go(func() {
			out := filepath.Join(tmp, fmt.Sprintf("poster-%d.jpg", i))
			errs[i] = posters.Poster(context.Background(), "video.mp4", out)
			if errs[i] == nil {
				if _, err := os.Stat(out); err != nil {
					errs[i] = err
				}
			}
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("poster %d: %v", i, err)
		}
	}
	if _, err := os.Stat(overlap); err == nil {
		t.Errorf("two ffmpeg ran at once with a bound of 1")
	}
}

// A poster waiting for a slot gives up when its context ends, and runs
// no ffmpeg.
func TestFFmpegPostersWaitEndsWithContext(t *testing.T) {
	tmp := t.TempDir()
	started, release, runs := filepath.Join(tmp, "started"), filepath.Join(tmp, "release"), filepath.Join(tmp, "runs")
	body := fmt.Sprintf(`echo run >> %[3]s; : > %[1]s; while [ ! -e %[2]s ]; do sleep 0.01; done`, started, release, runs)
	posters := workflow.NewFFmpegPosters(fakePosterFFmpeg(t, body), 1)

	held := make(chan error, 1)
	go func() { held <- posters.Poster(context.Background(), "a.mp4", filepath.Join(tmp, "a.jpg")) }()
	for {
		if _, err := os.Stat(started); err == nil {
			break
		}
		select {
		case err := <-held:
			t.Fatalf("the first poster ended before it started: %v", err)
		case <-time.After(5 * time.Millisecond):
		}
	}

	ctx, cancel := context.WithCancel(context.Background())
	waited := make(chan error, 1)
	go func() { waited <- posters.Poster(ctx, "b.mp4", filepath.Join(tmp, "b.jpg")) }()
	cancel()
	if err := <-waited; !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "waiting for a slot") {
		t.Errorf("Poster while the only slot is held, cancelled = %v, want context.Canceled while waiting for a slot", err)
	}

	if err := os.WriteFile(release, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := <-held; err != nil {
		t.Fatalf("the first poster: %v", err)
	}
	if b, _ := os.ReadFile(runs); strings.Count(string(b), "run") != 1 {
		t.Errorf("ffmpeg ran %d times, want 1 (the cancelled wait must run none)", strings.Count(string(b), "run"))
	}
}

// handing writes a video per sample and, per sample, the poster its
// entry of posters says: "given" writes one and hands its path, "gone"
// hands a path with nothing there, "" hands none. Entries past the end
// hand nothing at all, as a generator with no posters does.
type handing struct{ posters []string }

func (h handing) Generate(_ context.Context, job provider.Job) (provider.Result, error) {
	if err := os.MkdirAll(job.OutDir, 0o700); err != nil {
		return provider.Result{}, err
	}
	var res provider.Result
	for i := range job.Params.SampleCount {
		p := filepath.Join(job.OutDir, fmt.Sprintf("sample-%d.mp4", i))
		if err := os.WriteFile(p, []byte("video"), 0o600); err != nil {
			return provider.Result{}, err
		}
		res.Paths = append(res.Paths, p)
	}
	for i, kind := range h.posters {
		var path string
		switch kind {
		case "given":
			path = filepath.Join(job.OutDir, fmt.Sprintf("sample-%d.jpg", i))
			if err := os.WriteFile(path, fmt.Appendf(nil, "given poster %d", i), 0o600); err != nil {
				return provider.Result{}, err
			}
		case "gone":
			path = filepath.Join(job.OutDir, "no-such-poster.jpg")
		}
		res.Posters = append(res.Posters, path)
	}
	return res, nil
}

// extractor is a workflow.Posters that counts its runs.
type extractor struct {
	mu   sync.Mutex
	runs int
}

func (x *extractor) Poster(_ context.Context, video, out string) error {
	x.mu.Lock()
	x.runs++
	x.mu.Unlock()
	return os.WriteFile(out, []byte("extracted poster"), 0o600)
}

// A poster the generator hands is stored as the video's, and no
// extractor runs for it; a video without one gets the extractor's; a
// handed file that is not there is logged and the video completes
// without a poster.
func TestGeneratorPosters(t *testing.T) {
	tests := []struct {
		name    string
		posters []string
		// want is each video's stored poster: "" none.
		want     []string
		wantRuns int
		wantLog  string
	}{
		{"given", []string{"given", "given"}, []string{"given poster 0", "given poster 1"}, 0, ""},
		{"none given", nil, []string{"extracted poster", "extracted poster"}, 2, ""},
		{"one of two given", []string{"", "given"}, []string{"extracted poster", "given poster 1"}, 1, ""},
		{"fewer given than videos", []string{"given"}, []string{"given poster 0", "extracted poster"}, 1, ""},
		{"given file missing", []string{"gone", "given"}, []string{"", "given poster 1"}, 0, "no poster frame for a video"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e := newEnv(t, nil)
				var logs logtest.Buffer
				x := &extractor{}
				e.steps.Generator, e.steps.Posters = handing{tt.posters}, x
				e.steps.Logger = slog.New(slog.NewTextHandler(&logs, nil))
				ctx := context.Background()
				tk := e.newTask("posters", 2)
				if _, err := e.steps.MarkProcessing(ctx, workflow.TaskRef{TaskID: tk.ID}); err != nil {
					t.Fatal(err)
				}
				g, err := e.steps.Generate(ctx, workflow.TaskRef{TaskID: tk.ID})
				if err != nil || !g.Done || len(g.Videos) != 2 {
					t.Fatalf("Generate = %+v, %v; want done with two videos", g, err)
				}
				for i, v := range g.Videos {
					key := blob.PosterKey(v.Key)
					data, ct, ok := e.blobs.Object(key)
					if tt.want[i] == "" {
						if v.Poster != "" || ok {
							t.Errorf("video %d: poster %q, stored %v; want none", i, v.Poster, ok)
						}
						continue
					}
					if v.Poster != key || string(data) != tt.want[i] || ct != "image/jpeg" {
						t.Errorf("video %d: poster %q holding %q (%s); want %s holding %q (image/jpeg)",
							i, v.Poster, data, ct, key, tt.want[i])
					}
				}
				if x.runs != tt.wantRuns {
					t.Errorf("the extractor ran %d times, want %d", x.runs, tt.wantRuns)
				}
				if tt.wantLog != "" && !strings.Contains(logs.String(), tt.wantLog) {
					t.Errorf("log %q does not say %q", logs.String(), tt.wantLog)
				}
				e.checkWorkDirEmpty()
			})
		})
	}
}
