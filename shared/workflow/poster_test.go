package workflow_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

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
