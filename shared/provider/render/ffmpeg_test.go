package render

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/genvideo/gen/shared/catalog"
)

// fakeFFmpeg writes a script that passes New's capability check to the
// real ffmpeg and runs body for a render; $out is the output file.
func fakeFFmpeg(t *testing.T, body string) string {
	t.Helper()
	real, err := exec.LookPath("ffmpeg")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "ffmpeg")
	script := fmt.Sprintf(`#!/bin/sh
case "$*" in *-movflags*) ;; *) exec %s "$@" ;; esac
for a; do out=$a; done
%s
`, real, body)
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestFFmpegFailures(t *testing.T) {
	job := func(dir string) Job {
		p := defaultParams()
		p.SampleCount = 2
		return Job{TaskID: "t", Type: catalog.TextToVideo, Prompt: "x", Params: p, OutDir: dir}
	}

	t.Run("exit status is a generation error with the stderr tail", func(t *testing.T) {
		r := newRenderer(t, Config{FFmpegPath: fakeFFmpeg(t, `echo "bad.png: Invalid data found when processing input" >&2; exit 1`)})
		dir := t.TempDir()
		_, err := r.Generate(context.Background(), job(dir))
		var ge *GenerationError
		if !errors.As(err, &ge) {
			t.Fatalf("got %v (%T), want *GenerationError", err, err)
		}
		if !strings.Contains(err.Error(), "Invalid data found") {
			t.Errorf("error %q does not carry ffmpeg's message", err)
		}
		assertNoVideos(t, dir)
	})

	t.Run("killed is transient", func(t *testing.T) {
		r := newRenderer(t, Config{FFmpegPath: fakeFFmpeg(t, `kill -9 $$`)})
		dir := t.TempDir()
		_, err := r.Generate(context.Background(), job(dir))
		var te *TransientError
		if !errors.As(err, &te) || !errors.Is(err, errKilled) {
			t.Fatalf("got %v (%T), want *TransientError wrapping errKilled", err, err)
		}
		assertNoVideos(t, dir)
	})

	t.Run("cancel kills ffmpeg", func(t *testing.T) {
		started := filepath.Join(t.TempDir(), "started")
		r := newRenderer(t, Config{FFmpegPath: fakeFFmpeg(t, fmt.Sprintf(`: > %s; exec sleep 600`, started))})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go func() {
			for {
				if _, err := os.Stat(started); err == nil {
					cancel()
					return
				}
				time.Sleep(10 * time.Millisecond)
			}
		}()
		dir := t.TempDir()
		_, err := r.Generate(ctx, job(dir))
		var te *TransientError
		if !errors.As(err, &te) || !errors.Is(err, context.Canceled) {
			t.Fatalf("got %v (%T), want *TransientError wrapping context.Canceled", err, err)
		}
		assertNoVideos(t, dir)
	})
}

func assertNoVideos(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		t.Errorf("output directory still holds %s after a failure", e.Name())
	}
}

func TestMaxConcurrent(t *testing.T) {
	tmp := t.TempDir()
	lock, overlap := filepath.Join(tmp, "lock"), filepath.Join(tmp, "overlap")
	// Each fake render holds a lock directory for a while; a second render
	// running at the same time finds it taken and leaves a mark.
	body := fmt.Sprintf(`if mkdir %[1]s 2>/dev/null; then sleep 0.2; rmdir %[1]s; else : > %[2]s; fi
: > "$out"`, lock, overlap)
	r := newRenderer(t, Config{FFmpegPath: fakeFFmpeg(t, body), MaxConcurrent: 1})

	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := defaultParams()
			p.SampleCount = 2
			res, err := r.Generate(context.Background(), Job{TaskID: "t", Type: catalog.TextToVideo,
				Prompt: "x", Params: p, OutDir: t.TempDir()})
			if err == nil && len(res.Paths) != 2 {
				err = fmt.Errorf("got %d paths, want 2", len(res.Paths))
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("job %d: %v", i, err)
		}
	}
	if _, err := os.Stat(overlap); err == nil {
		t.Errorf("two ffmpeg processes ran at once with MaxConcurrent 1")
	}
}
