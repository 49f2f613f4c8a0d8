package client_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/genvideo/gen/shared/client"
	"github.com/genvideo/gen/shared/store"
)

// Cancel, Delete and Credits against the real local stack: a slow
// generation is cancelled and refunded, a repeat answers the same, the
// cancelled task is deleted, the ledger pages back to the opening grant.
func TestCancelDeleteCredits(t *testing.T) {
	needsFaults(t)
	t.Parallel()
	k := stack.Key(t, 100, store.KeyLimits{})
	c := newClient(t, k.APIKey)
	ctx := context.Background()
	s := startLite(t, c, "[slow:60] cancel me")
	if err := c.Delete(ctx, s.TaskID); !isCode(err, client.CodeTaskNotFinished) {
		t.Errorf("Delete of a task in flight = %v, want %s", err, client.CodeTaskNotFinished)
	}
	cr, err := c.Credits(ctx, client.CreditsQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if cr.Balance != 65 || cr.Held != 35 || cr.InFlight != 1 || cr.Tier != "enterprise" ||
		cr.Limits.RequestsPerMinute.Limit == 0 || cr.Limits.ConcurrentGenerations.Remaining != cr.Limits.ConcurrentGenerations.Limit-1 {
		t.Errorf("Credits = %+v", cr)
	}
	for range 2 {
		task, err := c.Cancel(ctx, s.TaskID)
		if err != nil {
			t.Fatal(err)
		}
		if task.Status != client.StatusFailed || task.Error == nil || task.Error.Code != "CANCELLED" || task.Refunded() != 35 {
			t.Errorf("Cancel = %+v", task)
		}
	}
	if got := stack.Balance(t, k.AccountID); got != 100 {
		t.Errorf("balance after cancel = %d, want 100", got)
	}
	if err := c.Delete(ctx, s.TaskID); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Status(ctx, s.TaskID); !isCode(err, client.CodeTaskNotFound) {
		t.Errorf("Status after Delete = %v, want %s", err, client.CodeTaskNotFound)
	}
	if _, err := c.Cancel(ctx, s.TaskID); !isCode(err, client.CodeTaskNotFound) {
		t.Errorf("Cancel after Delete = %v, want %s", err, client.CodeTaskNotFound)
	}
	var kinds []string
	for e, err := range c.AllLedger(ctx, client.CreditsQuery{Limit: 1}) {
		if err != nil {
			t.Fatal(err)
		}
		if e.At.IsZero() || e.At.After(time.Now().Add(time.Minute)) {
			t.Errorf("entry %+v has a bad time", e)
		}
		kinds = append(kinds, e.Kind)
	}
	if len(kinds) != 3 || kinds[0] != "refund" || kinds[1] != "charge" || kinds[2] != "grant" {
		t.Errorf("ledger kinds newest first = %v, want refund, charge, grant", kinds)
	}
}

func isCode(err error, code string) bool {
	var e *client.Error
	return errors.As(err, &e) && e.Code == code
}
