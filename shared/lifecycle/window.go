package lifecycle

import (
	"time"

	"github.com/genvideo/gen/shared/domain"
)

// Tally is what a rate-limit window (domain.Window) has counted, as a
// store read it: its count and when it ends. The zero Tally is no window
// at all.
type Tally struct {
	Count int
	Ends  time.Time
}

// Open reports whether w still counts at at. A window ends at Ends,
// exclusive: from then on it counts as absent, whether or not the store
// has deleted it yet.
func (w Tally) Open(at time.Time) bool { return w.Ends.After(at) }

// Taken is what taking one unit of a counter does to it.
type Taken struct {
	// Tally is the counter's window's tally as the take leaves it.
	Tally Tally
	// Fresh: the take opens Tally, ending at the counter's ExpiresAt,
	// in place of whatever was read (nothing, or a window that ended);
	// otherwise it adds one to the open window read.
	Fresh bool
}

// Take decides taking one unit of c, whose window as read is w, at time
// at. An open window is added to; one that has ended is replaced by a
// fresh one, never added to (Add). A window that would go past c.Limit (a
// full open one, or any at all when the limit is 0 or less) refuses the
// take with a *domain.LimitError holding c as it was given.
func Take(c domain.Window, w Tally, at time.Time) (Taken, error) {
	tk := Add(c, w, 1, at)
	if tk.Tally.Count > c.Limit {
		return Taken{}, &domain.LimitError{Window: c}
	}
	return tk, nil
}

// Add decides adding n units to c, whose window as read is w, at time at,
// with no limit: units already taken elsewhere (the local stack counts in
// memory) reaching the store. An open window is added to; one that has
// ended is replaced by a fresh one holding n, ending at c.ExpiresAt.
func Add(c domain.Window, w Tally, n int, at time.Time) Taken {
	if !w.Open(at) {
		return Taken{Tally: Tally{Count: n, Ends: c.ExpiresAt}, Fresh: true}
	}
	w.Count += n
	return Taken{Tally: w}
}

// GiveBack decides what a refund of amount credits at at does to w, a
// spending cap's window of the refunded task (domain.SpendKeys of its
// key and CreatedAt) as read: a refund gives back allowance, so a window
// still open counts amount fewer, never below 0; one that has ended (or
// none) is left alone, ok false.
func GiveBack(w Tally, amount int, at time.Time) (Tally, bool) {
	if amount <= 0 || !w.Open(at) {
		return w, false
	}
	w.Count = max(w.Count-amount, 0)
	return w, true
}
