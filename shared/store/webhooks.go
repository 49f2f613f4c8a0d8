package store

import (
	"context"
	"errors"
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

// ClaimFits says whether a claim may take d besides taken, the
// deliveries the same claim took before it: the worker's bounds on what
// one account and one receiver have in flight at once. A delivery that
// does not fit is left as it is, due, for a later claim.
type ClaimFits func(taken []Delivery, d Delivery) bool

// ClaimScan is how many due deliveries one claim looks at, at most, for
// those that fit: so many of one account or receiver at the head of the
// queue do not hide the others'.
const ClaimScan = 256

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

// DeliveryAttempt is one try of a delivery.
type DeliveryAttempt struct {
	DeliveryID string
	Event      string
	TaskID     string
	Attempt    int // 1 for the first
	At         time.Time
	Status     int // the receiver's HTTP status, 0 when none came back
	Latency    time.Duration
	Error      string // "" when the receiver accepted it
}

// ErrBadCursor: an attempts cursor that no page of this store returned.
var ErrBadCursor = errors.New("bad cursor")

// AttemptQuery selects a page of an endpoint's attempts, newest first.
type AttemptQuery struct {
	Cursor string // from the previous page; "" for the newest
	Limit  int
}

// Webhooks is what a backend keeps for webhooks: endpoints, signing
// secrets and the outbox. A backend that implements it writes the outbox
// rows of MarkProcessing, Complete and Fail in the same transaction as
// the move: one Delivery per endpoint of the task's account subscribed
// to the event, and one for the task's own WebhookURL; a move that does
// not happen writes none.
type Webhooks interface {
	CreateWebhook(ctx context.Context, e WebhookEndpoint) error
	// Webhooks lists an account's endpoints, oldest first.
	Webhooks(ctx context.Context, accountID string) ([]WebhookEndpoint, error)
	// DeleteWebhook removes the account's endpoint (ErrNotFound when it
	// has none by that id); its pending deliveries fail.
	DeleteWebhook(ctx context.Context, accountID, id string, at time.Time) error
	// SigningSecret returns the account's signing secret for the URLs
	// starts carry, storing fresh as that secret if it has none yet.
	SigningSecret(ctx context.Context, accountID, fresh string) (string, error)
	// ClaimDeliveries returns up to limit pending deliveries due at now,
	// oldest first, with their secrets, and leases them: each is due
	// again at now+lease, so that one claimed by a worker that died is
	// tried again then. It looks at up to ClaimScan due deliveries and
	// takes those fits accepts (all of them when fits is nil).
	ClaimDeliveries(ctx context.Context, now time.Time, lease time.Duration, limit int, fits ClaimFits) ([]Delivery, error)
	// RecordAttempt writes attempt a of its delivery and moves the
	// delivery to state (pending, delivered or failed), due again at
	// next when pending.
	RecordAttempt(ctx context.Context, a DeliveryAttempt, state string, next time.Time) error
	// Attempts returns a page of the attempts of the account's endpoint,
	// newest first, and the cursor of the next page ("" at the end).
	Attempts(ctx context.Context, accountID, endpointID string, q AttemptQuery) ([]DeliveryAttempt, string, error)
	// ReplayDelivery makes the account's delivery (of that endpoint)
	// pending again and due at at, whatever state it is in.
	ReplayDelivery(ctx context.Context, accountID, endpointID, deliveryID string, at time.Time) error
	// NextDelivery is when the earliest pending delivery is due; false
	// when none is pending.
	NextDelivery(ctx context.Context) (time.Time, bool, error)
}
