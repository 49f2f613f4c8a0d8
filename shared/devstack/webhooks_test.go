package devstack

import (
	"context"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"testing"

	"github.com/genvideo/gen/shared/store"
	"github.com/genvideo/gen/shared/testing/webhooktest"
)

// fakeDNS resolves the names a test gives it.
type fakeDNS map[string]string

func (f fakeDNS) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if ip, ok := f[host]; ok {
		return []netip.Addr{netip.MustParseAddr(ip)}, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// TestWebhookURLsRefusedOverTCP: with the operator setting off, a webhook
// URL at a loopback, metadata or private address, or at a name resolving
// to one, is refused with a clear 400, on registration and on a start;
// nothing is created or charged.
func TestWebhookURLsRefusedOverTCP(t *testing.T) {
	e := startEnv(t, "", func(c *Config) {
		c.WebhookResolver = fakeDNS{"inside.example": "10.0.0.1", "meta.example": "169.254.169.254", "localhost": "127.0.0.1"}
	})
	e.wantWebhookURLsRefused([]string{"https://127.0.0.1/hook", "https://169.254.169.254/latest", "https://10.0.0.1/x",
		"https://localhost/x", "https://inside.example/x", "https://meta.example/x", "http://example.com/x"})
}

// wantWebhookURLsRefused checks that each URL is refused with a 400 on
// registration and on a start, for a new account, which ends with
// nothing created or charged.
func (e *env) wantWebhookURLsRefused(urls []string) {
	t := e.t
	t.Helper()
	k := e.key(1000, store.KeyLimits{})
	for _, u := range urls {
		r := e.postJSON("/api/gen/webhooks", k.APIKey, `{"url":"`+u+`"}`)
		if r.status != http.StatusBadRequest || r.body["error"] != "VALIDATION_ERROR" || r.body["field"] != "url" ||
			!strings.Contains(str(r.body["message"]), "webhook URL") {
			t.Errorf("register %s = %d %s, want 400 VALIDATION_ERROR on url", u, r.status, r.raw)
		}
		r = e.postJSON("/api/gen/text-to-video", k.APIKey, `{"prompt":"a boat","webhookUrl":"`+u+`"}`)
		if r.status != http.StatusBadRequest || r.body["error"] != "VALIDATION_ERROR" || r.body["field"] != "webhookUrl" {
			t.Errorf("start with %s = %d %s, want 400 VALIDATION_ERROR on webhookUrl", u, r.status, r.raw)
		}
	}
	if got := e.balance(k.AccountID); got != 1000 {
		t.Errorf("balance %d after refused starts, want 1000", got)
	}
	if r := e.do(http.MethodGet, "/api/gen/webhooks", k.APIKey, "", nil); r.status != 200 || !strings.Contains(string(r.raw), `"webhooks":[]`) {
		t.Errorf("list = %d %s, want none", r.status, r.raw)
	}
}

// TestWebhooksDeliveredOverTCP: a receiver registered on the running
// server, and one a start names, each get the task's events, signed;
// the reference library verifies every one.
func TestWebhooksDeliveredOverTCP(t *testing.T) {
	rcv := webhooktest.NewReceiver(t, http.StatusNoContent)
	e := startEnv(t, "", func(c *Config) { c.WebhookAllowPrivate = true })
	k := e.key(1000, store.KeyLimits{})
	reg := e.postJSON("/api/gen/webhooks", k.APIKey, `{"url":"`+rcv.URL+`/endpoint","events":["generation.completed"]}`)
	if reg.status != http.StatusCreated {
		t.Fatalf("register = %d %s", reg.status, reg.raw)
	}
	wh := reg.body["webhook"].(map[string]any)
	endpointSecret := str(wh["secret"])
	if !strings.HasPrefix(endpointSecret, "whsec_") {
		t.Fatalf("secret %q", endpointSecret)
	}
	if l := e.do(http.MethodGet, "/api/gen/webhooks", k.APIKey, "", nil); strings.Contains(string(l.raw), endpointSecret) {
		t.Errorf("the list shows the secret: %s", l.raw)
	}
	s := e.do(http.MethodGet, "/api/gen/webhooks/secret", k.APIKey, "", nil)
	taskSecret := str(s.body["secret"])

	r := e.postJSON("/api/gen/text-to-video", k.APIKey,
		`{"prompt":"a paper boat","model":"gen-3.1-lite-generate-001","durationSeconds":4,"webhookUrl":"`+rcv.URL+`/task"}`)
	if r.status != http.StatusAccepted {
		t.Fatalf("start = %d %s", r.status, r.raw)
	}
	id := str(r.body["taskId"])
	if done := e.wait(k.APIKey, id); done.body["status"] != "completed" {
		t.Fatalf("task ended %s", done.raw)
	}
	// The task's own URL gets processing and completed, the endpoint
	// completed: three deliveries, which the worker makes as the moves
	// wake it.
	var msgs []webhooktest.Message
	types := map[string]int{}
	for _, d := range rcv.Await(t, 3) {
		m := webhooktest.Message{Header: d.Header, Body: d.Body,
			Secret: map[string]string{"/endpoint": endpointSecret, "/task": taskSecret}[d.Path]}
		if !strings.Contains(string(m.Body), `"taskId":"`+id+`"`) || !strings.Contains(string(m.Body), `"downloadUrl":"/api/gen/download/`+id) {
			t.Errorf("body %s", m.Body)
		}
		types[m.Header.Get("webhook-id")]++
		msgs = append(msgs, m)
	}
	if len(types) != 3 {
		t.Errorf("webhook ids %v, want 3 distinct", types)
	}
	for i, res := range webhooktest.Verify(t, msgs) {
		if res != "ok" {
			t.Errorf("delivery %d: %s", i, res)
		}
	}
	att := e.do(http.MethodGet, "/api/gen/webhooks/"+str(wh["id"])+"/deliveries", k.APIKey, "", nil)
	if att.status != 200 || !strings.Contains(string(att.raw), `"status":204`) || !strings.Contains(string(att.raw), `"event":"generation.completed"`) {
		t.Errorf("deliveries = %d %s", att.status, att.raw)
	}
}
