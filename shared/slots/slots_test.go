package slots

import (
	"context"
	"errors"
	"runtime"
	"testing"
)

func TestNew(t *testing.T) {
	tests := []struct{ n, want int }{
		{1, 1},
		{3, 3},
		{0, runtime.GOMAXPROCS(0)},
		{-1, runtime.GOMAXPROCS(0)},
	}
	for _, tt := range tests {
		if got := New(tt.n).Cap(); got != tt.want {
			t.Errorf("New(%d).Cap() = %d, want %d", tt.n, got, tt.want)
		}
	}
}

// Acquire takes a free slot, waits on a full set until its context
// ends, and gets the slot a Release gave back.
func TestAcquire(t *testing.T) {
	s := New(2)
	ctx := context.Background()
	for i := range 2 {
		if err := s.Acquire(ctx); err != nil {
			t.Fatalf("Acquire %d of 2: %v", i+1, err)
		}
	}
	full, cancel := context.WithCancel(ctx)
	done := make(chan error)
	go func() { done <- s.Acquire(full) }()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Acquire on full slots, cancelled = %v, want context.Canceled", err)
	}

	s.Release()
	if err := s.Acquire(ctx); err != nil {
		t.Fatalf("Acquire after a Release: %v", err)
	}

	s.Release()
	ended, cancel := context.WithCancel(ctx)
	cancel()
	if err := s.Acquire(ended); !errors.Is(err, context.Canceled) {
		t.Errorf("Acquire with an ended context and a free slot = %v, want context.Canceled", err)
	}
	if err := s.Acquire(ctx); err != nil {
		t.Errorf("the ended Acquire took the free slot: %v", err)
	}
}
