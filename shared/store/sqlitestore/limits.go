package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/genvideo/gen/shared/store"
)

// pruneBatch is how many expired counters each Take deletes. Every request
// takes counters, so small batches keep up with the windows that expire
// without making any one request slow.
const pruneBatch = 32

// Take implements store.Store.
func (s *Store) Take(ctx context.Context, counters []store.Counter, at time.Time) ([]int, error) {
	used := make([]int, len(counters))
	if len(counters) == 0 {
		return used, nil
	}
	keys := make([]string, len(counters))
	for i, c := range counters {
		keys[i] = c.Key
	}
	op := "take " + strings.Join(keys, ", ")
	err := s.write(ctx, op, func(tx *sql.Tx) error {
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
func prune(ctx context.Context, tx *sql.Tx, at time.Time) error {
	_, err := tx.ExecContext(ctx,
		`DELETE FROM counters WHERE key IN
			(SELECT key FROM counters WHERE expires_at <= ? LIMIT ?)`,
		ms(at), pruneBatch)
	if err != nil {
		return fmt.Errorf("prune expired counters: %w", err)
	}
	return nil
}

// counted is counter key's count at time at: 0 when no window is open.
func counted(ctx context.Context, tx *sql.Tx, key string, at time.Time) (int, error) {
	var n int
	err := tx.QueryRowContext(ctx,
		`SELECT count FROM counters WHERE key = ? AND expires_at > ?`, key, ms(at)).Scan(&n)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read counter %s: %w", key, err)
	}
	return n, nil
}

// take consumes one unit of c at time at and returns its new count, or a
// *store.LimitError if it is exhausted. A window that has ended is
// replaced by a fresh one ending at c.ExpiresAt, never added to.
func take(ctx context.Context, tx *sql.Tx, c store.Counter, at time.Time) (int, error) {
	n, err := counted(ctx, tx, c.Key, at)
	if err != nil {
		return 0, dbErr("take "+c.Key, err)
	}
	if n >= c.Limit {
		return 0, &store.LimitError{Counter: c}
	}
	if n == 0 {
		_, err = tx.ExecContext(ctx,
			`INSERT INTO counters (key, count, expires_at) VALUES (?, 1, ?)
			ON CONFLICT (key) DO UPDATE SET count = 1, expires_at = excluded.expires_at`,
			c.Key, ms(c.ExpiresAt))
	} else {
		_, err = tx.ExecContext(ctx, `UPDATE counters SET count = count + 1 WHERE key = ?`, c.Key)
	}
	if err != nil {
		return 0, dbErr("take "+c.Key, fmt.Errorf("write counter: %w", err))
	}
	return n + 1, nil
}
