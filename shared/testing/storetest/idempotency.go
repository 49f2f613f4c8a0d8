package storetest

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/genvideo/gen/shared/domain"
	"github.com/genvideo/gen/shared/store"
	"github.com/genvideo/gen/shared/task"
)

// idemDay is how long the HTTP API keeps an idempotency record; the suite
// uses the same figure so that its expiry cases read like the contract.
const idemDay = 24 * time.Hour

// idem is the record of a start at created under key with request hash.
func idem(key, hash string, created time.Time) *domain.IdempotencyKey {
	return &domain.IdempotencyKey{Key: key, RequestHash: hash, ExpiresAt: created.Add(idemDay)}
}

// wantIdempotencyError fails the test unless err is an *IdempotencyError
// naming taskID and hash, and returns it.
func wantIdempotencyError(t *testing.T, what string, err error, taskID, hash string) *domain.IdempotencyError {
	t.Helper()
	var ie *domain.IdempotencyError
	if !errors.As(err, &ie) {
		t.Fatalf("%s: got error %v, want *domain.IdempotencyError", what, err)
	}
	if ie.TaskID != taskID || ie.RequestHash != hash {
		t.Errorf("%s: IdempotencyError{TaskID: %q, RequestHash: %q}, want {%q, %q}",
			what, ie.TaskID, ie.RequestHash, taskID, hash)
	}
	return ie
}

// wantReplayBalance fails the test unless err is the *IdempotencyError
// of a record of hash "h" naming taskID, with the given balance.
func wantReplayBalance(t *testing.T, what string, err error, taskID string, balance int64) {
	t.Helper()
	if ie := wantIdempotencyError(t, what, err, taskID, "h"); ie.Balance != balance {
		t.Errorf("%s: IdempotencyError.Balance = %d, want %d", what, ie.Balance, balance)
	}
}

// A used key answers every later start under it with the first task, and
// changes nothing, whatever the limits and the balance say by then.
func testIdempotencyReplay(t *testing.T, s store.Store) {
	mustAccount(t, s, "acct-a", 30)
	c0 := at(0)
	first := newTask("acct-a", taskID(c0, "idem000001"), 30, c0)
	starts := domain.Window{Key: "rl:s:key-1:0", Limit: 1, ExpiresAt: at(time.Minute)}
	g := domain.StartGuard{MaxInFlight: 1, Starts: &starts, Idempotency: idem("k-1", "hash-a", c0)}
	charged, err := s.CreateTask(t.Context(), first, g)
	bal := charged.Balance
	if err != nil || bal != 0 {
		t.Fatalf("CreateTask(first use of the key) = %d, %v; want 0, nil", bal, err)
	}
	before := takeSnapshot(t, s, "acct-a")

	// The account is now out of credits, at its in-flight limit and out of
	// starts: the record is checked before all of them.
	tests := []struct {
		name string
		hash string
	}{
		{"same request", "hash-a"},
		{"another request", "hash-b"},
	}
	for i, tt := range tests {
		c := at(time.Duration(i+1) * time.Second)
		dup := newTask("acct-a", taskID(c, fmt.Sprintf("idem00010%d", i)), 30, c)
		g := domain.StartGuard{MaxInFlight: 1, Starts: &starts, Idempotency: idem("k-1", tt.hash, c)}
		_, err := s.CreateTask(t.Context(), dup, g)
		wantIdempotencyError(t, "CreateTask under a used key, "+tt.name, err, first.ID, "hash-a")
		unchanged(t, s, "acct-a", before, "CreateTask under a used key, "+tt.name)
		_, err = s.Task(t.Context(), dup.ID)
		wantErrIs(t, "Task of the refused duplicate", err, domain.ErrNotFound)
	}

	// The record outlives its task's end.
	mustFail(t, s, first.ID, task.Failure{Code: task.FailGeneration, Message: "x"}, at(time.Minute))
	c := at(2 * time.Minute)
	_, err = s.CreateTask(t.Context(), newTask("acct-a", taskID(c, "idem000200"), 30, c),
		domain.StartGuard{Idempotency: idem("k-1", "hash-a", c)})
	wantIdempotencyError(t, "CreateTask under the key of a failed task", err, first.ID, "hash-a")
	CheckInvariants(t, s, "acct-a")
}

