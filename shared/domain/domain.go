// Package domain is the service's vocabulary, which the rules
// (shared/lifecycle) decide on and the stores keep: accounts, the credit
// ledger, rate-limit windows, what guards a start and what a completion
// brings, webhook endpoints and their deliveries, and the refusals of
// each (insufficient credits, a limit reached, a key already used). It
// imports no persistence: shared/store's contract is written in these
// words, and the API maps these refusals to the contract's errors.
package domain

import (
	"errors"
	"fmt"
	"time"

	"github.com/genvideo/gen/shared/task"
)

// Sentinel errors. The stores return them (or the typed errors below)
// unwrapped or wrapped, so callers test with errors.Is / errors.As.
var (
	// ErrNotFound: no such account, key or task.
	ErrNotFound = errors.New("not found")
	// ErrExists: an account, key or task with that id already exists.
	ErrExists = errors.New("already exists")
	// ErrTerminal: the task is already in the other terminal state; a
	// terminal task never changes again.
	ErrTerminal = errors.New("task already finished")
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
	Window Window
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("limit %d reached for %s", e.Window.Limit, e.Window.Key)
}

// SpendingCapError: the start's cost would take its key past a spending
// cap; nothing was charged or counted. Window is the cap's window as
// given (Kind CapDay or CapMonth, Limit in credits, ExpiresAt when it
// resets); Spent is what it already counts.
type SpendingCapError struct {
	Window   Window
	Spent    int
	Required int64
}

// Left is what the cap still allows.
func (e *SpendingCapError) Left() int { return max(e.Window.Limit-e.Spent, 0) }

func (e *SpendingCapError) Error() string {
	return fmt.Sprintf("spending cap %s of %d credits: %d spent, %d required",
		e.Window.Kind, e.Window.Limit, e.Spent, e.Required)
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

// Window is one fixed rate-limit window: at most Limit units under Key
// until ExpiresAt, after which the window (and its count) is gone.
type Window struct {
	Key string
	// Kind says which budget the window counts. The store does not keep
	// it: it only hands it back, with the rest of the window, in a
	// *LimitError, so that the caller can say which limit was reached.
	Kind      WindowKind
	Limit     int
	ExpiresAt time.Time
}

// WindowKind names a budget; ratelimit defines the values.
type WindowKind string

// StartGuard holds the limits checked in the same transaction that charges
// for a task, so that a start rejected by any of them changes nothing.
type StartGuard struct {
	MaxInFlight int     // 0 means no limit
	Starts      *Window // nil means no limit
	// Idempotency, when set, makes the start happen at most once per
	// key of the task's account (see CreateTask).
	Idempotency *IdempotencyKey
	// Spend are the key's spending caps (SpendWindows): windows counted
	// in credits, each of which the start's cost must fit in. Empty
	// means no cap.
	Spend []Window
}

// Charged is what a start's transaction decided, for its answer: what
// the account holds after the charge, and what each spending cap's
// window holds, so that the answer reads nothing again.
type Charged struct {
	// Balance is the account's credits right after the charge.
	Balance int64
	// Spent is, for each of the guard's Spend windows in order, the
	// credits it holds after the charge. It is nil when none of them has
	// a limit (no header shows one), or when a store that had to read
	// them after the charge could not.
	Spent []int64
}

// Capped reports whether any of windows has a limit.
func Capped(windows []Window) bool {
	for _, w := range windows {
		if w.Limit != Uncapped {
			return true
		}
	}
	return false
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
// Billing is who made the videos and what they cost the operator.
type Completion struct {
	Videos  []task.Video
	Refund  int
	Billing task.Billing
}

// The spending caps' windows: a key's credits charged (less refunded)
// per UTC day and per UTC calendar month.
const (
	CapDay   WindowKind = "day"
	CapMonth WindowKind = "month"
)

// Uncapped is the Limit of a spend window without a cap: what a key
// spends is counted whether or not it has caps, so that a cap set during
// a day (or month) counts what the key already spent in it.
const Uncapped = 1 << 62

// SpendWindows are the windows of key keyID's spending caps at at: its
// spend per UTC day and per UTC calendar month, in that order, with the
// caps as limits (Uncapped for a cap of 0 or less). Their Key is the
// counter's (SpendKeys).
func SpendWindows(keyID string, perDay, perMonth int64, at time.Time) []Window {
	day, month := SpendKeys(keyID, at)
	_, de, _, me := spendBounds(at)
	limit := func(c int64) int {
		if c <= 0 {
			return Uncapped
		}
		return int(c)
	}
	return []Window{
		{Key: day, Kind: CapDay, Limit: limit(perDay), ExpiresAt: de},
		{Key: month, Kind: CapMonth, Limit: limit(perMonth), ExpiresAt: me},
	}
}

// SpendKeys are the counter keys of key keyID's daily and monthly spend
// at at: a refund of a task gives back to the windows of its CreatedAt.
// The format is that of counters already stored: it must not change.
func SpendKeys(keyID string, at time.Time) (day, month string) {
	ds, _, ms, _ := spendBounds(at)
	return "spend:day:" + keyID + ":" + ds.Format("2006-01-02"),
		"spend:month:" + keyID + ":" + ms.Format("2006-01")
}

// spendBounds are the UTC day and calendar month at is in.
func spendBounds(at time.Time) (dayStart, dayEnd, monthStart, monthEnd time.Time) {
	u := at.UTC()
	dayStart = time.Date(u.Year(), u.Month(), u.Day(), 0, 0, 0, 0, time.UTC)
	monthStart = time.Date(u.Year(), u.Month(), 1, 0, 0, 0, 0, time.UTC)
	return dayStart, dayStart.AddDate(0, 0, 1), monthStart, monthStart.AddDate(0, 1, 0)
}
