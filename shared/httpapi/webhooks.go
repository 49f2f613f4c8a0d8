package httpapi

import (
	"net/http"
	"strconv"

	"github.com/genvideo/gen/shared/domain"
	"github.com/genvideo/gen/shared/service"
	"github.com/genvideo/gen/shared/store"
	"github.com/genvideo/gen/shared/wire"
)

// webhookOf is an endpoint as the API shows it.
func webhookOf(e domain.WebhookEndpoint) wire.Webhook {
	return wire.Webhook{ID: e.ID, URL: e.URL, Events: e.Events, Secret: e.Secret, CreatedAt: wire.TimeOf(e.CreatedAt)}
}

const maxWebhookBody = 8 << 10

func (a *API) createWebhook(w http.ResponseWriter, r *http.Request, c *service.Caller) error {
	var req wire.WebhookRequest
	if err := decodeObject(w, r, maxWebhookBody, &req, "The body must be a JSON object with url (https) and, optionally, events "+
		"(generation.processing, generation.completed, generation.failed)."); err != nil {
		return err
	}
	e, err := a.svc.CreateWebhook(r.Context(), *c, req.URL, req.Events)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, wire.WebhookCreated{Success: true, Webhook: webhookOf(e)})
	return nil
}

func (a *API) listWebhooks(w http.ResponseWriter, r *http.Request, c *service.Caller) error {
	es, err := a.svc.Webhooks(r.Context(), *c)
	if err != nil {
		return err
	}
	out := make([]wire.Webhook, 0, len(es))
	for _, e := range es {
		out = append(out, webhookOf(e))
	}
	writeJSON(w, http.StatusOK, wire.WebhookList{Success: true, Webhooks: out})
	return nil
}

func (a *API) webhookSecret(w http.ResponseWriter, r *http.Request, c *service.Caller) error {
	secret, err := a.svc.SigningSecret(r.Context(), *c)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, wire.WebhookSecret{Success: true, Secret: secret})
	return nil
}

func (a *API) deleteWebhook(w http.ResponseWriter, r *http.Request, c *service.Caller) error {
	if err := a.svc.DeleteWebhook(r.Context(), *c, r.PathValue("webhookId")); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, wire.WebhookDeleted{Success: true, ID: r.PathValue("webhookId")})
	return nil
}

func (a *API) webhookAttempts(w http.ResponseWriter, r *http.Request, c *service.Caller) error {
	id := r.PathValue("webhookId")
	q := store.AttemptQuery{Limit: 20}
	pos, ok, err := a.openCursor(r.Context(), r.URL.Query(), listDeliveries(id), c, "cursor must be a nextCursor this endpoint returned.")
	if err != nil {
		return err
	}
	if ok {
		q.Cursor = pos
	}
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100 {
			return badRequest("limit", "limit must be a whole number from 1 to 100.")
		}
		q.Limit = n
	}
	as, next, err := a.svc.WebhookAttempts(r.Context(), *c, id, q)
	if err != nil {
		return err
	}
	if next != "" {
		// The store's position (SQLite's attempt sequence is shared by
		// every endpoint) is sealed too.
		if next, err = a.sealCursor(r.Context(), listDeliveries(id), c, next); err != nil {
			return err
		}
	}
	out := make([]wire.DeliveryAttempt, 0, len(as))
	for _, at := range as {
		out = append(out, wire.DeliveryAttempt{DeliveryID: at.DeliveryID, Event: at.Event, TaskID: at.TaskID,
			Attempt: at.Attempt, At: wire.TimeOf(at.At), Status: at.Status,
			LatencyMS: at.Latency.Milliseconds(), Error: at.Error})
	}
	writeJSON(w, http.StatusOK, wire.DeliveriesPage{Success: true, Deliveries: out, NextCursor: next})
	return nil
}

func (a *API) replayDelivery(w http.ResponseWriter, r *http.Request, c *service.Caller) error {
	if err := a.svc.ReplayDelivery(r.Context(), *c, r.PathValue("webhookId"), r.PathValue("deliveryId")); err != nil {
		return err
	}
	writeJSON(w, http.StatusAccepted, wire.DeliveryReplayed{Success: true, DeliveryID: r.PathValue("deliveryId"), QueuedAt: wire.TimeOf(c.Now)})
	return nil
}
