// Package webhooksdeliverlambda builds the handler of the webhooks-deliver
// Lambda: the webhook worker of shared/webhook/delivery (the one the local
// stack runs) on the DynamoDB outbox. Two triggers invoke it: the webhooks
// table's stream, when a move writes new outbox rows (first attempts at
// once), and a schedule every minute, which finds the retries that have
// come due. Either way it runs RunDue, which reads what is due from the
// table's due index: the event's records only wake it, so that a lost or
// failed invocation loses nothing, and retries last as long as the rows
// (days), not as long as any invocation.
package webhooksdeliverlambda

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"

	"github.com/genvideo/gen/shared/awsstack"
	"github.com/genvideo/gen/shared/webhook"
	"github.com/genvideo/gen/shared/webhook/delivery"
)

// Handler is the Lambda's handler. Build it with New.
type Handler struct {
	worker *delivery.Worker
	log    *slog.Logger
}

// New returns the handler on the stack's store. Private addresses are
// refused unless GEN_WEBHOOK_ALLOW_PRIVATE, which the template never
// sets (tests and one-machine assemblies set it for loopback receivers).
func New(s *awsstack.Deployment) *Handler {
	return &Handler{
		worker: &delivery.Worker{Outbox: s.Store, Logger: s.Logger,
			Sender: &webhook.Sender{AllowPrivate: s.Env.WebhookAllowPrivate}},
		log: s.Logger,
	}
}

// Trigger names what invoked the function.
const (
	TriggerStream   = "stream"
	TriggerSchedule = "schedule"
	TriggerOther    = "other"
)

// Report is what one invocation did; it is logged, and a test reads it.
type Report struct {
	Trigger string `json:"trigger"`
	// Records is the number of stream records that woke it.
	Records   int `json:"records"`
	Attempted int `json:"attempted"`
}

// event is what Handle reads of its event: a DynamoDB stream batch has
// Records, an EventBridge scheduled event a source.
type event struct {
	Records []struct {
		EventSource string `json:"eventSource"`
	} `json:"Records"`
	Source string `json:"source"`
}

// Handle delivers what is due. Its error fails the invocation: a stream
// batch is then retried (as the template bounds it), a scheduled run is
// not (the next minute's run reads the same due rows).
func (h *Handler) Handle(ctx context.Context, raw json.RawMessage) (Report, error) {
	var ev event
	if err := json.Unmarshal(raw, &ev); err != nil {
		return Report{}, fmt.Errorf("webhooks-deliver: the event is not a JSON object: %w", err)
	}
	r := Report{Trigger: TriggerOther, Records: len(ev.Records)}
	switch {
	case len(ev.Records) > 0 && ev.Records[0].EventSource == "aws:dynamodb":
		r.Trigger = TriggerStream
	case ev.Source == "aws.events":
		r.Trigger = TriggerSchedule
	}
	n, err := h.worker.RunDue(ctx)
	r.Attempted = n
	h.log.Info("webhook deliveries", "trigger", r.Trigger, "records", r.Records, "attempted", n)
	if err != nil {
		return r, fmt.Errorf("webhooks-deliver: %w", err)
	}
	return r, nil
}
