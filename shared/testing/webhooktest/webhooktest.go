// Package webhooktest checks deliveries with the Standard Webhooks
// reference library (npm standardwebhooks, run under Node.js 22 from
// nodetools), so that our signatures are proven against someone else's
// code, not only our own.
package webhooktest

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/genvideo/gen/shared/nodetools"
)

// ReferencePackage is the reference verifier, pinned.
const ReferencePackage = "standardwebhooks@1.1.1"

// Message is one delivery as a receiver got it.
type Message struct {
	Secret string      `json:"secret"`
	Header http.Header `json:"-"`
	Body   []byte      `json:"-"`
}

// verifyScript verifies each message of a JSON array on stdin with the
// reference library and prints, for each, "ok" or the error it threw.
const verifyScript = `
const { Webhook } = require("standardwebhooks");
let input = "";
process.stdin.on("data", (d) => (input += d));
process.stdin.on("end", () => {
  const out = JSON.parse(input).map((m) => {
    try {
      const body = Buffer.from(m.body, "base64").toString("utf8");
      const payload = new Webhook(m.secret).verify(body, m.headers);
      return payload && typeof payload === "object" ? "ok" : "not an object";
    } catch (e) {
      return String(e && e.message ? e.message : e);
    }
  });
  process.stdout.write(JSON.stringify(out));
});
`

// Verify verifies every message with the reference library and returns,
// for each, "ok" or why it was refused. The messages' timestamps must be
// within the library's tolerance (5 minutes) of the real clock.
func Verify(t testing.TB, msgs []Message) []string {
	t.Helper()
	if len(msgs) == 0 {
		return nil
	}
	tools := nodetools.Require(t, ReferencePackage)
	type wire struct {
		Secret  string            `json:"secret"`
		Headers map[string]string `json:"headers"`
		Body    []byte            `json:"body"`
	}
	in := make([]wire, len(msgs))
	for i, m := range msgs {
		h := map[string]string{}
		for _, k := range []string{"webhook-id", "webhook-timestamp", "webhook-signature"} {
			h[k] = m.Header.Get(k)
		}
		in[i] = wire{Secret: m.Secret, Headers: h, Body: m.Body}
	}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(t.TempDir(), "verify.cjs")
	if err := os.WriteFile(script, []byte(verifyScript), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, err := tools.RunInput(t.Context(), b, script)
	if err != nil {
		t.Fatalf("reference verifier: %v\n%s", err, errOut)
	}
	var res []string
	if err := json.Unmarshal(out, &res); err != nil || len(res) != len(msgs) {
		t.Fatalf("reference verifier printed %q (%v)", out, err)
	}
	return res
}
