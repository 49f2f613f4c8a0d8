package functions_test

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/genvideo/gen/shared/awsstack/webhooksdeliverlambda"
	"github.com/genvideo/gen/shared/settings"
	"github.com/genvideo/gen/shared/testing/webhooktest"
	"github.com/genvideo/gen/shared/webhook"
)

// webhookEvent is an endpoint's testdata event with another method, path,
// path parameters and JSON body.
func webhookEvent(t *testing.T, name, method, path string, params map[string]string, body string) []byte {
	t.Helper()
	ev := proxyEvent(t, name)
	ev.HTTPMethod, ev.Path, ev.PathParameters = method, path, params
	ev.RequestContext.HTTPMethod = method
	if body != "" {
		ev.Body = body
		ev.Headers["Content-Type"] = "application/json"
		ev.MultiValueHeaders["Content-Type"] = []string{"application/json"}
	}
	return mustJSON(t, ev)
}

// testWebhooks drives the webhook functions and the delivery function:
// an endpoint is added (its loopback URL refused unless the test's env
// allows private addresses, which the template never does), listed, its
// secret and the account's read; a start carrying webhookUrl is accepted
// and cancelled, and the delivery function, woken by a stream batch,
// posts generation.failed to both, signed per Standard Webhooks; a
// replay is sent by the scheduled run with the same webhook-id; the
// attempts are listed; the endpoint is deleted.
func testWebhooks(t *testing.T, h *harness) {
	rcv := webhooktest.NewReceiver(t, http.StatusOK)
	private := settings.WebhookAllowPrivate + "=1"
	hooks := h.start(t, "webhooks", private)

	t.Run("loopback refused without the local setting", func(t *testing.T) {
		var body struct{ Error, Field string }
		resp := response(t, h.fn(t, "webhooks").Invoke(t, webhookEvent(t, "webhooks", "POST", "/api/gen/webhooks", nil,
			`{"url":"`+rcv.URL+`/hook"}`)), &body)
		if resp.StatusCode != http.StatusBadRequest || body.Field != "url" {
			t.Errorf("create with %s: %d %s, want 400 on url", rcv.URL, resp.StatusCode, resp.Body)
		}
	})

	var created struct {
		Webhook struct{ ID, URL, Secret string }
	}
	resp := response(t, hooks.Invoke(t, webhookEvent(t, "webhooks", "POST", "/api/gen/webhooks", nil,
		`{"url":"`+rcv.URL+`/hook"}`)), &created)
	if resp.StatusCode != http.StatusCreated || !strings.HasPrefix(created.Webhook.Secret, "whsec_") {
		t.Fatalf("create: %d %s, want 201 with a whsec_ secret", resp.StatusCode, resp.Body)
	}
	id := created.Webhook.ID

	var list struct{ Webhooks []struct{ ID, Secret string } }
	resp = response(t, hooks.Invoke(t, readEvent(t, "webhooks")), &list)
	if resp.StatusCode != http.StatusOK || len(list.Webhooks) != 1 || list.Webhooks[0].ID != id || list.Webhooks[0].Secret != "" {
		t.Errorf("list: %d %s, want %s without its secret", resp.StatusCode, resp.Body, id)
	}
	resp = response(t, hooks.Invoke(t, webhookEvent(t, "webhooks", "DELETE", "/api/gen/webhooks", nil, "")), nil)
	if resp.StatusCode != http.StatusMethodNotAllowed || !strings.Contains(strings.Join(resp.MultiValueHeaders["Allow"], ","), "POST") ||
		!strings.Contains(strings.Join(resp.MultiValueHeaders["Allow"], ","), "GET") {
		t.Errorf("DELETE /api/gen/webhooks: %d %v, want 405 allowing POST and GET", resp.StatusCode, resp.MultiValueHeaders["Allow"])
	}

	var secret struct{ Secret string }
	resp = response(t, h.fn(t, "webhook-secret").Invoke(t, readEvent(t, "webhook-secret")), &secret)
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(secret.Secret, "whsec_") {
		t.Fatalf("secret: %d %s", resp.StatusCode, resp.Body)
	}

	// A start with webhookUrl: accepted on AWS (it answered 503 before
	// the endpoints had the webhooks table).
	start := proxyEvent(t, "text-to-video")
	start.Body = strings.Replace(start.Body, `{`, `{"webhookUrl": "`+rcv.URL+`/task",`, 1)
	var started struct{ TaskID string }
	resp = response(t, h.start(t, "text-to-video", private).Invoke(t, mustJSON(t, start)), &started)
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("start with webhookUrl: %d %s, want 202", resp.StatusCode, resp.Body)
	}
	cancel := webhookEvent(t, "cancel", "POST", "/api/gen/cancel/"+started.TaskID, map[string]string{"taskId": started.TaskID}, "")
	if resp := response(t, h.fn(t, "cancel").Invoke(t, cancel), nil); resp.StatusCode != http.StatusOK {
		t.Fatalf("cancel: %d %s", resp.StatusCode, resp.Body)
	}

	deliverFn := h.start(t, "webhooks-deliver", private)
	// run invokes the delivery function with one of its testdata events:
	// event.json is a stream batch, schedule.json a scheduled event.
	run := func(file string) webhooksdeliverlambda.Report {
		t.Helper()
		event, err := os.ReadFile(filepath.Join("webhooks-deliver", "testdata", file))
		if err != nil {
			t.Fatal(err)
		}
		res := deliverFn.Invoke(t, event)
		if res.IsError {
			t.Fatalf("webhooks-deliver: %s %s\n%s", res.ErrorType, res.ErrorMessage, deliverFn.Log())
		}
		var r webhooksdeliverlambda.Report
		if err := json.Unmarshal(res.Payload, &r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	verify := func(p webhooktest.Delivery, secret string) string {
		t.Helper()
		if err := webhook.Verify(secret, p.Header, p.Body, time.Now()); err != nil {
			t.Errorf("post to %s: %v", p.Path, err)
		}
		var payload struct {
			Type string
			Data struct{ TaskID, Status string }
		}
		if err := json.Unmarshal(p.Body, &payload); err != nil || payload.Type != "generation.failed" ||
			payload.Data.TaskID != started.TaskID || payload.Data.Status != "failed" {
			t.Errorf("post to %s: %s (%v), want generation.failed of %s", p.Path, p.Body, err, started.TaskID)
		}
		return p.Header.Get(webhook.HeaderID)
	}

	var deliveryID string
	t.Run("stream", func(t *testing.T) {
		if r := run("event.json"); r.Trigger != webhooksdeliverlambda.TriggerStream || r.Attempted != 2 {
			t.Errorf("report %+v, want the stream trigger and 2 attempts", r)
		}
		posts := rcv.Await(t, 2)
		if len(posts) != 2 {
			t.Fatalf("receiver got %d posts, want 2 (the endpoint and the task's URL)", len(posts))
		}
		for _, p := range posts {
			switch p.Path {
			case "/hook":
				deliveryID = verify(p, created.Webhook.Secret)
			case "/task":
				verify(p, secret.Secret)
			default:
				t.Errorf("post to %s", p.Path)
			}
		}
		// Nothing is due any more.
		if r := run("event.json"); r.Attempted != 0 {
			t.Errorf("second run attempted %d, want 0", r.Attempted)
		}
	})

	t.Run("replay through the schedule", func(t *testing.T) {
		replay := webhookEvent(t, "webhook-replay", "POST", "/api/gen/webhooks/"+id+"/deliveries/"+deliveryID+"/replay",
			map[string]string{"webhookId": id, "deliveryId": deliveryID}, "")
		if resp := response(t, h.fn(t, "webhook-replay").Invoke(t, replay), nil); resp.StatusCode != http.StatusAccepted {
			t.Fatalf("replay: %d %s", resp.StatusCode, resp.Body)
		}
		if r := run("schedule.json"); r.Trigger != webhooksdeliverlambda.TriggerSchedule || r.Attempted != 1 {
			t.Errorf("scheduled run: %+v, want the schedule trigger and 1 attempt", r)
		}
		posts := rcv.Await(t, 3)[2:]
		if len(posts) != 1 || posts[0].Path != "/hook" {
			t.Fatalf("receiver got %d posts, want the replay", len(posts))
		}
		if got := verify(posts[0], created.Webhook.Secret); got != deliveryID {
			t.Errorf("replay's webhook-id %s, want %s", got, deliveryID)
		}
	})

	t.Run("deliveries", func(t *testing.T) {
		var body struct {
			Deliveries []struct {
				DeliveryID string
				Attempt    int
				Status     int
			}
		}
		ev := webhookEvent(t, "webhook-deliveries", "GET", "/api/gen/webhooks/"+id+"/deliveries", map[string]string{"webhookId": id}, "")
		resp := response(t, h.fn(t, "webhook-deliveries").Invoke(t, ev), &body)
		if resp.StatusCode != http.StatusOK || len(body.Deliveries) != 2 || body.Deliveries[0].Attempt != 2 ||
			body.Deliveries[0].DeliveryID != deliveryID || body.Deliveries[0].Status != http.StatusOK {
			t.Errorf("deliveries: %d %s, want the two attempts of %s, newest first", resp.StatusCode, resp.Body, deliveryID)
		}
	})

	t.Run("delete", func(t *testing.T) {
		del := webhookEvent(t, "webhook-delete", "DELETE", "/api/gen/webhooks/"+id, map[string]string{"webhookId": id}, "")
		if resp := response(t, h.fn(t, "webhook-delete").Invoke(t, del), nil); resp.StatusCode != http.StatusOK {
			t.Fatalf("delete: %d %s", resp.StatusCode, resp.Body)
		}
		var body struct{ Error string }
		if resp := response(t, h.fn(t, "webhook-delete").Invoke(t, del), &body); resp.StatusCode != http.StatusNotFound {
			t.Errorf("second delete: %d %s, want 404", resp.StatusCode, resp.Body)
		}
		if resp := response(t, hooks.Invoke(t, readEvent(t, "webhooks")), &list); resp.StatusCode != http.StatusOK || len(list.Webhooks) != 0 {
			t.Errorf("list after delete: %d %s, want none", resp.StatusCode, resp.Body)
		}
	})
}
