package storetest

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/genvideo/gen/shared/domain"
	"github.com/genvideo/gen/shared/store"
	"github.com/genvideo/gen/shared/task"
)

// capKey is the key the spending-cap tests start tasks under.
const capKey = "key-cap"

// capTask is a task of acct-a started under capKey, costing cost.
func capTask(suffix string, cost int, created time.Time) task.Task {
	tk := newTask("acct-a", taskID(created, suffix), cost, created)
	tk.KeyID = capKey
	return tk
}

// capGuard is the guard of a start at c under a daily cap of perDay and
// a monthly one of perMonth.
func capGuard(perDay, perMonth int64, c time.Time) domain.StartGuard {
	return domain.StartGuard{Spend: domain.SpendWindows(capKey, perDay, perMonth, c)}
}

// A key's caps are stored with it and changed, each on its own, by
// SetKeyCaps.
func testKeyCaps(t *testing.T, s store.Store) {
	ctx := t.Context()
	mustAccount(t, s, "acct-a", 0)
	k := store.Key{ID: capKey, Hash: "hc-2c26b46b68ffc68ff99b453c1d304134", AccountID: "acct-a", Name: "capped",
		Tier: "pro", Limits: store.KeyLimits{RequestsPerMinute: 1, RequestsPerDay: 1, StartsPerMinute: 1, MaxInFlight: 1},
		Caps: store.SpendCaps{MaxPerDay: 100, MaxPerMonth: 1000}, CreatedAt: at(0)}
	if err := s.CreateKey(ctx, k); err != nil {
		t.Fatalf("CreateKey: %v", err)
	}
	got, err := s.KeyByHash(ctx, k.Hash)
	if err != nil || got.Caps != k.Caps {
		t.Fatalf("KeyByHash = %+v, %v; want caps %+v", got.Caps, err, k.Caps)
	}
	holderDay := int64(40)
	caps, err := s.SetKeyCaps(ctx, capKey, store.CapsUpdate{HolderPerDay: &holderDay})
	want := store.SpendCaps{MaxPerDay: 100, MaxPerMonth: 1000, HolderPerDay: 40}
	if err != nil || caps != want {
		t.Fatalf("SetKeyCaps(holder day 40) = %+v, %v; want %+v", caps, err, want)
	}
	keys, err := s.Keys(ctx, "acct-a")
	if err != nil || len(keys) != 1 || keys[0].Caps != want {
		t.Fatalf("Keys after SetKeyCaps = %+v, %v; want caps %+v", keys, err, want)
	}
	if got, err := s.KeyByHash(ctx, k.Hash); err != nil || got.Caps != want {
		t.Errorf("KeyByHash after SetKeyCaps = %+v, %v; want caps %+v", got.Caps, err, want)
	}
	if want.Day() != 40 || want.Month() != 1000 {
		t.Errorf("caps in force = %d a day, %d a month; want 40, 1000", want.Day(), want.Month())
	}

	// Issue 31, defect 2: each write changes only the caps it names. The
	// holder's write of its monthly cap, made from a read that predates
	// the operator's new daily cap, keeps that cap; an update naming no
	// cap changes nothing and answers the caps as they are.
	opDay, holderMonth, zero := int64(7), int64(500), int64(0)
	if _, err := s.SetKeyCaps(ctx, capKey, store.CapsUpdate{MaxPerDay: &opDay}); err != nil {
		t.Fatalf("SetKeyCaps(operator day): %v", err)
	}
	caps, err = s.SetKeyCaps(ctx, capKey, store.CapsUpdate{HolderPerMonth: &holderMonth})
	want = store.SpendCaps{MaxPerDay: 7, MaxPerMonth: 1000, HolderPerDay: 40, HolderPerMonth: 500}
	if err != nil || caps != want {
		t.Fatalf("SetKeyCaps(holder month) after the operator's day = %+v, %v; want %+v", caps, err, want)
	}
	if caps, err = s.SetKeyCaps(ctx, capKey, store.CapsUpdate{}); err != nil || caps != want {
		t.Errorf("SetKeyCaps(nothing) = %+v, %v; want %+v", caps, err, want)
	}
	caps, err = s.SetKeyCaps(ctx, capKey, store.CapsUpdate{HolderPerDay: &zero, HolderPerMonth: &zero})
	want = store.SpendCaps{MaxPerDay: 7, MaxPerMonth: 1000}
	if err != nil || caps != want {
		t.Errorf("SetKeyCaps(holder 0, 0) = %+v, %v; want %+v", caps, err, want)
	}

	_, err = s.SetKeyCaps(ctx, "key-none", store.CapsUpdate{HolderPerDay: &holderDay})
	wantErrIs(t, "SetKeyCaps(unknown)", err, domain.ErrNotFound)
	neg := int64(-1)
	if _, err := s.SetKeyCaps(ctx, capKey, store.CapsUpdate{MaxPerDay: &neg}); err == nil {
		t.Error("SetKeyCaps with a negative cap succeeded")
	}
	if got, err := s.KeyByHash(ctx, k.Hash); err != nil || got.Caps != want {
		t.Errorf("KeyByHash after a refused SetKeyCaps = %+v, %v; want caps %+v", got.Caps, err, want)
	}
}

