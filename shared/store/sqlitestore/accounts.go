package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	sqlite3 "modernc.org/sqlite/lib"

	"github.com/genvideo/gen/shared/domain"
	"github.com/genvideo/gen/shared/store"
)

// CreateAccount implements store.Store.
func (s *Store) CreateAccount(ctx context.Context, a domain.Account) error {
	if a.Credits < 0 {
		return fmt.Errorf("create account %s: negative opening balance %d", a.ID, a.Credits)
	}
	op := "create account " + a.ID
	return s.write(ctx, op, func(tx *txn) error {
		_, err := tx.ExecContext(ctx,
			`INSERT INTO accounts (id, credits, in_flight, created_at) VALUES (?, ?, 0, ?)`,
			a.ID, a.Credits, ms(a.CreatedAt))
		if isDuplicate(err) {
			return fmt.Errorf("%s: %w", op, domain.ErrExists)
		}
		if err != nil {
			return dbErr(op, err)
		}
		if a.Credits > 0 {
			e := domain.LedgerEntry{AccountID: a.ID, Kind: domain.EntryGrant, Amount: a.Credits,
				Balance: a.Credits, At: a.CreatedAt, Note: "opening balance"}
			if err := addEntry(ctx, tx, e); err != nil {
				return dbErr(op, err)
			}
		}
		return nil
	})
}

// Account implements store.Store.
func (s *Store) Account(ctx context.Context, id string) (domain.Account, error) {
	var a domain.Account
	op := "read account " + id
	err := s.read(ctx, op, func(tx *txn) error {
		var created int64
		err := tx.QueryRowContext(ctx,
			`SELECT id, credits, in_flight, created_at FROM accounts WHERE id = ?`, id).
			Scan(&a.ID, &a.Credits, &a.InFlight, &created)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%s: %w", op, domain.ErrNotFound)
		}
		if err != nil {
			return dbErr(op, err)
		}
		a.CreatedAt = fromMS(created)
		return nil
	})
	return a, err
}

// Grant implements store.Store.
func (s *Store) Grant(ctx context.Context, accountID string, amount int64, note string, at time.Time) (int64, error) {
	if amount <= 0 {
		return 0, fmt.Errorf("grant %d credits to %s: amount must be positive", amount, accountID)
	}
	var balance int64
	op := fmt.Sprintf("grant %d credits to %s", amount, accountID)
	err := s.write(ctx, op, func(tx *txn) error {
		err := tx.QueryRowContext(ctx,
			`UPDATE accounts SET credits = credits + ? WHERE id = ? RETURNING credits`,
			amount, accountID).Scan(&balance)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%s: %w", op, domain.ErrNotFound)
		}
		if err != nil {
			return dbErr(op, err)
		}
		e := domain.LedgerEntry{AccountID: accountID, Kind: domain.EntryGrant, Amount: amount,
			Balance: balance, At: at, Note: note}
		if err := addEntry(ctx, tx, e); err != nil {
			return dbErr(op, err)
		}
		return nil
	})
	return balance, err
}

// addEntry appends e to the ledger.
func addEntry(ctx context.Context, tx *txn, e domain.LedgerEntry) error {
	_, err := tx.ExecContext(ctx,
		`INSERT INTO ledger (account_id, task_id, kind, amount, balance, at, note)
		VALUES (?, ?, ?, ?, ?, ?, ?)`,
		e.AccountID, e.TaskID, e.Kind, e.Amount, e.Balance, ms(e.At), e.Note)
	if err != nil {
		return fmt.Errorf("write %s entry: %w", e.Kind, err)
	}
	return nil
}

// Ledger implements store.Store.
func (s *Store) Ledger(ctx context.Context, accountID string) ([]domain.LedgerEntry, error) {
	return s.readLedger(ctx, "read ledger of "+accountID, accountID,
		`SELECT account_id, task_id, kind, amount, balance, at, note, seq
		FROM ledger WHERE account_id = ? ORDER BY seq`, accountID)
}

