// Package lifecycle holds the rules of money and state of a generation
// task: what a start is refused for and what it charges, how a task moves
// from pending to processing to completed or failed and what each move
// refunds, when a task is past its deadline, and when a rate-limit window
// refuses a take.
//
// Its functions are pure: they take what a store read and return what
// the store must write (the task as it becomes, the ledger entries, the
// counts), or the error the store must return, and touch nothing. Each
// store reads, calls them and writes what they return in one atomic
// transaction; so the rules are written once, here, and the stores keep
// only what is theirs, how to read and write atomically.
package lifecycle

import (
	"errors"
	"fmt"
	"time"

	"github.com/genvideo/gen/shared/domain"
	"github.com/genvideo/gen/shared/task"
)

// Prepare is what a store's CreateTask does before it reads anything: it
// refuses arguments no caller may send and resets what a new task starts
// without, whatever the caller filled in.
func Prepare(t task.Task, g domain.StartGuard) (task.Task, error) {
	if t.CreditsCost < 0 {
		return task.Task{}, fmt.Errorf("negative cost %d", t.CreditsCost)
	}
	if idem := g.Idempotency; idem != nil && (idem.Key == "" || idem.RequestHash == "") {
		return task.Task{}, errors.New("idempotency record needs a key and a request hash")
	}
	t.Status = task.Pending
	t.CreditsRefunded = 0
	t.StartedAt, t.CompletedAt = time.Time{}, time.Time{}
	t.Videos, t.Failure = nil, nil
	return t, nil
}

// Record is an idempotency record as a store keeps it: the start made
// under a key of an account (see domain.IdempotencyKey).
type Record struct {
	TaskID      string
	RequestHash string
	// ExpiresAt ends the record: it is live before, absent from then on.
	ExpiresAt time.Time
	// Balance is the account's balance right after the start's charge.
	Balance int64
}

// Claim decides whether a start at created under k may write its record
// over rec, the record the account holds for k.Key (nil: none). A live
// record naming a task other than k.Replaces wins: Claim returns the
// *domain.IdempotencyError that answers the start with that record.
// Otherwise (no record, an expired one, or the one of the task k
// replaces) the start may go on and take the key over.
func Claim(k domain.IdempotencyKey, rec *Record, created time.Time) error {
	if rec == nil || !rec.ExpiresAt.After(created) {
		return nil
	}
	if k.Replaces != "" && rec.TaskID == k.Replaces {
		return nil
	}
	return &domain.IdempotencyError{TaskID: rec.TaskID, RequestHash: rec.RequestHash, Balance: rec.Balance}
}

// Found is what a store read, in the transaction of a start, for Create.
type Found struct {
	// Account is the task's account; nil when there is none.
	Account *domain.Account
	// Record is the account's record for the guard's idempotency key, if
	// the guard has one; nil when there is none.
	Record *Record
	// TaskExists: a task with the start's id exists already.
	TaskExists bool
	// Starts is the window of the guard's Starts counter, if it has one;
	// the zero Window when none is stored.
	Starts Tally
	// Spend are the windows of the guard's Spend caps, in its order;
	// the zero Window for one not stored.
	Spend []Tally
}

// Start is what a start that is let through writes.
type Start struct {
	// Task is the task to store: t as Prepare returned it.
	Task task.Task
	// Account is the account after the charge: Credits less the cost,
	// one more task in flight.
	Account domain.Account
	// Charge is the ledger entry of the charge, with the balance after it.
	Charge domain.LedgerEntry
	// Starts is the take of the guard's Starts counter; nil without one.
	Starts *Taken
	// Spend are the adds of the start's cost to the guard's Spend
	// windows, in its order.
	Spend []Taken
	// Record is the idempotency record to write, over the one read; nil
	// when the guard has no idempotency key.
	Record *Record
}

// Create decides the start of t (as Prepare returned it) under g, on what
// the store found. The checks run in the order of store.Store.CreateTask:
// the account exists, the idempotency key (Claim), the task id is free,
// the Starts counter (taken at t.CreatedAt), the in-flight limit, the
// spending caps (the cost added to each Spend window), the balance.
// The error is the first check's that fails, as the store returns it: refusals as the typed errors of package store, a missing
// account as domain.ErrNotFound and a taken id as domain.ErrExists.
func Create(t task.Task, g domain.StartGuard, f Found) (Start, error) {
	op := fmt.Sprintf("create task %s for %s", t.ID, t.AccountID)
	if f.Account == nil {
		return Start{}, fmt.Errorf("%s: account: %w", op, domain.ErrNotFound)
	}
	if g.Idempotency != nil {
		if err := Claim(*g.Idempotency, f.Record, t.CreatedAt); err != nil {
			return Start{}, err
		}
	}
	if f.TaskExists {
		return Start{}, fmt.Errorf("%s: %w", op, domain.ErrExists)
	}
	var starts *Taken
	if g.Starts != nil {
		tk, err := Take(*g.Starts, f.Starts, t.CreatedAt)
		if err != nil {
			return Start{}, err
		}
		starts = &tk
	}
	a := *f.Account
	if g.MaxInFlight > 0 && a.InFlight >= g.MaxInFlight {
		return Start{}, &domain.InFlightLimitError{Limit: g.MaxInFlight}
	}
	cost := int64(t.CreditsCost)
	var spend []Taken
	for i, c := range g.Spend {
		var w Tally
		if i < len(f.Spend) {
			w = f.Spend[i]
		}
		tk := Add(c, w, t.CreditsCost, t.CreatedAt)
		if tk.Tally.Count > c.Limit {
			spent := 0
			if w.Open(t.CreatedAt) {
				spent = w.Count
			}
			return Start{}, &domain.SpendingCapError{Window: c, Spent: spent, Required: cost}
		}
		spend = append(spend, tk)
	}
	if a.Credits < cost {
		return Start{}, &domain.InsufficientCreditsError{Required: cost, Available: a.Credits}
	}

	a.Credits -= cost
	a.InFlight++
	s := Start{
		Task:    t,
		Account: a,
		Charge: domain.LedgerEntry{AccountID: t.AccountID, TaskID: t.ID, Kind: domain.EntryCharge,
			Amount: -cost, Balance: a.Credits, At: t.CreatedAt, Note: t.Model},
		Starts: starts,
		Spend:  spend,
	}
	if k := g.Idempotency; k != nil {
		s.Record = &Record{TaskID: t.ID, RequestHash: k.RequestHash, ExpiresAt: k.ExpiresAt, Balance: a.Credits}
	}
	return s, nil
}
