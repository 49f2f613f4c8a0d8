package main

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/genvideo/gen/shared/client"
)

// progress shows a wait on stderr.
type progress interface {
	// update is called with every status polled.
	update(t *client.Task)
	// done ends the display; t is the last status (nil if none).
	done(t *client.Task, err error)
}

// newProgress picks the display: a bar on a terminal, plain lines (no
// control codes) elsewhere, or nothing.
func newProgress(mode string, env environment, s *client.Started) progress {
	_, hi, ok := s.EstimatedWait()
	if !ok {
		hi = 0
	}
	if mode == "auto" {
		mode = "plain"
		if env.stderrIsATerm {
			mode = "bar"
		}
	}
	switch mode {
	case "bar":
		return newBar(env.stderr, s.EstimatedWaitTime, hi)
	case "plain":
		return &lines{w: env.stderr, estimate: s.EstimatedWaitTime, start: time.Now()}
	}
	return quiet{}
}

type quiet struct{}

func (quiet) update(*client.Task)      {}
func (quiet) done(*client.Task, error) {}

// lines writes one line per poll: the status and the time elapsed
// against the estimate. It is what logs and pipes get.
type lines struct {
	w        io.Writer
	estimate string
	start    time.Time
}

func (l *lines) update(t *client.Task) {
	if t.Status.Terminal() {
		return // done says it
	}
	fmt.Fprintf(l.w, "%s: %s%s, %s elapsed (estimated %s)\n", t.TaskID, t.Status, percent(t), elapsed(l.start), l.estimate)
}

func (l *lines) done(t *client.Task, err error) {
	if t != nil && t.Status == client.StatusCompleted {
		fmt.Fprintf(l.w, "%s: completed in %s\n", t.TaskID, elapsed(l.start))
	}
}

// percent is " 40%" when the provider reports the task's progress (the
// status's progress extension), else "".
func percent(t *client.Task) string {
	if t.Progress <= 0 || t.Status != client.StatusProcessing {
		return ""
	}
	return fmt.Sprintf(" %d%%", t.Progress)
}

func elapsed(start time.Time) time.Duration { return time.Since(start).Round(time.Second) }

// bar is a progress bar of the time elapsed against the estimate's upper
// bound, redrawn as time passes; past the estimate it waits at its end.
type bar struct {
	w      io.Writer
	mu     sync.Mutex
	bar    *progressbar.ProgressBar
	status client.Status
	// pct is the provider's progress, as percent shows it.
	pct   string
	start time.Time
	max   time.Duration
	stop  chan struct{}
	ended chan struct{}
}

func newBar(w io.Writer, estimate string, hi time.Duration) *bar {
	if hi <= 0 {
		hi = time.Minute
	}
	b := &bar{
		w:      w,
		status: client.StatusPending,
		start:  time.Now(),
		max:    hi,
		stop:   make(chan struct{}),
		ended:  make(chan struct{}),
	}
	b.bar = progressbar.NewOptions64(int64(hi/(100*time.Millisecond)),
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetWidth(30),
		progressbar.OptionSetPredictTime(false),
		progressbar.OptionSetElapsedTime(false),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionSetDescription(b.describe()),
		progressbar.OptionSetRenderBlankState(true),
	)
	go b.tick()
	return b
}

// describe is the text before the bar: status and elapsed / estimate.
// The caller holds mu (or owns b alone).
func (b *bar) describe() string {
	return fmt.Sprintf("%-10s%4s %4s / ~%s", b.status, b.pct, elapsed(b.start), b.max)
}

func (b *bar) tick() {
	defer close(b.ended)
	t := time.NewTicker(200 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-b.stop:
			return
		case <-t.C:
			b.redraw()
		}
	}
}

func (b *bar) redraw() {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := int64(time.Since(b.start) / (100 * time.Millisecond))
	// Past the estimate, stay just short of the end: it is not done.
	n = min(n, b.bar.GetMax64()-1)
	b.bar.Describe(b.describe())
	b.bar.Set64(n)
}

func (b *bar) update(t *client.Task) {
	b.mu.Lock()
	b.status, b.pct = t.Status, percent(t)
	b.mu.Unlock()
	b.redraw()
}

func (b *bar) done(t *client.Task, err error) {
	close(b.stop)
	<-b.ended
	b.mu.Lock()
	defer b.mu.Unlock()
	if t != nil {
		b.status = t.Status
	}
	b.bar.Describe(b.describe())
	if err == nil {
		b.bar.Finish()
	}
	fmt.Fprintln(b.w)
}
