package storetest

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/genvideo/gen/shared/domain"
	"github.com/genvideo/gen/shared/store"
)

// Stream slots: at most Limit leases of one key live at once; another
// key's are its own; a closed lease frees its slot at once, an expired
// one when it lapses; a renewed lease outlives its first expiry; a lease
// no longer held cannot be renewed.
func testStreams(t *testing.T, s store.Store) {
	ctx := t.Context()
	slots := func(key string, expires time.Duration) domain.Window {
		return domain.Window{Key: key, Kind: "e", Limit: 2, ExpiresAt: t0.Add(expires)}
	}
	open := func(w domain.Window, lease string, d time.Duration) (int, error) {
		return s.OpenStream(ctx, w, lease, at(d))
	}
	mustOpen := func(w domain.Window, lease string, d time.Duration, want int) {
		t.Helper()
		if n, err := open(w, lease, d); err != nil || n != want {
			t.Fatalf("OpenStream(%s, %s) at +%v = %d, %v; want %d held", w.Key, lease, d, n, err, want)
		}
	}
	full := func(w domain.Window, lease string, d time.Duration, earliest time.Time) {
		t.Helper()
		n, err := open(w, lease, d)
		var le *domain.LimitError
		if !errors.As(err, &le) {
			t.Fatalf("OpenStream(%s, %s) at +%v = %d, %v; want a *domain.LimitError", w.Key, lease, d, n, err)
		}
		if le.Window.Key != w.Key || le.Window.Limit != w.Limit || le.Window.Kind != w.Kind || !le.Window.ExpiresAt.Equal(earliest) {
			t.Errorf("LimitError window %+v, want %s limit %d kind %s expiring %v", le.Window, w.Key, w.Limit, w.Kind, earliest)
		}
	}

	mustOpen(slots("es:k1", time.Minute), "a", 0, 1)
	mustOpen(slots("es:k1", 2*time.Minute), "b", time.Second, 2)
	full(slots("es:k1", 3*time.Minute), "c", 2*time.Second, t0.Add(time.Minute))
	mustOpen(slots("es:k2", time.Minute), "a", 2*time.Second, 1) // another key's slots

	// A close frees its slot at once; closing it again is no error.
	if err := s.CloseStream(ctx, "es:k1", "b"); err != nil {
		t.Fatalf("CloseStream: %v", err)
	}
	if err := s.CloseStream(ctx, "es:k1", "b"); err != nil {
		t.Fatalf("CloseStream of a closed lease: %v", err)
	}
	mustOpen(slots("es:k1", 3*time.Minute), "c", 3*time.Second, 2)

	// Renewed, a lease outlives its first expiry; the one not renewed
	// lapses and frees its slot.
	if err := s.RenewStream(ctx, "es:k1", "c", t0.Add(10*time.Minute)); err != nil {
		t.Fatalf("RenewStream: %v", err)
	}
	full(slots("es:k1", 4*time.Minute), "d", 30*time.Second, t0.Add(time.Minute))
	mustOpen(slots("es:k1", 5*time.Minute), "d", time.Minute, 2) // a lapsed at +1m
	full(slots("es:k1", 6*time.Minute), "e", 4*time.Minute, t0.Add(5*time.Minute))

	// A lease that lapsed and lost its slot is not renewed.
	if err := s.RenewStream(ctx, "es:k1", "a", t0.Add(20*time.Minute)); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("RenewStream of a lapsed lease = %v, want domain.ErrNotFound", err)
	}
	if err := s.RenewStream(ctx, "es:k1", "never", t0.Add(20*time.Minute)); !errors.Is(err, domain.ErrNotFound) {
		t.Errorf("RenewStream of an unknown lease = %v, want domain.ErrNotFound", err)
	}
}

// Many opens of one key at once: exactly Limit succeed.
func testRaceStreams(t *testing.T, s store.Store) {
	w := domain.Window{Key: "es:k1", Kind: "e", Limit: 5, ExpiresAt: t0.Add(time.Minute)}
	const n = 20
	errs := make([]error, n)
	race(n, func(i int) {
		_, errs[i] = s.OpenStream(t.Context(), w, fmt.Sprintf("l%d", i), at(time.Duration(i)*time.Millisecond))
	})
	opened := 0
	for i, err := range errs {
		var le *domain.LimitError
		switch {
		case err == nil:
			opened++
		case errors.As(err, &le):
		default:
			t.Errorf("OpenStream %d: %v, want success or *domain.LimitError", i, err)
		}
	}
	if opened != w.Limit {
		t.Errorf("%d of %d racing opens succeeded, want %d", opened, n, w.Limit)
	}
}
