package devstack

import (
	"runtime/debug"
)

// Garbage collector settings of the local service, unless the operator
// sets GOGC or GOMEMLIMIT (which then apply as the Go runtime reads them).
const (
	// gcPercent lets the heap grow to five times what is live before a
	// collection: a poll allocates a few KB, and at Go's default (100)
	// the small heap of a reading service was collected dozens of times
	// a second under load.
	gcPercent = 400
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
	}
	if _, ok := lookup("GOMEMLIMIT"); !ok {
		debug.SetMemoryLimit(memoryLimit)
	}
}
