// Package store defines the persistent state of the service (accounts,
// API keys, the credit ledger, rate-limit counters and tasks) and the
// contract every storage backend keeps. Each method that moves credits or
// changes a task's state is a single atomic transaction, so that no credit
// is ever lost or spent twice, whatever runs concurrently.
//
// Implementations live in their own packages (sqlitestore, dynamostore);
// storetest holds the conformance suite they all pass.
package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/genvideo/gen/shared/task"
)

// Sentinel errors. Implementations return them (or the typed errors below)
// unwrapped or wrapped, so callers test with errors.Is / errors.As.
var (
	// ErrNotFound: no such account, key or task.
	ErrNotFound = errors.New("not found")
	// ErrExists: an account, key or task with that id already exists.
	ErrExists = errors.New("already exists")
	// ErrTerminal: the task is already in the other terminal state; a
	// terminal task never changes again.
	ErrTerminal = errors.New("task already finished")
	// ErrUnavailable wraps failures of the backend itself (it is down,
	// timing out, throttling), which the API answers with 503.
	ErrUnavailable = errors.New("store unavailable")
	// ErrNotFinished: the task is still pending or processing, which
	// DeleteTask refuses (a task is deleted once it is terminal).
	ErrNotFinished = errors.New("task not finished")
)

// InsufficientCreditsError: the account cannot pay for the task.
type InsufficientCreditsError struct {
	Required  int64
	Available int64
}

func (e *InsufficientCreditsError) Error() string {
	return fmt.Sprintf("insufficient credits: required %d, available %d", e.Required, e.Available)
}

// InFlightLimitError: the account already has Limit generations pending or
// processing.
type InFlightLimitError struct{ Limit int }

func (e *InFlightLimitError) Error() string {
	return fmt.Sprintf("%d generations already in flight", e.Limit)
}

// LimitError: a counter is exhausted; nothing was taken.
type LimitError struct {
	Counter Counter
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("limit %d reached for %s", e.Counter.Limit, e.Counter.Key)
}

// IdempotencyError: the account already started a task under the
// idempotency key of a CreateTask, and that record has not expired.
// Nothing changed. The caller compares RequestHash with its own: the same
// request is answered as TaskID's start was, another one is a conflict.
type IdempotencyError struct {
	TaskID      string
	RequestHash string
	// Balance is the account's balance right after TaskID's start
	// charged it, which that start answered: kept on the record so that
	// a replay answers the same without reading the ledger.
	Balance int64
}

func (e *IdempotencyError) Error() string {
	return fmt.Sprintf("idempotency key already used by task %s", e.TaskID)
}

// Account owns credits, tasks and keys.
type Account struct {
	ID        string
	Credits   int64
	InFlight  int // tasks pending or processing
	CreatedAt time.Time
}

// Limits are the per-key budgets the rate limiter enforces.
type Limits struct {
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
	Limits    Limits
	CreatedAt time.Time
	RevokedAt time.Time // zero while the key is active
}

// Revoked reports whether the key has been revoked.
func (k Key) Revoked() bool { return !k.RevokedAt.IsZero() }

// Ledger entry kinds.
const (
	EntryGrant  = "grant"
	EntryCharge = "charge"
	EntryRefund = "refund"
)

// LedgerEntry is one movement of credits. Amount is signed: grants and
// refunds are positive, charges negative. The sum of an account's entries
// equals its balance.
type LedgerEntry struct {
	AccountID string
	TaskID    string // empty for grants
	Kind      string
	Amount    int64
	Balance   int64 // the balance after this entry
	At        time.Time
	Note      string
	// Seq is the entry's position: a later entry of the account has a
	// larger one. Ledger and LedgerPage set it; LedgerQuery.Before takes
	// it. Its values are the store's own (not necessarily 1, 2, 3...).
	Seq int64
}

// LedgerQuery selects a page of an account's ledger, newest first.
type LedgerQuery struct {
	// Before, when positive, starts the page at the entry before the one
	// whose Seq it is; 0 starts at the newest entry.
	Before int64
	// Limit bounds the page; 0 or less means no bound.
	Limit int
}

