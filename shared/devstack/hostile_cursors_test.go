package devstack

import (
	"encoding/base64"
	"net/http"
	"net/url"
	"strconv"
	"testing"

	"github.com/genvideo/gen/shared/store"
)

// TestCursorsNotIssuedRefused (issue 20, 4 and 5): history, the ledger and
// a webhook's deliveries take back only the cursors they issued, to the
// same account: a made-up position (in the form cursors used to have),
// one changed by a character, with a trailing NUL, another list's or
// another account's is a 400 VALIDATION_ERROR on cursor. A cursor shows
// nothing of its position: it is not readable text, and the same page
// asked twice gets two different cursors, both of which work.
func TestCursorsNotIssuedRefused(t *testing.T) {
	e := startEnv(t, "", nil)
	a := e.key(1000, store.KeyLimits{})
	b := e.key(1000, store.KeyLimits{})
	var lastTask string
	for range 3 {
		lastTask = e.completedTask(a.APIKey)
	}
	e.completedTask(b.APIKey)
	e.completedTask(b.APIKey)

	next := func(key, path string) string {
		t.Helper()
		r := e.do(http.MethodGet, path, key, "", nil)
		p, _ := r.body["pagination"].(map[string]any)
		c := str(p["nextCursor"])
		if r.status != http.StatusOK || c == "" {
			t.Fatalf("GET %s = %d %s, want a page with a nextCursor", path, r.status, r.raw)
		}
		return c
	}
	hist := next(a.APIKey, "/api/gen/history?limit=1")
	ledger := next(a.APIKey, "/api/gen/credits?limit=1")
	otherHist := next(b.APIKey, "/api/gen/history?limit=1")
	otherLedger := next(b.APIKey, "/api/gen/credits?limit=1")

	// Opaque: not text. The same page asked again may answer the cursor
	// sealed before (cursor.Sealer keeps it): equal cursors tell the
	// account only that they hold one of its own positions.
	for _, c := range []string{hist, ledger} {
		raw, err := base64.RawURLEncoding.DecodeString(c)
		if err == nil && printable(raw) {
			t.Errorf("cursor %s reads as %q", c, raw)
		}
	}
	if again := next(a.APIKey, "/api/gen/history?limit=1"); again != hist {
		if r := e.do(http.MethodGet, "/api/gen/history?limit=1&cursor="+again, a.APIKey, "", nil); r.status != http.StatusOK {
			t.Errorf("the second cursor = %d %s", r.status, r.raw)
		}
	}
	for _, path := range []string{"/api/gen/history?limit=1&cursor=" + hist, "/api/gen/credits?limit=1&cursor=" + ledger} {
		if r := e.do(http.MethodGet, path, a.APIKey, "", nil); r.status != http.StatusOK {
			t.Errorf("GET %s with its own cursor = %d %s", path, r.status, r.raw)
		}
	}

	b64 := base64.RawURLEncoding.EncodeToString
	changed := func(c string, i int) string {
		r := []byte(c)
		if r[i] == 'A' {
			r[i] = 'B'
		} else {
			r[i] = 'A'
		}
		return string(r)
	}
	refused := map[string][]string{
		"/api/gen/history": {
			b64([]byte("1700000000000.gen_0000")), b64([]byte("4102444800000." + lastTask)),
			changed(hist, 0), changed(hist, len(hist)/2), changed(hist, len(hist)-1), hist[:len(hist)-1],
			hist + "\x00", hist + "A", ledger, otherHist, "", "L1",
		},
		"/api/gen/credits": {
			b64([]byte("L1")), b64([]byte("L5")), b64([]byte("L999999999")), b64([]byte("L" + strconv.Itoa(1<<40))),
			changed(ledger, 0), changed(ledger, len(ledger)-1), ledger + "\x00", hist, otherLedger, "",
		},
	}
	// A webhook's deliveries: its cursors were SQLite's attempt sequence
	// and DynamoDB's sort key; any such, made up, is refused. (The
	// endpoint is a public address, never reached in the test.)
	reg := e.postJSON("/api/gen/webhooks", a.APIKey, `{"url":"https://93.184.216.34/hook"}`)
	if reg.status != http.StatusCreated {
		t.Fatalf("register = %d %s", reg.status, reg.raw)
	}
	wh := str(reg.body["webhook"].(map[string]any)["id"])
	refused["/api/gen/webhooks/"+wh+"/deliveries"] = []string{
		"1", "0", "999999999", "000001700000000#000000000000001#msg_x", hist, ledger, "x\x00",
	}
	// Its own cursor, twice: which one was meant is not guessed.
	if r := e.do(http.MethodGet, "/api/gen/history?cursor="+hist+"&cursor="+hist, a.APIKey, "", nil); r.status != http.StatusBadRequest || r.body["field"] != "cursor" {
		t.Errorf("a repeated cursor = %d %s, want 400 on cursor", r.status, r.raw)
	}
	for path, cursors := range refused {
		for _, c := range cursors {
			r := e.do(http.MethodGet, path+"?limit=1&cursor="+url.QueryEscape(c), a.APIKey, "", nil)
			if r.status != http.StatusBadRequest || r.body["error"] != "VALIDATION_ERROR" || r.body["field"] != "cursor" {
				t.Errorf("GET %s?cursor=%q = %d %s, want 400 VALIDATION_ERROR on cursor", path, c, r.status, r.raw)
			}
		}
	}
}

// printable reports whether b is all printable ASCII.
func printable(b []byte) bool {
	for _, c := range b {
		if c < 0x20 || c > 0x7e {
			return false
		}
	}
	return true
}
