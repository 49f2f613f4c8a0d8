package faults

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/genvideo/gen/shared/catalog"
	"github.com/genvideo/gen/shared/params"
	"github.com/genvideo/gen/shared/provider"
	"github.com/genvideo/gen/shared/task"
	"github.com/genvideo/gen/shared/testing/workflowtest"
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

// transienter is what the workflow asks of a failure worth retrying.
type transienter interface{ Transient() bool }

// newDirectives wraps a fake generator, which writes one small file per
// sample it is asked for.
func newDirectives(t *testing.T, cfg DirectiveConfig) (*Directives, *workflowtest.Generator) {
	t.Helper()
	fake := &workflowtest.Generator{}
	d, err := WrapDirectives(fake, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return d, fake
}

func job(t *testing.T, taskID, prompt string, samples int) provider.Job {
	return provider.Job{TaskID: taskID, Type: catalog.TextToVideo, Prompt: prompt, OutDir: t.TempDir(),
		Params: params.Parameters{SampleCount: samples, DurationSeconds: 4, AspectRatio: "16:9", Resolution: "720p"}}
}

func TestFaultDirectives(t *testing.T) {
	d, fake := newDirectives(t, DirectiveConfig{})
	gen := func(ctx context.Context, taskID, prompt string, samples int) (provider.Result, error) {
		return d.Generate(ctx, job(t, taskID, prompt, samples))
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
		for i, tt := range tests {
			id := fmt.Sprintf("fail-%d", i)
			_, err := gen(context.Background(), id, tt.prompt, 1)
			var fc failureCoder
			if !errors.As(err, &fc) {
				t.Errorf("Generate(%q) error = %v (%T), want one with a failure code", tt.prompt, err, err)
				continue
			}
			if fc.FailureCode() != tt.wantCode {
				t.Errorf("Generate(%q) failure code = %q, want %q", tt.prompt, fc.FailureCode(), tt.wantCode)
			}
			var tr transienter
			if errors.As(err, &tr) && tr.Transient() {
				t.Errorf("Generate(%q) error is transient, want a lasting failure", tt.prompt)
			}
			if !errors.Is(err, ErrInjected) {
				t.Errorf("Generate(%q) error %v does not wrap ErrInjected", tt.prompt, err)
			}
			if n := fake.Calls(id); n != 0 {
				t.Errorf("Generate(%q) called the generator %d times, want none", tt.prompt, n)
			}
		}
	})

	t.Run("transient", func(t *testing.T) {
		for _, id := range []string{"task-a", "task-b"} {
			_, err := gen(context.Background(), id, "[transient] rain", 1)
			var tr transienter
			if !errors.As(err, &tr) || !tr.Transient() {
				t.Fatalf("first attempt of %s: got %v (%T), want a transient error", id, err, err)
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
		for _, tt := range []struct{ samples, want int }{{2, 1}, {3, 2}, {1, 1}} {
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
		_, err := gen(ctx, "slow-cancelled", "[slow:3600] snow", 1)
		var tr transienter
		if !errors.As(err, &tr) || !tr.Transient() || !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("[slow:3600] past the deadline: got %v (%T), want a transient error wrapping DeadlineExceeded", err, err)
		}
		if n := fake.Calls("slow-cancelled"); n != 0 {
			t.Errorf("the generator was called %d times after the wait was cut short, want none", n)
		}
	})

	t.Run("slow waits, then generates", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			began := time.Now()
			res, err := gen(context.Background(), "slow", "[slow:5] snow", 1)
			if err != nil || len(res.Paths) != 1 {
				t.Fatalf("[slow:5] = %v, %v; want one video", res, err)
			}
			// The bubble's clock moves only when every goroutine waits.
			if waited := time.Since(began); waited != 5*time.Second {
				t.Errorf("[slow:5] waited %v, want 5s", waited)
			}
		})
	})
}

// The wrapped generator gets a job without directives as it is, and one
// with directives unchanged but for [filter]'s sample count.
func TestDirectivesPassTheJobOn(t *testing.T) {
	var got []provider.Job
	rec := &workflowtest.Generator{Outcome: func(_ context.Context, j provider.Job, _ int) (int, error) {
		got = append(got, j)
		return j.Params.SampleCount, nil
	}}
	d, err := WrapDirectives(rec, DirectiveConfig{})
	if err != nil {
		t.Fatal(err)
	}
	plain := job(t, "plain", "a [failing] prompt, [slow] and [filtered]", 3)
	filtered := job(t, "filtered", "two kites [filter]", 3)
	for _, j := range []provider.Job{plain, filtered} {
		if _, err := d.Generate(context.Background(), j); err != nil {
			t.Fatalf("Generate(%q): %v", j.Prompt, err)
		}
	}
	wantFiltered := filtered
	wantFiltered.Params.SampleCount = 2
	if len(got) != 2 || got[0].Prompt != plain.Prompt || got[0].Params != plain.Params ||
		got[1].Prompt != filtered.Prompt || got[1].Params != wantFiltered.Params {
		t.Errorf("the generator got %+v, want %+v and %+v", got, plain, wantFiltered)
	}
}

func TestFailureRate(t *testing.T) {
	for _, rate := range []float64{-0.1, 1.5} {
		if _, err := WrapDirectives(&workflowtest.Generator{}, DirectiveConfig{FailureRate: rate}); err == nil {
			t.Errorf("WrapDirectives(FailureRate %g) succeeded, want an error", rate)
		}
	}

	always, fake := newDirectives(t, DirectiveConfig{FailureRate: 1})
	_, err := always.Generate(context.Background(), job(t, "t", "x", 1))
	var fc failureCoder
	if !errors.As(err, &fc) || fc.FailureCode() != task.FailGeneration {
		t.Errorf("FailureRate 1: got %v (%T), want a GENERATION_FAILED failure", err, err)
	}
	if fake.Calls("t") != 0 {
		t.Errorf("FailureRate 1 called the generator")
	}

	draw := func(seed uint64) (fails int, seq string) {
		d, _ := newDirectives(t, DirectiveConfig{FailureRate: 0.3, Rand: rand.New(rand.NewPCG(seed, 0))})
		var b strings.Builder
		for range 1000 {
			f := d.randomFailure()
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
