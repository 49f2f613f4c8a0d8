package render

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// maxSlow caps a [slow:N] directive, so that a typo cannot park a worker
// for days.
const maxSlow = time.Hour

var directiveRE = regexp.MustCompile(`(?i)\[(fail|policy|transient|filter|slow:([0-9]+))\]`)

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

// injectFaults applies everything that happens before rendering: the
// [slow:N] wait, the failure directives and the random failure rate.
func (r *Renderer) injectFaults(ctx context.Context, job Job, d directives) error {
	if d.slow > 0 {
		t := time.NewTimer(d.slow)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return &TransientError{Msg: fmt.Sprintf("render %s: cancelled during [slow] wait", job.TaskID), Err: ctx.Err()}
		case <-t.C:
		}
	}
	if d.policy {
		return &ContentPolicyError{Msg: "the prompt was refused by the content policy ([policy] directive)"}
	}
	if d.fail {
		return &GenerationError{Msg: "the generation failed ([fail] directive)"}
	}
	if d.transient && r.firstTransient(job.TaskID) {
		return &TransientError{Msg: fmt.Sprintf("render %s: temporary generator failure ([transient] directive, first attempt)", job.TaskID)}
	}
	if r.randomFailure() {
		return &GenerationError{Msg: fmt.Sprintf("the generation failed (injected at failure rate %g)", r.cfg.FailureRate)}
	}
	return nil
}

// firstTransient reports whether this is the first [transient] attempt of
// the task, and records it. The set only grows, but only with the ids of
// tasks whose prompt asked for the fault.
func (r *Renderer) firstTransient(taskID string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.transientSeen[taskID] {
		return false
	}
	r.transientSeen[taskID] = true
	return true
}

func (r *Renderer) randomFailure() bool {
	if r.cfg.FailureRate <= 0 {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.rand.Float64() < r.cfg.FailureRate
}
