package devstack

import (
	"net/http"
	"strings"
	"testing"

	"github.com/genvideo/gen/shared/store"
)

// TestWebhookIPv6TransitionURLsRefused (issue 20, 7): IPv6 literals
// outside global unicast, or in a range that embeds an IPv4 address
// (IPv4-compatible, IPv4-mapped, 6to4, Teredo, NAT64), or reserved
// (documentation, ULA), are refused on registration and on a start with
// a 400 on the URL's field; nothing is created or charged. The operator
// setting is off here, as on AWS and in `make run` by default.
func TestWebhookIPv6TransitionURLsRefused(t *testing.T) {
	e := startEnv(t, "", nil)
	k := e.key(1000, store.Limits{})
	for _, host := range []string{
		"[::127.0.0.1]", "[::7f00:1]", "[::8.8.8.8]", "[::ffff:127.0.0.1]", "[::ffff:8.8.8.8]",
		"[2002:7f00:1::]", "[2002:a9fe:a9fe::1]", "[2001:0:4136:e378:8000:63bf:3fff:fdd2]",
		"[64:ff9b::7f00:1]", "[64:ff9b:1::a9fe:a9fe]", "[2001:db8::1]", "[3fff::1]", "[fd00:ec2::254]",
		"[fc00::1]", "[100::1]", "[2001:2::1]",
	} {
		u := "https://" + host + "/hook"
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
