package faults

import (
	"context"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/genvideo/gen/shared/provider"
	"github.com/genvideo/gen/shared/task"
)

var _ provider.Generator = (*Directives)(nil)

// maxSlow caps a [slow:N] directive, so that a typo cannot park a worker
// for days.
const maxSlow = time.Hour

var directiveRE = regexp.MustCompile(`(?i)\[(fail|policy|transient|filter|slow:([0-9]+))\]`)

// DirectiveConfig configures WrapDirectives.
type DirectiveConfig struct {
	// FailureRate is the share (0..1) of generations that fail at random
	// with GENERATION_FAILED, whatever their prompt.
	FailureRate float64
	// Rand draws the random failures; nil means a randomly seeded source.
	// Tests pass a seeded one to get a reproducible sequence.
	Rand *rand.Rand
}

// Directives is a provider.Generator that lets the prompt ask for a
// fault, so that a person trying the service, or a test through its
// API, can watch refunds, retries and timeouts. Directives are matched
// without regard to case:
//
//	[fail]       the generation fails: GENERATION_FAILED
//	[policy]     it is refused: CONTENT_POLICY_VIOLATION
//	[transient]  the first attempt of the task fails with an error worth
//	             retrying; the next ones go through
//	[filter]     the last sample is never generated: fewer videos than
//	             sampleCount, but never none (a single sample is kept)
//	[slow:N]     the generation starts N seconds late (at most an hour),
//	             or fails as worth retrying if its context ends first
//
// [slow:N] is applied first, so it combines with the others; [policy]
// wins over [fail]. Besides, DirectiveConfig.FailureRate of the
// generations fail at random. None of it reaches the wrapped generator,
// which renders what it is asked, whatever the prompt says.
//
// A customer's prompt may contain these words, so only a stack that was
// explicitly told to inject faults wraps its generator with Directives.
type Directives struct {
	g    provider.Generator
	rate float64

	mu            sync.Mutex // guards rand and transientSeen
	rand          *rand.Rand
	transientSeen map[string]bool
}

// WrapDirectives returns g obeying the fault directives of prompts and
// failing cfg.FailureRate of the generations.
func WrapDirectives(g provider.Generator, cfg DirectiveConfig) (*Directives, error) {
	if !(cfg.FailureRate >= 0 && cfg.FailureRate <= 1) {
		return nil, fmt.Errorf("failure rate %g is outside 0..1", cfg.FailureRate)
	}
	rnd := cfg.Rand
	if rnd == nil {
		rnd = rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))
	}
	return &Directives{g: g, rate: cfg.FailureRate, rand: rnd, transientSeen: map[string]bool{}}, nil
}

// Generate applies the job's directives, then has the wrapped generator
// render what is left to render.
func (d *Directives) Generate(ctx context.Context, job provider.Job) (provider.Result, error) {
	dir := parseDirectives(job.Prompt)
	if err := d.inject(ctx, job, dir); err != nil {
		return provider.Result{}, err
	}
	if dir.filter && job.Params.SampleCount > 1 {
		job.Params.SampleCount-- // the "filtered" sample is never rendered
	}
	return d.g.Generate(ctx, job)
}

// directives are the fault-injection markers found in a prompt.
type directives struct {
	fail, policy, transient, filter bool
	slow                            time.Duration
}

// parseDirectives finds the markers in a prompt; matching ignores case and
// the rest of the prompt.
func parseDirectives(prompt string) directives {
	var d directives
	for _, m := range directiveRE.FindAllStringSubmatch(prompt, -1) {
		switch name := strings.ToLower(m[1]); {
		case name == "fail":
			d.fail = true
		case name == "policy":
			d.policy = true
		case name == "transient":
			d.transient = true
		case name == "filter":
			d.filter = true
		default: // slow:N
			n, err := strconv.ParseInt(m[2], 10, 64)
			if err != nil || n > int64(maxSlow/time.Second) {
				d.slow = maxSlow
			} else {
				d.slow = max(d.slow, time.Duration(n)*time.Second)
			}
		}
	}
	return d
}

// inject applies everything that happens before the generation: the
// [slow:N] wait, the failure directives and the random failure rate.
func (d *Directives) inject(ctx context.Context, job provider.Job, dir directives) error {
	if dir.slow > 0 {
		t := time.NewTimer(dir.slow)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return &generatorError{msg: fmt.Sprintf("generate %s: cancelled during the [slow] wait", job.TaskID), transient: true, cause: ctx.Err()}
		case <-t.C:
		}
	}
	if dir.policy {
		return &generatorError{msg: "the prompt was refused by the content policy ([policy] directive)", code: task.FailContentPolicy}
	}
	if dir.fail {
		return &generatorError{msg: "the generation failed ([fail] directive)", code: task.FailGeneration}
	}
	if dir.transient && d.firstTransient(job.TaskID) {
		return &generatorError{msg: fmt.Sprintf("generate %s: temporary generator failure ([transient] directive, first attempt)", job.TaskID), transient: true}
	}
	if d.randomFailure() {
		return &generatorError{msg: fmt.Sprintf("the generation failed (injected at failure rate %g)", d.rate), code: task.FailGeneration}
	}
	return nil
}

// firstTransient reports whether this is the first [transient] attempt of
// the task, and records it. The set only grows, but only with the ids of
// tasks whose prompt asked for the fault.
func (d *Directives) firstTransient(taskID string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.transientSeen[taskID] {
		return false
	}
	d.transientSeen[taskID] = true
	return true
}

func (d *Directives) randomFailure() bool {
	if d.rate <= 0 {
		return false
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.rand.Float64() < d.rate
}
