package storetest

import (
	"testing"
	"time"

	"github.com/genvideo/gen/shared/domain"
	"github.com/genvideo/gen/shared/store"
)

func testAccounts(t *testing.T, s store.Store) {
	ctx := t.Context()
	created := at(time.Hour)
	if err := s.CreateAccount(ctx, domain.Account{ID: "acct-a", CreatedAt: created}); err != nil {
		t.Fatalf("CreateAccount(acct-a): %v", err)
	}
	got := mustAccountState(t, s, "acct-a")
	if got.ID != "acct-a" || got.Credits != 0 || got.InFlight != 0 || !sameTime(got.CreatedAt, created) {
		t.Errorf("Account(acct-a) = %+v, want ID acct-a, 0 credits, 0 in flight, created %v", got, created)
	}

	err := s.CreateAccount(ctx, domain.Account{ID: "acct-a", Credits: 500, CreatedAt: at(2 * time.Hour)})
	wantErrIs(t, "CreateAccount(acct-a) again", err, domain.ErrExists)
	if got := mustAccountState(t, s, "acct-a"); got.Credits != 0 || !sameTime(got.CreatedAt, created) {
		t.Errorf("after a duplicate CreateAccount: Account(acct-a) = %+v, want it unchanged", got)
	}
	if l := mustLedger(t, s, "acct-a"); len(l) != 0 {
		t.Errorf("after a duplicate CreateAccount: ledger %+v, want empty", l)
	}

	_, err = s.Account(ctx, "acct-nobody")
	wantErrIs(t, "Account(acct-nobody)", err, domain.ErrNotFound)
	_, err = s.Grant(ctx, "acct-nobody", 10, "gift", at(0))
	wantErrIs(t, "Grant(acct-nobody)", err, domain.ErrNotFound)
	CheckInvariants(t, s, "acct-a")
}

func testOpeningBalance(t *testing.T, s store.Store) {
	created := at(time.Minute)
	if err := s.CreateAccount(t.Context(), domain.Account{ID: "acct-b", Credits: 70, CreatedAt: created}); err != nil {
		t.Fatalf("CreateAccount(acct-b, 70 credits): %v", err)
	}
	if got := mustAccountState(t, s, "acct-b"); got.Credits != 70 {
		t.Errorf("Account(acct-b).Credits = %d, want 70", got.Credits)
	}
	l := mustLedger(t, s, "acct-b")
	if len(l) != 1 || l[0].Kind != domain.EntryGrant || l[0].Amount != 70 || l[0].Balance != 70 ||
		l[0].TaskID != "" || !sameTime(l[0].At, created) {
		t.Errorf("ledger of a new account with 70 credits = %+v, want one grant of 70 at %v", l, created)
	}
	CheckInvariants(t, s, "acct-b")
}

func testGrant(t *testing.T, s store.Store) {
	ctx := t.Context()
	mustAccount(t, s, "acct-a", 0)
	grants := []struct {
		amount int64
		note   string
		at     time.Time
		want   int64
	}{
		{100, "welcome", at(time.Minute), 100},
		{50, "top-up by operator", at(2 * time.Minute), 150},
		{1, "", at(3 * time.Minute), 151},
	}
	for _, g := range grants {
		bal, err := s.Grant(ctx, "acct-a", g.amount, g.note, g.at)
		if err != nil {
			t.Fatalf("Grant(%d): %v", g.amount, err)
		}
		if bal != g.want {
			t.Errorf("Grant(%d) = %d, want %d", g.amount, bal, g.want)
		}
	}
	if got := mustAccountState(t, s, "acct-a"); got.Credits != 151 {
		t.Errorf("Account(acct-a).Credits = %d, want 151", got.Credits)
	}
	l := mustLedger(t, s, "acct-a")
	if len(l) != len(grants) {
		t.Fatalf("ledger has %d entries, want %d: %+v", len(l), len(grants), l)
	}
	for i, g := range grants {
		e := l[i]
		if e.AccountID != "acct-a" || e.Kind != domain.EntryGrant || e.TaskID != "" || e.Amount != g.amount ||
			e.Balance != g.want || e.Note != g.note || !sameTime(e.At, g.at) {
			t.Errorf("ledger[%d] = %+v, want a grant of %d, balance %d, note %q at %v",
				i, e, g.amount, g.want, g.note, g.at)
		}
	}

	for _, amount := range []int64{0, -5} {
		before := takeSnapshot(t, s, "acct-a")
		if _, err := s.Grant(ctx, "acct-a", amount, "bad", at(time.Hour)); err == nil {
			t.Errorf("Grant(%d) succeeded, want an error", amount)
		}
		unchanged(t, s, "acct-a", before, "a rejected Grant")
	}
	CheckInvariants(t, s, "acct-a")
}

