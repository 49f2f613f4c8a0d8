package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/genvideo/gen/shared/domain"
	"github.com/genvideo/gen/shared/store"
	"github.com/genvideo/gen/shared/task"
	"github.com/genvideo/gen/shared/testing/storetest"
)

// openAt opens the database at path for the length of the test.
func openAt(t *testing.T, path string) *Store {
	t.Helper()
	s, err := Open(path)
	if err != nil {
		t.Fatalf("Open(%s): %v", path, err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

// openTemp opens a fresh database file for the length of the test.
func openTemp(t *testing.T) *Store {
	t.Helper()
	return openAt(t, filepath.Join(t.TempDir(), "gen.db"))
}

func TestConformance(t *testing.T) {
	var files sync.Map // *Store -> its database file, to reopen it
	open := func(t *testing.T) storetest.Backend {
		path := filepath.Join(t.TempDir(), "gen.db")
		s := openAt(t, path)
		files.Store(s, path)
		return s
	}
	reopen := func(t *testing.T, old store.Store) store.Store {
		path, _ := files.Load(old)
		if err := old.Close(); err != nil {
			t.Errorf("Close before reopening: %v", err)
		}
		s := openAt(t, path.(string))
		files.Store(s, path)
		return s
	}
	storetest.Run(t, open, storetest.WithReopen(reopen))
}

var t0 = time.Date(2025, 11, 13, 10, 0, 0, 0, time.UTC)

// TestRestart checks that everything written survives Close and Open.
func TestRestart(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "gen.db")
	s, err := Open(path)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	if err := s.CreateAccount(ctx, domain.Account{ID: "acct-a", Credits: 100, CreatedAt: t0}); err != nil {
		t.Fatalf("CreateAccount: %v", err)
	}
	key := store.Key{ID: "key-1", Hash: "h1", AccountID: "acct-a", Name: "ci", Tier: "pro",
		Limits: store.KeyLimits{RequestsPerMinute: 300, RequestsPerDay: 10000, StartsPerMinute: 10, MaxInFlight: 5}, CreatedAt: t0}
	if err := s.CreateKey(ctx, key); err != nil {
		t.Fatalf("CreateKey: %v", err)
	}
	tk := task.Task{ID: task.NewID(t0), AccountID: "acct-a", KeyName: "ci", Type: "text-to-video",
		Model: "gen-3.1-fast-generate-001", Prompt: "a cat", CreditsCost: 30, CreatedAt: t0, Deadline: t0.Add(10 * time.Minute)}
	if _, err := s.CreateTask(ctx, tk, domain.StartGuard{}); err != nil {
		t.Fatalf("CreateTask: %v", err)
	}
	minute := domain.Window{Key: "rpm", Limit: 2, ExpiresAt: t0.Add(time.Minute)}
	if _, err := s.Take(ctx, []domain.Window{minute}, t0); err != nil {
		t.Fatalf("Take: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}

	s = openAt(t, path)
	a, err := s.Account(ctx, "acct-a")
	if err != nil || a.Credits != 70 || a.InFlight != 1 {
		t.Errorf("Account after restart = %+v, %v; want 70 credits, 1 in flight", a, err)
	}
	if k, err := s.KeyByHash(ctx, "h1"); err != nil || k.ID != "key-1" || k.Limits != key.Limits {
		t.Errorf("KeyByHash after restart = %+v, %v; want key-1 with its limits", k, err)
	}
	if got, err := s.Task(ctx, tk.ID); err != nil || got.Status != task.Pending || got.Prompt != "a cat" {
		t.Errorf("Task after restart = %+v, %v; want the pending task", got, err)
	}
	if l, err := s.Ledger(ctx, "acct-a"); err != nil || len(l) != 2 {
		t.Errorf("Ledger after restart = %+v, %v; want the grant and the charge", l, err)
	}
	if used, err := s.Take(ctx, []domain.Window{minute}, t0.Add(time.Second)); err != nil || used[0] != 2 {
		t.Errorf("Take after restart = %v, %v; want [2]: the window's count survives", used, err)
	}
	storetest.CheckInvariants(t, s, "acct-a")
}

func TestSchemaVersion(t *testing.T) {
	s := openTemp(t)
	var v int
	if err := s.wr.QueryRow("PRAGMA user_version").Scan(&v); err != nil {
		t.Fatal(err)
	}
	if v != len(migrations) {
		t.Errorf("user_version = %d, want %d", v, len(migrations))
	}
	var mode string
	if err := s.wr.QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil {
		t.Fatal(err)
	}
	if mode != "wal" {
		t.Errorf("journal_mode = %q, want wal", mode)
	}

	// A database written by a newer program is refused, not misread.
	path := filepath.Join(t.TempDir(), "newer.db")
	newer, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := newer.wr.Exec(fmt.Sprintf("PRAGMA user_version = %d", len(migrations)+1)); err != nil {
		t.Fatal(err)
	}
	newer.Close()
	if s, err := Open(path); err == nil {
		s.Close()
		t.Errorf("Open of a database at version %d succeeded, want an error", len(migrations)+1)
	}
}

func TestMemory(t *testing.T) {
	s, err := Open(":memory:")
	if err != nil {
		t.Fatalf("Open(:memory:): %v", err)
	}
	defer s.Close()
	ctx := context.Background()
	if err := s.CreateAccount(ctx, domain.Account{ID: "acct-a", Credits: 5, CreatedAt: t0}); err != nil {
		t.Fatalf("CreateAccount: %v", err)
	}
	if a, err := s.Account(ctx, "acct-a"); err != nil || a.Credits != 5 {
		t.Errorf("Account = %+v, %v; want 5 credits", a, err)
	}
}

func TestClosedIsUnavailable(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), "gen.db"))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	ctx := context.Background()
	_, err = s.Account(ctx, "acct-a")
	if !errors.Is(err, store.ErrUnavailable) {
		t.Errorf("Account after Close: %v, want store.ErrUnavailable", err)
	}
	_, err = s.Grant(ctx, "acct-a", 1, "", t0)
	if !errors.Is(err, store.ErrUnavailable) {
		t.Errorf("Grant after Close: %v, want store.ErrUnavailable", err)
	}
}

// TestLockedIsUnavailable holds the write lock from another connection, as
// another process would, and checks that a write that cannot get it in
// time reports store.ErrUnavailable and changes nothing.
func TestLockedIsUnavailable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "gen.db")
	s := openAt(t, path)
	ctx := context.Background()
	if err := s.CreateAccount(ctx, domain.Account{ID: "acct-a", Credits: 5, CreatedAt: t0}); err != nil {
		t.Fatal(err)
	}
	other, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	conn, err := other.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}

	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	_, err = s.Grant(short, "acct-a", 1, "", t0)
	if !errors.Is(err, store.ErrUnavailable) {
		t.Errorf("Grant while another connection holds the write lock: %v, want store.ErrUnavailable", err)
	}
	if _, err := conn.ExecContext(ctx, "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	if a, err := s.Account(ctx, "acct-a"); err != nil || a.Credits != 5 {
		t.Errorf("Account = %+v, %v; want 5 credits, the failed grant changed nothing", a, err)
	}
	if _, err := s.Grant(ctx, "acct-a", 1, "", t0); err != nil {
		t.Errorf("Grant once the lock is released: %v", err)
	}
}

