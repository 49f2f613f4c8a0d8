package sqlitestore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/genvideo/gen/shared/store"
	"github.com/genvideo/gen/shared/task"
)

// CreateTask implements store.Store. The checks run in this order: the
// account exists, the idempotency key, the task id is free, the Starts
// counter, the in-flight limit, the balance.
func (s *Store) CreateTask(ctx context.Context, t task.Task, g store.StartGuard) (int64, error) {
	op := fmt.Sprintf("create task %s for %s", t.ID, t.AccountID)
	t, err := store.PrepareTask(t, g)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", op, err)
	}
	idem := g.Idempotency
	row, err := encodeTask(t)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", op, err)
	}
	cost := int64(t.CreditsCost)

	var balance int64
	err = s.write(ctx, op, func(tx *sql.Tx) error {
		var inFlight int
		err := tx.QueryRowContext(ctx,
			`SELECT credits, in_flight FROM accounts WHERE id = ?`, t.AccountID).Scan(&balance, &inFlight)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%s: account: %w", op, store.ErrNotFound)
		}
		if err != nil {
			return dbErr(op, err)
		}
		if idem != nil {
			if err := checkIdempotency(ctx, tx, t, *idem); err != nil {
				return err
			}
		}
		var one int
		err = tx.QueryRowContext(ctx, `SELECT 1 FROM tasks WHERE id = ?`, t.ID).Scan(&one)
		if err == nil {
			return fmt.Errorf("%s: %w", op, store.ErrExists)
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return dbErr(op, err)
		}
		// Taken first, undone with everything else if a check below fails.
		if g.Starts != nil {
			if _, err := take(ctx, tx, *g.Starts, t.CreatedAt); err != nil {
				return err
			}
		}
		if g.MaxInFlight > 0 && inFlight >= g.MaxInFlight {
			return &store.InFlightLimitError{Limit: g.MaxInFlight}
		}
		if balance < cost {
			return &store.InsufficientCreditsError{Required: cost, Available: balance}
		}

		err = tx.QueryRowContext(ctx,
			`UPDATE accounts SET credits = credits - ?, in_flight = in_flight + 1
			WHERE id = ? RETURNING credits`, cost, t.AccountID).Scan(&balance)
		if err != nil {
			return dbErr(op, fmt.Errorf("charge: %w", err))
		}
		e := store.LedgerEntry{AccountID: t.AccountID, TaskID: t.ID, Kind: store.EntryCharge,
			Amount: -cost, Balance: balance, At: t.CreatedAt, Note: t.Model}
		if err := addEntry(ctx, tx, e); err != nil {
			return dbErr(op, err)
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO tasks (`+taskColumns+`)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, row...)
		if err != nil {
			return dbErr(op, fmt.Errorf("insert: %w", err))
		}
		if idem != nil {
			if err := putIdempotency(ctx, tx, t, *idem); err != nil {
				return dbErr(op, err)
			}
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return balance, nil
}

// checkIdempotency returns a *store.IdempotencyError if t's account holds a
// live record for k's key that k does not replace. It first prunes a few
// expired records, so that the table holds about a day of starts.
func checkIdempotency(ctx context.Context, tx *sql.Tx, t task.Task, k store.IdempotencyKey) error {
	op := "check idempotency key of " + t.AccountID
	_, err := tx.ExecContext(ctx,
		`DELETE FROM idempotency_keys WHERE (account_id, key) IN
			(SELECT account_id, key FROM idempotency_keys WHERE expires_at <= ? LIMIT ?)`,
		ms(t.CreatedAt), pruneBatch)
	if err != nil {
		return dbErr(op, fmt.Errorf("prune expired records: %w", err))
	}
	var e store.IdempotencyError
	err = tx.QueryRowContext(ctx,
		`SELECT task_id, request_hash FROM idempotency_keys
		WHERE account_id = ? AND key = ? AND expires_at > ?`,
		t.AccountID, k.Key, ms(t.CreatedAt)).Scan(&e.TaskID, &e.RequestHash)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil
	case err != nil:
		return dbErr(op, err)
	case k.Replaces != "" && e.TaskID == k.Replaces:
		return nil
	}
	return &e
}