// readLedger reads the ledger entries query selects (the columns of
// Ledger's query, in its order) in one read transaction, after checking
// that the account exists: an unknown account is domain.ErrNotFound, not
// an empty ledger.
func (s *Store) readLedger(ctx context.Context, op, accountID, query string, args ...any) ([]domain.LedgerEntry, error) {
	var entries []domain.LedgerEntry
	err := s.read(ctx, op, func(tx *txn) error {
		var one int
		err := tx.QueryRowContext(ctx, `SELECT 1 FROM accounts WHERE id = ?`, accountID).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%s: %w", op, domain.ErrNotFound)
		}
		if err != nil {
			return dbErr(op, err)
		}
		rows, err := tx.QueryContext(ctx, query, args...)
		if err != nil {
			return dbErr(op, err)
		}
		defer rows.Close()
		for rows.Next() {
			var e domain.LedgerEntry
			var at int64
			if err := rows.Scan(&e.AccountID, &e.TaskID, &e.Kind, &e.Amount, &e.Balance, &at, &e.Note, &e.Seq); err != nil {
				return dbErr(op, err)
			}
			e.At = fromMS(at)
			entries = append(entries, e)
		}
		if err := rows.Err(); err != nil {
			return dbErr(op, err)
		}
		return nil
	})
	return entries, err
}

