package sqlitestore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/genvideo/gen/shared/domain"
	"github.com/genvideo/gen/shared/lifecycle"
	"github.com/genvideo/gen/shared/store"
	"github.com/genvideo/gen/shared/task"
)

var _ store.Webhooks = (*Store)(nil)

// enqueueEvent writes, inside the transaction of t's move, the outbox rows
// of the event the move reports (lifecycle.Events) over the endpoints of
// t's account. The rows' ids are stable, so a row written again is
// ignored.
func enqueueEvent(ctx context.Context, tx *txn, op string, t task.Task) error {
	if domain.EventOf(t.Status) == "" {
		return nil
	}
	var endpoints []domain.WebhookEndpoint
	rows, err := tx.QueryContext(ctx,
		`SELECT id, url, events FROM webhook_endpoints WHERE account_id = ? ORDER BY created_at, id`, t.AccountID)
	if err != nil {
		return dbErr(op, fmt.Errorf("read webhook endpoints: %w", err))
	}
	for rows.Next() {
		var e domain.WebhookEndpoint
		var events string
		if err := rows.Scan(&e.ID, &e.URL, &events); err != nil {
			rows.Close()
			return dbErr(op, err)
		}
		if err := json.Unmarshal([]byte(events), &e.Events); err != nil {
			rows.Close()
			return fmt.Errorf("%s: decode events of webhook %s: %w", op, e.ID, err)
		}
		endpoints = append(endpoints, e)
	}
	if err := rows.Close(); err != nil {
		return dbErr(op, err)
	}
	deliveries := lifecycle.Events(t, endpoints)
	if len(deliveries) == 0 {
		return nil
	}
	snap, err := json.Marshal(t)
	if err != nil {
		return fmt.Errorf("%s: encode event: %w", op, err)
	}
	for _, d := range deliveries {
		_, err := tx.ExecContext(ctx, `INSERT INTO webhook_deliveries
			(id, account_id, endpoint_id, url, event, task_id, task, created_at, state, next_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`,
			d.ID, d.AccountID, d.EndpointID, d.URL, d.Event, d.Task.ID,
			string(snap), ms(d.CreatedAt), d.State, ms(d.NextAt))
		if err != nil {
			return dbErr(op, fmt.Errorf("write webhook event: %w", err))
		}
	}
	tx.events = true
	return nil
}

