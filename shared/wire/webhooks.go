package wire

import "time"

// The webhook event types (an extension of the contract).
const (
	EventProcessing = "generation.processing"
	EventCompleted  = "generation.completed"
	EventFailed     = "generation.failed"
)

// WebhookRequest is the body of POST /api/gen/webhooks.
type WebhookRequest struct {
	// URL is an https URL on the public internet.
	URL string `json:"url"`
	// Events are the event types to send (default all three).
	Events []string `json:"events,omitempty"`
}

// Webhook is an endpoint registered for the account's events.
type Webhook struct {
	ID     string   `json:"id"`
	URL    string   `json:"url"`
	Events []string `json:"events"`
	// Secret ("whsec_...") signs the endpoint's deliveries. It is shown
	// once, in the answer that registers the endpoint.
	Secret    string `json:"secret,omitempty"`
	CreatedAt Time   `json:"createdAt"`
}

// WebhookCreated is the 201 of POST /api/gen/webhooks.
type WebhookCreated struct {
	Success bool    `json:"success"`
	Webhook Webhook `json:"webhook"`
}

// WebhookList is the 200 of GET /api/gen/webhooks: the endpoints, oldest
// first, without their secrets.
type WebhookList struct {
	Success  bool      `json:"success"`
	Webhooks []Webhook `json:"webhooks"`
}

// WebhookSecret is the 200 of GET /api/gen/webhooks/secret: the
// account's secret, which signs the events sent to a start's webhookUrl.
type WebhookSecret struct {
	Success bool   `json:"success"`
	Secret  string `json:"secret"`
}

// WebhookDeleted is the 200 of DELETE /api/gen/webhooks/{webhookId}.
type WebhookDeleted struct {
	Success bool   `json:"success"`
	ID      string `json:"id"`
}

// DeliveryAttempt is one try to deliver an event to an endpoint.
type DeliveryAttempt struct {
	// DeliveryID is the webhook-id: the same on every try of an event.
	DeliveryID string `json:"deliveryId"`
	Event      string `json:"event"`
	TaskID     string `json:"taskId"`
	Attempt    int    `json:"attempt"`
	At         Time   `json:"at"`
	// Status is the receiver's HTTP status, 0 when none came back.
	Status    int    `json:"status"`
	LatencyMS int64  `json:"latencyMs"`
	Error     string `json:"error,omitempty"`
}

// DeliveriesPage is the 200 of GET
// /api/gen/webhooks/{webhookId}/deliveries: attempts, newest first.
type DeliveriesPage struct {
	Success    bool              `json:"success"`
	Deliveries []DeliveryAttempt `json:"deliveries"`
	// NextCursor fetches the next page; absent on the last.
	NextCursor string `json:"nextCursor,omitempty"`
}

// DeliveryReplayed is the 202 of POST
// /api/gen/webhooks/{webhookId}/deliveries/{deliveryId}/replay.
type DeliveryReplayed struct {
	Success    bool   `json:"success"`
	DeliveryID string `json:"deliveryId"`
	QueuedAt   Time   `json:"queuedAt"`
}

// WebhookEvent is the body of a webhook delivery: the same bytes on every
// attempt, signed as Standard Webhooks says (shared/webhook).
type WebhookEvent struct {
	// ID is not in the body: it is the delivery's webhook-id header, which
	// the Go client copies here. Dedupe on it: delivery is at least once.
	ID string `json:"-"`
	// Type is EventProcessing, EventCompleted or EventFailed.
	Type string `json:"type"`
	// Timestamp is when the event happened, RFC 3339 with nanoseconds.
	Timestamp time.Time `json:"timestamp"`
	// Data is the task as its status body shows it, without its videos,
	// whose links expire: a receiver of generation.completed gets fresh
	// ones from the status or download endpoint with its key.
	Data Task `json:"data"`
}
