package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/genvideo/gen/shared/client"
	"github.com/genvideo/gen/shared/devstack"
	"github.com/genvideo/gen/shared/store"
	"github.com/genvideo/gen/shared/testing/devstacktest"
	"github.com/genvideo/gen/shared/testing/webhooktest"
)

// gen webhooks add|list|deliveries|replay|rm and generate --webhook,
// against a local server that may deliver to this machine.
func TestWebhookCommands(t *testing.T) {
	env := devstacktest.Start(t, func(c *devstack.Config) { c.WebhookAllowPrivate = true })
	k := env.Key(t, 1000, store.KeyLimits{})
	run := func(args ...string) result {
		t.Helper()
		return genWith(t, map[string]string{"GEN_API_KEY": k.APIKey, "GEN_BASE_URL": env.URL}, true, args...)
	}
	rcv := webhooktest.NewReceiver(t, http.StatusOK)

	r := run("webhooks", "add", rcv.URL+"/endpoint", "--event", client.EventCompleted, "--json")
	var wh client.Webhook
	if r.code != exitOK || json.Unmarshal([]byte(r.stdout), &wh) != nil || !strings.HasPrefix(wh.Secret, "whsec_") {
		t.Fatalf("webhooks add: %v", r)
	}
	if r := run("webhooks", "list"); r.code != exitOK || !strings.Contains(r.stdout, wh.ID) ||
		!strings.Contains(r.stdout, rcv.URL+"/endpoint") || strings.Contains(r.stdout, wh.Secret) {
		t.Errorf("webhooks list: %v", r)
	}
	r = run("webhooks", "secret")
	taskSecret := strings.TrimSpace(r.stdout)
	if r.code != exitOK || !strings.HasPrefix(taskSecret, "whsec_") {
		t.Fatalf("webhooks secret: %v", r)
	}

	if r := run("generate", "a paper boat", "--model", "lite", "--duration", "4", "--progress", "none",
		"--out", t.TempDir(), "--webhook", rcv.URL+"/task"); r.code != exitOK {
		t.Fatalf("generate --webhook: %v", r)
	}
	var completedID string
	for _, h := range rcv.Await(t, 3) {
		secret := map[string]string{"/endpoint": wh.Secret, "/task": taskSecret}[h.Path]
		ev, err := client.VerifyWebhook(secret, h.Header, h.Body)
		if err != nil {
			t.Errorf("%s: %v", h.Path, err)
			continue
		}
		if h.Path == "/endpoint" {
			completedID = ev.ID
		}
	}
	if completedID == "" {
		t.Fatal("the endpoint got no completed event")
	}
	if r := run("webhooks", "deliveries", wh.ID); r.code != exitOK || !strings.Contains(r.stdout, completedID) ||
		!strings.Contains(r.stdout, "generation.completed") || !strings.Contains(r.stdout, "200") {
		t.Errorf("webhooks deliveries: %v", r)
	}
	if r := run("webhooks", "replay", wh.ID, completedID); r.code != exitOK || !strings.Contains(r.stdout, "Queued") {
		t.Errorf("webhooks replay: %v", r)
	}
	if h := rcv.Await(t, 4)[3]; h.Header.Get("webhook-id") != completedID {
		t.Errorf("replayed with id %q, want %q", h.Header.Get("webhook-id"), completedID)
	}
	if r := run("webhooks", "rm", wh.ID); r.code != exitOK {
		t.Errorf("webhooks rm: %v", r)
	}
	if r := run("webhooks", "rm", wh.ID); r.code != exitError || !strings.Contains(r.stderr, "not found") {
		t.Errorf("webhooks rm again: %v", r)
	}
	if r := run("webhooks", "list"); r.code != exitOK || !strings.Contains(r.stdout, "No webhooks.") {
		t.Errorf("webhooks list after rm: %v", r)
	}
}

// Without the operator setting, a webhook at a private address is
// refused before anything starts.
func TestGenerateWebhookRefused(t *testing.T) {
	k := stack.Key(t, 1000, store.KeyLimits{})
	r := gen(t, k.APIKey, "generate", "a boat", "--model", "lite", "--duration", "4", "--webhook", "https://10.0.0.1/hook")
	if r.code != exitError || !strings.Contains(r.stderr, "webhookUrl") {
		t.Errorf("generate --webhook at a private address: %v", r)
	}
	if r := gen(t, k.APIKey, "webhooks", "add", "https://169.254.169.254/latest"); r.code != exitError || !strings.Contains(r.stderr, "url") {
		t.Errorf("webhooks add at the metadata address: %v", r)
	}
	if got := stack.Balance(t, k.AccountID); got != 1000 {
		t.Errorf("balance %d, want 1000", got)
	}
}
