package routing

import (
	"sync"
	"time"
)

// The health memory's waits: a route that refused a submit for a reason
// of its own (busy, down, its model retired, its credentials refused)
// is skipped by later starts for Cooldown, doubling with each failure in
// a row up to MaxCooldown. Long enough that a burst of starts does not
// become a burst of refused submits at a failing provider, short enough
// that a provider back from a blip gets its traffic back within a
// minute.
const (
	Cooldown    = 30 * time.Second
	MaxCooldown = 5 * time.Minute
)

// health is what a process remembers of its routes: on AWS each warm
// Lambda container its own, locally the one server. Nothing is stored,
// so a restart forgets it, and a forgotten failing route costs one
// refused submit.
type health struct {
	now func() time.Time

	mu     sync.Mutex
	routes map[string]*state
}

type state struct {
	// failures in a row; until is when the route may be tried again.
	failures int
	until    time.Time
}

func newHealth(now func() time.Time) *health {
	if now == nil {
		now = time.Now
	}
	return &health{now: now, routes: map[string]*state{}}
}

// take reports whether a start may try route now, and if not, how long
// until it may. A route whose cool-down has passed is taken by one
// start, the probe: until it answers, the others skip it for another
// cool-down, so that a failing provider sees one submit per window.
func (h *health) take(route string) (bool, time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.routes[route]
	if s == nil || s.failures == 0 {
		return true, 0
	}
	now := h.now()
	if wait := s.until.Sub(now); wait > 0 {
		return false, wait
	}
	s.until = now.Add(cooldown(s.failures))
	return true, 0
}

// failed records a refusal of the route's own: it is skipped for a
// cool-down that grows with the failures in a row.
func (h *health) failed(route string) time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.routes[route]
	if s == nil {
		s = &state{}
		h.routes[route] = s
	}
	s.failures++
	wait := cooldown(s.failures)
	s.until = h.now().Add(wait)
	return wait
}

// ok records an accepted submit: the route is healthy again.
func (h *health) ok(route string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.routes, route)
}

// cooldown is the wait after n failures in a row.
func cooldown(n int) time.Duration {
	d := Cooldown
	for i := 1; i < n && d < MaxCooldown; i++ {
		d *= 2
	}
	return min(d, MaxCooldown)
}
