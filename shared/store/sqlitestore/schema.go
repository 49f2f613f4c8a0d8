package sqlitestore

import (
	"context"
	"database/sql"
	"fmt"
)

// migrations are the schema, one step per version: the database is at
// version N (PRAGMA user_version) once migrations[:N] have run. Append new
// steps; never edit one that has shipped.
//
// Times are unix milliseconds, UTC. Columns holding JSON are checked to
// hold valid JSON.
var migrations = []string{
	// 1: the initial schema.
	`
CREATE TABLE accounts (
	id         TEXT PRIMARY KEY,
	credits    INTEGER NOT NULL CHECK (credits >= 0),
	in_flight  INTEGER NOT NULL DEFAULT 0 CHECK (in_flight >= 0),
	created_at INTEGER NOT NULL
) STRICT;

CREATE TABLE api_keys (
	id                  TEXT PRIMARY KEY,
	hash                TEXT NOT NULL UNIQUE,
	account_id          TEXT NOT NULL REFERENCES accounts (id),
	name                TEXT NOT NULL,
	tier                TEXT NOT NULL,
	requests_per_minute INTEGER NOT NULL,
	requests_per_day    INTEGER NOT NULL,
	starts_per_minute   INTEGER NOT NULL,
	max_in_flight       INTEGER NOT NULL,
	created_at          INTEGER NOT NULL,
	revoked_at          INTEGER -- NULL while active
) STRICT;
CREATE INDEX api_keys_account ON api_keys (account_id, created_at, id);

-- seq orders an account's entries; rows are never deleted, so it only grows.
CREATE TABLE ledger (
	seq        INTEGER PRIMARY KEY,
	account_id TEXT NOT NULL REFERENCES accounts (id),
	task_id    TEXT NOT NULL DEFAULT '', -- '' for grants
	kind       TEXT NOT NULL CHECK (kind IN ('grant', 'charge', 'refund')),
	amount     INTEGER NOT NULL,
	balance    INTEGER NOT NULL CHECK (balance >= 0),
	at         INTEGER NOT NULL,
	note       TEXT NOT NULL
) STRICT;
CREATE INDEX ledger_account ON ledger (account_id, seq);
-- A task is charged once and refunded at most once, whatever the code does.
CREATE UNIQUE INDEX ledger_task_once ON ledger (task_id, kind) WHERE task_id <> '';

CREATE TABLE counters (
	key        TEXT PRIMARY KEY,
	count      INTEGER NOT NULL,
	expires_at INTEGER NOT NULL
) STRICT;
CREATE INDEX counters_expiry ON counters (expires_at);

CREATE TABLE tasks (
	id               TEXT PRIMARY KEY,
	account_id       TEXT NOT NULL REFERENCES accounts (id),
	key_name         TEXT NOT NULL,
	type             TEXT NOT NULL,
	model            TEXT NOT NULL,
	prompt           TEXT NOT NULL,
	params           TEXT NOT NULL CHECK (json_valid(params)),
	inputs           TEXT CHECK (inputs IS NULL OR json_valid(inputs)),
	credits_cost     INTEGER NOT NULL CHECK (credits_cost >= 0),
	credits_refunded INTEGER NOT NULL DEFAULT 0
		CHECK (credits_refunded BETWEEN 0 AND credits_cost),
	status           TEXT NOT NULL
		CHECK (status IN ('pending', 'processing', 'completed', 'failed')),
	created_at       INTEGER NOT NULL,
	started_at       INTEGER,
	completed_at     INTEGER,
	deadline         INTEGER,
	videos           TEXT CHECK (videos IS NULL OR json_valid(videos)),
	failure          TEXT CHECK (failure IS NULL OR json_valid(failure))
) STRICT;
-- History, newest first, with and without a status filter.
CREATE INDEX tasks_history ON tasks (account_id, created_at DESC, id DESC);
CREATE INDEX tasks_status ON tasks (account_id, status, created_at DESC, id DESC);
-- Recovery reads only the few tasks not yet finished.
CREATE INDEX tasks_unfinished ON tasks (created_at)
	WHERE status IN ('pending', 'processing');
`,
	// 2: idempotency keys of starts. One record per account and key,
	// written in the transaction that creates its task. A record whose
	// expires_at has passed counts as absent: it is overwritten by the
	// next start under its key, or pruned.
	`
CREATE TABLE idempotency_keys (
	account_id   TEXT NOT NULL REFERENCES accounts (id),
	key          TEXT NOT NULL,
	request_hash TEXT NOT NULL,
	task_id      TEXT NOT NULL REFERENCES tasks (id),
	expires_at   INTEGER NOT NULL,
	PRIMARY KEY (account_id, key)
) STRICT, WITHOUT ROWID;
CREATE INDEX idempotency_keys_expiry ON idempotency_keys (expires_at);
`,
	// 3: the balance a start left, kept on its idempotency record so that
	// a replay answers it without reading the ledger. Records written
	// before take it from their task's charge, which holds the same.
	`
ALTER TABLE idempotency_keys ADD COLUMN balance INTEGER NOT NULL DEFAULT 0;
UPDATE idempotency_keys SET balance = coalesce((SELECT ledger.balance FROM ledger
	WHERE ledger.task_id = idempotency_keys.task_id AND ledger.kind = 'charge'), 0);
`,
	// 4: the handle of the provider's long-running operation, set once
	// after the job is submitted.
	`
ALTER TABLE tasks ADD COLUMN operation TEXT;
`,
	// 5: a task can be deleted (DeleteTask) while the idempotency record
	// of its start lives on, so that a replay of that start is told the
	// task is gone instead of starting (and charging) it again: the
	// record no longer references tasks. SQLite drops a foreign key only
	// by rebuilding the table.
	`
CREATE TABLE idempotency_keys_v5 (
	account_id   TEXT NOT NULL REFERENCES accounts (id),
	key          TEXT NOT NULL,
	request_hash TEXT NOT NULL,
	task_id      TEXT NOT NULL,
	expires_at   INTEGER NOT NULL,
	balance      INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (account_id, key)
) STRICT, WITHOUT ROWID;
INSERT INTO idempotency_keys_v5 (account_id, key, request_hash, task_id, expires_at, balance)
	SELECT account_id, key, request_hash, task_id, expires_at, balance FROM idempotency_keys;
DROP TABLE idempotency_keys;
ALTER TABLE idempotency_keys_v5 RENAME TO idempotency_keys;
CREATE INDEX idempotency_keys_expiry ON idempotency_keys (expires_at);
`,
	// 6: webhooks. Endpoints an account registered; the account's
	// signing secret for the URLs starts carry; the outbox
	// (webhook_deliveries), one row per event and target, written in the
	// transaction of the task's move it reports; and every attempt.
	`
ALTER TABLE tasks ADD COLUMN webhook_url TEXT;

CREATE TABLE webhook_endpoints (
	id         TEXT PRIMARY KEY,
	account_id TEXT NOT NULL REFERENCES accounts (id),
	url        TEXT NOT NULL,
	events     TEXT NOT NULL CHECK (json_valid(events)),
	secret     TEXT NOT NULL,
	created_at INTEGER NOT NULL
) STRICT;
CREATE INDEX webhook_endpoints_account ON webhook_endpoints (account_id, created_at, id);

CREATE TABLE webhook_secrets (
	account_id TEXT PRIMARY KEY REFERENCES accounts (id),
	secret     TEXT NOT NULL
) STRICT;

CREATE TABLE webhook_deliveries (
	id          TEXT PRIMARY KEY, -- the webhook-id
	account_id  TEXT NOT NULL,
	endpoint_id TEXT NOT NULL, -- '' for the task's own URL
	url         TEXT NOT NULL,
	event       TEXT NOT NULL,
	task_id     TEXT NOT NULL,
	task        TEXT NOT NULL CHECK (json_valid(task)),
	created_at  INTEGER NOT NULL,
	state       TEXT NOT NULL CHECK (state IN ('pending', 'delivered', 'failed')),
	attempts    INTEGER NOT NULL DEFAULT 0,
	next_at     INTEGER NOT NULL
) STRICT;
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_at) WHERE state = 'pending';
CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id);

CREATE TABLE webhook_attempts (
	seq         INTEGER PRIMARY KEY,
	delivery_id TEXT NOT NULL REFERENCES webhook_deliveries (id),
	endpoint_id TEXT NOT NULL,
	attempt     INTEGER NOT NULL,
	at          INTEGER NOT NULL,
	status      INTEGER NOT NULL,
	latency_ms  INTEGER NOT NULL,
	error       TEXT NOT NULL
) STRICT;
CREATE INDEX webhook_attempts_endpoint ON webhook_attempts (endpoint_id, seq);
`,
	// 7: the percentage done a provider reports while a task is
	// processing.
	`
ALTER TABLE tasks ADD COLUMN progress INTEGER NOT NULL DEFAULT 0;
`,
	// 8: who made a completed task's videos and what they cost the
	// operator (task.Billing), for genctl report.
	`
ALTER TABLE tasks ADD COLUMN route TEXT NOT NULL DEFAULT '';
ALTER TABLE tasks ADD COLUMN provider_model TEXT NOT NULL DEFAULT '';
ALTER TABLE tasks ADD COLUMN provider_cost_usd REAL NOT NULL DEFAULT 0;
`,
	// 9: the history's total kept as counts per account and status, so
	// that a page reads a few rows instead of counting the account's
	// tasks. Triggers keep them, so that every write that adds, removes
	// or moves a task row (this program's, genctl's, any other process's
	// on the file) moves them in its own transaction: they are exact
	// whatever path the write took. The history index gains the status,
	// so that a page's ids and statuses are read from the index alone.
	`
DROP INDEX tasks_history;
CREATE INDEX tasks_history ON tasks (account_id, created_at DESC, id DESC, status);
CREATE TABLE task_counts (
	account_id TEXT NOT NULL,
	status     TEXT NOT NULL,
	n          INTEGER NOT NULL CHECK (n >= 0),
	PRIMARY KEY (account_id, status)
) STRICT, WITHOUT ROWID;
INSERT INTO task_counts (account_id, status, n)
	SELECT account_id, status, count(*) FROM tasks GROUP BY account_id, status;
CREATE TRIGGER tasks_count_insert AFTER INSERT ON tasks BEGIN
	INSERT INTO task_counts (account_id, status, n) VALUES (NEW.account_id, NEW.status, 1)
		ON CONFLICT (account_id, status) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER tasks_count_delete AFTER DELETE ON tasks BEGIN
	UPDATE task_counts SET n = n - 1 WHERE account_id = OLD.account_id AND status = OLD.status;
END;
CREATE TRIGGER tasks_count_move AFTER UPDATE OF account_id, status ON tasks
	WHEN OLD.account_id IS NOT NEW.account_id OR OLD.status IS NOT NEW.status BEGIN
	UPDATE task_counts SET n = n - 1 WHERE account_id = OLD.account_id AND status = OLD.status;
	INSERT INTO task_counts (account_id, status, n) VALUES (NEW.account_id, NEW.status, 1)
		ON CONFLICT (account_id, status) DO UPDATE SET n = n + 1;
END;
`,
	// 10: spending caps. A key's caps in credits per UTC day and month,
	// the operator's and the ones its holder lowered them to (0: none);
	// what a key spends is counted in counters (domain.SpendKeys). A
	// task keeps the id of its key, so that its refund gives back to
	// those counters.
	`
ALTER TABLE api_keys ADD COLUMN max_credits_per_day INTEGER NOT NULL DEFAULT 0 CHECK (max_credits_per_day >= 0);
ALTER TABLE api_keys ADD COLUMN max_credits_per_month INTEGER NOT NULL DEFAULT 0 CHECK (max_credits_per_month >= 0);
ALTER TABLE api_keys ADD COLUMN holder_credits_per_day INTEGER NOT NULL DEFAULT 0 CHECK (holder_credits_per_day >= 0);
ALTER TABLE api_keys ADD COLUMN holder_credits_per_month INTEGER NOT NULL DEFAULT 0 CHECK (holder_credits_per_month >= 0);
ALTER TABLE tasks ADD COLUMN key_id TEXT NOT NULL DEFAULT '';
`,
	// 11: each provider route's last check of the models it serves
	// (store.RouteCheck): our model ids and the provider's as asked, and
	// the provider's it does not serve, as JSON.
	`
CREATE TABLE route_checks (
	route      TEXT PRIMARY KEY,
	checked_at INTEGER NOT NULL,
	models     TEXT NOT NULL CHECK (json_valid(models)),
	missing    TEXT NOT NULL CHECK (json_valid(missing))
) STRICT;
`,
	// 12: the leases of open event streams (OpenStream), one row per
	// stream, so that a key holds at most so many at once; a lease that
	// expired holds nothing and is deleted by the next open.
	`
CREATE TABLE stream_leases (
	key        TEXT NOT NULL,
	lease      TEXT NOT NULL,
	expires_at INTEGER NOT NULL,
	PRIMARY KEY (key, lease)
) STRICT, WITHOUT ROWID;
`,
}

// migrate brings db's schema to the latest version in one transaction.
func migrate(db *sql.DB) error {
	ctx := context.Background()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	defer tx.Rollback()
	var version int
	if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	if version > len(migrations) {
		return fmt.Errorf("schema version %d is newer than this program's %d", version, len(migrations))
	}
	for v := version; v < len(migrations); v++ {
		if _, err := tx.ExecContext(ctx, migrations[v]); err != nil {
			return fmt.Errorf("migrate schema to version %d: %w", v+1, err)
		}
	}
	if version == len(migrations) {
		return nil
	}
	// PRAGMA takes no parameters; the value is our own constant.
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", len(migrations))); err != nil {
		return fmt.Errorf("set schema version: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit schema version %d: %w", len(migrations), err)
	}
	return nil
}
