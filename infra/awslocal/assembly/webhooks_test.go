package assembly

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/genvideo/gen/shared/admin"
	"github.com/genvideo/gen/shared/client"
	"github.com/genvideo/gen/shared/webhook"
)

// TestWebhooksByStream: with WebhookAllowPrivate (GEN_WEBHOOK_ALLOW_PRIVATE
// given to aws-local), an endpoint registered through the gateway at a
// receiver on loopback gets a verified generation.completed for a task.
// The schedule runs once an hour here, so what delivers it is the
// webhooks table's stream, read by the assembly and handed to
// webhooks-deliver as Lambda's event source mapping would.
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
	select {
	case m := <-got:
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
}
