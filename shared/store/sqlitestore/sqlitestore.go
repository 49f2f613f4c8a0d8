// Package sqlitestore is the embedded storage backend: a store.Store kept
// in one SQLite file, for local runs, tests and single-host deployments.
// It uses the pure-Go driver modernc.org/sqlite, so it needs no cgo.
package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"runtime"
	"strings"
	"sync/atomic"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/genvideo/gen/shared/store"
)

var _ store.Store = (*Store)(nil)

// busyTimeout is how long a statement waits for a lock held by another
// process (an operator's command on the same file) before the call fails
// with store.ErrUnavailable.
const busyTimeout = 5 * time.Second

// Store is a store.Store on a SQLite database file.
//
// Writes go through a pool of exactly one connection whose transactions
// begin IMMEDIATE. One connection makes the writers of this process queue
// in database/sql instead of meeting SQLITE_BUSY, which SQLite reports
// without waiting when a deferred transaction tries to upgrade its read
// lock; BEGIN IMMEDIATE takes the write lock up front, so a writer in
// another process waits out busy_timeout at BEGIN rather than failing
// half-way. Every read-check-write (the balance check and the charge, a
// task's state and its transition) therefore runs on a state no one else
// can change until it commits.
//
// Reads go through a separate pool of read-only connections: in WAL mode
// they see the last committed state without blocking the writer or each
// other.
type Store struct {
	wr *sql.DB
	rd *sql.DB
	// The statements prepared on each pool (stmts.go).
	wrStmts, rdStmts *stmtCache
	closed           atomic.Bool
	keys             *keyCache
	tasks            *taskCache
	pages            *pageCache
	// now is the caches' clock: time.Now unless a test sets it.
	now func() time.Time
	// events is signalled after a commit that wrote webhook deliveries.
	events chan struct{}
}

// Events fires after a transaction that wrote webhook deliveries
// commits, so that the local worker delivers them at once. It holds one
// signal at most: a worker that wakes reads every due row anyway.
func (s *Store) Events() <-chan struct{} { return s.events }

func (s *Store) clock() time.Time {
	if s.now != nil {
		return s.now()
	}
	return time.Now()
}