func testKeys(t *testing.T, s store.Store) {
	ctx := t.Context()
	mustAccount(t, s, "acct-a", 0)
	mustAccount(t, s, "acct-b", 0)
	k1 := store.Key{ID: "key-1", Hash: "h1-9f86d081884c7d659a2feaa0c55ad015", AccountID: "acct-a", Name: "ci",
		Tier: "standard", Limits: store.KeyLimits{RequestsPerMinute: 60, RequestsPerDay: 1000, StartsPerMinute: 10, MaxInFlight: 5},
		CreatedAt: at(time.Minute)}
	k2 := store.Key{ID: "key-2", Hash: "h2-60303ae22b998861bce3b28f33eec1be", AccountID: "acct-a", Name: "laptop",
		Tier: "pro", Limits: store.KeyLimits{RequestsPerMinute: 300, RequestsPerDay: 10000, StartsPerMinute: 10, MaxInFlight: 5},
		CreatedAt: at(2 * time.Minute)}
	k3 := store.Key{ID: "key-3", Hash: "h3-fd61a03af4f77d870fc21e05e7e80678", AccountID: "acct-b", Name: "load test",
		Tier: "enterprise", Limits: store.KeyLimits{RequestsPerMinute: 100000, RequestsPerDay: 5000000, StartsPerMinute: 7, MaxInFlight: 400},
		CreatedAt: at(3 * time.Minute)}
	for _, k := range []store.Key{k1, k2, k3} {
		if err := s.CreateKey(ctx, k); err != nil {
			t.Fatalf("CreateKey(%s): %v", k.ID, err)
		}
	}
	wantErrIs(t, "CreateKey(key-1) again", s.CreateKey(ctx, k1), domain.ErrExists)

	checkKey := func(what string, got, want store.Key) {
		t.Helper()
		if got.ID != want.ID || got.Hash != want.Hash || got.AccountID != want.AccountID || got.Name != want.Name ||
			got.Tier != want.Tier || got.Limits != want.Limits || !sameTime(got.CreatedAt, want.CreatedAt) ||
			!sameTime(got.RevokedAt, want.RevokedAt) {
			t.Errorf("%s = %+v, want %+v", what, got, want)
		}
	}
	for _, k := range []store.Key{k1, k2, k3} {
		got, err := s.KeyByHash(ctx, k.Hash)
		if err != nil {
			t.Fatalf("KeyByHash(%s): %v", k.ID, err)
		}
		checkKey("KeyByHash("+k.ID+")", got, k)
		if got.Revoked() {
			t.Errorf("KeyByHash(%s).Revoked() = true for a new key", k.ID)
		}
	}
	_, err := s.KeyByHash(ctx, "h0-unknown")
	wantErrIs(t, "KeyByHash(unknown)", err, domain.ErrNotFound)

	listed := func(account string, want ...store.Key) {
		t.Helper()
		got, err := s.Keys(ctx, account)
		if err != nil {
			t.Fatalf("Keys(%q): %v", account, err)
		}
		byID := map[string]store.Key{}
		for _, k := range got {
			byID[k.ID] = k
		}
		if len(got) != len(want) || len(byID) != len(want) {
			t.Errorf("Keys(%q) listed %d keys %v, want %d", account, len(got), got, len(want))
		}
		for _, w := range want {
			g, ok := byID[w.ID]
			if !ok {
				t.Errorf("Keys(%q) does not list %s", account, w.ID)
				continue
			}
			checkKey("Keys("+account+") "+w.ID, g, w)
		}
	}
	listed("acct-a", k1, k2)
	listed("acct-b", k3)
	listed("", k1, k2, k3)

	revoked := at(time.Hour)
	if err := s.RevokeKey(ctx, k2.ID, revoked); err != nil {
		t.Fatalf("RevokeKey(key-2): %v", err)
	}
	got, err := s.KeyByHash(ctx, k2.Hash)
	if err != nil {
		t.Fatalf("KeyByHash(key-2) after revocation: %v", err)
	}
	if !got.Revoked() || !sameTime(got.RevokedAt, revoked) {
		t.Errorf("KeyByHash(key-2) after revocation: RevokedAt %v, Revoked() %v; want %v, true",
			got.RevokedAt, got.Revoked(), revoked)
	}
	if got, err := s.KeyByHash(ctx, k1.Hash); err != nil || got.Revoked() {
		t.Errorf("KeyByHash(key-1) after revoking key-2: Revoked() %v, err %v; want false, nil", got.Revoked(), err)
	}
	k2.RevokedAt = revoked
	listed("acct-a", k1, k2)
	wantErrIs(t, "RevokeKey(unknown)", s.RevokeKey(ctx, "key-nobody", revoked), domain.ErrNotFound)
}
