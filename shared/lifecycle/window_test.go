package lifecycle

import (
	"errors"
	"testing"
	"time"

	"github.com/genvideo/gen/shared/domain"
)

func TestTake(t *testing.T) {
	at := t0.Add(30 * time.Second)
	ends := t0.Add(time.Minute)
	next := t0.Add(2 * time.Minute)
	c := func(limit int) domain.Window {
		return domain.Window{Key: "rl:m:key-1:0", Kind: "m", Limit: limit, ExpiresAt: next}
	}
	tests := []struct {
		name    string
		c       domain.Window
		w       Tally
		want    Taken
		refused bool
	}{
		{"no window", c(3), Tally{}, Taken{Tally: Tally{Count: 1, Ends: next}, Fresh: true}, false},
		{"an open window", c(3), Tally{Count: 1, Ends: ends}, Taken{Tally: Tally{Count: 2, Ends: ends}}, false},
		{"the last unit of an open window", c(3), Tally{Count: 2, Ends: ends}, Taken{Tally: Tally{Count: 3, Ends: ends}}, false},
		{"a full open window", c(3), Tally{Count: 3, Ends: ends}, Taken{}, true},
		{"an open window over its limit", c(3), Tally{Count: 7, Ends: ends}, Taken{}, true},
		{"a full window ending at the take", c(3), Tally{Count: 3, Ends: at},
			Taken{Tally: Tally{Count: 1, Ends: next}, Fresh: true}, false},
		{"a full window that ended", c(3), Tally{Count: 3, Ends: at.Add(-time.Hour)},
			Taken{Tally: Tally{Count: 1, Ends: next}, Fresh: true}, false},
		{"a full window ending 1 ns after the take", c(3), Tally{Count: 3, Ends: at.Add(time.Nanosecond)}, Taken{}, true},
		{"limit 1, no window", c(1), Tally{}, Taken{Tally: Tally{Count: 1, Ends: next}, Fresh: true}, false},
		{"limit 0, no window", c(0), Tally{}, Taken{}, true},
		{"limit 0, an open window", c(0), Tally{Count: 0, Ends: ends}, Taken{}, true},
		{"limit 0, a window that ended", c(0), Tally{Count: 0, Ends: at}, Taken{}, true},
		{"a negative limit", c(-1), Tally{}, Taken{}, true},
	}
	for _, tt := range tests {
		got, err := Take(tt.c, tt.w, at)
		if tt.refused {
			var le *domain.LimitError
			if !errors.As(err, &le) {
				t.Errorf("%s: Take = %+v, %v; want a *domain.LimitError", tt.name, got, err)
			} else if le.Window != tt.c {
				t.Errorf("%s: LimitError.Window = %+v, want the counter as given, %+v", tt.name, le.Window, tt.c)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("%s: Take = %+v, %v; want %+v", tt.name, got, err, tt.want)
		}
	}
}

func TestWindowOpen(t *testing.T) {
	ends := t0.Add(time.Minute)
	tests := []struct {
		w    Tally
		at   time.Time
		want bool
	}{
		{Tally{}, t0, false},
		{Tally{Count: 1, Ends: ends}, t0, true},
		{Tally{Count: 1, Ends: ends}, ends.Add(-time.Nanosecond), true},
		{Tally{Count: 1, Ends: ends}, ends, false},
		{Tally{Count: 1, Ends: ends}, ends.Add(time.Hour), false},
	}
	for _, tt := range tests {
		if got := tt.w.Open(tt.at); got != tt.want {
			t.Errorf("%+v.Open(%v) = %v, want %v", tt.w, tt.at, got, tt.want)
		}
	}
}

// Add adds to an open window without a limit, and starts an ended one
// afresh: the counts the local stack took in memory reaching the store.
func TestAdd(t *testing.T) {
	at := t0.Add(30 * time.Second)
	ends, next := t0.Add(time.Minute), t0.Add(2*time.Minute)
	c := domain.Window{Key: "rl:d:key-1:0", Kind: "d", Limit: 3, ExpiresAt: next}
	tests := []struct {
		name string
		w    Tally
		n    int
		want Taken
	}{
		{"no window", Tally{}, 2, Taken{Tally: Tally{Count: 2, Ends: next}, Fresh: true}},
		{"an open window, past its limit", Tally{Count: 3, Ends: ends}, 5, Taken{Tally: Tally{Count: 8, Ends: ends}}},
		{"a window ending at at", Tally{Count: 3, Ends: at}, 2, Taken{Tally: Tally{Count: 2, Ends: next}, Fresh: true}},
	}
	for _, tt := range tests {
		if got := Add(c, tt.w, tt.n, at); got != tt.want {
			t.Errorf("%s: Add = %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

func TestGiveBack(t *testing.T) {
	at := t0.Add(30 * time.Second)
	ends := t0.Add(time.Minute)
	tests := []struct {
		name   string
		w      Tally
		amount int
		want   Tally
		ok     bool
	}{
		{"an open window", Tally{Count: 70, Ends: ends}, 35, Tally{Count: 35, Ends: ends}, true},
		{"never below 0", Tally{Count: 20, Ends: ends}, 35, Tally{Count: 0, Ends: ends}, true},
		{"a window that ended", Tally{Count: 70, Ends: at}, 35, Tally{Count: 70, Ends: at}, false},
		{"no window", Tally{}, 35, Tally{}, false},
		{"nothing refunded", Tally{Count: 70, Ends: ends}, 0, Tally{Count: 70, Ends: ends}, false},
	}
	for _, tt := range tests {
		if got, ok := GiveBack(tt.w, tt.amount, at); got != tt.want || ok != tt.ok {
			t.Errorf("%s: GiveBack = %+v, %v; want %+v, %v", tt.name, got, ok, tt.want, tt.ok)
		}
	}
}