// Keys are scoped to the account, and a start without a key is not
// affected by the records of others.
func testIdempotencyScope(t *testing.T, s store.Store) {
	mustAccount(t, s, "acct-a", 1000)
	mustAccount(t, s, "acct-b", 1000)
	c0 := at(0)
	a1 := newTask("acct-a", taskID(c0, "idem000001"), 10, c0)
	mustStart(t, s, a1, domain.StartGuard{Idempotency: idem("shared", "h", c0)})
	tests := []struct {
		name    string
		account string
		key     string // "" : no idempotency
	}{
		{"same key, other account", "acct-b", "shared"},
		{"other key, same account", "acct-a", "other"},
		{"no key", "acct-a", ""},
		{"the key in other case", "acct-a", "SHARED"},
	}
	for i, tt := range tests {
		c := at(time.Duration(i+1) * time.Second)
		tk := newTask(tt.account, taskID(c, fmt.Sprintf("idem00100%d", i)), 10, c)
		g := domain.StartGuard{}
		if tt.key != "" {
			g.Idempotency = idem(tt.key, "h", c)
		}
		if _, err := s.CreateTask(t.Context(), tk, g); err != nil {
			t.Errorf("CreateTask(%s): %v, want a new task", tt.name, err)
		}
	}
	// acct-b's record is its own: a second use there replays acct-b's task.
	c := at(time.Minute)
	_, err := s.CreateTask(t.Context(), newTask("acct-b", taskID(c, "idem002000"), 10, c),
		domain.StartGuard{Idempotency: idem("shared", "h", c)})
	wantIdempotencyError(t, "CreateTask(acct-b, key shared) again", err, taskID(at(time.Second), "idem001000"), "h")
	CheckInvariants(t, s, "acct-a")
	CheckInvariants(t, s, "acct-b")
}

// A record lives until its ExpiresAt, exclusive; then the key is free.
func testIdempotencyExpiry(t *testing.T, s store.Store) {
	mustAccount(t, s, "acct-a", 1000)
	c0 := at(0)
	first := newTask("acct-a", taskID(c0, "idem000001"), 10, c0)
	mustStart(t, s, first, domain.StartGuard{Idempotency: idem("k", "h1", c0)})
	c := c0.Add(idemDay - time.Millisecond)
	_, err := s.CreateTask(t.Context(), newTask("acct-a", taskID(c, "idem000002"), 10, c),
		domain.StartGuard{Idempotency: idem("k", "h1", c)})
	wantIdempotencyError(t, "CreateTask 1 ms before the record expires", err, first.ID, "h1")

	c1 := c0.Add(idemDay)
	second := newTask("acct-a", taskID(c1, "idem000003"), 10, c1)
	mustStart(t, s, second, domain.StartGuard{Idempotency: idem("k", "h2", c1)})
	// The new record is second's, with second's hash and expiry.
	c = c1.Add(idemDay - time.Millisecond)
	_, err = s.CreateTask(t.Context(), newTask("acct-a", taskID(c, "idem000004"), 10, c),
		domain.StartGuard{Idempotency: idem("k", "h1", c)})
	wantIdempotencyError(t, "CreateTask under the renewed record", err, second.ID, "h2")
	if a := mustAccountState(t, s, "acct-a"); a.Credits != 980 {
		t.Errorf("after two starts of 10: %d credits, want 980", a.Credits)
	}
	CheckInvariants(t, s, "acct-a")
}

// A start refused for any reason leaves no record: the key stays free.
func testIdempotencyRefusedStart(t *testing.T, s store.Store) {
	mustAccount(t, s, "acct-a", 5)
	c0 := at(0)
	used := domain.Window{Key: "rl:s:key-1:0", Limit: 1, ExpiresAt: at(time.Minute)}
	if _, err := s.Take(t.Context(), []domain.Window{used}, c0); err != nil {
		t.Fatalf("Take: %v", err)
	}
	existing := newTask("acct-a", taskID(c0, "idem000000"), 0, c0)
	mustCreate(t, s, existing)

	tests := []struct {
		name  string
		id    string
		cost  int
		guard domain.StartGuard
		check func(error) bool
	}{
		{"insufficient credits", "idem000001", 10, domain.StartGuard{},
			func(err error) bool { var e *domain.InsufficientCreditsError; return errors.As(err, &e) }},
		{"starts counter", "idem000002", 1, domain.StartGuard{Starts: &used},
			func(err error) bool { var e *domain.LimitError; return errors.As(err, &e) }},
		{"in flight", "idem000003", 1, domain.StartGuard{MaxInFlight: 1},
			func(err error) bool { var e *domain.InFlightLimitError; return errors.As(err, &e) }},
		{"duplicate task id", "idem000000", 1, domain.StartGuard{},
			func(err error) bool { return errors.Is(err, domain.ErrExists) }},
	}
	for i, tt := range tests {
		c := at(time.Duration(i+1) * time.Second)
		if tt.id == "idem000000" {
			c = c0 // the id names its creation time
		}
		key := "refused-" + tt.name
		tk := newTask("acct-a", taskID(c, tt.id), tt.cost, c)
		g := tt.guard
		g.Idempotency = idem(key, "h", c)
		before := takeSnapshot(t, s, "acct-a")
		_, err := s.CreateTask(t.Context(), tk, g)
		if !tt.check(err) {
			t.Errorf("CreateTask(%s): unexpected error %v", tt.name, err)
			continue
		}
		unchanged(t, s, "acct-a", before, "CreateTask refused for "+tt.name)

		// The key is free: an acceptable start under it creates a task.
		c2 := c.Add(time.Millisecond)
		ok := newTask("acct-a", taskID(c2, fmt.Sprintf("idemok%04d", i)), 0, c2)
		if _, err := s.CreateTask(t.Context(), ok, domain.StartGuard{Idempotency: idem(key, "h", c2)}); err != nil {
			t.Errorf("CreateTask under the key of a start refused for %s: %v, want a new task", tt.name, err)
		}
	}
	CheckInvariants(t, s, "acct-a")
}