// Counter is one fixed rate-limit window: at most Limit units under Key
// until ExpiresAt, after which the window (and its count) is gone.
type Counter struct {
	Key string
	// Kind says which budget the counter counts. The store does not keep
	// it: it only hands it back, with the rest of the counter, in a
	// *LimitError, so that the caller can say which limit was reached.
	Kind      CounterKind
	Limit     int
	ExpiresAt time.Time
}

// CounterKind names a budget; ratelimit defines the values.
type CounterKind string

// StartGuard holds the limits checked in the same transaction that charges
// for a task, so that a start rejected by any of them changes nothing.
type StartGuard struct {
	MaxInFlight int      // 0 means no limit
	Starts      *Counter // nil means no limit
	// Idempotency, when set, makes the start happen at most once per
	// key of the task's account (see CreateTask).
	Idempotency *IdempotencyKey
}

// IdempotencyKey is the record of a start made under a client's
// Idempotency-Key. The record is (AccountID of the task, Key) -> (the
// task's ID, RequestHash, ExpiresAt); it is written in the transaction
// that creates the task, so there is never a task without its record or
// a record without its task.
type IdempotencyKey struct {
	// Key is the client's key; it is scoped to the task's account.
	Key string
	// RequestHash identifies the request the key was first used with.
	// It is opaque to the store, which only hands it back.
	RequestHash string
	// ExpiresAt ends the record: it is live while the CreatedAt of a new
	// task is before ExpiresAt, and counts as absent from then on.
	ExpiresAt time.Time
	// Replaces, when set, is the id of a task whose live record this
	// start may take over as if it were absent: the caller uses it for
	// a start whose workflow never ran (that task failed and was
	// refunded at once), so that a retry under the same key starts
	// afresh. A live record naming another task still wins.
	Replaces string
}

// Completion is what a successful generation produced. Refund is the
// credits returned for samples that were not produced (partial results).
type Completion struct {
	Videos []task.Video
	Refund int
}

// TaskQuery selects a page of an account's tasks, newest first.
type TaskQuery struct {
	Status task.Status // empty: every status
	// After, when set, starts the page after that position: a page
	// costs the same however deep into the history it is, where Skip
	// steps over (and reads) every task it skips. Skip counts from
	// After.
	After TaskCursor
	Skip  int
	Limit int
}

// TaskCursor is a position in an account's history, newest first: the
// task a page ended on (CursorOf). The stores order tasks by CreatedAt to
// the millisecond, then by ID, both descending.
type TaskCursor struct {
	CreatedAt time.Time
	ID        string
}

// IsZero reports whether c is no position: the newest end.
func (c TaskCursor) IsZero() bool { return c.ID == "" }

// CursorOf is the position of t: a query After it lists the tasks older
// than t.
func CursorOf(t task.Task) TaskCursor {
	return TaskCursor{CreatedAt: time.UnixMilli(t.CreatedAt.UnixMilli()).UTC(), ID: t.ID}
}

