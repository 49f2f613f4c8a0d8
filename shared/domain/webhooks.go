package domain

import (
	"time"

	"github.com/genvideo/gen/shared/task"
)

// Webhook event types: each is written to the outbox in the transaction
// of the task's move it reports (MarkProcessing, Complete, Fail).
const (
	EventProcessing = "generation.processing"
	EventCompleted  = "generation.completed"
	EventFailed     = "generation.failed"
)

// EventTypes lists every event type.
var EventTypes = []string{EventProcessing, EventCompleted, EventFailed}

// EventOf is the event type a task in status s reports, "" for pending.
func EventOf(s task.Status) string {
	switch s {
	case task.Processing:
		return EventProcessing
	case task.Completed:
		return EventCompleted
	case task.Failed:
		return EventFailed
	}
	return ""
}

// WebhookEndpoint is a URL an account registered for events.
type WebhookEndpoint struct {
	ID        string
	AccountID string
	URL       string
	Events    []string // a subset of EventTypes
	// Secret signs its deliveries ("whsec_..."). It is shown to the
	// account once, when the endpoint is created, and never logged.
	Secret    string
	CreatedAt time.Time
}

// Subscribed reports whether e wants events of type event.
func (e WebhookEndpoint) Subscribed(event string) bool {
	for _, ev := range e.Events {
		if ev == event {
			return true
		}
	}
	return false
}

// Delivery states.
const (
	DeliveryPending   = "pending"
	DeliveryDelivered = "delivered"
	DeliveryFailed    = "failed"
)

// Delivery is one event for one target: an outbox row. Its ID is the
// webhook-id every attempt sends, the same on every retry.
type Delivery struct {
	ID        string
	AccountID string
	// EndpointID is the registered endpoint, "" for the URL a start
	// carried for its task alone (signed with the account's signing
	// secret, SigningSecret).
	EndpointID string
	URL        string
	Event      string
	// Task is the task as the move left it: the event's data.
	Task task.Task
	// CreatedAt is when the move happened: the event's timestamp.
	CreatedAt time.Time
	State     string
	Attempts  int // attempts made so far
	NextAt    time.Time
	// Secret signs the delivery: filled in by ClaimDeliveries from the
	// endpoint (or the account), never stored on the row.
	Secret string
}

// Receiver names where d goes, for the worker's bound on the attempts
// one receiver has in flight: its endpoint, or the URL a start carried.
func (d Delivery) Receiver() string {
	if d.EndpointID != "" {
		return d.EndpointID
	}
	return d.URL
}

// DeliveryID is the webhook-id of the event of task taskID moving to
// event, for the target endpointID ("" for the task's own URL): stable,
// so that a retry, a replay or a move written twice is one message.
func DeliveryID(taskID, event, endpointID string) string {
	target := endpointID
	if target == "" {
		target = "task"
	}
	return "msg_" + taskID + "_" + event[len("generation."):] + "_" + target
}
