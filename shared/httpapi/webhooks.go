package httpapi

import (
	"net/http"
	"strconv"

	"github.com/genvideo/gen/shared/domain"
	"github.com/genvideo/gen/shared/service"
	"github.com/genvideo/gen/shared/store"
	"github.com/genvideo/gen/shared/task"
)

// WebhookData is the data of a webhook event about t: its body as GET
// /api/gen/status answers it, without the signed video links, which
// expire; a receiver of generation.completed follows downloadUrl with
// its key for fresh ones.
func WebhookData(t task.Task) any { return statusBody(t) }

// webhookJSON is an endpoint as the API shows it.
type webhookJSON struct {
	ID        string   `json:"id"`
	URL       string   `json:"url"`
	Events    []string `json:"events"`
	Secret    string   `json:"secret,omitempty"`
	CreatedAt string   `json:"createdAt"`
}

func toWebhookJSON(e domain.WebhookEndpoint) webhookJSON {
	return webhookJSON{ID: e.ID, URL: e.URL, Events: e.Events, Secret: e.Secret, CreatedAt: formatTime(e.CreatedAt)}
}

const maxWebhookBody = 8 << 10

func (a *API) createWebhook(w http.ResponseWriter, r *http.Request, c *service.Caller) error {
	var req struct {
		URL    string   `json:"url"`
		Events []string `json:"events"`
	}
	if err := decodeObject(w, r, maxWebhookBody, &req, "The body must be a JSON object with url (https) and, optionally, events "+
		"(generation.processing, generation.completed, generation.failed)."); err != nil {
		return err
	}
	e, err := a.svc.CreateWebhook(r.Context(), *c, req.URL, req.Events)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, struct {
		Success bool        `json:"success"`
		Webhook webhookJSON `json:"webhook"`
	}{true, toWebhookJSON(e)})
	return nil
}

func (a *API) listWebhooks(w http.ResponseWriter, r *http.Request, c *service.Caller) error {
	es, err := a.svc.Webhooks(r.Context(), *c)
	if err != nil {
		return err
	}
	out := make([]webhookJSON, 0, len(es))
	for _, e := range es {
		out = append(out, toWebhookJSON(e))
	}
	writeJSON(w, http.StatusOK, struct {
		Success  bool          `json:"success"`
		Webhooks []webhookJSON `json:"webhooks"`
	}{true, out})
	return nil
}

func (a *API) webhookSecret(w http.ResponseWriter, r *http.Request, c *service.Caller) error {
	secret, err := a.svc.SigningSecret(r.Context(), *c)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, struct {
		Success bool   `json:"success"`
		Secret  string `json:"secret"`
	}{true, secret})
	return nil
}

func (a *API) deleteWebhook(w http.ResponseWriter, r *http.Request, c *service.Caller) error {
	if err := a.svc.DeleteWebhook(r.Context(), *c, r.PathValue("webhookId")); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, struct {
		Success bool   `json:"success"`
		ID      string `json:"id"`
	}{true, r.PathValue("webhookId")})
	return nil
}

// attemptJSON is one delivery attempt as the API shows it.
type attemptJSON struct {
	DeliveryID string `json:"deliveryId"`
	Event      string `json:"event"`
	TaskID     string `json:"taskId"`
	Attempt    int    `json:"attempt"`
	At         string `json:"at"`
	Status     int    `json:"status"`
	LatencyMS  int64  `json:"latencyMs"`
	Error      string `json:"error,omitempty"`
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
	out := make([]attemptJSON, 0, len(as))
	for _, at := range as {
		out = append(out, attemptJSON{DeliveryID: at.DeliveryID, Event: at.Event, TaskID: at.TaskID,
			Attempt: at.Attempt, At: formatTime(at.At), Status: at.Status,
			LatencyMS: at.Latency.Milliseconds(), Error: at.Error})
	}
	writeJSON(w, http.StatusOK, struct {
		Success    bool          `json:"success"`
		Deliveries []attemptJSON `json:"deliveries"`
		NextCursor string        `json:"nextCursor,omitempty"`
	}{true, out, next})
	return nil
}

func (a *API) replayDelivery(w http.ResponseWriter, r *http.Request, c *service.Caller) error {
	if err := a.svc.ReplayDelivery(r.Context(), *c, r.PathValue("webhookId"), r.PathValue("deliveryId")); err != nil {
		return err
	}
	writeJSON(w, http.StatusAccepted, struct {
		Success    bool   `json:"success"`
		DeliveryID string `json:"deliveryId"`
		QueuedAt   string `json:"queuedAt"`
	}{true, r.PathValue("deliveryId"), formatTime(c.Now)})
	return nil
}
