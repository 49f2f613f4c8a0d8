// Package store defines the contract every storage backend keeps: it
// persists the domain's records (shared/domain: accounts, the credit
// ledger, rate-limit windows, webhook deliveries), API keys and tasks. Each method that moves credits or
// changes a task's state is a single atomic transaction, so that no credit
// is ever lost or spent twice, whatever runs concurrently.
//
// Implementations live in their own packages (sqlitestore, dynamostore);
// storetest holds the conformance suite they all pass.
package store

import (
	"context"
	"errors"
	"github.com/genvideo/gen/shared/domain"
	"time"

	"github.com/genvideo/gen/shared/task"
)

// ErrUnavailable wraps failures of the backend itself (it is down,
// timing out, throttling), which the API answers with 503. The refusals
// a backend returns besides are the domain's (shared/domain).
var ErrUnavailable = errors.New("store unavailable")

// ErrOutcomeUnknown is wrapped, with ErrUnavailable, by the error of a
// write the backend may or may not have applied: its reply was lost (the
// deadline cut it, the connection dropped, a server error) and asking
// again did not tell. The caller cannot claim that nothing changed.
var ErrOutcomeUnknown = errors.New("outcome unknown")

// KeyLimits are the per-key budgets the rate limiter enforces.
type KeyLimits struct {
	RequestsPerMinute int
	RequestsPerDay    int
	StartsPerMinute   int
	MaxInFlight       int
}

// Key is an API key. Only the SHA-256 hash of the secret is stored.
type Key struct {
	ID        string // public identifier, e.g. for revocation
	Hash      string // hex SHA-256 of the full key
	AccountID string
	Name      string
	Tier      string
	Limits    KeyLimits
	// Caps are the key's spending caps.
	Caps      SpendCaps
	CreatedAt time.Time
	RevokedAt time.Time // zero while the key is active
}

// SpendCaps are a key's spending caps, in credits charged (less
// refunded) per UTC day and per UTC calendar month; 0 is no cap. The
// operator sets MaxPerDay and MaxPerMonth; the key's holder may lower
// them (HolderPerDay, HolderPerMonth) but never raise them: the cap in
// force is the lower of the two that are set (Day, Month).
type SpendCaps struct {
	MaxPerDay      int64
	MaxPerMonth    int64
	HolderPerDay   int64
	HolderPerMonth int64
}

// CapsUpdate names the spending caps a write changes, in credits: a nil
// field leaves that cap as it is, 0 removes it. The operator's
// (Max*) and the holder's (Holder*) are set by different people, each
// naming only their own.
type CapsUpdate struct {
	MaxPerDay      *int64
	MaxPerMonth    *int64
	HolderPerDay   *int64
	HolderPerMonth *int64
}

// Negative reports whether u sets a cap below 0.
func (u CapsUpdate) Negative() bool {
	for _, v := range []*int64{u.MaxPerDay, u.MaxPerMonth, u.HolderPerDay, u.HolderPerMonth} {
		if v != nil && *v < 0 {
			return true
		}
	}
	return false
}

// Day is the daily cap in force; 0 for none.
func (c SpendCaps) Day() int64 { return lowest(c.MaxPerDay, c.HolderPerDay) }

// Month is the monthly cap in force; 0 for none.
func (c SpendCaps) Month() int64 { return lowest(c.MaxPerMonth, c.HolderPerMonth) }

// lowest is the lower of the positive ones of a and b, 0 if neither is.
func lowest(a, b int64) int64 {
	switch {
	case a <= 0:
		return max(b, 0)
	case b <= 0:
		return a
	}
	return min(a, b)
}

// Revoked reports whether the key has been revoked.
func (k Key) Revoked() bool { return !k.RevokedAt.IsZero() }

// LedgerQuery selects a page of an account's ledger, newest first.
type LedgerQuery struct {
	// Before, when positive, starts the page at the entry before the one
	// whose Seq it is; 0 starts at the newest entry.
	Before int64
	// Limit bounds the page; 0 or less means no bound.
	Limit int
}

// TaskQuery selects a page of an account's tasks, newest first unless
// Order says otherwise.
type TaskQuery struct {
	Status task.Status // empty: every status
	// Order is the order of the page, and of After: the zero value is
	// NewestFirst.
	Order Order
	// After, when set, starts the page after that position in Order: a
	// page costs the same however deep into the history it is, where
	// Skip steps over (and reads) every task it skips. Skip counts from
	// After.
	After TaskCursor
	Skip  int
	Limit int
}

