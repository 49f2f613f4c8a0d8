package sqlitestore

import (
	"context"
	"database/sql"
	"sync"
)

// txn is one transaction whose statements are prepared once and kept:
// SQLite otherwise parses and plans each statement anew, which was a good
// part of every start's and every poll's time in make bench. database/sql
// prepares a kept statement again on a connection that has not seen it,
// and reuses it on one that has.
type txn struct {
	// events is set when the transaction wrote webhook deliveries: the
	// store signals Events once it commits.
	events bool
	// touched are the accounts whose tasks the transaction wrote (touch):
	// their cached history pages are forgotten once it ends.
	touched []string
	*sql.Tx
	stmts *stmtCache
}

// stmtCache holds the prepared statements of one pool, by query text.
// The queries are the package's own constants (with at most a few
// variants each), so it stays small.
//
// A statement is prepared outside any transaction, after the one that
// first ran it: the writer pool has one connection, which that
// transaction holds, so preparing inside it would wait for itself.
type stmtCache struct {
	db     *sql.DB
	mu     sync.Mutex
	m      map[string]*sql.Stmt
	wanted map[string]bool
}

func newStmtCache(db *sql.DB) *stmtCache {
	return &stmtCache{db: db, m: map[string]*sql.Stmt{}, wanted: map[string]bool{}}
}

// stmt returns query prepared within tx, or nil when it is not prepared
// yet: it is noted for prepareWanted, and runs unprepared this time.
func (t *txn) stmt(ctx context.Context, query string) *sql.Stmt {
	c := t.stmts
	c.mu.Lock()
	st, ok := c.m[query]
	if !ok {
		c.wanted[query] = true
	}
	c.mu.Unlock()
	if !ok {
		return nil
	}
	return t.Tx.StmtContext(ctx, st)
}

// prepareWanted prepares the queries run unprepared so far. It is called
// with no transaction open; a query that fails to prepare is left to run
// unprepared.
func (c *stmtCache) prepareWanted(ctx context.Context) {
	c.mu.Lock()
	var queries []string
	for q := range c.wanted {
		queries = append(queries, q)
	}
	clear(c.wanted)
	c.mu.Unlock()
	for _, q := range queries {
		st, err := c.db.PrepareContext(ctx, q)
		if err != nil {
			continue
		}
		c.mu.Lock()
		if _, ok := c.m[q]; ok {
			st.Close()
		} else {
			c.m[q] = st
		}
		c.mu.Unlock()
	}
}

// wantsPreparing reports whether a query waits for prepareWanted.
func (c *stmtCache) wantsPreparing() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.wanted) > 0
}

// ExecContext runs query within the transaction, prepared.
func (t *txn) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if st := t.stmt(ctx, query); st != nil {
		return st.ExecContext(ctx, args...)
	}
	return t.Tx.ExecContext(ctx, query, args...)
}

// QueryContext runs query within the transaction, prepared.
func (t *txn) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if st := t.stmt(ctx, query); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return t.Tx.QueryContext(ctx, query, args...)
}

// QueryRowContext runs query within the transaction, prepared.
func (t *txn) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if st := t.stmt(ctx, query); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return t.Tx.QueryRowContext(ctx, query, args...)
}

// touch notes that the transaction writes a task of account: a row
// added, removed, or moved to another status.
func (t *txn) touch(account string) {
	if len(t.touched) == 0 || t.touched[len(t.touched)-1] != account {
		t.touched = append(t.touched, account)
	}
}
