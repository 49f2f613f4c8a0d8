package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/genvideo/gen/shared/domain"
	"github.com/genvideo/gen/shared/lifecycle"
)

// pruneBatch is how many expired counters each Take deletes. Every request
// takes counters, so small batches keep up with the windows that expire
// without making any one request slow.
const pruneBatch = 32

// Take implements store.Store.
func (s *Store) Take(ctx context.Context, counters []domain.Window, at time.Time) ([]int, error) {
	used := make([]int, len(counters))
	if len(counters) == 0 {
		return used, nil
	}
	keys := make([]string, len(counters))
	for i, c := range counters {
		keys[i] = c.Key
	}
	op := "take " + strings.Join(keys, ", ")
	err := s.write(ctx, op, func(tx *txn) error {
		if err := prune(ctx, tx, at); err != nil {
			return dbErr(op, err)
		}
		for i, c := range counters {
			n, err := take(ctx, tx, c, at)
			if err != nil {
				return err
			}
			used[i] = n
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return used, nil
}

// prune deletes a few counters whose window ended, so that the table holds
// about the windows still open rather than every window there ever was.
func prune(ctx context.Context, tx *txn, at time.Time) error {
	_, err := tx.ExecContext(ctx,
		`DELETE FROM counters WHERE key IN
			(SELECT key FROM counters WHERE expires_at <= ? LIMIT ?)`,
		ms(at), pruneBatch)
	if err != nil {
		return fmt.Errorf("prune expired counters: %w", err)
	}
	return nil
}

// readTally reads counter key's tally as stored, open or not: the
// zero lifecycle.Tally when there is none.
func readTally(ctx context.Context, tx *txn, key string) (lifecycle.Tally, error) {
	var count int
	var expires int64
	err := tx.QueryRowContext(ctx,
		`SELECT count, expires_at FROM counters WHERE key = ?`, key).Scan(&count, &expires)
	if errors.Is(err, sql.ErrNoRows) {
		return lifecycle.Tally{}, nil
	}
	if err != nil {
		return lifecycle.Tally{}, fmt.Errorf("read counter %s: %w", key, err)
	}
	return lifecycle.Tally{Count: count, Ends: fromMS(expires)}, nil
}

// putWindow writes the window a take of counter key leaves.
func putWindow(ctx context.Context, tx *txn, key string, tk lifecycle.Taken) error {
	var err error
	if tk.Fresh {
		_, err = tx.ExecContext(ctx,
			`INSERT INTO counters (key, count, expires_at) VALUES (?, ?, ?)
			ON CONFLICT (key) DO UPDATE SET count = excluded.count, expires_at = excluded.expires_at`,
			key, tk.Tally.Count, ms(tk.Tally.Ends))
	} else {
		_, err = tx.ExecContext(ctx, `UPDATE counters SET count = ? WHERE key = ?`, tk.Tally.Count, key)
	}
	if err != nil {
		return fmt.Errorf("write counter %s: %w", key, err)
	}
	return nil
}

// take consumes one unit of c at time at, as lifecycle.Take decides, and
// returns its new count, or a *domain.LimitError if it is exhausted.
func take(ctx context.Context, tx *txn, c domain.Window, at time.Time) (int, error) {
	w, err := readTally(ctx, tx, c.Key)
	if err != nil {
		return 0, dbErr("take "+c.Key, err)
	}
	tk, err := lifecycle.Take(c, w, at)
	if err != nil {
		return 0, err
	}
	if err := putWindow(ctx, tx, c.Key, tk); err != nil {
		return 0, dbErr("take "+c.Key, err)
	}
	return tk.Tally.Count, nil
}

// Count returns the count of c's window at at: 0 when there is none or it
// has ended. It reads, so it never waits for the writer.
func (s *Store) Count(ctx context.Context, c domain.Window, at time.Time) (int, error) {
	var n int
	op := "read counter " + c.Key
	err := s.read(ctx, op, func(tx *txn) error {
		w, err := readTally(ctx, tx, c.Key)
		if err != nil {
			return dbErr(op, err)
		}
		if w.Open(at) {
			n = w.Count
		}
		return nil
	})
	return n, err
}

// AddCounts adds n[i] units to counters[i], in one transaction, without
// checking their limits: the caller already counted them against the
// limits (in memory) and persists them in batches. A window that has
// ended at at is started afresh with n[i]; one whose counter has itself
// ended is skipped, since nothing will read it again.
func (s *Store) AddCounts(ctx context.Context, counters []domain.Window, n []int, at time.Time) error {
	if len(counters) != len(n) {
		return fmt.Errorf("add counts: %d counters, %d counts", len(counters), len(n))
	}
	op := fmt.Sprintf("add counts to %d counters", len(counters))
	return s.write(ctx, op, func(tx *txn) error {
		for i, c := range counters {
			if n[i] <= 0 || !c.ExpiresAt.After(at) {
				continue
			}
			w, err := readTally(ctx, tx, c.Key)
			if err != nil {
				return dbErr(op, err)
			}
			if err := putWindow(ctx, tx, c.Key, lifecycle.Add(c, w, n[i], at)); err != nil {
				return dbErr(op, err)
			}
		}
		return nil
	})
}