// Replaces lets a start take over the record of one given task, and no
// other.
func testIdempotencyReplaces(t *testing.T, s store.Store) {
	mustAccount(t, s, "acct-a", 1000)
	c0 := at(0)
	abandoned := newTask("acct-a", taskID(c0, "idem000001"), 10, c0)
	mustStart(t, s, abandoned, domain.StartGuard{Idempotency: idem("k", "h", c0)})
	mustFail(t, s, abandoned.ID, task.Failure{Code: task.FailInternal, Message: "not started"}, c0)

	c1 := at(time.Second)
	wrong := idem("k", "h", c1)
	wrong.Replaces = taskID(c0, "idem999999")
	_, err := s.CreateTask(t.Context(), newTask("acct-a", taskID(c1, "idem000002"), 10, c1), domain.StartGuard{Idempotency: wrong})
	wantIdempotencyError(t, "CreateTask replacing a task the record does not name", err, abandoned.ID, "h")

	retry := newTask("acct-a", taskID(c1, "idem000003"), 10, c1)
	g := idem("k", "h", c1)
	g.Replaces = abandoned.ID
	mustStart(t, s, retry, domain.StartGuard{Idempotency: g})
	// The record names retry now: replacing the abandoned task again is a
	// replay of retry.
	c2 := at(2 * time.Second)
	again := idem("k", "h", c2)
	again.Replaces = abandoned.ID
	_, err = s.CreateTask(t.Context(), newTask("acct-a", taskID(c2, "idem000004"), 10, c2), domain.StartGuard{Idempotency: again})
	wantIdempotencyError(t, "CreateTask replacing the abandoned task a second time", err, retry.ID, "h")
	wantHolding(t, s, "acct-a", 990, 1, "an abandoned start and its retry")
	CheckInvariants(t, s, "acct-a")
}

// Thirty identical starts under one key race: exactly one creates a task
// and charges; every other returns the winner's record.
func testRaceIdempotency(t *testing.T, s store.Store) {
	mustAccount(t, s, "acct-a", 1000)
	const n = 30
	tasks := raceTasks("acct-a", n, 10)
	errs := make([]error, n)
	stop := make(chan struct{})
	low := watchBalance(t, s, "acct-a", stop)
	race(n, func(i int) {
		g := domain.StartGuard{MaxInFlight: n, Idempotency: idem("same-key", "same-hash", tasks[i].CreatedAt)}
		_, errs[i] = s.CreateTask(t.Context(), tasks[i], g)
	})
	close(stop)

	winner := ""
	for i, err := range errs {
		if err == nil {
			if winner != "" {
				t.Errorf("CreateTask %d and the one creating %s both created a task", i, winner)
			}
			winner = tasks[i].ID
		}
	}
	if winner == "" {
		t.Fatalf("none of %d identical starts created a task: %v", n, errs)
	}
	for i, err := range errs {
		if err != nil {
			wantIdempotencyError(t, fmt.Sprintf("CreateTask %d", i), err, winner, "same-hash")
		}
	}
	_, total, err := s.Tasks(t.Context(), "acct-a", store.TaskQuery{})
	if err != nil {
		t.Fatalf("Tasks: %v", err)
	}
	charges := 0
	for _, e := range mustLedger(t, s, "acct-a") {
		if e.Kind == domain.EntryCharge {
			charges++
		}
	}
	if a := mustAccountState(t, s, "acct-a"); total != 1 || charges != 1 || a.Credits != 990 || a.InFlight != 1 {
		t.Errorf("after %d identical starts: %d tasks, %d charges, %d credits, %d in flight; want 1, 1, 990, 1",
			n, total, charges, a.Credits, a.InFlight)
	}
	if l := <-low; l < 990 {
		t.Errorf("the balance was %d during the race, want never below 990", l)
	}
	CheckInvariants(t, s, "acct-a")
}