// A start that would pass a cap is refused and changes nothing; a refund
// gives back allowance; the next day (or month) counts afresh.
func testCreateTaskSpendCap(t *testing.T, s store.Store) {
	mustAccount(t, s, "acct-a", 1000)
	day0 := at(0)
	first, second := capTask("cap0000001", 10, day0), capTask("cap0000002", 10, day0.Add(time.Second))
	mustStart(t, s, first, capGuard(25, 0, first.CreatedAt))
	// A start under a cap returns what its windows hold after it, for
	// its answer's headers; the month has no cap and is counted too.
	ch, err := s.CreateTask(t.Context(), second, capGuard(25, 0, second.CreatedAt))
	if err != nil || ch.Balance != 980 || !slices.Equal(ch.Spent, []int64{20, 20}) {
		t.Fatalf("second start under a daily cap of 25 = %+v, %v; want balance 980, 20 spent in the day and the month", ch, err)
	}

	third := capTask("cap0000003", 10, day0.Add(2*time.Second))
	before := takeSnapshot(t, s, "acct-a")
	_, err = s.CreateTask(t.Context(), third, capGuard(25, 0, third.CreatedAt))
	var ce *domain.SpendingCapError
	if !errors.As(err, &ce) {
		t.Fatalf("third start over a daily cap of 25: %v, want *domain.SpendingCapError", err)
	}
	wantReset := time.Date(2025, 11, 14, 0, 0, 0, 0, time.UTC)
	if ce.Window.Kind != domain.CapDay || ce.Window.Limit != 25 || ce.Spent != 20 || ce.Left() != 5 ||
		ce.Required != 10 || !ce.Window.ExpiresAt.Equal(wantReset) {
		t.Errorf("refusal = %+v (left %d), want the day cap of 25, 20 spent, 5 left, 10 required, reset %v",
			*ce, ce.Left(), wantReset)
	}
	unchanged(t, s, "acct-a", before, "a start refused by its spending cap")

	// The monthly cap refuses too, and names itself.
	_, err = s.CreateTask(t.Context(), third, capGuard(100, 25, third.CreatedAt))
	if !errors.As(err, &ce) || ce.Window.Kind != domain.CapMonth ||
		!ce.Window.ExpiresAt.Equal(time.Date(2025, 12, 1, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("start over a monthly cap of 25: %v, want the month cap, reset on December 1st", err)
	}

	// A failed task is refunded, and its refund is allowance again.
	mustFail(t, s, first.ID, task.Failure{Code: "GENERATION_FAILED", Message: "x"}, day0.Add(3*time.Second))
	mustStart(t, s, third, capGuard(25, 25, third.CreatedAt))
	fourth := capTask("cap0000004", 10, day0.Add(4*time.Second))
	if _, err := s.CreateTask(t.Context(), fourth, capGuard(25, 0, fourth.CreatedAt)); !errors.As(err, &ce) {
		t.Errorf("start past the cap after the refund was spent again: %v, want *domain.SpendingCapError", err)
	}

	// The next UTC day counts afresh under the daily cap; the month goes on.
	next := capTask("cap0000005", 10, wantReset.Add(time.Minute))
	mustStart(t, s, next, capGuard(25, 0, next.CreatedAt))
	late := capTask("cap0000006", 10, wantReset.Add(2*time.Minute))
	if _, err := s.CreateTask(t.Context(), late, capGuard(0, 35, late.CreatedAt)); !errors.As(err, &ce) ||
		ce.Window.Kind != domain.CapMonth || ce.Spent != 30 {
		t.Errorf("start past the monthly cap on the next day: %v, want the month cap with 30 spent", err)
	}
	CheckInvariants(t, s, "acct-a")

	if ch, err := s.CreateTask(t.Context(), capTask("cap0000007", 1, day0), domain.StartGuard{Spend: domain.SpendWindows("key-free", 0, 0, day0)}); err != nil || ch.Spent != nil {
		t.Errorf("a start with no cap in force = %+v, %v; want no windows told (nil Spent)", ch, err)
	}
}

// 50 concurrent starts against a daily cap that allows 20 of them, on an
// account that could pay for all: exactly 20 are charged.
func testRaceSpendCap(t *testing.T, s store.Store) {
	mustAccount(t, s, "acct-a", 1000)
	tasks := make([]task.Task, 50)
	for i := range tasks {
		tasks[i] = capTask(fmt.Sprintf("capr%06d", i), 10, at(time.Duration(i)*time.Millisecond))
	}
	errs := make([]error, len(tasks))
	race(len(tasks), func(i int) {
		_, errs[i] = s.CreateTask(t.Context(), tasks[i], capGuard(200, 0, tasks[i].CreatedAt))
	})
	ok := 0
	for i, err := range errs {
		var ce *domain.SpendingCapError
		switch {
		case err == nil:
			ok++
		case errors.As(err, &ce):
			if ce.Window.Kind != domain.CapDay || ce.Spent > 200 || ce.Spent < 200-9 {
				t.Errorf("CreateTask %d: %+v, want the day cap with about 200 spent", i, *ce)
			}
		default:
			t.Errorf("CreateTask %d: %v, want success or *domain.SpendingCapError", i, err)
		}
	}
	if ok != 20 {
		t.Errorf("%d of 50 concurrent starts succeeded under a cap allowing 20, want 20", ok)
	}
	wantHolding(t, s, "acct-a", 1000-200, 20, "the race")
	CheckInvariants(t, s, "acct-a")
}
