package client

// Webhooks (an extension of the contract): account endpoints that
// receive a task's events, their delivery log and replay, and
// VerifyWebhook for receivers.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/genvideo/gen/shared/webhook"
	"github.com/genvideo/gen/shared/wire"
)

// Webhook event types.
const (
	EventProcessing = wire.EventProcessing
	EventCompleted  = wire.EventCompleted
	EventFailed     = wire.EventFailed
)

// Webhook is an endpoint registered for the account's events. Its Secret
// ("whsec_...") signs the endpoint's deliveries; the service shows it
// once, in CreateWebhook's answer: keep it then.
type Webhook = wire.Webhook

// WebhookRequest registers an endpoint.
type WebhookRequest = wire.WebhookRequest

// CreateWebhook registers an endpoint; the answer carries its signing
// secret, shown this once. It is not retried: a retry could register a
// second endpoint.
func (c *Client) CreateWebhook(ctx context.Context, req WebhookRequest) (*Webhook, error) {
	body, err := jsonBody(req)
	if err != nil {
		return nil, fmt.Errorf("gen: encode webhook: %w", err)
	}
	_, b, err := c.do(ctx, call{method: http.MethodPost, path: "/api/gen/webhooks", body: body})
	if err != nil {
		return nil, err
	}
	var v wire.WebhookCreated
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, fmt.Errorf("gen: POST /api/gen/webhooks: decode answer: %w", err)
	}
	return &v.Webhook, nil
}

// Webhooks lists the account's endpoints, oldest first, without their
// secrets.
func (c *Client) Webhooks(ctx context.Context) ([]Webhook, error) {
	var v wire.WebhookList
	if _, err := c.getJSON(ctx, "/api/gen/webhooks", nil, &v); err != nil {
		return nil, err
	}
	return v.Webhooks, nil
}

// DeleteWebhook removes an endpoint; its pending deliveries are not
// sent. It is not retried, so that a retry does not turn the first
// try's success into a 404.
func (c *Client) DeleteWebhook(ctx context.Context, id string) error {
	_, _, err := c.do(ctx, call{method: http.MethodDelete, path: "/api/gen/webhooks/" + url.PathEscape(id)})
	return err
}

// WebhookSigningSecret is the account's secret that signs the events
// sent to the webhookUrl a start carries (Request.WebhookURL).
func (c *Client) WebhookSigningSecret(ctx context.Context) (string, error) {
	var v wire.WebhookSecret
	if _, err := c.getJSON(ctx, "/api/gen/webhooks/secret", nil, &v); err != nil {
		return "", err
	}
	return v.Secret, nil
}

// DeliveryAttempt is one try to deliver an event to an endpoint.
type DeliveryAttempt = wire.DeliveryAttempt

// DeliveriesQuery selects a page of an endpoint's delivery attempts.
type DeliveriesQuery struct {
	Limit  int    // 1..100 (default 20)
	Cursor string // a page's NextCursor; "" for the newest
}

// DeliveriesPage is a page of attempts, newest first.
type DeliveriesPage = wire.DeliveriesPage

// WebhookDeliveries returns a page of the endpoint's delivery attempts,
// newest first.
func (c *Client) WebhookDeliveries(ctx context.Context, webhookID string, q DeliveriesQuery) (*DeliveriesPage, error) {
	v := url.Values{}
	if q.Limit != 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	if q.Cursor != "" {
		v.Set("cursor", q.Cursor)
	}
	var p DeliveriesPage
	if _, err := c.getJSON(ctx, "/api/gen/webhooks/"+url.PathEscape(webhookID)+"/deliveries", v, &p); err != nil {
		return nil, err
	}
	return &p, nil
}

// AllWebhookDeliveries yields every attempt of the endpoint from q's
// page on, newest first, following NextCursor. An error is yielded
// once, and ends the sequence.
func (c *Client) AllWebhookDeliveries(ctx context.Context, webhookID string, q DeliveriesQuery) iter.Seq2[DeliveryAttempt, error] {
	return allPages(q.Cursor, func(cursor string) ([]DeliveryAttempt, string, error) {
		q.Cursor = cursor
		p, err := c.WebhookDeliveries(ctx, webhookID, q)
		if err != nil {
			return nil, "", err
		}
		return p.Deliveries, p.NextCursor, nil
	})
}

// ReplayDelivery sends an event to the endpoint again, now, with the same
// webhook-id. Replaying twice queues it once, so it is retried.
func (c *Client) ReplayDelivery(ctx context.Context, webhookID, deliveryID string) error {
	_, _, err := c.do(ctx, call{method: http.MethodPost, retry: true,
		path: "/api/gen/webhooks/" + url.PathEscape(webhookID) + "/deliveries/" + url.PathEscape(deliveryID) + "/replay"})
	return err
}

// WebhookEvent is a delivered event; its ID is the delivery's
// webhook-id (dedupe on it: delivery is at least once), its Data the task
// as GET /api/gen/status shows it, without videos (Status fetches fresh
// links).
type WebhookEvent = wire.WebhookEvent

// ErrWebhookSignature is VerifyWebhook's error for a delivery that is
// not signed with the secret, or signed too long ago (errors.Is).
var ErrWebhookSignature = errors.New("gen: webhook not verified")

// VerifyWebhook checks a delivery the way Standard Webhooks does (the
// webhook-id, webhook-timestamp and webhook-signature headers; a
// timestamp within 5 minutes of now) with the endpoint's secret, or the
// account's (WebhookSigningSecret) for a start's webhookUrl, and decodes
// its event. Pass the body exactly as received.
func VerifyWebhook(secret string, header http.Header, body []byte) (*WebhookEvent, error) {
	if err := webhook.Verify(secret, header, body, time.Now()); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrWebhookSignature, err)
	}
	var e WebhookEvent
	if err := json.Unmarshal(body, &e); err != nil {
		return nil, fmt.Errorf("gen: webhook body: %w", err)
	}
	e.ID = header.Get(webhook.HeaderID)
	return &e, nil
}
