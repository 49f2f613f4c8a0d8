package faults

import (
	"context"
	"time"

	"github.com/genvideo/gen/shared/domain"
	"github.com/genvideo/gen/shared/store"
	"github.com/genvideo/gen/shared/task"
)

var _ store.Store = (*Store)(nil)

// Store is a store.Store whose calls go through an Injector, named
// "Store.<Method>". Close, and any method the interface gains later, pass
// straight through to the wrapped store.
type Store struct {
	store.Store
	in *Injector
}

// WrapStore returns s with the faults in decides.
func WrapStore(s store.Store, in *Injector) *Store { return &Store{Store: s, in: in} }

func (s *Store) call(ctx context.Context, method string, fn func() error) error {
	return s.in.call(ctx, "Store."+method, storeFailure, fn)
}

// CreateAccount implements store.Store.
func (s *Store) CreateAccount(ctx context.Context, a domain.Account) error {
	return s.call(ctx, "CreateAccount", func() error { return s.Store.CreateAccount(ctx, a) })
}

// Account implements store.Store.
func (s *Store) Account(ctx context.Context, id string) (a domain.Account, err error) {
	err = s.call(ctx, "Account", func() error { a, err = s.Store.Account(ctx, id); return err })
	return a, err
}

// Grant implements store.Store.
func (s *Store) Grant(ctx context.Context, accountID string, amount int64, note string, at time.Time) (bal int64, err error) {
	err = s.call(ctx, "Grant", func() error { bal, err = s.Store.Grant(ctx, accountID, amount, note, at); return err })
	return bal, err
}

// Ledger implements store.Store.
func (s *Store) Ledger(ctx context.Context, accountID string) (l []domain.LedgerEntry, err error) {
	err = s.call(ctx, "Ledger", func() error { l, err = s.Store.Ledger(ctx, accountID); return err })
	return l, err
}

// CreateKey implements store.Store.
func (s *Store) CreateKey(ctx context.Context, k store.Key) error {
	return s.call(ctx, "CreateKey", func() error { return s.Store.CreateKey(ctx, k) })
}

// KeyByHash implements store.Store.
func (s *Store) KeyByHash(ctx context.Context, hash string) (k store.Key, err error) {
	err = s.call(ctx, "KeyByHash", func() error { k, err = s.Store.KeyByHash(ctx, hash); return err })
	return k, err
}

// Keys implements store.Store.
func (s *Store) Keys(ctx context.Context, accountID string) (ks []store.Key, err error) {
	err = s.call(ctx, "Keys", func() error { ks, err = s.Store.Keys(ctx, accountID); return err })
	return ks, err
}

// RevokeKey implements store.Store.
func (s *Store) RevokeKey(ctx context.Context, id string, at time.Time) error {
	return s.call(ctx, "RevokeKey", func() error { return s.Store.RevokeKey(ctx, id, at) })
}

// Take implements store.Store.
func (s *Store) Take(ctx context.Context, counters []domain.Window, at time.Time) (used []int, err error) {
	err = s.call(ctx, "Take", func() error { used, err = s.Store.Take(ctx, counters, at); return err })
	return used, err
}

// CreateTask implements store.Store.
func (s *Store) CreateTask(ctx context.Context, t task.Task, g domain.StartGuard) (ch domain.Charged, err error) {
	err = s.call(ctx, "CreateTask", func() error { ch, err = s.Store.CreateTask(ctx, t, g); return err })
	return ch, err
}

// Task implements store.Store.
func (s *Store) Task(ctx context.Context, id string) (t task.Task, err error) {
	err = s.call(ctx, "Task", func() error { t, err = s.Store.Task(ctx, id); return err })
	return t, err
}

// Tasks implements store.Store.
func (s *Store) Tasks(ctx context.Context, accountID string, q store.TaskQuery) (ts []task.Task, total int, err error) {
	err = s.call(ctx, "Tasks", func() error { ts, total, err = s.Store.Tasks(ctx, accountID, q); return err })
	return ts, total, err
}

// Unfinished implements store.Store.
func (s *Store) Unfinished(ctx context.Context) (ts []task.Task, err error) {
	err = s.call(ctx, "Unfinished", func() error { ts, err = s.Store.Unfinished(ctx); return err })
	return ts, err
}

// MarkProcessing implements store.Store.
func (s *Store) MarkProcessing(ctx context.Context, id string, at time.Time) (t task.Task, err error) {
	err = s.call(ctx, "MarkProcessing", func() error { t, err = s.Store.MarkProcessing(ctx, id, at); return err })
	return t, err
}

// SetOperation implements store.Store.
func (s *Store) SetOperation(ctx context.Context, id, from, to string) (t task.Task, err error) {
	err = s.call(ctx, "SetOperation", func() error { t, err = s.Store.SetOperation(ctx, id, from, to); return err })
	return t, err
}

// SetProgress implements store.Store.
func (s *Store) SetProgress(ctx context.Context, id string, percent int) error {
	return s.call(ctx, "SetProgress", func() error { return s.Store.SetProgress(ctx, id, percent) })
}

// Complete implements store.Store.
func (s *Store) Complete(ctx context.Context, id string, c domain.Completion, at time.Time) (t task.Task, err error) {
	err = s.call(ctx, "Complete", func() error { t, err = s.Store.Complete(ctx, id, c, at); return err })
	return t, err
}

// Fail implements store.Store.
func (s *Store) Fail(ctx context.Context, id string, f task.Failure, at time.Time) (t task.Task, err error) {
	err = s.call(ctx, "Fail", func() error { t, err = s.Store.Fail(ctx, id, f, at); return err })
	return t, err
}

// Count implements store.Store.
func (s *Store) Count(ctx context.Context, c domain.Window, at time.Time) (n int, err error) {
	err = s.call(ctx, "Count", func() error { n, err = s.Store.Count(ctx, c, at); return err })
	return n, err
}
