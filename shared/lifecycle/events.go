package lifecycle

import (
	"github.com/genvideo/gen/shared/domain"
	"github.com/genvideo/gen/shared/task"
)

// Events are the webhook events of t's move to its status, as the outbox
// keeps them: one delivery for each of the account's endpoints (in the
// order given) subscribed to the event, then one for the URL t's start
// carried. Each is pending and due at the move's time (StartedAt for
// processing, CompletedAt for a terminal status), under its stable id
// (domain.DeliveryID), so that a move written twice is one message. A task
// that is pending reports none.
func Events(t task.Task, endpoints []domain.WebhookEndpoint) []domain.Delivery {
	event := domain.EventOf(t.Status)
	if event == "" {
		return nil
	}
	at := t.CompletedAt
	if t.Status == task.Processing {
		at = t.StartedAt
	}
	var out []domain.Delivery
	add := func(endpointID, url string) {
		out = append(out, domain.Delivery{ID: domain.DeliveryID(t.ID, event, endpointID), AccountID: t.AccountID,
			EndpointID: endpointID, URL: url, Event: event, Task: t, CreatedAt: at, State: domain.DeliveryPending, NextAt: at})
	}
	for _, e := range endpoints {
		if e.Subscribed(event) {
			add(e.ID, e.URL)
		}
	}
	if t.WebhookURL != "" {
		add("", t.WebhookURL)
	}
	return out
}
