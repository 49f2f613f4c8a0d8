package storetest

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/genvideo/gen/shared/domain"
	"github.com/genvideo/gen/shared/store"
)

// takeStep is one Take call and what it must answer: the counts, or the
// key of the exhausted counter.
type takeStep struct {
	counters  []domain.Window
	at        time.Time
	want      []int
	exhausted string
}

func runTakes(t *testing.T, s store.Store, steps []takeStep) {
	t.Helper()
	for i, st := range steps {
		keys := make([]string, len(st.counters))
		for j, c := range st.counters {
			keys[j] = c.Key
		}
		what := fmt.Sprintf("step %d: Take(%v) at %v", i, keys, st.at.UTC())
		used, err := s.Take(t.Context(), st.counters, st.at)
		if st.exhausted == "" {
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			if !slices.Equal(used, st.want) {
				t.Errorf("%s = %v, want %v", what, used, st.want)
			}
			continue
		}
		var le *domain.LimitError
		if !errors.As(err, &le) {
			t.Fatalf("%s: got %v, %v; want a *domain.LimitError for %s", what, used, err, st.exhausted)
		}
		var want domain.Window
		for _, c := range st.counters {
			if c.Key == st.exhausted {
				want = c
			}
		}
		if le.Window.Key != want.Key || le.Window.Limit != want.Limit {
			t.Errorf("%s: LimitError names %s (limit %d), want %s (limit %d)",
				what, le.Window.Key, le.Window.Limit, want.Key, want.Limit)
		}
	}
}

func testTake(t *testing.T, s store.Store) {
	minute := domain.Window{Key: "rpm:key-1:29385120", Limit: 3, ExpiresAt: t0.Add(time.Minute)}
	other := domain.Window{Key: "rpm:key-2:29385120", Limit: 1, ExpiresAt: t0.Add(time.Minute)}
	runTakes(t, s, []takeStep{
		{counters: []domain.Window{minute}, at: at(0), want: []int{1}},
		{counters: []domain.Window{minute}, at: at(time.Second), want: []int{2}},
		{counters: []domain.Window{other}, at: at(time.Second), want: []int{1}},
		{counters: []domain.Window{minute}, at: at(2 * time.Second), want: []int{3}},
		{counters: []domain.Window{minute}, at: at(3 * time.Second), exhausted: minute.Key},
		{counters: []domain.Window{other}, at: at(3 * time.Second), exhausted: other.Key},
		{counters: nil, at: at(3 * time.Second), want: []int{}},
	})
}

func testTakeAllOrNothing(t *testing.T, s store.Store) {
	day := domain.Window{Key: "rpd:key-1:20405", Limit: 5, ExpiresAt: t0.Add(24 * time.Hour)}
	minute := domain.Window{Key: "rpm:key-1:29385120", Limit: 1, ExpiresAt: t0.Add(time.Minute)}
	starts := domain.Window{Key: "starts:key-1:29385120", Limit: 10, ExpiresAt: t0.Add(time.Minute)}
	runTakes(t, s, []takeStep{
		{counters: []domain.Window{day, minute}, at: at(0), want: []int{1, 1}},
		// The minute is exhausted: the day must not count this call.
		{counters: []domain.Window{day, minute}, at: at(time.Second), exhausted: minute.Key},
		{counters: []domain.Window{day, starts, minute}, at: at(time.Second), exhausted: minute.Key},
		{counters: []domain.Window{day}, at: at(2 * time.Second), want: []int{2}},
		{counters: []domain.Window{starts}, at: at(2 * time.Second), want: []int{1}},
		{counters: []domain.Window{day, starts}, at: at(3 * time.Second), want: []int{3, 2}},
		{counters: []domain.Window{day, starts}, at: at(4 * time.Second), want: []int{4, 3}},
		{counters: []domain.Window{day, starts}, at: at(5 * time.Second), want: []int{5, 4}},
		// An exhausted first counter leaves the later ones alone too.
		{counters: []domain.Window{day, starts}, at: at(6 * time.Second), exhausted: day.Key},
		{counters: []domain.Window{starts}, at: at(7 * time.Second), want: []int{5}},
	})
}