// putIdempotency writes the record of t's start under k, over an expired
// or replaced record of the same key.
func putIdempotency(ctx context.Context, tx *sql.Tx, t task.Task, k store.IdempotencyKey) error {
	_, err := tx.ExecContext(ctx,
		`INSERT INTO idempotency_keys (account_id, key, request_hash, task_id, expires_at)
		VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (account_id, key) DO UPDATE SET request_hash = excluded.request_hash,
			task_id = excluded.task_id, expires_at = excluded.expires_at`,
		t.AccountID, k.Key, k.RequestHash, t.ID, ms(k.ExpiresAt))
	if err != nil {
		return fmt.Errorf("record idempotency key: %w", err)
	}
	return nil
}

const taskColumns = `id, account_id, key_name, type, model, prompt, params, inputs,
	credits_cost, credits_refunded, status,
	created_at, started_at, completed_at, deadline, videos, failure`

// encodeTask returns t's values in the order of taskColumns.
func encodeTask(t task.Task) ([]any, error) {
	params, err := json.Marshal(t.Params)
	if err != nil {
		return nil, fmt.Errorf("encode params: %w", err)
	}
	inputs, err := jsonOrNull(t.Inputs, len(t.Inputs) == 0)
	if err != nil {
		return nil, fmt.Errorf("encode inputs: %w", err)
	}
	videos, err := jsonOrNull(t.Videos, len(t.Videos) == 0)
	if err != nil {
		return nil, fmt.Errorf("encode videos: %w", err)
	}
	failure, err := jsonOrNull(t.Failure, t.Failure == nil)
	if err != nil {
		return nil, fmt.Errorf("encode failure: %w", err)
	}
	return []any{t.ID, t.AccountID, t.KeyName, t.Type, t.Model, t.Prompt, string(params), inputs,
		t.CreditsCost, t.CreditsRefunded, string(t.Status),
		ms(t.CreatedAt), nullMS(t.StartedAt), nullMS(t.CompletedAt), nullMS(t.Deadline), videos, failure}, nil
}

// jsonOrNull is v as JSON text, or NULL when it is empty.
func jsonOrNull(v any, empty bool) (sql.NullString, error) {
	if empty {
		return sql.NullString{}, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return sql.NullString{}, err
	}
	return sql.NullString{String: string(b), Valid: true}, nil
}

func scanTask(row interface{ Scan(...any) error }) (task.Task, error) {
	var t task.Task
	var params string
	var inputs, videos, failure sql.NullString
	var status string
	var created int64
	var started, completed, deadline sql.NullInt64
	err := row.Scan(&t.ID, &t.AccountID, &t.KeyName, &t.Type, &t.Model, &t.Prompt, &params, &inputs,
		&t.CreditsCost, &t.CreditsRefunded, &status,
		&created, &started, &completed, &deadline, &videos, &failure)
	if err != nil {
		return task.Task{}, err
	}
	t.Status = task.Status(status)
	t.CreatedAt = fromMS(created)
	t.StartedAt = fromNullMS(started)
	t.CompletedAt = fromNullMS(completed)
	t.Deadline = fromNullMS(deadline)
	if err := json.Unmarshal([]byte(params), &t.Params); err != nil {
		return task.Task{}, fmt.Errorf("decode params of %s: %w", t.ID, err)
	}
	if inputs.Valid {
		if err := json.Unmarshal([]byte(inputs.String), &t.Inputs); err != nil {
			return task.Task{}, fmt.Errorf("decode inputs of %s: %w", t.ID, err)
		}
	}
	if videos.Valid {
		if err := json.Unmarshal([]byte(videos.String), &t.Videos); err != nil {
			return task.Task{}, fmt.Errorf("decode videos of %s: %w", t.ID, err)
		}
	}
	if failure.Valid {
		t.Failure = new(task.Failure)
		if err := json.Unmarshal([]byte(failure.String), t.Failure); err != nil {
			return task.Task{}, fmt.Errorf("decode failure of %s: %w", t.ID, err)
		}
	}
	return t, nil
}