// CreateWebhook implements store.Webhooks.
func (s *Store) CreateWebhook(ctx context.Context, e domain.WebhookEndpoint) error {
	op := "create webhook " + e.ID
	events, err := json.Marshal(e.Events)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	return s.write(ctx, op, func(tx *txn) error {
		var one int
		err := tx.QueryRowContext(ctx, `SELECT 1 FROM accounts WHERE id = ?`, e.AccountID).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%s: account %s: %w", op, e.AccountID, domain.ErrNotFound)
		}
		if err != nil {
			return dbErr(op, err)
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO webhook_endpoints (id, account_id, url, events, secret, created_at)
			VALUES (?, ?, ?, ?, ?, ?)`, e.ID, e.AccountID, e.URL, string(events), e.Secret, ms(e.CreatedAt))
		if isDuplicate(err) {
			return fmt.Errorf("%s: %w", op, domain.ErrExists)
		}
		if err != nil {
			return dbErr(op, err)
		}
		return nil
	})
}

// Webhooks implements store.Webhooks.
func (s *Store) Webhooks(ctx context.Context, accountID string) ([]domain.WebhookEndpoint, error) {
	op := "list webhooks of " + accountID
	var out []domain.WebhookEndpoint
	err := s.read(ctx, op, func(tx *txn) error {
		rows, err := tx.QueryContext(ctx, `SELECT id, account_id, url, events, secret, created_at
			FROM webhook_endpoints WHERE account_id = ? ORDER BY created_at, id`, accountID)
		if err != nil {
			return dbErr(op, err)
		}
		defer rows.Close()
		for rows.Next() {
			var e domain.WebhookEndpoint
			var events string
			var created int64
			if err := rows.Scan(&e.ID, &e.AccountID, &e.URL, &events, &e.Secret, &created); err != nil {
				return dbErr(op, err)
			}
			if err := json.Unmarshal([]byte(events), &e.Events); err != nil {
				return fmt.Errorf("%s: decode events: %w", op, err)
			}
			e.CreatedAt = fromMS(created)
			out = append(out, e)
		}
		return dbErrOrNil(op, rows.Err())
	})
	return out, err
}

// DeleteWebhook implements store.Webhooks.
func (s *Store) DeleteWebhook(ctx context.Context, accountID, id string, at time.Time) error {
	op := "delete webhook " + id
	return s.write(ctx, op, func(tx *txn) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM webhook_endpoints WHERE id = ? AND account_id = ?`, id, accountID)
		if err != nil {
			return dbErr(op, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("%s: %w", op, domain.ErrNotFound)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE webhook_deliveries SET state = 'failed'
			WHERE endpoint_id = ? AND account_id = ? AND state = 'pending'`, id, accountID); err != nil {
			return dbErr(op, err)
		}
		return nil
	})
}

// SigningSecret implements store.Webhooks.
func (s *Store) SigningSecret(ctx context.Context, accountID, fresh string) (string, error) {
	op := "signing secret of " + accountID
	var secret string
	err := s.write(ctx, op, func(tx *txn) error {
		err := tx.QueryRowContext(ctx, `INSERT INTO webhook_secrets (account_id, secret) VALUES (?, ?)
			ON CONFLICT (account_id) DO UPDATE SET secret = secret RETURNING secret`,
			accountID, fresh).Scan(&secret)
		if isConstraint(err, 787) { // SQLITE_CONSTRAINT_FOREIGNKEY
			return fmt.Errorf("%s: %w", op, domain.ErrNotFound)
		}
		return dbErrOrNil(op, err)
	})
	if err != nil {
		return "", err
	}
	return secret, nil
}

const deliveryColumns = `d.id, d.account_id, d.endpoint_id, d.url, d.event, d.task, d.created_at,
	d.state, d.attempts, d.next_at, coalesce(e.secret, s.secret, '')`

func scanDelivery(row interface{ Scan(...any) error }) (domain.Delivery, error) {
	var d domain.Delivery
	var snap string
	var created, next int64
	err := row.Scan(&d.ID, &d.AccountID, &d.EndpointID, &d.URL, &d.Event, &snap, &created,
		&d.State, &d.Attempts, &next, &d.Secret)
	if err != nil {
		return d, err
	}
	if err := json.Unmarshal([]byte(snap), &d.Task); err != nil {
		return d, fmt.Errorf("decode event %s: %w", d.ID, err)
	}
	d.CreatedAt, d.NextAt = fromMS(created), fromMS(next)
	return d, nil
}

// ClaimDeliveries implements store.Webhooks.
func (s *Store) ClaimDeliveries(ctx context.Context, now time.Time, lease time.Duration, limit int, fits store.ClaimFits) ([]domain.Delivery, error) {
	op := "claim webhook deliveries"
	var out []domain.Delivery
	err := s.write(ctx, op, func(tx *txn) error {
		out = nil // a retried transaction starts again
		rows, err := tx.QueryContext(ctx, `SELECT `+deliveryColumns+` FROM webhook_deliveries d
			LEFT JOIN webhook_endpoints e ON e.id = d.endpoint_id AND d.endpoint_id <> ''
			LEFT JOIN webhook_secrets s ON s.account_id = d.account_id AND d.endpoint_id = ''
			WHERE d.state = 'pending' AND d.next_at <= ? ORDER BY d.next_at, d.id LIMIT ?`, ms(now), store.ClaimScan)
		if err != nil {
			return dbErr(op, err)
		}
		for rows.Next() && len(out) < limit {
			d, err := scanDelivery(rows)
			if err != nil {
				rows.Close()
				return dbErr(op, err)
			}
			if fits == nil || fits(out, d) {
				out = append(out, d)
			}
		}
		if err := rows.Close(); err != nil {
			return dbErr(op, err)
		}
		for _, d := range out {
			if _, err := tx.ExecContext(ctx, `UPDATE webhook_deliveries SET next_at = ? WHERE id = ?`,
				ms(now.Add(lease)), d.ID); err != nil {
				return dbErr(op, err)
			}
		}
		return nil
	})
	return out, err
}

// RecordAttempt implements store.Webhooks.
func (s *Store) RecordAttempt(ctx context.Context, a store.DeliveryAttempt, state string, next time.Time) error {
	op := fmt.Sprintf("record attempt %d of %s", a.Attempt, a.DeliveryID)
	return s.write(ctx, op, func(tx *txn) error {
		var endpoint string
		err := tx.QueryRowContext(ctx, `UPDATE webhook_deliveries SET state = ?, attempts = max(attempts, ?), next_at = ?
			WHERE id = ? RETURNING endpoint_id`, state, a.Attempt, ms(next), a.DeliveryID).Scan(&endpoint)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%s: %w", op, domain.ErrNotFound)
		}
		if err != nil {
			return dbErr(op, err)
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO webhook_attempts
			(delivery_id, endpoint_id, attempt, at, status, latency_ms, error) VALUES (?, ?, ?, ?, ?, ?, ?)`,
			a.DeliveryID, endpoint, a.Attempt, ms(a.At), a.Status, a.Latency.Milliseconds(), a.Error)
		return dbErrOrNil(op, err)
	})
}