func testTakeWindowExpiry(t *testing.T, s store.Store) {
	const key = "rpm:key-1"
	first := domain.Window{Key: key, Limit: 2, ExpiresAt: t0.Add(time.Minute)}
	second := domain.Window{Key: key, Limit: 2, ExpiresAt: t0.Add(2 * time.Minute)}
	third := domain.Window{Key: key, Limit: 2, ExpiresAt: t0.Add(3 * time.Minute)}
	runTakes(t, s, []takeStep{
		{counters: []domain.Window{first}, at: t0, want: []int{1}},
		{counters: []domain.Window{first}, at: t0.Add(30 * time.Second), want: []int{2}},
		{counters: []domain.Window{first}, at: t0.Add(time.Minute - time.Millisecond), exhausted: key},
		// At ExpiresAt the window is gone: a fresh one starts at 1.
		{counters: []domain.Window{second}, at: t0.Add(time.Minute), want: []int{1}},
		{counters: []domain.Window{second}, at: t0.Add(time.Minute + time.Second), want: []int{2}},
		{counters: []domain.Window{second}, at: t0.Add(2*time.Minute - time.Millisecond), exhausted: key},
		// Long after, a fresh window again, not the sum of the old ones.
		{counters: []domain.Window{third}, at: t0.Add(2*time.Minute + 30*time.Second), want: []int{1}},
	})
}

// A *LimitError hands the exhausted counter back as it was given, its
// Kind included, from a Take of one counter or several and from a start's
// Starts counter: the caller tells its limits apart by it.
func testLimitErrorCounter(t *testing.T, s store.Store) {
	ctx := t.Context()
	minute := domain.Window{Key: "rl:m:key-1:0", Kind: "minute", Limit: 1, ExpiresAt: t0.Add(time.Minute)}
	day := domain.Window{Key: "rl:d:key-1:0", Kind: "day", Limit: 5, ExpiresAt: t0.Add(24 * time.Hour)}
	starts := domain.Window{Key: "rl:s:key-1:0", Kind: "starts", Limit: 1, ExpiresAt: t0.Add(time.Minute)}
	wantCounter := func(what string, err error, want domain.Window) {
		t.Helper()
		var le *domain.LimitError
		if !errors.As(err, &le) {
			t.Fatalf("%s: got error %v, want a *domain.LimitError", what, err)
		}
		got := le.Window
		if got.Key != want.Key || got.Kind != want.Kind || got.Limit != want.Limit || !got.ExpiresAt.Equal(want.ExpiresAt) {
			t.Errorf("%s: LimitError.Window = %+v, want %+v", what, got, want)
		}
	}
	if _, err := s.Take(ctx, []domain.Window{minute}, at(0)); err != nil {
		t.Fatalf("Take(minute): %v", err)
	}
	_, err := s.Take(ctx, []domain.Window{minute}, at(time.Second))
	wantCounter("Take(minute) when it is full", err, minute)
	_, err = s.Take(ctx, []domain.Window{day, minute}, at(time.Second))
	wantCounter("Take(day, minute) when the minute is full", err, minute)

	mustAccount(t, s, "acct-a", 100)
	start := func(c time.Time, suffix string) error {
		_, err := s.CreateTask(ctx, newTask("acct-a", taskID(c, suffix), 1, c), domain.StartGuard{Starts: &starts})
		return err
	}
	if err := start(at(2*time.Second), "kind000001"); err != nil {
		t.Fatalf("CreateTask with a starts window free: %v", err)
	}
	wantCounter("CreateTask with the starts window full", start(at(3*time.Second), "kind000002"), starts)
}
