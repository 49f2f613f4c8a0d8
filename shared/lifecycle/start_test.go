package lifecycle

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/genvideo/gen/shared/domain"
	"github.com/genvideo/gen/shared/params"
	"github.com/genvideo/gen/shared/task"
)

var t0 = time.Date(2025, 11, 13, 10, 0, 0, 0, time.UTC)

func TestPrepare(t *testing.T) {
	dirty := task.Task{
		ID: "gen_1_a", AccountID: "acct-a", Model: "m", CreditsCost: 10, CreatedAt: t0,
		Status: task.Completed, CreditsRefunded: 4, StartedAt: t0, CompletedAt: t0,
		Videos: []task.Video{{Key: "v"}}, Failure: &task.Failure{Code: task.FailInternal},
	}
	clean := task.Task{ID: "gen_1_a", AccountID: "acct-a", Model: "m", CreditsCost: 10, CreatedAt: t0,
		Status: task.Pending}
	negative := clean
	negative.CreditsCost = -1
	free := clean
	free.CreditsCost = 0
	tests := []struct {
		name    string
		t       task.Task
		idem    *domain.IdempotencyKey
		want    task.Task
		wantErr bool
	}{
		{"resets what a new task starts without", dirty, nil, clean, false},
		{"a free task", free, nil, free, false},
		{"with an idempotency key", dirty, &domain.IdempotencyKey{Key: "k", RequestHash: "h"}, clean, false},
		{"negative cost", negative, nil, task.Task{}, true},
		{"idempotency key without a key", clean, &domain.IdempotencyKey{RequestHash: "h"}, task.Task{}, true},
		{"idempotency key without a hash", clean, &domain.IdempotencyKey{Key: "k"}, task.Task{}, true},
	}
	for _, tt := range tests {
		got, err := Prepare(tt.t, domain.StartGuard{Idempotency: tt.idem})
		if (err != nil) != tt.wantErr {
			t.Errorf("%s: Prepare error %v, want error %v", tt.name, err, tt.wantErr)
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: Prepare = %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

func TestClaim(t *testing.T) {
	created := t0.Add(time.Hour)
	rec := &Record{TaskID: "gen_old", RequestHash: "h1", ExpiresAt: created.Add(time.Millisecond), Balance: 70}
	tests := []struct {
		name string
		k    domain.IdempotencyKey
		rec  *Record
		want *domain.IdempotencyError // nil: the start may claim the key
	}{
		{"no record", domain.IdempotencyKey{Key: "k"}, nil, nil},
		{"a live record", domain.IdempotencyKey{Key: "k"}, rec,
			&domain.IdempotencyError{TaskID: "gen_old", RequestHash: "h1", Balance: 70}},
		{"a record ending at the start", domain.IdempotencyKey{Key: "k"},
			&Record{TaskID: "gen_old", ExpiresAt: created}, nil},
		{"a record that ended", domain.IdempotencyKey{Key: "k"},
			&Record{TaskID: "gen_old", ExpiresAt: created.Add(-time.Hour)}, nil},
		{"the live record of the task replaced", domain.IdempotencyKey{Key: "k", Replaces: "gen_old"}, rec, nil},
		{"the live record of another task than the one replaced", domain.IdempotencyKey{Key: "k", Replaces: "gen_other"}, rec,
			&domain.IdempotencyError{TaskID: "gen_old", RequestHash: "h1", Balance: 70}},
	}
	for _, tt := range tests {
		err := Claim(tt.k, tt.rec, created)
		if tt.want == nil {
			if err != nil {
				t.Errorf("%s: Claim = %v, want nil", tt.name, err)
			}
			continue
		}
		var ie *domain.IdempotencyError
		if !errors.As(err, &ie) || *ie != *tt.want {
			t.Errorf("%s: Claim = %#v, want %#v", tt.name, err, tt.want)
		}
	}
}

// startTask is a prepared task of acct-a costing cost, created at t0.
func startTask(cost int) task.Task {
	return task.Task{ID: "gen_1_new", AccountID: "acct-a", Model: "gen-3.1-fast-generate-001",
		Params: params.Parameters{SampleCount: 1}, CreditsCost: cost, Status: task.Pending, CreatedAt: t0}
}

func TestCreate(t *testing.T) {
	starts := domain.Window{Key: "rl:s:key-1:0", Kind: "s", Limit: 2, ExpiresAt: t0.Add(time.Minute)}
	noStarts := starts
	noStarts.Limit = 0
	idem := &domain.IdempotencyKey{Key: "k", RequestHash: "h2", ExpiresAt: t0.Add(24 * time.Hour)}
	live := &Record{TaskID: "gen_0_old", RequestHash: "h1", ExpiresAt: t0.Add(time.Hour), Balance: 5}
	ended := &Record{TaskID: "gen_0_old", RequestHash: "h1", ExpiresAt: t0, Balance: 5}
	acct := func(credits int64, inFlight int) *domain.Account {
		return &domain.Account{ID: "acct-a", Credits: credits, InFlight: inFlight}
	}
	full := Tally{Count: 2, Ends: t0.Add(time.Minute)}
	half := Tally{Count: 1, Ends: t0.Add(time.Minute)}
	over := Tally{Count: 2, Ends: t0} // ended at the start: a fresh window

	tests := []struct {
		name string
		cost int
		g    domain.StartGuard
		f    Found
		// One of: the error (checked with check), or what is written.
		check       func(error) bool
		wantBalance int64
		wantInFl    int
		wantStarts  *Taken
		wantRecord  *Record
	}{
		{name: "no account", cost: 1, f: Found{},
			check: func(err error) bool { return errors.Is(err, domain.ErrNotFound) }},
		{name: "a plain start", cost: 30, f: Found{Account: acct(100, 0)}, wantBalance: 70, wantInFl: 1},
		{name: "a free start", cost: 0, f: Found{Account: acct(0, 3)}, wantBalance: 0, wantInFl: 4},
		{name: "exactly the balance", cost: 100, f: Found{Account: acct(100, 0)}, wantBalance: 0, wantInFl: 1},
		{name: "one credit short", cost: 101, f: Found{Account: acct(100, 0)},
			check: func(err error) bool {
				var e *domain.InsufficientCreditsError
				return errors.As(err, &e) && *e == domain.InsufficientCreditsError{Required: 101, Available: 100}
			}},
		{name: "in flight below the limit", cost: 1, g: domain.StartGuard{MaxInFlight: 2},
			f: Found{Account: acct(10, 1)}, wantBalance: 9, wantInFl: 2},
		{name: "in flight at the limit", cost: 1, g: domain.StartGuard{MaxInFlight: 2},
			f: Found{Account: acct(10, 2)},
			check: func(err error) bool {
				var e *domain.InFlightLimitError
				return errors.As(err, &e) && e.Limit == 2
			}},
		{name: "in-flight limit 0 is no limit", cost: 1, g: domain.StartGuard{MaxInFlight: 0},
			f: Found{Account: acct(10, 1000)}, wantBalance: 9, wantInFl: 1001},
		{name: "the in-flight limit before the balance", cost: 11, g: domain.StartGuard{MaxInFlight: 1},
			f:     Found{Account: acct(10, 1)},
			check: func(err error) bool { var e *domain.InFlightLimitError; return errors.As(err, &e) }},
		{name: "starts: no window yet", cost: 1, g: domain.StartGuard{Starts: &starts},
			f: Found{Account: acct(10, 0)}, wantBalance: 9, wantInFl: 1,
			wantStarts: &Taken{Tally: Tally{Count: 1, Ends: starts.ExpiresAt}, Fresh: true}},
		{name: "starts: an open window", cost: 1, g: domain.StartGuard{Starts: &starts},
			f: Found{Account: acct(10, 0), Starts: half}, wantBalance: 9, wantInFl: 1,
			wantStarts: &Taken{Tally: Tally{Count: 2, Ends: half.Ends}}},
		{name: "starts: an ended window", cost: 1, g: domain.StartGuard{Starts: &starts},
			f: Found{Account: acct(10, 0), Starts: over}, wantBalance: 9, wantInFl: 1,
			wantStarts: &Taken{Tally: Tally{Count: 1, Ends: starts.ExpiresAt}, Fresh: true}},
		{name: "starts: a full window", cost: 1, g: domain.StartGuard{Starts: &starts},
			f: Found{Account: acct(10, 0), Starts: full},
			check: func(err error) bool {
				var e *domain.LimitError
				return errors.As(err, &e) && e.Window == starts
			}},
		{name: "starts: limit 0", cost: 1, g: domain.StartGuard{Starts: &noStarts},
			f:     Found{Account: acct(10, 0)},
			check: func(err error) bool { var e *domain.LimitError; return errors.As(err, &e) }},
		{name: "the starts counter before the in-flight limit", cost: 1,
			g: domain.StartGuard{Starts: &starts, MaxInFlight: 1}, f: Found{Account: acct(10, 1), Starts: full},
			check: func(err error) bool { var e *domain.LimitError; return errors.As(err, &e) }},
		{name: "a taken id", cost: 1, f: Found{Account: acct(10, 0), TaskExists: true},
			check: func(err error) bool { return errors.Is(err, domain.ErrExists) }},
		{name: "the id before the starts counter", cost: 1, g: domain.StartGuard{Starts: &starts},
			f:     Found{Account: acct(10, 0), TaskExists: true, Starts: full},
			check: func(err error) bool { return errors.Is(err, domain.ErrExists) }},
		{name: "a new key", cost: 30, g: domain.StartGuard{Idempotency: idem},
			f: Found{Account: acct(100, 0)}, wantBalance: 70, wantInFl: 1,
			wantRecord: &Record{TaskID: "gen_1_new", RequestHash: "h2", ExpiresAt: idem.ExpiresAt, Balance: 70}},
		{name: "an ended record is taken over", cost: 30, g: domain.StartGuard{Idempotency: idem},
			f: Found{Account: acct(100, 0), Record: ended}, wantBalance: 70, wantInFl: 1,
			wantRecord: &Record{TaskID: "gen_1_new", RequestHash: "h2", ExpiresAt: idem.ExpiresAt, Balance: 70}},
		{name: "a live record, before every other check", cost: 1000,
			g: domain.StartGuard{Idempotency: idem, Starts: &starts, MaxInFlight: 1},
			f: Found{Account: acct(0, 1), Record: live, TaskExists: true, Starts: full},
			check: func(err error) bool {
				var e *domain.IdempotencyError
				return errors.As(err, &e) && *e == domain.IdempotencyError{TaskID: "gen_0_old", RequestHash: "h1", Balance: 5}
			}},
		{name: "the account before the record", cost: 1, g: domain.StartGuard{Idempotency: idem},
			f:     Found{Record: live},
			check: func(err error) bool { return errors.Is(err, domain.ErrNotFound) }},
	}
	for _, tt := range tests {
		tk := startTask(tt.cost)
		got, err := Create(tk, tt.g, tt.f)
		if tt.check != nil {
			if !tt.check(err) {
				t.Errorf("%s: Create error %v, want another", tt.name, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: Create: %v", tt.name, err)
			continue
		}
		if !reflect.DeepEqual(got.Task, tk) {
			t.Errorf("%s: Task = %+v, want %+v", tt.name, got.Task, tk)
		}
		if got.Account.Credits != tt.wantBalance || got.Account.InFlight != tt.wantInFl || got.Account.ID != "acct-a" {
			t.Errorf("%s: Account = %+v, want %d credits, %d in flight", tt.name, got.Account, tt.wantBalance, tt.wantInFl)
		}
		wantCharge := domain.LedgerEntry{AccountID: "acct-a", TaskID: tk.ID, Kind: domain.EntryCharge,
			Amount: -int64(tt.cost), Balance: tt.wantBalance, At: t0, Note: tk.Model}
		if got.Charge != wantCharge {
			t.Errorf("%s: Charge = %+v, want %+v", tt.name, got.Charge, wantCharge)
		}
		if !reflect.DeepEqual(got.Starts, tt.wantStarts) {
			t.Errorf("%s: Starts = %+v, want %+v", tt.name, got.Starts, tt.wantStarts)
		}
		if !reflect.DeepEqual(got.Record, tt.wantRecord) {
			t.Errorf("%s: Record = %+v, want %+v", tt.name, got.Record, tt.wantRecord)
		}
	}
}