// TestPrune checks that expired counters are deleted as Takes go by.
func TestPrune(t *testing.T) {
	s := openTemp(t)
	ctx := context.Background()
	for i := range 3 * pruneBatch {
		c := domain.Window{Key: fmt.Sprintf("rpm:key-%d", i), Limit: 1, ExpiresAt: t0.Add(time.Minute)}
		if _, err := s.Take(ctx, []domain.Window{c}, t0); err != nil {
			t.Fatal(err)
		}
	}
	later := t0.Add(2 * time.Minute)
	live := domain.Window{Key: "rpm:live", Limit: 100, ExpiresAt: later.Add(time.Minute)}
	count := func() int {
		var n int
		if err := s.wr.QueryRow("SELECT count(*) FROM counters").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	for i := range 3 {
		if _, err := s.Take(ctx, []domain.Window{live}, later); err != nil {
			t.Fatal(err)
		}
		// 3*pruneBatch expired + live, less what the Takes so far pruned.
		if got, want := count(), 3*pruneBatch+1-(i+1)*pruneBatch; got != want {
			t.Errorf("after %d Takes past expiry: %d counters, want %d", i+1, got, want)
		}
	}
	if used, err := s.Take(ctx, []domain.Window{live}, later); err != nil || used[0] != 4 {
		t.Errorf("Take(live) = %v, %v; want [4]: pruning leaves open windows alone", used, err)
	}
}

// TestMigrateFromVersion1 opens a database written before idempotency
// keys existed: its data is kept, its version becomes the latest, and
// idempotent starts work on it.
func TestMigrateFromVersion1(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "v1.db")
	old, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, stmt := range []string{
		migrations[0],
		"PRAGMA user_version = 1",
		"INSERT INTO accounts (id, credits, in_flight, created_at) VALUES ('acct-a', 100, 0, 0)",
	} {
		if _, err := old.Exec(stmt); err != nil {
			old.Close()
			t.Fatalf("build a version 1 database: %v", err)
		}
	}
	old.Close()

	s := openAt(t, path)
	var v int
	if err := s.wr.QueryRow("PRAGMA user_version").Scan(&v); err != nil {
		t.Fatal(err)
	}
	if v != len(migrations) || v < 2 {
		t.Errorf("user_version after Open = %d, want %d (at least 2)", v, len(migrations))
	}
	if a, err := s.Account(ctx, "acct-a"); err != nil || a.Credits != 100 {
		t.Errorf("Account after the migration = %+v, %v; want the 100 credits written at version 1", a, err)
	}
	g := domain.StartGuard{Idempotency: &domain.IdempotencyKey{Key: "k", RequestHash: "h", ExpiresAt: t0.Add(time.Hour)}}
	first := task.Task{ID: task.NewID(t0), AccountID: "acct-a", Type: "text-to-video", Model: "m", Prompt: "p", CreditsCost: 10, CreatedAt: t0}
	if _, err := s.CreateTask(ctx, first, g); err != nil {
		t.Fatalf("CreateTask with an idempotency key: %v", err)
	}
	dup := first
	dup.ID = task.NewID(t0)
	_, err = s.CreateTask(ctx, dup, g)
	var ie *domain.IdempotencyError
	if !errors.As(err, &ie) || ie.TaskID != first.ID {
		t.Errorf("second CreateTask under the key = %v, want *domain.IdempotencyError naming %s", err, first.ID)
	}
}