// Attempts implements store.Webhooks. The cursor is the sequence number
// of the last attempt of the previous page.
func (s *Store) Attempts(ctx context.Context, accountID, endpointID string, q store.AttemptQuery) ([]store.DeliveryAttempt, string, error) {
	op := "list attempts of webhook " + endpointID
	before := int64(1<<63 - 1)
	if q.Cursor != "" {
		n, err := strconv.ParseInt(q.Cursor, 10, 64)
		if err != nil || n < 0 {
			return nil, "", fmt.Errorf("%s: %w", op, store.ErrBadCursor)
		}
		before = n
	}
	limit := q.Limit
	if limit <= 0 {
		limit = 20
	}
	var out []store.DeliveryAttempt
	var next string
	err := s.read(ctx, op, func(tx *txn) error {
		var one int
		err := tx.QueryRowContext(ctx, `SELECT 1 FROM webhook_endpoints WHERE id = ? AND account_id = ?`,
			endpointID, accountID).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%s: %w", op, domain.ErrNotFound)
		}
		if err != nil {
			return dbErr(op, err)
		}
		rows, err := tx.QueryContext(ctx, `SELECT a.seq, a.delivery_id, d.event, d.task_id, a.attempt, a.at,
			a.status, a.latency_ms, a.error FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id
			WHERE a.endpoint_id = ? AND a.seq < ? ORDER BY a.seq DESC LIMIT ?`, endpointID, before, limit+1)
		if err != nil {
			return dbErr(op, err)
		}
		defer rows.Close()
		var seqs []int64
		for rows.Next() {
			var a store.DeliveryAttempt
			var seq, at, latency int64
			if err := rows.Scan(&seq, &a.DeliveryID, &a.Event, &a.TaskID, &a.Attempt, &at,
				&a.Status, &latency, &a.Error); err != nil {
				return dbErr(op, err)
			}
			a.At, a.Latency = fromMS(at), time.Duration(latency)*time.Millisecond
			out = append(out, a)
			seqs = append(seqs, seq)
		}
		if len(out) > limit {
			out = out[:limit]
			next = strconv.FormatInt(seqs[limit-1], 10)
		}
		return dbErrOrNil(op, rows.Err())
	})
	if err != nil {
		return nil, "", err
	}
	return out, next, nil
}

// ReplayDelivery implements store.Webhooks.
func (s *Store) ReplayDelivery(ctx context.Context, accountID, endpointID, deliveryID string, at time.Time) error {
	op := "replay delivery " + deliveryID
	return s.write(ctx, op, func(tx *txn) error {
		res, err := tx.ExecContext(ctx, `UPDATE webhook_deliveries SET state = 'pending', next_at = ?
			WHERE id = ? AND account_id = ? AND endpoint_id = ?
			AND EXISTS (SELECT 1 FROM webhook_endpoints WHERE id = ? AND account_id = ?)`,
			ms(at), deliveryID, accountID, endpointID, endpointID, accountID)
		if err != nil {
			return dbErr(op, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("%s: %w", op, domain.ErrNotFound)
		}
		// A replay is sent now: the local worker is woken as by a move
		// (issue 20), not left to its next poll.
		tx.events = true
		return nil
	})
}

// NextDelivery implements store.Webhooks.
func (s *Store) NextDelivery(ctx context.Context) (time.Time, bool, error) {
	op := "next webhook delivery"
	var next sql.NullInt64
	err := s.read(ctx, op, func(tx *txn) error {
		return dbErrOrNil(op, tx.QueryRowContext(ctx,
			`SELECT min(next_at) FROM webhook_deliveries WHERE state = 'pending'`).Scan(&next))
	})
	if err != nil || !next.Valid {
		return time.Time{}, false, err
	}
	return fromMS(next.Int64), true, nil
}

// dbErrOrNil is dbErr for an err that may be nil.
func dbErrOrNil(op string, err error) error {
	if err == nil {
		return nil
	}
	return dbErr(op, err)
}
