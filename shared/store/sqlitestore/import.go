package sqlitestore

import (
	"context"
	"fmt"
	"strings"

	"github.com/genvideo/gen/shared/task"
)

// importBatch is how many tasks ImportTasks writes per transaction.
const importBatch = 5000

// ImportTasks writes tasks as they are, in transactions of importBatch,
// with none of a start's checks or books: no charge, no ledger entry, no
// in-flight slot. It exists for `make bench` (infra/bench) to seed an
// account with a million tasks in seconds rather than through a million
// starts; nothing in the service calls it, and no request can reach it.
// The history's counts follow, as for any write (schema.go, 8). next
// returns the i-th task of n.
func (s *Store) ImportTasks(ctx context.Context, n int, next func(i int) task.Task) error {
	for from := 0; from < n; from += importBatch {
		op := fmt.Sprintf("import tasks %d to %d", from, min(from+importBatch, n)-1)
		err := s.write(ctx, op, func(tx *txn) error {
			for i := from; i < min(from+importBatch, n); i++ {
				t := next(i)
				tx.touch(t.AccountID)
				row, err := encodeTask(t)
				if err != nil {
					return fmt.Errorf("%s: task %s: %w", op, t.ID, err)
				}
				if _, err := tx.ExecContext(ctx, `INSERT INTO tasks (`+taskColumns+`)
					VALUES (?`+strings.Repeat(", ?", len(row)-1)+`)`, row...); err != nil {
					return dbErr(op, fmt.Errorf("insert %s: %w", t.ID, err))
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}