// Order is the order a TaskQuery lists an account's tasks in.
type Order int

const (
	// NewestFirst is the history's order (the contract's, and the
	// default): CreatedAt to the millisecond, then ID, both descending.
	NewestFirst Order = iota
	// OldestFirst is the reverse of NewestFirst: both ascending (the
	// OpenAI-compatible list's order=asc).
	OldestFirst
)

// TaskCursor is a position in an account's history: the task a page
// ended on (CursorOf). The stores order tasks by CreatedAt to the
// millisecond, then by ID; a query's Order says which way it goes from
// the cursor.
type TaskCursor struct {
	CreatedAt time.Time
	ID        string
}

// IsZero reports whether c is no position: the end a query starts from
// (the newest, or the oldest with OldestFirst).
func (c TaskCursor) IsZero() bool { return c.ID == "" }

// CursorOf is the position of t: a query After it lists the tasks older
// than t, or newer with OldestFirst.
func CursorOf(t task.Task) TaskCursor {
	return TaskCursor{CreatedAt: time.UnixMilli(t.CreatedAt.UnixMilli()).UTC(), ID: t.ID}
}

// Store is the contract of a storage backend.
type Store interface {
	// CreateAccount stores a new account. A positive a.Credits is its
	// opening balance, written to the ledger as a grant at a.CreatedAt, so
	// that the ledger always sums to the balance; InFlight starts at 0.
	CreateAccount(ctx context.Context, a domain.Account) error
	Account(ctx context.Context, id string) (domain.Account, error)
	// Grant adds amount credits (which must be positive) and returns the
	// new balance.
	Grant(ctx context.Context, accountID string, amount int64, note string, at time.Time) (int64, error)
	// Ledger returns the account's entries in the order they were written,
	// oldest first, so each entry's Balance is the previous one's plus its
	// Amount.
	Ledger(ctx context.Context, accountID string) ([]domain.LedgerEntry, error)

	CreateKey(ctx context.Context, k Key) error
	// KeyByHash returns the key, revoked or not: the caller checks
	// Revoked().
	KeyByHash(ctx context.Context, hash string) (Key, error)
	// Keys lists the keys of an account, or every key when accountID is "".
	Keys(ctx context.Context, accountID string) ([]Key, error)
	RevokeKey(ctx context.Context, id string, at time.Time) error
	// SetKeyCaps changes the spending caps of key id that u names, and
	// only those, in one write, and returns the key's caps after it
	// (domain.ErrNotFound when there is no such key). The others stay as
	// the store holds them, never as a caller read them: an operator and
	// the key's holder may change theirs at the same moment. A negative
	// cap is an error and changes nothing. Starts after it returns are
	// checked against the caps.
	SetKeyCaps(ctx context.Context, id string, u CapsUpdate) (SpendCaps, error)

	// Take consumes one unit of every counter, or none at all: if any is
	// exhausted it returns a *domain.LimitError naming it. used[i] is counter i's
	// count after this call. Windows expire at domain.Window.ExpiresAt.
	Take(ctx context.Context, counters []domain.Window, at time.Time) (used []int, err error)
	// Count reads a counter's window at at without taking from it: 0
	// for a window never taken from, or expired.
	Count(ctx context.Context, c domain.Window, at time.Time) (int, error)

	// OpenStream takes one of the slots w counts (w.Key names them, at
	// most w.Limit held at once) for lease, a name unique to the stream,
	// until w.ExpiresAt, and returns how many slots are held after it. A
	// lease that has expired at at holds no slot, so a stream that
	// crashed frees its slot when its lease lapses. With every slot held
	// it takes none and returns a *domain.LimitError whose Window is w
	// with ExpiresAt the earliest expiry among the leases holding them.
	OpenStream(ctx context.Context, w domain.Window, lease string, at time.Time) (int, error)
	// RenewStream moves the expiry of lease of slots key to expires. A
	// lease no longer held (released, or expired and its slot taken) is
	// domain.ErrNotFound and is not taken again: its stream ends.
	RenewStream(ctx context.Context, key, lease string, expires time.Time) error
	// CloseStream frees the slot of lease, at once; freeing one no
	// longer held is no error.
	CloseStream(ctx context.Context, key, lease string) error

	// CreateTask atomically checks the guard and the balance, charges
	// t.CreditsCost, counts the task in flight, writes the charge to the
	// ledger and stores t (status pending). It returns the balance after
	// the charge. On *domain.InsufficientCreditsError, *domain.InFlightLimitError or
	// *domain.LimitError nothing changed. The Starts counter is taken at
	// t.CreatedAt, and only when the task is created.
	//
	// With g.Idempotency, the key is checked right after the account is
	// found, before any limit or the balance: if the account holds a live
	// record for g.Idempotency.Key (one whose ExpiresAt is after
	// t.CreatedAt, naming a task other than g.Idempotency.Replaces),
	// CreateTask changes nothing and returns *domain.IdempotencyError with that
	// record's TaskID, RequestHash and Balance. Otherwise the record for
	// t, with the balance after its charge, is written with the task,
	// replacing an expired (or replaced) one. A start refused for any
	// reason writes no record. However many CreateTask calls race with
	// one key, at most one creates a task.
	//
	// It returns what the transaction decided (domain.Charged): the
	// balance after the charge and, when a Spend window has a limit,
	// each Spend window after it.
	CreateTask(ctx context.Context, t task.Task, g domain.StartGuard) (domain.Charged, error)
	// Task returns a task by id, whatever its account: callers serving an
	// account check t.AccountID themselves.
	Task(ctx context.Context, id string) (task.Task, error)
	// Tasks returns a page of the account's tasks in q.Order (newest
	// first by default), and how many tasks match the query in all. The
	// page may be shared with the Store's cache (SQLite answers a page
	// asked again as it holds it): callers read the tasks and never
	// change them or what they point to; appending to the page copies.
	Tasks(ctx context.Context, accountID string, q TaskQuery) ([]task.Task, int, error)
	// Unfinished returns every task pending or processing, for recovery.
	Unfinished(ctx context.Context) ([]task.Task, error)

	// MarkProcessing moves a pending task to processing. On a task that
	// is already processing or terminal it changes nothing and returns the
	// task as it is, so that the step may be retried.
	MarkProcessing(ctx context.Context, id string, at time.Time) (task.Task, error)
	// SetOperation replaces the Operation of a processing task with to
	// if it is from (lifecycle.SetOperation: a submit marker, then the
	// provider's handle), atomically, and returns the task as it is
	// after: a task that already had a handle keeps it, so the caller
	// compares and follows the one returned.
	SetOperation(ctx context.Context, id, from, to string) (task.Task, error)
	// SetProgress records the percentage done its provider reported of
	// a processing task; a task not processing is left as it is.
	SetProgress(ctx context.Context, id string, percent int) error
	// Complete moves a pending or processing task to completed, releases
	// its in-flight slot and refunds c.Refund, all at once. On a completed
	// task it changes nothing; on a failed one it returns domain.ErrTerminal.
	// c.Refund must be between 0 and what the task was charged; anything
	// else is an error and changes nothing.
	Complete(ctx context.Context, id string, c domain.Completion, at time.Time) (task.Task, error)
	// Fail moves a pending or processing task to failed, releases its
	// in-flight slot and refunds what it was charged (less anything already
	// refunded), all at once: a task is refunded exactly once. On a failed
	// task it changes nothing; on a completed one it returns domain.ErrTerminal.
	Fail(ctx context.Context, id string, f task.Failure, at time.Time) (task.Task, error)

	// LedgerPage returns a page of the account's ledger, newest first,
	// with Seq set; domain.ErrNotFound when there is no such account.
	LedgerPage(ctx context.Context, accountID string, q LedgerQuery) ([]domain.LedgerEntry, error)
	// Held is the credits the account's tasks pending or processing hold:
	// the sum of what they were charged, less anything already refunded.
	// It is 0 for an account without such tasks, or without tasks at all.
	Held(ctx context.Context, accountID string) (int64, error)
	// DeleteTask removes a terminal task (lifecycle.Delete) and returns
	// it as it was, so that the caller can remove its blobs. Its ledger
	// entries and its idempotency record stay: money history is never
	// deleted, and a replay of its start must not start (and charge) it
	// again. A task pending or processing is domain.ErrNotFinished and stays;
	// an unknown one is domain.ErrNotFound.
	DeleteTask(ctx context.Context, id string) (task.Task, error)

	Close() error
}
