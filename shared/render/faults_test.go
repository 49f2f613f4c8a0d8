package render

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/genvideo/gen/shared/catalog"
	"github.com/genvideo/gen/shared/task"
)

func TestParseDirectives(t *testing.T) {
	tests := []struct {
		prompt string
		want   directives
	}{
		{"a plain prompt", directives{}},
		{"fail policy transient filter slow:3", directives{}},
		{"x [fail] y", directives{fail: true}},
		{"[POLICY]", directives{policy: true}},
		{"[Transient] and [filter]", directives{transient: true, filter: true}},
		{"[slow:5]", directives{slow: 5 * time.Second}},
		{"[slow:2] [slow:7]", directives{slow: 7 * time.Second}},
		{"[slow:99999999999999999999999]", directives{slow: maxSlow}},
		{"[slow:] [slow:-1] [slow:x]", directives{}},
		{"[fail][policy]", directives{fail: true, policy: true}},
	}
	for _, tt := range tests {
		if got := parseDirectives(tt.prompt); got != tt.want {
			t.Errorf("parseDirectives(%q) = %+v, want %+v", tt.prompt, got, tt.want)
		}
	}
}

// failureCoder is what the workflow asks of a permanent failure.
type failureCoder interface{ FailureCode() string }

func TestFaultDirectives(t *testing.T) {
	t.Parallel()
	r := newRenderer(t, Config{})
	gen := func(ctx context.Context, taskID, prompt string, samples int) (Result, error) {
		p := defaultParams()
		p.SampleCount = samples
		p.DurationSeconds = 1 // the faults are under test, not the video
		return r.Generate(ctx, Job{TaskID: taskID, Type: catalog.TextToVideo, Prompt: prompt, Params: p, OutDir: t.TempDir()})
	}

	t.Run("fail and policy", func(t *testing.T) {
		tests := []struct {
			prompt   string
			wantCode string
		}{
			{"a cat [fail]", task.FailGeneration},
			{"a cat [FAIL]", task.FailGeneration},
			{"a cat [policy]", task.FailContentPolicy},
			{"[policy] beats [fail]", task.FailContentPolicy},
		}
		for _, tt := range tests {
			_, err := gen(context.Background(), "t", tt.prompt, 1)
			var fc failureCoder
			if !errors.As(err, &fc) {
				t.Errorf("Generate(%q) error = %v (%T), want one with a failure code", tt.prompt, err, err)
				continue
			}
			if fc.FailureCode() != tt.wantCode {
				t.Errorf("Generate(%q) failure code = %q, want %q", tt.prompt, fc.FailureCode(), tt.wantCode)
			}
		}
		_, err := gen(context.Background(), "t", "[policy]", 1)
		var pe *ContentPolicyError
		if !errors.As(err, &pe) {
			t.Errorf("[policy]: got %T, want *ContentPolicyError", err)
		}
		_, err = gen(context.Background(), "t", "[fail]", 1)
		var ge *GenerationError
		if !errors.As(err, &ge) {
			t.Errorf("[fail]: got %T, want *GenerationError", err)
		}
	})

	t.Run("transient", func(t *testing.T) {
		for _, id := range []string{"task-a", "task-b"} {
			_, err := gen(context.Background(), id, "[transient] rain", 1)
			var te *TransientError
			if !errors.As(err, &te) || !te.Transient() {
				t.Fatalf("first attempt of %s: got %v (%T), want *TransientError", id, err, err)
			}
		}
		res, err := gen(context.Background(), "task-a", "[transient] rain", 1)
		if err != nil {
			t.Fatalf("second attempt of task-a: %v, want success", err)
		}
		if len(res.Paths) != 1 {
			t.Errorf("second attempt gave %d paths, want 1", len(res.Paths))
		}
	})

	t.Run("filter", func(t *testing.T) {
		for _, tt := range []struct{ samples, want int }{{2, 1}, {1, 1}} {
			res, err := gen(context.Background(), "t", "a dog [filter]", tt.samples)
			if err != nil {
				t.Fatalf("[filter] with %d samples: %v", tt.samples, err)
			}
			if len(res.Paths) != tt.want {
				t.Errorf("[filter] with %d samples gave %d paths, want %d", tt.samples, len(res.Paths), tt.want)
			}
			for _, p := range res.Paths {
				if _, err := os.Stat(p); err != nil {
					t.Errorf("[filter] result path: %v", err)
				}
			}
		}
	})

	t.Run("slow honours the context", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		_, err := gen(ctx, "t", "[slow:3600] snow", 1)
		var te *TransientError
		if !errors.As(err, &te) || !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("[slow:3600] past the deadline: got %v (%T), want a *TransientError wrapping DeadlineExceeded", err, err)
		}
	})
}

func TestFailureRate(t *testing.T) {
	if _, err := New(Config{FailureRate: 1.5}); err == nil {
		t.Errorf("New(FailureRate 1.5) succeeded, want an error")
	}

	always := newRenderer(t, Config{FailureRate: 1})
	_, err := always.Generate(context.Background(), Job{TaskID: "t", Type: catalog.TextToVideo,
		Prompt: "x", Params: defaultParams(), OutDir: t.TempDir()})
	var ge *GenerationError
	if !errors.As(err, &ge) {
		t.Errorf("FailureRate 1: got %v (%T), want *GenerationError", err, err)
	}

	draw := func(seed uint64) (fails int, seq string) {
		r := newRenderer(t, Config{FailureRate: 0.3, Rand: rand.New(rand.NewPCG(seed, 0))})
		var b strings.Builder
		for range 1000 {
			f := r.randomFailure()
			if f {
				fails++
			}
			fmt.Fprint(&b, map[bool]string{true: "1", false: "0"}[f])
		}
		return fails, b.String()
	}
	n, seq1 := draw(1)
	if n < 250 || n > 350 {
		t.Errorf("FailureRate 0.3 failed %d of 1000 draws, want about 300", n)
	}
	if _, seq2 := draw(1); seq2 != seq1 {
		t.Errorf("the same seed gave a different failure sequence")
	}
	if _, seq3 := draw(2); seq3 == seq1 {
		t.Errorf("seeds 1 and 2 gave the same failure sequence")
	}
}

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
