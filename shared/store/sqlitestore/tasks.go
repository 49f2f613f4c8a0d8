package sqlitestore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/genvideo/gen/shared/domain"
	"github.com/genvideo/gen/shared/lifecycle"
	"github.com/genvideo/gen/shared/store"
	"github.com/genvideo/gen/shared/task"
)

// CreateTask implements store.Store: it reads what lifecycle.Create
// decides on and writes what it returns, in one transaction.
func (s *Store) CreateTask(ctx context.Context, t task.Task, g domain.StartGuard) (domain.Charged, error) {
	op := fmt.Sprintf("create task %s for %s", t.ID, t.AccountID)
	t, err := lifecycle.Prepare(t, g)
	if err != nil {
		return domain.Charged{}, fmt.Errorf("%s: %w", op, err)
	}
	row, err := encodeTask(t)
	if err != nil {
		return domain.Charged{}, fmt.Errorf("%s: %w", op, err)
	}

	var charged domain.Charged
	err = s.write(ctx, op, func(tx *txn) error {
		tx.touch(t.AccountID)
		found, err := findStart(ctx, tx, t, g)
		if err != nil {
			return dbErr(op, err)
		}
		start, err := lifecycle.Create(t, g, found)
		if err != nil {
			return err
		}

		if start.Starts != nil {
			if err := putWindow(ctx, tx, g.Starts.Key, *start.Starts); err != nil {
				return dbErr(op, err)
			}
		}
		for i, tk := range start.Spend {
			if err := putWindow(ctx, tx, g.Spend[i].Key, tk); err != nil {
				return dbErr(op, err)
			}
		}
		_, err = tx.ExecContext(ctx, `UPDATE accounts SET credits = ?, in_flight = ? WHERE id = ?`,
			start.Account.Credits, start.Account.InFlight, t.AccountID)
		if err != nil {
			return dbErr(op, fmt.Errorf("charge: %w", err))
		}
		if err := addEntry(ctx, tx, start.Charge); err != nil {
			return dbErr(op, err)
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO tasks (`+taskColumns+`)
			VALUES (?`+strings.Repeat(", ?", len(row)-1)+`)`, row...)
		if err != nil {
			return dbErr(op, fmt.Errorf("insert: %w", err))
		}
		if start.Record != nil {
			if err := putRecord(ctx, tx, t.AccountID, g.Idempotency.Key, *start.Record); err != nil {
				return dbErr(op, err)
			}
		}
		charged = domain.Charged{Balance: start.Account.Credits}
		if domain.Capped(g.Spend) {
			for _, tk := range start.Spend {
				charged.Spent = append(charged.Spent, int64(tk.Tally.Count))
			}
		}
		return nil
	})
	if err != nil {
		return domain.Charged{}, err
	}
	return charged, nil
}

// findStart reads, inside tx, what lifecycle.Create decides the start of
// t under g on. Before it reads the idempotency record it prunes a few
// expired records, so that the table holds about a day of starts.
func findStart(ctx context.Context, tx *txn, t task.Task, g domain.StartGuard) (lifecycle.Found, error) {
	var f lifecycle.Found
	var a domain.Account
	err := tx.QueryRowContext(ctx,
		`SELECT id, credits, in_flight FROM accounts WHERE id = ?`, t.AccountID).Scan(&a.ID, &a.Credits, &a.InFlight)
	switch {
	case err == nil:
		f.Account = &a
	case !errors.Is(err, sql.ErrNoRows):
		return f, fmt.Errorf("read account: %w", err)
	}
	if k := g.Idempotency; k != nil {
		_, err := tx.ExecContext(ctx,
			`DELETE FROM idempotency_keys WHERE (account_id, key) IN
				(SELECT account_id, key FROM idempotency_keys WHERE expires_at <= ? LIMIT ?)`,
			ms(t.CreatedAt), pruneBatch)
		if err != nil {
			return f, fmt.Errorf("prune expired idempotency records: %w", err)
		}
		var r lifecycle.Record
		var expires int64
		err = tx.QueryRowContext(ctx,
			`SELECT task_id, request_hash, expires_at, balance FROM idempotency_keys
			WHERE account_id = ? AND key = ?`,
			t.AccountID, k.Key).Scan(&r.TaskID, &r.RequestHash, &expires, &r.Balance)
		switch {
		case err == nil:
			r.ExpiresAt = fromMS(expires)
			f.Record = &r
		case !errors.Is(err, sql.ErrNoRows):
			return f, fmt.Errorf("read idempotency record: %w", err)
		}
	}
	var one int
	err = tx.QueryRowContext(ctx, `SELECT 1 FROM tasks WHERE id = ?`, t.ID).Scan(&one)
	switch {
	case err == nil:
		f.TaskExists = true
	case !errors.Is(err, sql.ErrNoRows):
		return f, fmt.Errorf("read task: %w", err)
	}
	if g.Starts != nil {
		if f.Starts, err = readTally(ctx, tx, g.Starts.Key); err != nil {
			return f, err
		}
	}
	for _, c := range g.Spend {
		w, err := readTally(ctx, tx, c.Key)
		if err != nil {
			return f, err
		}
		f.Spend = append(f.Spend, w)
	}
	return f, nil
}

// putRecord writes the idempotency record r of the account's key, over
// an expired or replaced record of the same key.
func putRecord(ctx context.Context, tx *txn, accountID, key string, r lifecycle.Record) error {
	_, err := tx.ExecContext(ctx,
		`INSERT INTO idempotency_keys (account_id, key, request_hash, task_id, expires_at, balance)
		VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (account_id, key) DO UPDATE SET request_hash = excluded.request_hash,
			task_id = excluded.task_id, expires_at = excluded.expires_at, balance = excluded.balance`,
		accountID, key, r.RequestHash, r.TaskID, ms(r.ExpiresAt), r.Balance)
	if err != nil {
		return fmt.Errorf("record idempotency key: %w", err)
	}
	return nil
}

const taskColumns = `id, account_id, key_name, type, model, prompt, params, inputs,
	credits_cost, credits_refunded, status,
	created_at, started_at, completed_at, deadline, videos, failure, operation, webhook_url, progress,
	route, provider_model, provider_cost_usd, key_id`

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
		ms(t.CreatedAt), nullMS(t.StartedAt), nullMS(t.CompletedAt), nullMS(t.Deadline), videos, failure,
		sql.NullString{String: t.Operation, Valid: t.Operation != ""},
		sql.NullString{String: t.WebhookURL, Valid: t.WebhookURL != ""}, t.Progress,
		t.Billing.Route, t.Billing.ProviderModel, t.Billing.CostUSD, t.KeyID}, nil
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
	var inputs, videos, failure, operation, webhookURL sql.NullString
	var status string
	var created int64
	var started, completed, deadline sql.NullInt64
	err := row.Scan(&t.ID, &t.AccountID, &t.KeyName, &t.Type, &t.Model, &t.Prompt, &params, &inputs,
		&t.CreditsCost, &t.CreditsRefunded, &status,
		&created, &started, &completed, &deadline, &videos, &failure, &operation, &webhookURL, &t.Progress,
		&t.Billing.Route, &t.Billing.ProviderModel, &t.Billing.CostUSD, &t.KeyID)
	if err != nil {
		return task.Task{}, err
	}
	t.Status = task.Status(status)
	t.CreatedAt = fromMS(created)
	t.StartedAt = fromNullMS(started)
	t.CompletedAt = fromNullMS(completed)
	t.Deadline = fromNullMS(deadline)
	t.Operation = operation.String
	t.WebhookURL = webhookURL.String
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
func loadTask(ctx context.Context, tx *txn, op, id string) (task.Task, error) {
	t, err := scanTask(tx.QueryRowContext(ctx, `SELECT `+taskColumns+` FROM tasks WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return task.Task{}, fmt.Errorf("%s: %w", op, domain.ErrNotFound)
	}
	if err != nil {
		return task.Task{}, dbErr(op, err)
	}
	return t, nil
}

// Task implements store.Store.
// A task is answered from memory once read (taskCache, TaskCacheTTL).
func (s *Store) Task(ctx context.Context, id string) (task.Task, error) {
	now := s.clock()
	if t, ok := s.tasks.task(id, now); ok && !s.closed.Load() {
		return t, nil
	}
	gen := s.tasks.generation(s.tasks.stripe(id))
	var t task.Task
	op := "read task " + id
	err := s.read(ctx, op, func(tx *txn) error {
		var err error
		t, err = loadTask(ctx, tx, op, id)
		return err
	})
	if err == nil {
		s.tasks.keep(t, gen, now)
	}
	return t, err
}

// Tasks implements store.Store. A Limit of 0 or less means no limit.
// Either order reads the same index (tasks_history, or tasks_status with
// a status), oldest first scanning it backwards.
func (s *Store) Tasks(ctx context.Context, accountID string, q store.TaskQuery) ([]task.Task, int, error) {
	now := s.clock()
	key := keyOf(accountID, q)
	if p, ok := s.pages.get(key, now, true); ok {
		return p.answer()
	}
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
	// The page starts after the cursor by the history index's order, so
	// SQLite seeks to it instead of stepping over what came before;
	// oldest first seeks and scans the same index the other way.
	after, order := `<`, `created_at DESC, id DESC`
	if q.Order == store.OldestFirst {
		after, order = `>`, `created_at, id`
	}
	page, pageArgs := where, slices.Clone(args)
	if !q.After.IsZero() {
		page += ` AND (created_at, id) ` + after + ` (?, ?)`
		pageArgs = append(pageArgs, ms(q.After.CreatedAt), q.After.ID)
	}
	op := "list tasks of " + accountID
	// A page is its tasks' ids and statuses, read from the index alone
	// (tasks_history or tasks_status, both holding the status) with the
	// total the triggers keep (schema.go, 8), in one snapshot. The tasks
	// come from the task cache when it holds them in the status the index
	// says, and are read by id and cached otherwise; the page cache keeps
	// the page with the very tasks the task cache holds (PageCacheTTL). A
	// page asked again reads, looks up and copies nothing (above). The
	// caches' generations are read before the snapshot begins, so that
	// what changed since is not cached as it was (Task does the same with
	// one task's).
	pageGen := s.pages.generation(accountID)
	gens := s.tasks.generations()
	var p cachedPage
	var entries []pageEntry
	err := s.read(ctx, op, func(tx *txn) error {
		if err := tx.QueryRowContext(ctx, `SELECT coalesce(sum(n), 0) FROM task_counts WHERE `+where, args...).Scan(&p.total); err != nil {
			return dbErr(op, fmt.Errorf("count: %w", err))
		}
		rows, err := tx.QueryContext(ctx, `SELECT id, status FROM tasks WHERE `+page+`
			ORDER BY `+order+` LIMIT ? OFFSET ?`,
			append(pageArgs, limit, max(q.Skip, 0))...)
		if err != nil {
			return dbErr(op, err)
		}
		for rows.Next() {
			var e pageEntry
			if err := rows.Scan(&e.id, &e.status); err != nil {
				rows.Close()
				return dbErr(op, err)
			}
			entries = append(entries, e)
		}
		if err := errors.Join(rows.Err(), rows.Close()); err != nil {
			return dbErr(op, err)
		}
		p.tasks = make([]task.Task, 0, len(entries))
		for _, e := range entries {
			t, ok := s.tasks.peek(e.id, now)
			if !ok || string(t.Status) != e.status {
				loaded, err := loadTask(ctx, tx, op, e.id)
				if err != nil {
					return err
				}
				t = s.tasks.keep(loaded, gens[s.tasks.stripe(e.id)], now)
			}
			p.tasks = append(p.tasks, *t)
		}
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	keepPage(s.pages, key, p, pageGen, now)
	return p.answer()
}

// Unfinished implements store.Store. Tasks are listed oldest first.
func (s *Store) Unfinished(ctx context.Context) ([]task.Task, error) {
	var tasks []task.Task
	op := "list unfinished tasks"
	err := s.read(ctx, op, func(tx *txn) error {
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

// MarkProcessing implements store.Store.
func (s *Store) MarkProcessing(ctx context.Context, id string, at time.Time) (task.Task, error) {
	// Forget before and after: a Task that read the task before the
	// change cannot cache it, and none answers it from memory after.
	s.tasks.forgetTask(id)
	defer s.tasks.forgetTask(id)
	var t task.Task
	op := "start processing " + id
	err := s.write(ctx, op, func(tx *txn) error {
		var err error
		if t, err = loadTask(ctx, tx, op, id); err != nil {
			return err
		}
		tx.touch(t.AccountID)
		tr := lifecycle.MarkProcessing(t, fromMS(ms(at)))
		if !tr.Changed {
			return nil
		}
		t = tr.Task
		_, err = tx.ExecContext(ctx, `UPDATE tasks SET status = ?, started_at = ? WHERE id = ?`,
			string(t.Status), ms(t.StartedAt), id)
		if err != nil {
			return dbErr(op, err)
		}
		return enqueueEvent(ctx, tx, op, t)
	})
	if err != nil {
		return task.Task{}, err
	}
	return t, nil
}

// SetOperation implements store.Store.
func (s *Store) SetOperation(ctx context.Context, id, from, to string) (task.Task, error) {
	// Forget before and after, as every change does (MarkProcessing).
	s.tasks.forgetTask(id)
	defer s.tasks.forgetTask(id)
	var t task.Task
	what := "set operation of " + id
	err := s.write(ctx, what, func(tx *txn) error {
		var err error
		if t, err = loadTask(ctx, tx, what, id); err != nil {
			return err
		}
		tr := lifecycle.SetOperation(t, from, to)
		if !tr.Changed {
			return nil
		}
		t = tr.Task
		tx.touch(t.AccountID)
		if _, err = tx.ExecContext(ctx, `UPDATE tasks SET operation = ? WHERE id = ?`,
			sql.NullString{String: t.Operation, Valid: t.Operation != ""}, id); err != nil {
			return dbErr(what, err)
		}
		return nil
	})
	if err != nil {
		return task.Task{}, err
	}
	return t, nil
}

// SetProgress implements store.Store.
func (s *Store) SetProgress(ctx context.Context, id string, percent int) error {
	s.tasks.forgetTask(id)
	defer s.tasks.forgetTask(id)
	return s.write(ctx, "set progress of "+id, func(tx *txn) error {
		// The account's pages hold its tasks (pageCache): they go too.
		var account string
		err := tx.QueryRowContext(ctx, `UPDATE tasks SET progress = ? WHERE id = ? AND status = ? RETURNING account_id`,
			percent, id, string(task.Processing)).Scan(&account)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			return nil
		case err != nil:
			return dbErr("set progress of "+id, err)
		}
		tx.touch(account)
		return nil
	})
}

// finish moves task id to the terminal state that move (lifecycle.Complete
// or lifecycle.Fail, given arg) decides at at, in one transaction: it
// writes the task and what move returns besides (the release of its
// in-flight slot, the refund with its ledger entry), and the move's
// webhook events. It returns the task as it is after, or as
// it was read when move refuses.
func finish[A any](ctx context.Context, s *Store, op, id string,
	move func(task.Task, A, time.Time) (lifecycle.Transition, error), arg A, at time.Time) (task.Task, error) {
	var t task.Task
	err := s.write(ctx, op, func(tx *txn) error {
		var err error
		if t, err = loadTask(ctx, tx, op, id); err != nil {
			return err
		}
		tx.touch(t.AccountID)
		tr, err := move(t, arg, fromMS(ms(at)))
		if err != nil || !tr.Changed {
			return err
		}
		t = tr.Task
		videos, err := jsonOrNull(t.Videos, len(t.Videos) == 0)
		if err != nil {
			return fmt.Errorf("%s: encode videos: %w", op, err)
		}
		failure, err := jsonOrNull(t.Failure, t.Failure == nil)
		if err != nil {
			return fmt.Errorf("%s: encode failure: %w", op, err)
		}
		_, err = tx.ExecContext(ctx, `UPDATE tasks SET status = ?, credits_refunded = ?,
			completed_at = ?, videos = ?, failure = ?,
			route = ?, provider_model = ?, provider_cost_usd = ? WHERE id = ?`,
			string(t.Status), t.CreditsRefunded, ms(t.CompletedAt), videos, failure,
			t.Billing.Route, t.Billing.ProviderModel, t.Billing.CostUSD, t.ID)
		if err != nil {
			return dbErr(op, fmt.Errorf("update task: %w", err))
		}
		var refund int64
		if tr.Refund != nil {
			refund = tr.Refund.Amount
		}
		var balance int64
		err = tx.QueryRowContext(ctx,
			`UPDATE accounts SET in_flight = in_flight + ?, credits = credits + ?
			WHERE id = ? RETURNING credits`, tr.InFlight, refund, t.AccountID).Scan(&balance)
		if err != nil {
			return dbErr(op, fmt.Errorf("release and refund: %w", err))
		}
		if err := enqueueEvent(ctx, tx, op, t); err != nil {
			return err
		}
		if tr.Refund == nil {
			return nil
		}
		e := *tr.Refund
		e.Balance = balance
		if err := addEntry(ctx, tx, e); err != nil {
			return dbErr(op, err)
		}
		return giveBack(ctx, tx, op, t, int(e.Amount), at)
	})
	return t, err
}

// giveBack returns amount credits refunded at at to the spending caps'
// windows of t's key (lifecycle.GiveBack), in the refund's transaction.
func giveBack(ctx context.Context, tx *txn, op string, t task.Task, amount int, at time.Time) error {
	if t.KeyID == "" {
		return nil
	}
	day, month := domain.SpendKeys(t.KeyID, t.CreatedAt)
	for _, key := range []string{day, month} {
		w, err := readTally(ctx, tx, key)
		if err != nil {
			return dbErr(op, err)
		}
		if w, ok := lifecycle.GiveBack(w, amount, at); ok {
			if err := putWindow(ctx, tx, key, lifecycle.Taken{Tally: w}); err != nil {
				return dbErr(op, err)
			}
		}
	}
	return nil
}

// Complete implements store.Store. On a failed task it returns the task as
// it is with domain.ErrTerminal.
func (s *Store) Complete(ctx context.Context, id string, c domain.Completion, at time.Time) (task.Task, error) {
	s.tasks.forgetTask(id)
	defer s.tasks.forgetTask(id)
	return finish(ctx, s, "complete task "+id, id, lifecycle.Complete, c, at)
}

// Fail implements store.Store. On a completed task it returns the task as
// it is with domain.ErrTerminal.
func (s *Store) Fail(ctx context.Context, id string, f task.Failure, at time.Time) (task.Task, error) {
	s.tasks.forgetTask(id)
	defer s.tasks.forgetTask(id)
	return finish(ctx, s, "fail task "+id, id, lifecycle.Fail, f, at)
}