// Store is the contract of a storage backend.
type Store interface {
	// CreateAccount stores a new account. A positive a.Credits is its
	// opening balance, written to the ledger as a grant at a.CreatedAt, so
	// that the ledger always sums to the balance; InFlight starts at 0.
	CreateAccount(ctx context.Context, a Account) error
	Account(ctx context.Context, id string) (Account, error)
	// Grant adds amount credits (which must be positive) and returns the
	// new balance.
	Grant(ctx context.Context, accountID string, amount int64, note string, at time.Time) (int64, error)
	// Ledger returns the account's entries in the order they were written,
	// oldest first, so each entry's Balance is the previous one's plus its
	// Amount.
	Ledger(ctx context.Context, accountID string) ([]LedgerEntry, error)

	CreateKey(ctx context.Context, k Key) error
	// KeyByHash returns the key, revoked or not: the caller checks
	// Revoked().
	KeyByHash(ctx context.Context, hash string) (Key, error)
	// Keys lists the keys of an account, or every key when accountID is "".
	Keys(ctx context.Context, accountID string) ([]Key, error)
	RevokeKey(ctx context.Context, id string, at time.Time) error

	// Take consumes one unit of every counter, or none at all: if any is
	// exhausted it returns a *LimitError naming it. used[i] is counter i's
	// count after this call. Windows expire at Counter.ExpiresAt.
	Take(ctx context.Context, counters []Counter, at time.Time) (used []int, err error)
	// Count reads a counter's window at at without taking from it: 0
	// for a window never taken from, or expired.
	Count(ctx context.Context, c Counter, at time.Time) (int, error)

	// CreateTask atomically checks the guard and the balance, charges
	// t.CreditsCost, counts the task in flight, writes the charge to the
	// ledger and stores t (status pending). It returns the balance after
	// the charge. On *InsufficientCreditsError, *InFlightLimitError or
	// *LimitError nothing changed. The Starts counter is taken at
	// t.CreatedAt, and only when the task is created.
	//
	// With g.Idempotency, the key is checked right after the account is
	// found, before any limit or the balance: if the account holds a live
	// record for g.Idempotency.Key (one whose ExpiresAt is after
	// t.CreatedAt, naming a task other than g.Idempotency.Replaces),
	// CreateTask changes nothing and returns *IdempotencyError with that
	// record's TaskID, RequestHash and Balance. Otherwise the record for
	// t, with the balance after its charge, is written with the task,
	// replacing an expired (or replaced) one. A start refused for any
	// reason writes no record. However many CreateTask calls race with
	// one key, at most one creates a task.
	CreateTask(ctx context.Context, t task.Task, g StartGuard) (int64, error)
	// Task returns a task by id, whatever its account: callers serving an
	// account check t.AccountID themselves.
	Task(ctx context.Context, id string) (task.Task, error)
	// Tasks returns a page of the account's tasks, newest first, and how
	// many tasks match the query in all.
	Tasks(ctx context.Context, accountID string, q TaskQuery) ([]task.Task, int, error)
	// Unfinished returns every task pending or processing, for recovery.
	Unfinished(ctx context.Context) ([]task.Task, error)

	// StartProcessing moves a pending task to processing. On a task that
	// is already processing or terminal it changes nothing and returns the
	// task as it is, so that the step may be retried.
	StartProcessing(ctx context.Context, id string, at time.Time) (task.Task, error)
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
	// task it changes nothing; on a failed one it returns ErrTerminal.
	// c.Refund must be between 0 and what the task was charged; anything
	// else is an error and changes nothing.
	Complete(ctx context.Context, id string, c Completion, at time.Time) (task.Task, error)
	// Fail moves a pending or processing task to failed, releases its
	// in-flight slot and refunds what it was charged (less anything already
	// refunded), all at once: a task is refunded exactly once. On a failed
	// task it changes nothing; on a completed one it returns ErrTerminal.
	Fail(ctx context.Context, id string, f task.Failure, at time.Time) (task.Task, error)

	// LedgerPage returns a page of the account's ledger, newest first,
	// with Seq set; store.ErrNotFound when there is no such account.
	LedgerPage(ctx context.Context, accountID string, q LedgerQuery) ([]LedgerEntry, error)
	// Held is the credits the account's tasks pending or processing hold:
	// the sum of what they were charged, less anything already refunded.
	// It is 0 for an account without such tasks, or without tasks at all.
	Held(ctx context.Context, accountID string) (int64, error)
	// DeleteTask removes a terminal task (lifecycle.Delete) and returns
	// it as it was, so that the caller can remove its blobs. Its ledger
	// entries and its idempotency record stay: money history is never
	// deleted, and a replay of its start must not start (and charge) it
	// again. A task pending or processing is ErrNotFinished and stays;
	// an unknown one is ErrNotFound.
	DeleteTask(ctx context.Context, id string) (task.Task, error)

	Close() error
}