// A replay answers the balance the first start left, whatever moved the
// balance since; a start that takes a key over leaves its own.
func testIdempotencyBalance(t *testing.T, s store.Store) {
	ctx := t.Context()
	mustAccount(t, s, "acct-a", 100)
	c0 := at(0)
	first := newTask("acct-a", taskID(c0, "idem000001"), 30, c0)
	if ch, err := s.CreateTask(ctx, first, domain.StartGuard{Idempotency: idem("k", "h", c0)}); err != nil || ch.Balance != 70 {
		t.Fatalf("CreateTask(first) = %d, %v; want 70, nil", ch.Balance, err)
	}
	// The balance moves on: a grant, another start, the first task's end.
	if _, err := s.Grant(ctx, "acct-a", 50, "top-up", at(time.Second)); err != nil {
		t.Fatalf("Grant: %v", err)
	}
	mustCreate(t, s, newTask("acct-a", taskID(at(2*time.Second), "idem000002"), 10, at(2*time.Second)))
	mustFail(t, s, first.ID, task.Failure{Code: task.FailInternal, Message: "not started"}, at(3*time.Second))
	if a := mustAccountState(t, s, "acct-a"); a.Credits != 140 {
		t.Fatalf("after the grant, the second start and the refund: %d credits, want 140", a.Credits)
	}

	replay := func(what, hash string, c time.Time, replaces string, wantTask string, wantBalance int64) {
		t.Helper()
		k := idem("k", hash, c)
		k.Replaces = replaces
		_, err := s.CreateTask(ctx, newTask("acct-a", taskID(c, "idemreplay"), 10, c), domain.StartGuard{Idempotency: k})
		wantReplayBalance(t, what, err, wantTask, wantBalance)
	}
	replay("the same request again", "h", at(4*time.Second), "", first.ID, 70)
	replay("another request under the key", "h2", at(5*time.Second), "", first.ID, 70)

	c := at(6 * time.Second)
	retry := newTask("acct-a", taskID(c, "idem000003"), 20, c)
	k := idem("k", "h", c)
	k.Replaces = first.ID
	if ch, err := s.CreateTask(ctx, retry, domain.StartGuard{Idempotency: k}); err != nil || ch.Balance != 120 {
		t.Fatalf("CreateTask replacing the first task = %d, %v; want 120, nil", ch.Balance, err)
	}
	if _, err := s.Grant(ctx, "acct-a", 5, "top-up", at(7*time.Second)); err != nil {
		t.Fatalf("Grant: %v", err)
	}
	replay("a replay of the start that took the key over", "h", at(8*time.Second), first.ID, retry.ID, 120)
	CheckInvariants(t, s, "acct-a")
}

// CheckLegacyRecord checks a backend's bridge for the idempotency records
// written before records kept the balance a start left: such a record
// still answers a replay with that balance, from the start's charge. s
// must be fresh. After a start of 30 credits from 100 under the key "k"
// of account "acct-a", and more entries after its charge, makeLegacy must
// take the balance off that record as the backend stored it then, and
// return the store to go on with (s, or s reopened).
func CheckLegacyRecord(t *testing.T, s store.Store, makeLegacy func(t *testing.T, s store.Store) store.Store) {
	mustAccount(t, s, "acct-a", 100)
	c0 := at(0)
	first := newTask("acct-a", taskID(c0, "legacy0001"), 30, c0)
	mustStart(t, s, first, domain.StartGuard{Idempotency: idem("k", "h", c0)})
	for i := range 3 { // the charge is not the last entry
		if _, err := s.Grant(t.Context(), "acct-a", int64(i+1), "top-up", at(time.Second)); err != nil {
			t.Fatalf("Grant: %v", err)
		}
	}
	s = makeLegacy(t, s)
	c := at(2 * time.Second)
	_, err := s.CreateTask(t.Context(), newTask("acct-a", taskID(c, "legacy0002"), 30, c),
		domain.StartGuard{Idempotency: idem("k", "h", c)})
	wantReplayBalance(t, "CreateTask under the key of a legacy record", err, first.ID, 70)
}
