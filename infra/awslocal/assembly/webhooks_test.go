package assembly

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/genvideo/gen/shared/admin"
	"github.com/genvideo/gen/shared/client"
	"github.com/genvideo/gen/shared/testing/webhooktest"
	"github.com/genvideo/gen/shared/webhook"
)

// TestWebhooksByStream: with WebhookAllowPrivate (GEN_WEBHOOK_ALLOW_PRIVATE
// given to aws-local), an endpoint registered through the gateway at a
// receiver on loopback gets a verified generation.completed for a task.
// The schedule runs once an hour here, so what delivers it is the
// webhooks table's stream, read by the assembly and handed to
// webhooks-deliver as Lambda's event source mapping would. Then (issue
// 20) a replay of it is sent now, by the stream too, not at the next
// scheduled run; and another account's ten endpoints at a receiver that
// holds every connection do not delay this account's next delivery.
func TestWebhooksByStream(t *testing.T) {
	ctx := context.Background()
	a, logs := startAssembly(t, Config{ScheduleInterval: time.Hour, WebhookAllowPrivate: true})

	type message struct {
		header http.Header
		body   []byte
	}
	got := make(chan message, 16)
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got <- message{r.Header.Clone(), b}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer recv.Close()

	k, err := a.CreateKey(ctx, admin.KeyRequest{Name: "hooks", Credits: 5000, Tier: "pro"})
	if err != nil {
		t.Fatal(err)
	}
	kc, err := client.New(a.BaseURL, k.APIKey)
	if err != nil {
		t.Fatal(err)
	}
	wh, err := kc.CreateWebhook(ctx, client.WebhookRequest{URL: recv.URL + "/hook", Events: []string{"generation.completed"}})
	if err != nil {
		t.Fatalf("create a loopback endpoint with GEN_WEBHOOK_ALLOW_PRIVATE: %v", err)
	}
	st, err := kc.TextToVideo(ctx, client.Request{Prompt: "a kite over a beach", DurationSeconds: 4})
	if err != nil {
		t.Fatal(err)
	}
	var firstID string
	select {
	case m := <-got:
		firstID = m.header.Get("webhook-id")
		if err := webhook.Verify(wh.Secret, m.header, m.body, time.Now()); err != nil {
			t.Fatalf("the delivery does not verify: %v", err)
		}
		var p struct {
			Type string
			Data struct{ TaskID string }
		}
		if err := json.Unmarshal(m.body, &p); err != nil || p.Type != "generation.completed" || p.Data.TaskID != st.TaskID {
			t.Fatalf("delivery %s; want generation.completed of %s", m.body, st.TaskID)
		}
	case <-time.After(5 * time.Minute):
		t.Fatal("no delivery within 5 minutes")
	}
	// The invocation that sent it ends after the receiver answered.
	for end := time.Now().Add(time.Minute); time.Now().Before(end) && !strings.Contains(logs.String(), `"stream invocation"`); {
		time.Sleep(100 * time.Millisecond)
	}
	if l := logs.String(); !strings.Contains(l, `"stream invocation"`) || strings.Contains(l, `"scheduled invocation"`) {
		t.Error("the delivery did not come by the stream (no stream invocation, or a scheduled one)")
	}

	// A replay is sent now: the stream carries it too (the schedule is
	// an hour away).
	replayed := func(what string) {
		t.Helper()
		if err := kc.ReplayDelivery(ctx, wh.ID, firstID); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		select {
		case m := <-got:
			if id := m.header.Get("webhook-id"); id != firstID {
				t.Fatalf("%s: delivered %s, want %s again", what, id, firstID)
			}
		case <-time.After(time.Minute):
			t.Fatalf("%s: not sent within a minute (the schedule runs hourly here)", what)
		}
	}
	replayed("the replay")

	// Another account's ten endpoints at a receiver that holds every
	// connection: this account's next delivery (a replay, written at
	// once) arrives while all of them are still held.
	slow := webhooktest.NewHolder(t)
	ok, err := a.CreateKey(ctx, admin.KeyRequest{Name: "slow", Credits: 5000, Tier: "pro"})
	if err != nil {
		t.Fatal(err)
	}
	oc, err := client.New(a.BaseURL, ok.APIKey)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		if _, err := oc.CreateWebhook(ctx, client.WebhookRequest{URL: fmt.Sprintf("%s/hook/%d", slow.URL, i),
			Events: []string{"generation.completed"}}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := oc.TextToVideo(ctx, client.Request{Prompt: "a slow kite", DurationSeconds: 4}); err != nil {
		t.Fatal(err)
	}
	for range 8 {
		select {
		case <-slow.Held:
		case <-time.After(5 * time.Minute):
			t.Fatal("the slow receiver got fewer than 8 deliveries within 5 minutes")
		}
	}
	replayed("a replay while another account's receiver holds ten deliveries")
	if _, _, ended := slow.Counts(); ended != 0 {
		t.Fatalf("the delivery arrived after %d slow attempts had ended; want while all were held", ended)
	}
}
