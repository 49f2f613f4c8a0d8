package store

import (
	"context"
	"errors"
	"github.com/genvideo/gen/shared/domain"
	"time"
)

// ClaimFits says whether a claim may take d besides taken, the
// deliveries the same claim took before it: the worker's bounds on what
// one account and one receiver have in flight at once. A delivery that
// does not fit is left as it is, due, for a later claim.
type ClaimFits func(taken []domain.Delivery, d domain.Delivery) bool

// ClaimScan is how many due deliveries one claim looks at, at most, for
// those that fit: so many of one account or receiver at the head of the
// queue do not hide the others'.
const ClaimScan = 256

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
// the move: one domain.Delivery per endpoint of the task's account subscribed
// to the event, and one for the task's own WebhookURL; a move that does
// not happen writes none.
type Webhooks interface {
	CreateWebhook(ctx context.Context, e domain.WebhookEndpoint) error
	// Webhooks lists an account's endpoints, oldest first.
	Webhooks(ctx context.Context, accountID string) ([]domain.WebhookEndpoint, error)
	// DeleteWebhook removes the account's endpoint (domain.ErrNotFound when it
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
	ClaimDeliveries(ctx context.Context, now time.Time, lease time.Duration, limit int, fits ClaimFits) ([]domain.Delivery, error)
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
