package devstack

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
)

// Garbage collector settings of the local service, unless the operator
// sets GOGC or GOMEMLIMIT (which then apply as the Go runtime reads them).
const (
	// gcPercent lets the heap grow to five times what is live before a
	// collection: a poll allocates a few KB, and at Go's default (100)
	// the small heap of a reading service was collected dozens of times
	// a second under load.
	gcPercent = 400
	// heapFloor is the least heap the collector lets grow before it
	// runs. Five times a small live heap is still small: with the 4-5 MB
	// live of a service holding a few thousand tasks, the goal was 25 MB
	// and 64 connections polling status (about 250 MB/s allocated)
	// collected it 12 times a second; each collection's assists and
	// pauses, taken from the requests in flight, were the polling tail
	// the runtime trace showed (issue 38, infra/docs/performance.md).
	// Above heapFloor/5 live the floor does nothing.
	heapFloor = 64 << 20
	// memoryLimit bounds what that growth may take: near it the
	// collector runs as often as it needs to (issue 25 asks for a peak
	// RSS under 200 MB with a million tasks stored).
	memoryLimit = 160 << 20
)

// TuneRuntime sets the collector for a service process (make run's and
// the bench's), leaving each setting the environment gives alone.
func TuneRuntime(lookup func(string) (string, bool)) {
	if _, ok := lookup("GOGC"); !ok {
		debug.SetGCPercent(gcPercent)
		floorHeap(heapFloor, gcPercent)
	}
	if _, ok := lookup("GOMEMLIMIT"); !ok {
		debug.SetMemoryLimit(memoryLimit)
	}
}

// gcPercentFor is the GOGC that sets the next collection's goal at
// floor when live bytes are live, or base if that grows the heap more.
func gcPercentFor(live, floor uint64, base int) int {
	if live == 0 {
		return base
	}
	// goal = live * (1 + p/100)
	p := int(min(floor/live, 1<<20))*100 - 100
	return max(base, p)
}

// floorTuner re-tunes GOGC after each collection, from the finalizer
// goroutine: nothing of it runs on a request's path.
type floorTuner struct {
	floor   uint64
	base    int
	mu      sync.Mutex
	sample  []metrics.Sample
	stopped atomic.Bool
}

// floorHeap keeps the collector's goal at floor bytes at least, GOGC
// base above that, until stop (a service never calls it: tests do).
func floorHeap(floor uint64, base int) (stop func()) {
	t := &floorTuner{floor: floor, base: base,
		sample: []metrics.Sample{{Name: "/gc/heap/live:bytes"}}}
	t.tune()
	t.arm()
	return func() { t.stopped.Store(true) }
}

// gcSentinel is garbage from birth: its finalizer runs after the next
// collection. It holds a pointer so that it is not a tiny allocation,
// whose finalizer might wait for its neighbours.
type gcSentinel struct{ _ *int }

func (t *floorTuner) arm() {
	runtime.SetFinalizer(&gcSentinel{}, func(*gcSentinel) {
		if t.stopped.Load() {
			return
		}
		t.tune()
		t.arm()
	})
}

func (t *floorTuner) tune() {
	t.mu.Lock()
	defer t.mu.Unlock()
	metrics.Read(t.sample)
	var live uint64
	if t.sample[0].Value.Kind() == metrics.KindUint64 {
		live = t.sample[0].Value.Uint64()
	}
	// Set after every collection (a few a second at most), so that the
	// goal follows the live heap both ways.
	debug.SetGCPercent(gcPercentFor(live, t.floor, t.base))
}
