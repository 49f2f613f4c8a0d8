package devstack

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

func TestGCPercentFor(t *testing.T) {
	const mb = 1 << 20
	tests := []struct {
		name       string
		live, flr  uint64
		base, want int
	}{
		{"a small live heap grows to the floor", 4 * mb, 64 * mb, 400, 1500},
		{"a live heap of a fifth of the floor: base", 64 * mb / 5, 64 * mb, 400, 400},
		{"a big live heap: base", 100 * mb, 64 * mb, 400, 400},
		{"nothing live yet: base", 0, 64 * mb, 400, 400},
		{"a tiny live heap is bounded", 1, 64 * mb, 400, (1<<20)*100 - 100},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := gcPercentFor(tt.live, tt.flr, tt.base); got != tt.want {
				t.Errorf("gcPercentFor(%d, %d, %d) = %d, want %d", tt.live, tt.flr, tt.base, got, tt.want)
			}
		})
	}
}

// The tuner raises GOGC after a collection of a small heap, from the
// finalizer goroutine, and leaves it alone once stopped.
func TestFloorHeapRetunesAfterEachCollection(t *testing.T) {
	old := debug.SetGCPercent(100)
	defer debug.SetGCPercent(old)
	const floor = 1 << 40 // far above any live heap of this test
	stop := floorHeap(floor, 100)
	defer stop()
	current := func() int { p := debug.SetGCPercent(-1); debug.SetGCPercent(p); return p }
	if p := current(); p <= 100 {
		t.Fatalf("GOGC %d right after floorHeap, want it raised above 100", p)
	}
	// Another setting, then a collection: the tuner puts its own back.
	debug.SetGCPercent(100)
	deadline := time.Now().Add(10 * time.Second)
	for current() == 100 {
		if time.Now().After(deadline) {
			t.Fatal("GOGC still 100 ten seconds of collections later: the tuner did not run after a collection")
		}
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	stop()
	runtime.GC()
	time.Sleep(50 * time.Millisecond)
	debug.SetGCPercent(100)
	for range 5 {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	if p := current(); p != 100 {
		t.Errorf("GOGC %d after stop, want 100 (left alone)", p)
	}
}
