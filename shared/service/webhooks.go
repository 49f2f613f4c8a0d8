package service

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/genvideo/gen/shared/domain"
	"github.com/genvideo/gen/shared/params"
	"github.com/genvideo/gen/shared/store"
	"github.com/genvideo/gen/shared/webhook"
)

// ErrWebhookNotFound: the caller's account has no webhook endpoint (or
// delivery) of that id.
var ErrWebhookNotFound = errors.New("webhook not found")

// ErrWebhooksUnavailable: this deployment keeps no webhooks.
var ErrWebhooksUnavailable = fmt.Errorf("webhooks: %w", store.ErrUnavailable)

// MaxWebhooks bounds an account's endpoints: each event is written once
// per endpoint, in the transaction of the task's move.
const MaxWebhooks = 10

// checkWebhookURL refuses a URL a delivery must not go to, as a
// VALIDATION_ERROR on field.
func (s *Service) checkWebhookURL(ctx context.Context, field, u string) error {
	err := webhook.CheckURL(ctx, u, s.cfg.WebhookAllowPrivate, s.cfg.WebhookResolver)
	var ue *webhook.URLError
	if errors.As(err, &ue) {
		return &params.Error{Code: params.CodeValidation, Field: field, Value: u,
			Message: field + ": " + ue.Error()}
	}
	return err
}

// ensureSigningSecret makes sure the account has the signing secret the
// deliveries of a start's webhookUrl are signed with (newTask has checked
// the URL).
func (s *Service) ensureSigningSecret(ctx context.Context, c Caller) error {
	if _, err := s.cfg.Webhooks.SigningSecret(ctx, c.Key.AccountID, webhook.NewSecret()); err != nil {
		return fmt.Errorf("signing secret: %w", err)
	}
	return nil
}

// CreateWebhook registers url for events (every event type when none is
// given) on the caller's account and returns the endpoint with its
// secret, which is shown this once.
func (s *Service) CreateWebhook(ctx context.Context, c Caller, url string, events []string) (domain.WebhookEndpoint, error) {
	if s.cfg.Webhooks == nil {
		return domain.WebhookEndpoint{}, ErrWebhooksUnavailable
	}
	if len(events) == 0 {
		events = domain.EventTypes
	}
	var evs []string
	for _, ev := range events {
		if !slices.Contains(domain.EventTypes, ev) {
			return domain.WebhookEndpoint{}, &params.Error{Code: params.CodeValidation, Field: "events", Value: ev,
				Message: fmt.Sprintf("unknown event %q; events are %s", ev, strings.Join(domain.EventTypes, ", "))}
		}
		if !slices.Contains(evs, ev) {
			evs = append(evs, ev)
		}
	}
	if err := s.checkWebhookURL(ctx, "url", url); err != nil {
		return domain.WebhookEndpoint{}, err
	}
	have, err := s.cfg.Webhooks.Webhooks(ctx, c.Key.AccountID)
	if err != nil {
		return domain.WebhookEndpoint{}, err
	}
	if len(have) >= MaxWebhooks {
		return domain.WebhookEndpoint{}, &params.Error{Code: params.CodeValidation, Field: "url",
			Message: fmt.Sprintf("an account has at most %d webhook endpoints; delete one first", MaxWebhooks)}
	}
	e := domain.WebhookEndpoint{ID: "wh_" + rand.Text()[:20], AccountID: c.Key.AccountID, URL: url,
		Events: evs, Secret: webhook.NewSecret(), CreatedAt: c.Now.UTC()}
	if err := s.cfg.Webhooks.CreateWebhook(ctx, e); err != nil {
		return domain.WebhookEndpoint{}, fmt.Errorf("create webhook: %w", err)
	}
	return e, nil
}

// Webhooks lists the caller's endpoints, their secrets blanked.
func (s *Service) Webhooks(ctx context.Context, c Caller) ([]domain.WebhookEndpoint, error) {
	if s.cfg.Webhooks == nil {
		return nil, ErrWebhooksUnavailable
	}
	es, err := s.cfg.Webhooks.Webhooks(ctx, c.Key.AccountID)
	for i := range es {
		es[i].Secret = ""
	}
	return es, err
}

// DeleteWebhook removes the caller's endpoint id.
func (s *Service) DeleteWebhook(ctx context.Context, c Caller, id string) error {
	if s.cfg.Webhooks == nil {
		return ErrWebhooksUnavailable
	}
	return notFound(s.cfg.Webhooks.DeleteWebhook(ctx, c.Key.AccountID, id, c.Now))
}

// WebhookAttempts is a page of the attempts of the caller's endpoint id.
func (s *Service) WebhookAttempts(ctx context.Context, c Caller, id string, q store.AttemptQuery) ([]store.DeliveryAttempt, string, error) {
	if s.cfg.Webhooks == nil {
		return nil, "", ErrWebhooksUnavailable
	}
	as, next, err := s.cfg.Webhooks.Attempts(ctx, c.Key.AccountID, id, q)
	if errors.Is(err, store.ErrBadCursor) {
		return nil, "", &params.Error{Code: params.CodeValidation, Field: "cursor", Value: q.Cursor,
			Message: "cursor must be a nextCursor this endpoint returned."}
	}
	return as, next, notFound(err)
}

// ReplayDelivery sends the caller's delivery again, now.
func (s *Service) ReplayDelivery(ctx context.Context, c Caller, endpointID, deliveryID string) error {
	if s.cfg.Webhooks == nil {
		return ErrWebhooksUnavailable
	}
	return notFound(s.cfg.Webhooks.ReplayDelivery(ctx, c.Key.AccountID, endpointID, deliveryID, c.Now))
}

// SigningSecret is the secret the deliveries to starts' webhookUrls are
// signed with, created on first use.
func (s *Service) SigningSecret(ctx context.Context, c Caller) (string, error) {
	if s.cfg.Webhooks == nil {
		return "", ErrWebhooksUnavailable
	}
	return s.cfg.Webhooks.SigningSecret(ctx, c.Key.AccountID, webhook.NewSecret())
}

func notFound(err error) error {
	if errors.Is(err, domain.ErrNotFound) {
		return fmt.Errorf("%w: %w", ErrWebhookNotFound, err)
	}
	return err
}
