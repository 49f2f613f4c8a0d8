package client_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/genvideo/gen/shared/client"
	"github.com/genvideo/gen/shared/devstack"
	"github.com/genvideo/gen/shared/store"
	"github.com/genvideo/gen/shared/testing/devstacktest"
	"github.com/genvideo/gen/shared/testing/webhooktest"
	"github.com/genvideo/gen/shared/webhook"
)

// TestWebhooks drives every webhook call of the client against the real
// local server, and verifies what a receiver gets with VerifyWebhook.
func TestWebhooks(t *testing.T) {
	env := devstacktest.Start(t, func(c *devstack.Config) { c.WebhookAllowPrivate = true })
	k := env.Key(t, 1000, store.KeyLimits{})
	c := clientOf(t, env.URL, k.APIKey, true)
	ctx := context.Background()
	rcv := webhooktest.NewReceiver(t, http.StatusNoContent)

	wh, err := c.CreateWebhook(ctx, client.WebhookRequest{URL: rcv.URL + "/endpoint", Events: []string{client.EventCompleted}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(wh.Secret, "whsec_") || wh.ID == "" || wh.CreatedAt.IsZero() || len(wh.Events) != 1 {
		t.Fatalf("CreateWebhook = %+v", wh)
	}
	list, err := c.Webhooks(ctx)
	if err != nil || len(list) != 1 || list[0].ID != wh.ID || list[0].Secret != "" {
		t.Fatalf("Webhooks = %+v, %v; want the one endpoint, without its secret", list, err)
	}
	taskSecret, err := c.WebhookSigningSecret(ctx)
	if err != nil || !strings.HasPrefix(taskSecret, "whsec_") {
		t.Fatalf("WebhookSigningSecret = %q, %v", taskSecret, err)
	}
	// A refused URL is the contract's validation error.
	_, err = c.CreateWebhook(ctx, client.WebhookRequest{URL: "ftp://example.com/x"})
	var apiErr *client.Error
	if !errors.As(err, &apiErr) || apiErr.Status != 400 || apiErr.Code != "VALIDATION_ERROR" {
		t.Errorf("CreateWebhook(ftp) = %v, want a 400 VALIDATION_ERROR", err)
	}

	started, err := c.TextToVideo(ctx, client.Request{Prompt: "a paper boat", Model: client.ModelLite, DurationSeconds: 4,
		WebhookURL: rcv.URL + "/task"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Wait(ctx, started.TaskID, client.WaitOptions{Timeout: 3 * time.Minute, MaxInterval: time.Second}); err != nil {
		t.Fatal(err)
	}
	// The task's URL: processing and completed; the endpoint: completed.
	got := rcv.Await(t, 3)
	completed := map[string]string{}
	for _, d := range got {
		secret := map[string]string{"/endpoint": wh.Secret, "/task": taskSecret}[d.Path]
		ev, err := client.VerifyWebhook(secret, d.Header, d.Body)
		if err != nil {
			t.Errorf("%s: VerifyWebhook: %v", d.Path, err)
			continue
		}
		if ev.Data.TaskID != started.TaskID || ev.ID != d.Header.Get("webhook-id") || ev.Timestamp.IsZero() {
			t.Errorf("%s: event %+v", d.Path, ev)
		}
		if ev.Type == client.EventCompleted {
			if ev.Data.Status != client.StatusCompleted || ev.Data.DownloadURL == "" {
				t.Errorf("%s: completed event's task %+v", d.Path, ev.Data)
			}
			completed[d.Path] = ev.ID
		}
		// The wrong secret, or a changed body, is refused.
		if _, err := client.VerifyWebhook(webhook.NewSecret(), d.Header, d.Body); !errors.Is(err, client.ErrWebhookSignature) {
			t.Errorf("%s: verified with another secret: %v", d.Path, err)
		}
		tampered := append([]byte(nil), d.Body...)
		tampered[len(tampered)-2] ^= 1
		if _, err := client.VerifyWebhook(secret, d.Header, tampered); !errors.Is(err, client.ErrWebhookSignature) {
			t.Errorf("%s: verified a changed body: %v", d.Path, err)
		}
	}
	if completed["/endpoint"] == "" || completed["/task"] == "" {
		t.Fatalf("completed events %v, want one at each URL", completed)
	}

	// The delivery log, page by page, and a replay with the same id.
	page, err := c.WebhookDeliveries(ctx, wh.ID, client.DeliveriesQuery{Limit: 1})
	if err != nil || len(page.Deliveries) != 1 || page.Deliveries[0].Status != 204 ||
		page.Deliveries[0].DeliveryID != completed["/endpoint"] || page.Deliveries[0].Attempt != 1 {
		t.Fatalf("WebhookDeliveries = %+v, %v", page, err)
	}
	if err := c.ReplayDelivery(ctx, wh.ID, completed["/endpoint"]); err != nil {
		t.Fatal(err)
	}
	again := rcv.Await(t, 4)[3]
	if again.Path != "/endpoint" || again.Header.Get("webhook-id") != completed["/endpoint"] {
		t.Errorf("replay arrived at %s with id %s, want /endpoint with %s", again.Path, again.Header.Get("webhook-id"), completed["/endpoint"])
	}
	if _, err := client.VerifyWebhook(wh.Secret, again.Header, again.Body); err != nil {
		t.Errorf("replay: %v", err)
	}
	// The replay's attempt is recorded once the worker has written it:
	// the log then holds two attempts, which the iterator pages through.
	var attempts []client.DeliveryAttempt
	for i := 0; len(attempts) < 2; i++ {
		attempts = attempts[:0]
		for a, err := range c.AllWebhookDeliveries(ctx, wh.ID, client.DeliveriesQuery{Limit: 1}) {
			if err != nil {
				t.Fatal(err)
			}
			attempts = append(attempts, a)
		}
		if i > 600 {
			t.Fatalf("attempts %+v, want two", attempts)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if len(attempts) != 2 || attempts[0].Attempt != 2 || attempts[1].Attempt != 1 {
		t.Errorf("attempts %+v, want the replay (2) then the first (1)", attempts)
	}
	_, err = c.WebhookDeliveries(ctx, wh.ID, client.DeliveriesQuery{Cursor: "not-a-cursor"})
	if !errors.As(err, &apiErr) || apiErr.Status != 400 || apiErr.Code != "VALIDATION_ERROR" || apiErr.Field != "cursor" {
		t.Errorf("a bad cursor: %v, want a 400 VALIDATION_ERROR on cursor", err)
	}

	if err := c.DeleteWebhook(ctx, wh.ID); err != nil {
		t.Fatal(err)
	}
	if list, err := c.Webhooks(ctx); err != nil || len(list) != 0 {
		t.Errorf("Webhooks after delete = %+v, %v", list, err)
	}
	err = c.DeleteWebhook(ctx, wh.ID)
	if !errors.As(err, &apiErr) || apiErr.Status != 404 {
		t.Errorf("DeleteWebhook again = %v, want a 404", err)
	}
}