// loadTask reads task id inside tx.
func loadTask(ctx context.Context, tx *sql.Tx, op, id string) (task.Task, error) {
	t, err := scanTask(tx.QueryRowContext(ctx, `SELECT `+taskColumns+` FROM tasks WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return task.Task{}, fmt.Errorf("%s: %w", op, store.ErrNotFound)
	}
	if err != nil {
		return task.Task{}, dbErr(op, err)
	}
	return t, nil
}

// Task implements store.Store.
func (s *Store) Task(ctx context.Context, id string) (task.Task, error) {
	var t task.Task
	op := "read task " + id
	err := s.read(ctx, op, func(tx *sql.Tx) error {
		var err error
		t, err = loadTask(ctx, tx, op, id)
		return err
	})
	return t, err
}

// Tasks implements store.Store. A Limit of 0 or less means no limit.
func (s *Store) Tasks(ctx context.Context, accountID string, q store.TaskQuery) ([]task.Task, int, error) {
	where := `account_id = ?`
	args := []any{accountID}
	if q.Status != "" {
		where += ` AND status = ?`
		args = append(args, string(q.Status))
	}
	limit := q.Limit
	if limit <= 0 {
		limit = -1 // SQLite: no limit
	}
	var tasks []task.Task
	var total int
	op := "list tasks of " + accountID
	err := s.read(ctx, op, func(tx *sql.Tx) error {
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM tasks WHERE `+where, args...).Scan(&total); err != nil {
			return dbErr(op, fmt.Errorf("count: %w", err))
		}
		rows, err := tx.QueryContext(ctx, `SELECT `+taskColumns+` FROM tasks WHERE `+where+`
			ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?`,
			append(args, limit, max(q.Skip, 0))...)
		if err != nil {
			return dbErr(op, err)
		}
		tasks, err = scanTasks(rows)
		if err != nil {
			return dbErr(op, err)
		}
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	return tasks, total, nil
}

// Unfinished implements store.Store. Tasks are listed oldest first.
func (s *Store) Unfinished(ctx context.Context) ([]task.Task, error) {
	var tasks []task.Task
	op := "list unfinished tasks"
	err := s.read(ctx, op, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT `+taskColumns+` FROM tasks
			WHERE status IN ('pending', 'processing') ORDER BY created_at, id`)
		if err != nil {
			return dbErr(op, err)
		}
		tasks, err = scanTasks(rows)
		if err != nil {
			return dbErr(op, err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return tasks, nil
}

func scanTasks(rows *sql.Rows) ([]task.Task, error) {
	defer rows.Close()
	var tasks []task.Task
	for rows.Next() {
		t, err := scanTask(rows)
		if err != nil {
			return nil, err
		}
		tasks = append(tasks, t)
	}
	return tasks, rows.Err()
}

// StartProcessing implements store.Store.
func (s *Store) StartProcessing(ctx context.Context, id string, at time.Time) (task.Task, error) {
	var t task.Task
	op := "start processing " + id
	err := s.write(ctx, op, func(tx *sql.Tx) error {
		var err error
		if t, err = loadTask(ctx, tx, op, id); err != nil {
			return err
		}
		if t.Status != task.Pending {
			return nil
		}
		t.Status = task.Processing
		t.StartedAt = fromMS(ms(at))
		_, err = tx.ExecContext(ctx, `UPDATE tasks SET status = ?, started_at = ? WHERE id = ?`,
			string(t.Status), ms(at), id)
		if err != nil {
			return dbErr(op, err)
		}
		return nil
	})
	if err != nil {
		return task.Task{}, err
	}
	return t, nil
}

// Complete implements store.Store. On a failed task it returns the task as
// it is with store.ErrTerminal.
func (s *Store) Complete(ctx context.Context, id string, c store.Completion, at time.Time) (task.Task, error) {
	var t task.Task
	op := "complete task " + id
	err := s.write(ctx, op, func(tx *sql.Tx) error {
		var err error
		if t, err = loadTask(ctx, tx, op, id); err != nil {
			return err
		}
		switch t.Status {
		case task.Completed:
			return nil
		case task.Failed:
			return fmt.Errorf("%s: %w", op, store.ErrTerminal)
		}
		if c.Refund < 0 || c.Refund > t.CreditsCost-t.CreditsRefunded {
			return fmt.Errorf("%s: refund %d out of range: charged %d, refunded %d",
				op, c.Refund, t.CreditsCost, t.CreditsRefunded)
		}
		t.Status = task.Completed
		t.Videos = nil
		if len(c.Videos) > 0 {
			t.Videos = c.Videos
		}
		t.CompletedAt = fromMS(ms(at))
		t.CreditsRefunded += c.Refund
		return finish(ctx, tx, op, t, c.Refund, "partial result")
	})
	return t, err
}

// Fail implements store.Store. On a completed task it returns the task as
// it is with store.ErrTerminal.
func (s *Store) Fail(ctx context.Context, id string, f task.Failure, at time.Time) (task.Task, error) {
	var t task.Task
	op := "fail task " + id
	err := s.write(ctx, op, func(tx *sql.Tx) error {
		var err error
		if t, err = loadTask(ctx, tx, op, id); err != nil {
			return err
		}
		switch t.Status {
		case task.Failed:
			return nil
		case task.Completed:
			return fmt.Errorf("%s: %w", op, store.ErrTerminal)
		}
		refund := t.CreditsCost - t.CreditsRefunded
		t.Status = task.Failed
		t.Failure = &f
		t.CompletedAt = fromMS(ms(at))
		t.CreditsRefunded = t.CreditsCost
		return finish(ctx, tx, op, t, refund, f.Code)
	})
	return t, err
}

// finish writes t, which has just become terminal, releases its in-flight
// slot and refunds refund credits, with a ledger entry if there are any.
func finish(ctx context.Context, tx *sql.Tx, op string, t task.Task, refund int, note string) error {
	videos, err := jsonOrNull(t.Videos, len(t.Videos) == 0)
	if err != nil {
		return fmt.Errorf("%s: encode videos: %w", op, err)
	}
	failure, err := jsonOrNull(t.Failure, t.Failure == nil)
	if err != nil {
		return fmt.Errorf("%s: encode failure: %w", op, err)
	}
	_, err = tx.ExecContext(ctx, `UPDATE tasks SET status = ?, credits_refunded = ?,
		completed_at = ?, videos = ?, failure = ? WHERE id = ?`,
		string(t.Status), t.CreditsRefunded, ms(t.CompletedAt), videos, failure, t.ID)
	if err != nil {
		return dbErr(op, fmt.Errorf("update task: %w", err))
	}
	var balance int64
	err = tx.QueryRowContext(ctx,
		`UPDATE accounts SET in_flight = in_flight - 1, credits = credits + ?
		WHERE id = ? RETURNING credits`, refund, t.AccountID).Scan(&balance)
	if err != nil {
		return dbErr(op, fmt.Errorf("release and refund: %w", err))
	}
	if refund == 0 {
		return nil
	}
	e := store.LedgerEntry{AccountID: t.AccountID, TaskID: t.ID, Kind: store.EntryRefund,
		Amount: int64(refund), Balance: balance, At: t.CompletedAt, Note: note}
	if err := addEntry(ctx, tx, e); err != nil {
		return dbErr(op, err)
	}
	return nil
}
