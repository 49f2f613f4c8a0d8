// Package slots bounds how many of a costly thing run at once: the
// ffmpeg processes of the built-in renderer and of poster frames, each a
// CPU and tens of MB for as long as it runs, so that a burst of work
// queues for a slot instead of forking hundreds of processes at once.
package slots

import (
	"context"
	"runtime"
)

// Slots is a counting semaphore whose waits end with their context. It
// is safe for concurrent use.
type Slots struct{ c chan struct{} }

// New returns n slots; n <= 0 means runtime.GOMAXPROCS(0), one per CPU
// the process may use.
func New(n int) *Slots {
	if n <= 0 {
		n = runtime.GOMAXPROCS(0)
	}
	return &Slots{c: make(chan struct{}, n)}
}

// Acquire takes a slot, waiting for one until ctx ends; it then answers
// ctx.Err() and holds nothing. Each successful Acquire is paired with a
// Release.
func (s *Slots) Acquire(ctx context.Context) error {
	// A context already done holds nothing, even with a slot free.
	if err := ctx.Err(); err != nil {
		return err
	}
	select {
	case s.c <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Release gives back a slot Acquire took.
func (s *Slots) Release() { <-s.c }

// Cap is how many slots there are.
func (s *Slots) Cap() int { return cap(s.c) }
