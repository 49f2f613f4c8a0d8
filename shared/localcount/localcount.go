// Package localcount counts the request windows of the local stack in
// process memory, so that a request (a status poll above all) writes
// nothing: the per-minute windows live only here, and the per-day
// windows are counted here and persisted in batches.
//
// Counting in one place keeps the limits exact under concurrency, as the
// store's single transaction did: a Take checks and counts every counter
// it is given under one lock, all or none. What a crash may forgive is
// bounded: the minute window in progress (it is in memory only) and the
// day counts not yet flushed (at most FlushInterval's worth). A day
// window is read from the store the first time it is counted after a
// start, so a restart resumes it.
package localcount

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/genvideo/gen/shared/domain"
	"github.com/genvideo/gen/shared/lifecycle"
)

// DefaultFlushInterval is how often day counts are persisted.
const DefaultFlushInterval = time.Second

// Persister keeps the windows that outlive a process.
// sqlitestore.Store is one.
type Persister interface {
	// Count returns the count of c's window at at: 0 when it is absent
	// or has ended.
	Count(ctx context.Context, c domain.Window, at time.Time) (int, error)
	// AddCounts adds n[i] units to counters[i] without checking limits.
	AddCounts(ctx context.Context, counters []domain.Window, n []int, at time.Time) error
}

// Config is what a Tally is built from. Persister is required.
type Config struct {
	Persister Persister
	// Persist says which counters are persisted: the others (the
	// per-minute windows) are kept in memory only.
	Persist func(domain.Window) bool
	// FlushInterval is how often unpersisted counts are written
	// (default DefaultFlushInterval).
	FlushInterval time.Duration
	Logger        *slog.Logger // default slog.Default()
}

// Tally counts windows in memory. It has store.Store's Take, so that
// service.Config can count requests with it. Build it with New and Close
// it before closing the Persister.
type Tally struct {
	cfg Config
	log *slog.Logger

	mu      sync.Mutex
	windows map[string]*window
	// lastAt is the latest time a Take was made at: flushes write at
	// it, so that a window is judged by the clock that counted it.
	lastAt    time.Time
	nextPrune time.Time

	stop chan struct{}
	done chan struct{}
	once sync.Once
}

// window is one counter's window as counted here.
type window struct {
	c       domain.Window
	persist bool
	// loaded: count includes what the Persister held when the window
	// was first counted in this process.
	loaded bool
	count  int
	// unflushed is the part of count the Persister does not have yet.
	unflushed int
}

