package sqlitestore

import (
	"context"
	"fmt"

	"github.com/genvideo/gen/shared/domain"
	"github.com/genvideo/gen/shared/lifecycle"
	"github.com/genvideo/gen/shared/store"
	"github.com/genvideo/gen/shared/task"
)

// LedgerPage implements store.Store. Seq is the ledger's own row number,
// shared by every account: it only grows, which is all a cursor needs.
func (s *Store) LedgerPage(ctx context.Context, accountID string, q store.LedgerQuery) ([]domain.LedgerEntry, error) {
	op := "read ledger page of " + accountID
	limit := q.Limit
	if limit <= 0 {
		limit = -1 // SQLite: no limit
	}
	before := q.Before
	if before <= 0 {
		before = 1<<63 - 1
	}
	return s.readLedger(ctx, op, accountID,
		`SELECT account_id, task_id, kind, amount, balance, at, note, seq
		FROM ledger WHERE account_id = ? AND seq < ? ORDER BY seq DESC LIMIT ?`, accountID, before, limit)
}

// Held implements store.Store, from the status index: it reads only the
// account's few tasks in flight.
func (s *Store) Held(ctx context.Context, accountID string) (int64, error) {
	op := "read credits held by " + accountID
	var held int64
	err := s.read(ctx, op, func(tx *txn) error {
		err := tx.QueryRowContext(ctx, `SELECT coalesce(sum(credits_cost - credits_refunded), 0) FROM tasks
			WHERE account_id = ? AND status IN ('pending', 'processing')`, accountID).Scan(&held)
		if err != nil {
			return dbErr(op, err)
		}
		return nil
	})
	return held, err
}

// DeleteTask implements store.Store. The task's row goes; its ledger
// entries and idempotency record stay.
func (s *Store) DeleteTask(ctx context.Context, id string) (t task.Task, err error) {
	s.tasks.forgetTask(id)
	defer s.tasks.forgetTask(id)
	op := "delete task " + id
	err = s.write(ctx, op, func(tx *txn) error {
		var err error
		if t, err = loadTask(ctx, tx, op, id); err != nil {
			return err
		}
		tx.touch(t.AccountID)
		if err := lifecycle.Delete(t); err != nil {
			return err
		}
		// The status is the one read: nothing moves a terminal task, but
		// the condition says what the delete relies on.
		res, err := tx.ExecContext(ctx, `DELETE FROM tasks WHERE id = ? AND status = ?`, id, string(t.Status))
		if err != nil {
			return dbErr(op, err)
		}
		if n, err := res.RowsAffected(); err != nil || n != 1 {
			return dbErr(op, fmt.Errorf("deleted %d rows: %v", n, err))
		}
		return nil
	})
	return t, err
}
