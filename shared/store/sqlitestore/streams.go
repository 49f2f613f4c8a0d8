package sqlitestore

import (
	"context"
	"fmt"
	"time"

	"github.com/genvideo/gen/shared/domain"
)

// OpenStream implements store.Store: in one write transaction, the
// expired leases of w.Key are deleted, the live ones counted, and the
// lease added if one is free.
func (s *Store) OpenStream(ctx context.Context, w domain.Window, lease string, at time.Time) (int, error) {
	op := "open stream " + w.Key
	var held int
	err := s.write(ctx, op, func(tx *txn) error {
		if _, err := tx.ExecContext(ctx,
			`DELETE FROM stream_leases WHERE key = ? AND expires_at <= ?`, w.Key, ms(at)); err != nil {
			return dbErr(op, fmt.Errorf("delete expired leases: %w", err))
		}
		var earliest int64
		if err := tx.QueryRowContext(ctx,
			`SELECT count(*), coalesce(min(expires_at), 0) FROM stream_leases WHERE key = ?`,
			w.Key).Scan(&held, &earliest); err != nil {
			return dbErr(op, fmt.Errorf("count leases: %w", err))
		}
		if held >= w.Limit {
			full := w
			full.ExpiresAt = fromMS(earliest)
			return &domain.LimitError{Window: full}
		}
		if _, err := tx.ExecContext(ctx,
			`INSERT INTO stream_leases (key, lease, expires_at) VALUES (?, ?, ?)`,
			w.Key, lease, ms(w.ExpiresAt)); err != nil {
			return dbErr(op, fmt.Errorf("add lease %s: %w", lease, err))
		}
		held++
		return nil
	})
	if err != nil {
		return 0, err
	}
	return held, nil
}

// RenewStream implements store.Store.
func (s *Store) RenewStream(ctx context.Context, key, lease string, expires time.Time) error {
	op := "renew stream " + key
	return s.write(ctx, op, func(tx *txn) error {
		res, err := tx.ExecContext(ctx,
			`UPDATE stream_leases SET expires_at = ? WHERE key = ? AND lease = ?`, ms(expires), key, lease)
		if err != nil {
			return dbErr(op, err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return dbErr(op, err)
		} else if n == 0 {
			return fmt.Errorf("%s: lease %s: %w", op, lease, domain.ErrNotFound)
		}
		return nil
	})
}

// CloseStream implements store.Store.
func (s *Store) CloseStream(ctx context.Context, key, lease string) error {
	op := "close stream " + key
	return s.write(ctx, op, func(tx *txn) error {
		if _, err := tx.ExecContext(ctx,
			`DELETE FROM stream_leases WHERE key = ? AND lease = ?`, key, lease); err != nil {
			return dbErr(op, err)
		}
		return nil
	})
}