// CreateKey implements store.Store. It returns domain.ErrExists if a key
// with that id or hash exists, and domain.ErrNotFound if the account does
// not.
func (s *Store) CreateKey(ctx context.Context, k store.Key) error {
	op := fmt.Sprintf("create key %s for %s", k.ID, k.AccountID)
	return s.write(ctx, op, func(tx *txn) error {
		_, err := tx.ExecContext(ctx,
			`INSERT INTO api_keys (id, hash, account_id, name, tier,
				requests_per_minute, requests_per_day, starts_per_minute, max_in_flight,
				created_at, revoked_at, max_credits_per_day, max_credits_per_month,
				holder_credits_per_day, holder_credits_per_month)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			k.ID, k.Hash, k.AccountID, k.Name, k.Tier,
			k.Limits.RequestsPerMinute, k.Limits.RequestsPerDay, k.Limits.StartsPerMinute, k.Limits.MaxInFlight,
			ms(k.CreatedAt), nullMS(k.RevokedAt), k.Caps.MaxPerDay, k.Caps.MaxPerMonth,
			k.Caps.HolderPerDay, k.Caps.HolderPerMonth)
		switch {
		case isDuplicate(err):
			return fmt.Errorf("%s: %w", op, domain.ErrExists)
		case isConstraint(err, sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY):
			return fmt.Errorf("%s: account: %w", op, domain.ErrNotFound)
		case err != nil:
			return dbErr(op, err)
		}
		return nil
	})
}

const keyColumns = `id, hash, account_id, name, tier,
	requests_per_minute, requests_per_day, starts_per_minute, max_in_flight,
	created_at, revoked_at, max_credits_per_day, max_credits_per_month,
	holder_credits_per_day, holder_credits_per_month`

func scanKey(row interface{ Scan(...any) error }) (store.Key, error) {
	var k store.Key
	var created int64
	var revoked sql.NullInt64
	err := row.Scan(&k.ID, &k.Hash, &k.AccountID, &k.Name, &k.Tier,
		&k.Limits.RequestsPerMinute, &k.Limits.RequestsPerDay, &k.Limits.StartsPerMinute, &k.Limits.MaxInFlight,
		&created, &revoked, &k.Caps.MaxPerDay, &k.Caps.MaxPerMonth,
		&k.Caps.HolderPerDay, &k.Caps.HolderPerMonth)
	k.CreatedAt = fromMS(created)
	k.RevokedAt = fromNullMS(revoked)
	return k, err
}

// KeyByHash implements store.Store.
// A key found is answered from memory for up to KeyCacheTTL after.
func (s *Store) KeyByHash(ctx context.Context, hash string) (store.Key, error) {
	now := s.clock()
	if k, ok := s.keys.get(hash, now, false); ok && !s.closed.Load() {
		return k, nil
	}
	gen := s.keys.generation(struct{}{})
	var k store.Key
	// Never put the hash in an error: it identifies a secret.
	op := "read key by hash"
	err := s.read(ctx, op, func(tx *txn) error {
		var err error
		k, err = scanKey(tx.QueryRowContext(ctx, `SELECT `+keyColumns+` FROM api_keys WHERE hash = ?`, hash))
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%s: %w", op, domain.ErrNotFound)
		}
		if err != nil {
			return dbErr(op, err)
		}
		return nil
	})
	if err == nil {
		s.keys.put(k.Hash, k, gen, now.Add(KeyCacheTTL))
	}
	return k, err
}

// Keys implements store.Store. Keys are listed oldest first.
func (s *Store) Keys(ctx context.Context, accountID string) ([]store.Key, error) {
	var keys []store.Key
	op := "list keys of " + accountID
	query := `SELECT ` + keyColumns + ` FROM api_keys WHERE account_id = ? ORDER BY created_at, id`
	args := []any{accountID}
	if accountID == "" {
		op = "list keys"
		query = `SELECT ` + keyColumns + ` FROM api_keys ORDER BY created_at, id`
		args = nil
	}
	err := s.read(ctx, op, func(tx *txn) error {
		rows, err := tx.QueryContext(ctx, query, args...)
		if err != nil {
			return dbErr(op, err)
		}
		defer rows.Close()
		for rows.Next() {
			k, err := scanKey(rows)
			if err != nil {
				return dbErr(op, err)
			}
			keys = append(keys, k)
		}
		if err := rows.Err(); err != nil {
			return dbErr(op, err)
		}
		return nil
	})
	return keys, err
}

// RevokeKey implements store.Store. Revoking a revoked key changes nothing:
// it keeps the time it was first revoked. The key is forgotten by
// KeyByHash's cache before this returns.
func (s *Store) RevokeKey(ctx context.Context, id string, at time.Time) error {
	op := "revoke key " + id
	// Forget before and after: a KeyByHash that read the key before the
	// update cannot cache it, and none answers it from memory after.
	forgetKey(s.keys, id)
	defer forgetKey(s.keys, id)
	return s.write(ctx, op, func(tx *txn) error {
		var one int
		err := tx.QueryRowContext(ctx,
			`UPDATE api_keys SET revoked_at = coalesce(revoked_at, ?) WHERE id = ? RETURNING 1`,
			ms(at), id).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%s: %w", op, domain.ErrNotFound)
		}
		if err != nil {
			return dbErr(op, err)
		}
		return nil
	})
}

// SetKeyCaps implements store.Store: one UPDATE that sets the caps u
// names and keeps the others (COALESCE), returning all four. The key is
// forgotten by KeyByHash's cache before this returns, as on RevokeKey.
func (s *Store) SetKeyCaps(ctx context.Context, id string, u store.CapsUpdate) (store.SpendCaps, error) {
	op := "set spending caps of key " + id
	if u.Negative() {
		return store.SpendCaps{}, fmt.Errorf("%s: negative cap", op)
	}
	forgetKey(s.keys, id)
	defer forgetKey(s.keys, id)
	var c store.SpendCaps
	err := s.write(ctx, op, func(tx *txn) error {
		err := tx.QueryRowContext(ctx,
			`UPDATE api_keys SET max_credits_per_day = COALESCE(?, max_credits_per_day),
				max_credits_per_month = COALESCE(?, max_credits_per_month),
				holder_credits_per_day = COALESCE(?, holder_credits_per_day),
				holder_credits_per_month = COALESCE(?, holder_credits_per_month)
			WHERE id = ? RETURNING max_credits_per_day, max_credits_per_month,
				holder_credits_per_day, holder_credits_per_month`,
			u.MaxPerDay, u.MaxPerMonth, u.HolderPerDay, u.HolderPerMonth, id).
			Scan(&c.MaxPerDay, &c.MaxPerMonth, &c.HolderPerDay, &c.HolderPerMonth)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("%s: %w", op, domain.ErrNotFound)
		}
		if err != nil {
			return dbErr(op, err)
		}
		return nil
	})
	if err != nil {
		return store.SpendCaps{}, err
	}
	return c, nil
}
