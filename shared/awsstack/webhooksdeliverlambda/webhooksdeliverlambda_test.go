package webhooksdeliverlambda

import (
	"context"
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/genvideo/gen/shared/domain"
	"github.com/genvideo/gen/shared/store"
	"github.com/genvideo/gen/shared/webhook/delivery"
)

// emptyOutbox has nothing due.
type emptyOutbox struct{ claims int }

func (o *emptyOutbox) ClaimDeliveries(context.Context, time.Time, time.Duration, int, store.ClaimFits) ([]domain.Delivery, error) {
	o.claims++
	return nil, nil
}
func (o *emptyOutbox) RecordAttempt(context.Context, store.DeliveryAttempt, string, time.Time) error {
	return nil
}
func (o *emptyOutbox) NextDelivery(context.Context) (time.Time, bool, error) {
	return time.Time{}, false, nil
}

// Whatever woke it, the handler reads what is due from the outbox; the
// report names the trigger.
func TestHandleTriggers(t *testing.T) {
	for _, c := range []struct{ event, trigger string }{
		{`{"Records":[{"eventSource":"aws:dynamodb","eventName":"INSERT"},{"eventSource":"aws:dynamodb"}]}`, TriggerStream},
		{`{"source":"aws.events","detail-type":"Scheduled Event"}`, TriggerSchedule},
		{`{}`, TriggerOther},
	} {
		o := &emptyOutbox{}
		h := &Handler{worker: &delivery.Worker{Outbox: o}, log: slog.New(slog.NewTextHandler(os.Stderr, nil))}
		r, err := h.Handle(context.Background(), []byte(c.event))
		if err != nil || r.Trigger != c.trigger || o.claims != 1 {
			t.Errorf("%s: %+v, %v, %d claims; want trigger %s and one claim", c.event, r, err, o.claims, c.trigger)
		}
	}
	h := &Handler{worker: &delivery.Worker{Outbox: &emptyOutbox{}}, log: slog.Default()}
	if _, err := h.Handle(context.Background(), []byte(`[`)); err == nil {
		t.Error("Handle of a malformed event: no error")
	}
}
