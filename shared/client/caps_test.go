package client_test

import (
	"errors"
	"testing"

	"github.com/genvideo/gen/shared/client"
	"github.com/genvideo/gen/shared/store"
)

// The holder lowers its key's daily cap with SetSpendingCaps; a start
// past it is refused with CodeSpendingCap naming the cap.
func TestSpendingCaps(t *testing.T) {
	t.Parallel()
	k := stack.Key(t, 1000, store.KeyLimits{})
	c := newClient(t, k.APIKey)
	day := int64(70)
	cr, err := c.SetSpendingCaps(t.Context(), client.CapsUpdate{MaxCreditsPerDay: &day})
	if err != nil {
		t.Fatal(err)
	}
	if cr.SpendingCaps == nil || cr.SpendingCaps.Day.Limit != 70 || cr.SpendingCaps.Day.HolderLimit != 70 ||
		!remains(cr.SpendingCaps.Day, 70) || cr.SpendingCaps.Month.Limit != 0 || cr.SpendingCaps.Month.Remaining != nil ||
		cr.SpendingCaps.Day.Reset.IsZero() {
		t.Fatalf("SetSpendingCaps = %+v", cr.SpendingCaps)
	}
	startLite(t, c, "first")
	startLite(t, c, "second")
	_, err = c.TextToVideo(t.Context(), lite("third"))
	var e *client.Error
	if !errors.As(err, &e) || e.Code != client.CodeSpendingCap || e.Status != 402 || e.Details["cap"] != "day" {
		t.Fatalf("third start = %v, want 402 %s of the day cap", err, client.CodeSpendingCap)
	}
	cr, err = c.Credits(t.Context(), client.CreditsQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if cr.SpendingCaps.Day.Spent != 70 || !remains(cr.SpendingCaps.Day, 0) || cr.Balance != 1000-70 {
		t.Errorf("Credits after = balance %d, %+v; want 930, 70 spent, 0 left", cr.Balance, cr.SpendingCaps.Day)
	}
}

// remains reports whether a cap is in force on w with n credits left.
func remains(w client.SpendWindow, n int64) bool { return w.Remaining != nil && *w.Remaining == n }