// TestMigrateFromVersion2 opens a database whose idempotency records were
// written before they kept the balance: each takes it from its task's
// charge, so that a replay answers what the start answered.
func TestMigrateFromVersion2(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v2.db")
	storetest.CheckLegacyRecord(t, openAt(t, path), func(t *testing.T, s store.Store) store.Store {
		// Back to version 2: the records as they were, without the balance
		// (and the tasks without the operation handle of version 4, nor
		// the webhooks of version 6, nor the progress of version 7, nor
		// the billing of version 8, nor the counts of version 9, nor the
		// caps of version 10, nor the routes' checks of version 11, nor the
		// stream leases of version 12).
		for _, stmt := range []string{version12Down, version11Down, version10Down, version9Down, "ALTER TABLE tasks DROP COLUMN provider_cost_usd",
			"ALTER TABLE tasks DROP COLUMN provider_model", "ALTER TABLE tasks DROP COLUMN route",
			"ALTER TABLE tasks DROP COLUMN progress", "DROP TABLE webhook_attempts", "DROP TABLE webhook_deliveries",
			"DROP TABLE webhook_secrets", "DROP TABLE webhook_endpoints", "ALTER TABLE tasks DROP COLUMN webhook_url",
			"ALTER TABLE idempotency_keys DROP COLUMN balance",
			"ALTER TABLE tasks DROP COLUMN operation", "PRAGMA user_version = 2"} {
			if _, err := s.(*Store).wr.Exec(stmt); err != nil {
				t.Fatalf("make a version 2 database: %s: %v", stmt, err)
			}
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		return openAt(t, path)
	})
}

// TestPruneIdempotencyKeys checks that expired idempotency records are
// deleted as idempotent starts go by, and live ones kept.
func TestPruneIdempotencyKeys(t *testing.T) {
	s := openTemp(t)
	ctx := context.Background()
	if err := s.CreateAccount(ctx, domain.Account{ID: "acct-a", Credits: 0, CreatedAt: t0}); err != nil {
		t.Fatal(err)
	}
	start := func(key string, at time.Time, expires time.Duration) {
		t.Helper()
		tk := task.Task{ID: task.NewID(at), AccountID: "acct-a", Type: "text-to-video", Model: "m", Prompt: "p", CreatedAt: at}
		g := domain.StartGuard{Idempotency: &domain.IdempotencyKey{Key: key, RequestHash: "h", ExpiresAt: at.Add(expires)}}
		if _, err := s.CreateTask(ctx, tk, g); err != nil {
			t.Fatalf("CreateTask(%s): %v", key, err)
		}
	}
	for i := range 2 * pruneBatch {
		start(fmt.Sprintf("old-%d", i), t0, time.Hour)
	}
	start("live", t0, 3*time.Hour)
	count := func() int {
		var n int
		if err := s.wr.QueryRow("SELECT count(*) FROM idempotency_keys").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	later := t0.Add(2 * time.Hour)
	for i := range 2 {
		start(fmt.Sprintf("new-%d", i), later, time.Hour)
		// 2*pruneBatch expired + live + the new ones, less what was pruned.
		if got, want := count(), 2*pruneBatch+1+(i+1)-(i+1)*pruneBatch; got != want {
			t.Errorf("after %d idempotent starts past expiry: %d records, want %d", i+1, got, want)
		}
	}
	var taskID string
	if err := s.wr.QueryRow("SELECT task_id FROM idempotency_keys WHERE key = 'live'").Scan(&taskID); err != nil {
		t.Errorf("the live record was pruned: %v", err)
	}
}

// version12Down takes a database back to version 11: no stream leases.
const version12Down = `DROP TABLE stream_leases;`

// version11Down takes a database back to version 10: no routes' checks.
const version11Down = `DROP TABLE route_checks;`

// version10Down takes a database back to version 9: no spending caps.
const version10Down = `ALTER TABLE api_keys DROP COLUMN max_credits_per_day;
	ALTER TABLE api_keys DROP COLUMN max_credits_per_month;
	ALTER TABLE api_keys DROP COLUMN holder_credits_per_day;
	ALTER TABLE api_keys DROP COLUMN holder_credits_per_month;
	ALTER TABLE tasks DROP COLUMN key_id`

// version9Down takes a database back to version 8: no task counts.
const version9Down = `DROP TRIGGER tasks_count_insert; DROP TRIGGER tasks_count_delete;
	DROP TRIGGER tasks_count_move; DROP TABLE task_counts`

// TestMigrateCounts opens a version 8 database holding tasks: version 9
// counts them, so that the history's totals are what count(*) says.
func TestMigrateCounts(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v8.db")
	s := openAt(t, path)
	ctx := t.Context()
	for _, a := range []string{"acct-a", "acct-b"} {
		if err := s.CreateAccount(ctx, domain.Account{ID: a, Credits: 1000, CreatedAt: t0}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 7 {
		a := []string{"acct-a", "acct-b"}[i%2]
		tk := task.Task{ID: fmt.Sprintf("gen_%d_migrate%d", t0.UnixMilli()+int64(i), i), AccountID: a, Type: "text-to-video",
			Model: "m", Prompt: "p", CreditsCost: 1, CreatedAt: t0.Add(time.Duration(i) * time.Second), Deadline: t0.Add(time.Hour)}
		if _, err := s.CreateTask(ctx, tk, domain.StartGuard{}); err != nil {
			t.Fatal(err)
		}
		if i%3 == 0 {
			if _, err := s.MarkProcessing(ctx, tk.ID, t0.Add(time.Minute)); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, stmt := range []string{version12Down, version11Down, version10Down, version9Down, "PRAGMA user_version = 8"} {
		if _, err := s.wr.Exec(stmt); err != nil {
			t.Fatalf("make a version 8 database: %s: %v", stmt, err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openAt(t, path)
	for _, a := range []string{"acct-a", "acct-b", "acct-none"} {
		for _, st := range append([]task.Status{""}, task.Statuses...) {
			var want int
			if err := s.wr.QueryRow(`SELECT count(*) FROM tasks WHERE account_id = ? AND (? = '' OR status = ?)`, a, st, st).Scan(&want); err != nil {
				t.Fatal(err)
			}
			if _, total, err := s.Tasks(ctx, a, store.TaskQuery{Status: st, Limit: 1}); err != nil || total != want {
				t.Errorf("after migrating, Tasks(%s, status %q) total %d, %v; want %d", a, st, total, err, want)
			}
		}
	}
}

// TestImportTasks: the bench's seeding, in two transactions.
func TestImportTasks(t *testing.T) { storetest.CheckImport(t, openTemp(t), importBatch+3) }