// New starts a Tally, and its flushes every FlushInterval.
func New(cfg Config) *Tally {
	if cfg.Persister == nil {
		panic("localcount.New: Config.Persister is nil")
	}
	if cfg.Persist == nil {
		cfg.Persist = func(domain.Window) bool { return true }
	}
	if cfg.FlushInterval <= 0 {
		cfg.FlushInterval = DefaultFlushInterval
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	c := &Tally{cfg: cfg, log: cfg.Logger, windows: map[string]*window{},
		stop: make(chan struct{}), done: make(chan struct{})}
	go c.flushEvery(cfg.FlushInterval)
	return c
}

// Take consumes one unit of every counter, or none at all: if any is
// exhausted it returns a *domain.LimitError naming it. used[i] is counter
// i's count after this call. It has store.Store's Take's meaning.
func (c *Tally) Take(ctx context.Context, counters []domain.Window, at time.Time) ([]int, error) {
	used := make([]int, len(counters))
	for {
		if err := c.load(ctx, counters, at); err != nil {
			return nil, err
		}
		c.mu.Lock()
		ws, ok := c.windowsOf(counters, at)
		if !ok {
			// A window was pruned or ended between loading and now.
			c.mu.Unlock()
			continue
		}
		taken := make([]lifecycle.Taken, len(ws))
		for i, w := range ws {
			tk, err := lifecycle.Take(counters[i], lifecycle.Tally{Count: w.count, Ends: w.c.ExpiresAt}, at)
			if err != nil {
				c.mu.Unlock()
				return nil, err
			}
			taken[i] = tk
		}
		for i, w := range ws {
			w.c = counters[i]
			w.count = taken[i].Tally.Count
			if w.persist {
				w.unflushed++
			}
			used[i] = w.count
		}
		if at.After(c.lastAt) {
			c.lastAt = at
		}
		c.prune(at)
		c.mu.Unlock()
		return used, nil
	}
}

// windowsOf returns the open, loaded window of each counter, making the
// in-memory ones; ok is false when a persisted one is not loaded. c.mu
// is held.
func (c *Tally) windowsOf(counters []domain.Window, at time.Time) ([]*window, bool) {
	ws := make([]*window, len(counters))
	for i, ct := range counters {
		w := c.windows[ct.Key]
		if w != nil && !w.c.ExpiresAt.After(at) {
			// The window ended: a new one starts under the same key.
			// Its unflushed counts go with it, as the Persister would
			// skip a window that ended anyway.
			delete(c.windows, ct.Key)
			w = nil
		}
		if w == nil {
			w = &window{c: ct, persist: c.cfg.Persist(ct)}
			w.loaded = !w.persist
			c.windows[ct.Key] = w
		}
		if !w.loaded {
			return nil, false
		}
		ws[i] = w
	}
	return ws, true
}

// load reads from the Persister each persisted window not loaded yet.
// The read is made without the lock; the first to come back adds it.
func (c *Tally) load(ctx context.Context, counters []domain.Window, at time.Time) error {
	for _, ct := range counters {
		c.mu.Lock()
		w := c.windows[ct.Key]
		need := c.cfg.Persist(ct) && (w == nil || !w.loaded)
		c.mu.Unlock()
		if !need {
			continue
		}
		n, err := c.cfg.Persister.Count(ctx, ct, at)
		if err != nil {
			return err
		}
		c.mu.Lock()
		w = c.windows[ct.Key]
		if w == nil {
			w = &window{c: ct, persist: true}
			c.windows[ct.Key] = w
		}
		if !w.loaded {
			w.count += n
			w.loaded = true
		}
		c.mu.Unlock()
	}
	return nil
}

// prune drops the windows that ended, at most once a minute. c.mu is held.
func (c *Tally) prune(at time.Time) {
	if at.Before(c.nextPrune) {
		return
	}
	c.nextPrune = at.Add(time.Minute)
	for k, w := range c.windows {
		if !w.c.ExpiresAt.After(at) {
			delete(c.windows, k)
		}
	}
}

// Flush persists every count not persisted yet. On failure the counts
// stay to be written by the next flush.
func (c *Tally) Flush(ctx context.Context) error {
	c.mu.Lock()
	var ws []*window
	var counters []domain.Window
	var ns []int
	for _, w := range c.windows {
		if w.unflushed > 0 {
			ws = append(ws, w)
			counters = append(counters, w.c)
			ns = append(ns, w.unflushed)
			w.unflushed = 0
		}
	}
	at := c.lastAt
	c.mu.Unlock()
	if len(ws) == 0 {
		return nil
	}
	if err := c.cfg.Persister.AddCounts(ctx, counters, ns, at); err != nil {
		c.mu.Lock()
		for i, w := range ws {
			w.unflushed += ns[i]
		}
		c.mu.Unlock()
		return err
	}
	return nil
}

func (c *Tally) flushEvery(d time.Duration) {
	defer close(c.done)
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-t.C:
			if err := c.Flush(context.Background()); err != nil {
				c.log.Warn("persist day counts; retrying at the next flush", "err", err)
			}
		}
	}
}

// Close stops the flushes and persists what is left.
func (c *Tally) Close() error {
	c.once.Do(func() { close(c.stop) })
	<-c.done
	return c.Flush(context.Background())
}
