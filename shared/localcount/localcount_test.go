package localcount_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/genvideo/gen/shared/domain"
	"github.com/genvideo/gen/shared/localcount"
	"github.com/genvideo/gen/shared/store/sqlitestore"
)

var t0 = time.Date(2030, 1, 2, 3, 4, 0, 0, time.UTC)

// daily persists the counters whose key says "day", as the local stack
// persists ratelimit.Day.
func daily(c domain.Window) bool { return c.Kind == "d" }

func counters(minuteLimit, dayLimit int) []domain.Window {
	return []domain.Window{
		{Key: "m:k", Kind: "m", Limit: minuteLimit, ExpiresAt: t0.Add(time.Minute)},
		{Key: "d:k", Kind: "d", Limit: dayLimit, ExpiresAt: t0.Add(24 * time.Hour)},
	}
}

func open(t *testing.T, path string) *sqlitestore.Store {
	t.Helper()
	st, err := sqlitestore.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// newTally counts over st; flushes happen only when the test asks.
func newTally(t *testing.T, p localcount.Persister) *localcount.Tally {
	t.Helper()
	c := localcount.New(localcount.Config{Persister: p, Persist: daily, FlushInterval: time.Hour})
	t.Cleanup(func() { c.Close() })
	return c
}

// TestExactUnderConcurrency: 61 takes at once of a 60-unit window: exactly
// 60 succeed, each seeing its own count, and the 61st names the window.
func TestExactUnderConcurrency(t *testing.T) {
	c := newTally(t, open(t, filepath.Join(t.TempDir(), "gen.db")))
	cs := counters(60, 1000)
	var mu sync.Mutex
	var counts []int
	var refused []error
	var wg sync.WaitGroup
	for range 61 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			used, err := c.Take(context.Background(), cs, t0)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				refused = append(refused, err)
				return
			}
			counts = append(counts, used[0])
		}()
	}
	wg.Wait()
	slices.Sort(counts)
	for i, n := range counts {
		if n != i+1 {
			t.Fatalf("minute counts %v, want each of 1..60 once", counts)
		}
	}
	var le *domain.LimitError
	if len(counts) != 60 || len(refused) != 1 || !errors.As(refused[0], &le) || le.Window.Key != "m:k" {
		t.Fatalf("%d taken, refused %v; want 60 taken and one *LimitError on m:k", len(counts), refused)
	}
	// Nothing was taken by the refused one: the day window counts 60.
	used, err := c.Take(context.Background(), counters(1000, 1000), t0)
	if err != nil || used[1] != 61 {
		t.Errorf("next take = %v, %v; want the day at 61", used, err)
	}
}

// TestDayPersistedMinuteNot: after Close the store holds the day's count
// and not the minute's; a new Tally (a restart) resumes the day and
// starts the minute afresh, forgiving that one window.
func TestDayPersistedMinuteNot(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "gen.db")
	st := open(t, path)
	c := localcount.New(localcount.Config{Persister: st, Persist: daily, FlushInterval: time.Hour})
	for range 3 {
		if _, err := c.Take(ctx, counters(3, 4), t0); err != nil {
			t.Fatal(err)
		}
	}
	if n, _ := st.Count(ctx, counters(3, 4)[1], t0); n != 0 {
		t.Errorf("day count persisted before a flush = %d, want 0", n)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	cs := counters(3, 4)
	if n, err := st.Count(ctx, cs[1], t0); err != nil || n != 3 {
		t.Errorf("day count after Close = %d, %v; want 3", n, err)
	}
	if n, err := st.Count(ctx, cs[0], t0); err != nil || n != 0 {
		t.Errorf("minute count after Close = %d, %v; want 0 (memory only)", n, err)
	}

	again := newTally(t, st)
	used, err := again.Take(ctx, cs, t0)
	if err != nil || used[0] != 1 || used[1] != 4 {
		t.Fatalf("first take after restart = %v, %v; want minute 1, day 4", used, err)
	}
	var le *domain.LimitError
	if _, err := again.Take(ctx, cs, t0); !errors.As(err, &le) || le.Window.Key != "d:k" {
		t.Errorf("take past the day's limit = %v, want *LimitError on d:k", err)
	}
}

// failing fails AddCounts while fail is set.
type failing struct {
	*sqlitestore.Store
	fail bool
}

func (f *failing) AddCounts(ctx context.Context, cs []domain.Window, n []int, at time.Time) error {
	if f.fail {
		return errors.New("disk full")
	}
	return f.Store.AddCounts(ctx, cs, n, at)
}

// TestFlushRetries: counts a failed flush could not write are written by
// the next one, not lost and not doubled.
func TestFlushRetries(t *testing.T) {
	ctx := context.Background()
	st := open(t, filepath.Join(t.TempDir(), "gen.db"))
	p := &failing{Store: st, fail: true}
	c := newTally(t, p)
	for range 2 {
		if _, err := c.Take(ctx, counters(10, 10), t0); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Flush(ctx); err == nil {
		t.Fatal("Flush over a failing store: no error")
	}
	p.fail = false
	if _, err := c.Take(ctx, counters(10, 10), t0); err != nil {
		t.Fatal(err)
	}
	if err := c.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if n, err := st.Count(ctx, counters(10, 10)[1], t0); err != nil || n != 3 {
		t.Errorf("day count = %d, %v; want 3", n, err)
	}
}

// TestWindowsEnd: a new minute starts from zero, and the day goes on.
func TestWindowsEnd(t *testing.T) {
	ctx := context.Background()
	c := newTally(t, open(t, filepath.Join(t.TempDir(), "gen.db")))
	if _, err := c.Take(ctx, counters(1, 10), t0); err != nil {
		t.Fatal(err)
	}
	next := t0.Add(time.Minute)
	cs := []domain.Window{
		{Key: "m:k2", Kind: "m", Limit: 1, ExpiresAt: next.Add(time.Minute)},
		counters(1, 10)[1],
	}
	used, err := c.Take(ctx, cs, next)
	if err != nil || used[0] != 1 || used[1] != 2 {
		t.Errorf("take in the next minute = %v, %v; want minute 1, day 2", used, err)
	}
}