// Open opens (creating it if needed) the database at path and brings its
// schema up to date. The path ":memory:" gives a private in-memory
// database, lost on Close.
func Open(path string) (*Store, error) {
	memory := path == ":memory:"
	q := url.Values{}
	q.Set("_busy_timeout", fmt.Sprint(busyTimeout.Milliseconds()))
	q.Set("_foreign_keys", "on")
	q.Set("_txlock", "immediate")
	if !memory {
		q.Set("_journal_mode", "WAL")
		// In WAL mode NORMAL syncs at checkpoints, not at each commit: a
		// commit survives the process crashing, and the file is never
		// corrupted, but the last commits before a power cut or an OS
		// crash may be lost (infra/docs/performance.md). FULL made every
		// start wait for an fsync.
		q.Set("_synchronous", "NORMAL")
	}
	wr, err := sql.Open("sqlite", path+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	wr.SetMaxOpenConns(1)
	// Never close the one connection: an in-memory database dies with it.
	wr.SetConnMaxIdleTime(0)
	wr.SetConnMaxLifetime(0)
	if err := migrate(wr); err != nil {
		wr.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	s := &Store{wr: wr, rd: wr, wrStmts: newStmtCache(wr), events: make(chan struct{}, 1),
		keys: newKeyCache(), tasks: newTaskCache(), pages: newPageCache()}
	s.rdStmts = s.wrStmts
	if memory {
		// Another connection would open another, empty database.
		return s, nil
	}

	q = url.Values{}
	q.Set("_busy_timeout", fmt.Sprint(busyTimeout.Milliseconds()))
	q.Set("_query_only", "on")
	rd, err := sql.Open("sqlite", path+"?"+q.Encode())
	if err != nil {
		wr.Close()
		return nil, fmt.Errorf("open %s for reading: %w", path, err)
	}
	// One read connection per CPU (at least four, so that a read waiting
	// on the disk does not hold the others up), and every one kept open:
	// database/sql keeps two idle connections by default, so under load
	// it closed and reopened the others at every burst, and each reopened
	// one prepared its statements again (infra/docs/performance.md).
	n := max(4, runtime.GOMAXPROCS(0))
	rd.SetMaxOpenConns(n)
	rd.SetMaxIdleConns(n)
	rd.SetConnMaxIdleTime(0)
	rd.SetConnMaxLifetime(0)
	s.rd, s.rdStmts = rd, newStmtCache(rd)
	return s, nil
}

// Close closes the database; every later call fails with
// store.ErrUnavailable.
func (s *Store) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	err := s.wr.Close()
	if s.rd != s.wr {
		err = errors.Join(err, s.rd.Close())
	}
	if err != nil {
		return fmt.Errorf("close database: %w", err)
	}
	return nil
}

// write runs fn in one IMMEDIATE transaction and commits it if fn returns
// nil. fn returns business errors as they are and database errors through
// dbErr.
func (s *Store) write(ctx context.Context, op string, fn func(tx *txn) error) error {
	return s.inTx(ctx, s.wr, nil, op, fn)
}

// read runs fn in one read-only transaction, so that the statements in it
// see a single snapshot.
func (s *Store) read(ctx context.Context, op string, fn func(tx *txn) error) error {
	return s.inTx(ctx, s.rd, &sql.TxOptions{ReadOnly: true}, op, fn)
}

func (s *Store) inTx(ctx context.Context, db *sql.DB, opts *sql.TxOptions, op string, fn func(tx *txn) error) error {
	if s.closed.Load() {
		return fmt.Errorf("%s: %w: database closed", op, store.ErrUnavailable)
	}
	sqlTx, err := db.BeginTx(ctx, opts)
	if err != nil {
		return dbErr(op, err)
	}
	tx := &txn{Tx: sqlTx, stmts: s.wrStmts}
	if db != s.wr {
		tx.stmts = s.rdStmts
	}
	defer tx.Rollback() // a no-op once committed
	// After the commit, or whatever became of it: a history page read in
	// a snapshot before the write is not answered after it.
	defer func() {
		for _, a := range tx.touched {
			s.pages.forget(a, nil)
		}
	}()
	if err := fn(tx); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return dbErr(op, err)
	}
	if tx.events {
		select {
		case s.events <- struct{}{}:
		default:
		}
	}
	if tx.stmts.wantsPreparing() {
		tx.stmts.prepareWanted(ctx)
	}
	return nil
}

// dbErr adds op to a database error, and store.ErrUnavailable when the
// database could not serve the call (locked, closed, out of disk, out of
// time) rather than refusing it.
func dbErr(op string, err error) error {
	if unavailable(err) {
		return fmt.Errorf("%s: %w: %w", op, store.ErrUnavailable, err)
	}
	return fmt.Errorf("%s: %w", op, err)
}

func unavailable(err error) bool {
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED, sqlite3.SQLITE_IOERR,
			sqlite3.SQLITE_FULL, sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_NOMEM,
			sqlite3.SQLITE_PROTOCOL, sqlite3.SQLITE_INTERRUPT:
			return true
		}
	}
	// database/sql does not export its "database is closed" error.
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, sql.ErrConnDone) ||
		strings.Contains(err.Error(), "sql: database is closed")
}

// isConstraint reports whether err is the violation of a constraint of
// the given extended code.
func isConstraint(err error, code int) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code() == code
}

// isDuplicate reports whether err is a violated primary key or unique index.
func isDuplicate(err error) bool {
	return isConstraint(err, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY) ||
		isConstraint(err, sqlite3.SQLITE_CONSTRAINT_UNIQUE)
}

// ms is t as stored: unix milliseconds.
func ms(t time.Time) int64 { return t.UnixMilli() }

// nullMS is t as stored in a column where NULL means the zero time.
func nullMS(t time.Time) sql.NullInt64 {
	if t.IsZero() {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: t.UnixMilli(), Valid: true}
}

// fromMS is the time stored as ms, in UTC.
func fromMS(v int64) time.Time { return time.UnixMilli(v).UTC() }

// fromNullMS is the time stored as nullMS.
func fromNullMS(v sql.NullInt64) time.Time {
	if !v.Valid {
		return time.Time{}
	}
	return fromMS(v.Int64)
}
