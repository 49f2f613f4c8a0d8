package httpapi_test

import (
	"bytes"
	"context"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/genvideo/gen/shared/apikey"
	"github.com/genvideo/gen/shared/httpapi"
	"github.com/genvideo/gen/shared/ratelimit"
	"github.com/genvideo/gen/shared/store"
	"github.com/genvideo/gen/shared/testing/httpapitest"
)

// Security (issue 4, item 5) at the HTTP layer. The same properties
// through the whole local stack (logs, the database file, signed links)
// are in shared/devstack/security_test.go.

// sameAnswer fails the test unless r is the answer want is, byte for
// byte and header for header, but for the headers that vary with time
// and with the request budget.
func sameAnswer(t *testing.T, what string, r, want response) {
	t.Helper()
	if r.status != want.status || !bytes.Equal(r.raw, want.raw) {
		t.Errorf("%s = %d %s, want exactly %d %s", what, r.status, r.raw, want.status, want.raw)
	}
	varying := []string{"Date", "X-Ratelimit-Remaining"}
	for name, vals := range want.header {
		if !slices.Contains(varying, name) && !slices.Equal(r.header.Values(name), vals) {
			t.Errorf("%s: header %s = %q, want %q", what, name, r.header.Values(name), vals)
		}
	}
	for name := range r.header {
		if _, ok := want.header[name]; !ok && !slices.Contains(varying, name) {
			t.Errorf("%s: header %s = %q, which the answer for an unknown id has not", what, name, r.header.Values(name))
		}
	}
}

// TestForeignTasksAreInvisible: another account's task, in any state, is
// answered exactly as an unknown id (status, header and body) by status
// and download, with GET and HEAD; history never lists it nor counts it.
func TestForeignTasksAreInvisible(t *testing.T) {
	e := newEnv(t, nil)
	owner := e.caller(100000)
	intruder := e.caller(100000)
	foreign := tasksInEveryState(t, e, owner.Key)
	own := wantStarted(t, e.postJSON("/api/gen/text-to-video", intruder.Key, map[string]any{"prompt": "mine"}), 190, 100000-190)

	for _, method := range []string{http.MethodGet, http.MethodHead} {
		for _, ep := range []string{"status", "download"} {
			unknown := e.do(method, "/api/gen/"+ep+"/gen_1893553440000_abcdefghij", intruder.Key, "", nil)
			if unknown.status != http.StatusNotFound {
				t.Fatalf("%s %s of an unknown id = %d, want 404", method, ep, unknown.status)
			}
			malformed := e.do(method, "/api/gen/"+ep+"/not-an-id", intruder.Key, "", nil)
			sameAnswer(t, method+" "+ep+" of a malformed id", malformed, unknown)
			for state, id := range foreign {
				r := e.do(method, "/api/gen/"+ep+"/"+id, intruder.Key, "", nil)
				sameAnswer(t, method+" "+ep+" of another account's "+state+" task", r, unknown)
			}
		}
	}

	for _, filter := range []string{"", "?status=pending", "?status=processing", "?status=completed", "?status=failed"} {
		r := e.get("/api/gen/history"+filter+sep(filter)+"limit=100", intruder.Key)
		if r.status != http.StatusOK {
			t.Fatalf("history%s = %d %s", filter, r.status, r.raw)
		}
		want := 0
		if filter == "" || filter == "?status=pending" {
			want = 1
		}
		videos := list(t, r.body, "videos")
		if total := num(t, obj(t, r.body, "pagination"), "total"); total != int64(want) || len(videos) != want {
			t.Errorf("history%s: total %d, %d videos; want %d, only the intruder's own", filter, total, len(videos), want)
		}
		for _, v := range videos {
			if id := v.(map[string]any)["taskId"]; id != own {
				t.Errorf("history%s lists %v, which is not the intruder's", filter, id)
			}
		}
	}
	// Parameters naming another account are not parameters of history.
	q := url.Values{"account": {owner.AccountID}, "accountId": {owner.AccountID}, "apiKey": {owner.KeyName}}
	r := e.get("/api/gen/history?"+q.Encode(), intruder.Key)
	if r.status != http.StatusOK || num(t, obj(t, r.body, "pagination"), "total") != 1 {
		t.Errorf("history naming the owner's account = %d %s, want the intruder's one task", r.status, r.raw)
	}
	// The owner sees all of them: the answers above were about the account.
	if r := e.get("/api/gen/history", owner.Key); num(t, obj(t, r.body, "pagination"), "total") != int64(len(foreign)) {
		t.Errorf("owner's history = %s, want %d tasks", r.raw, len(foreign))
	}
}

func sep(query string) string {
	if query == "" {
		return "?"
	}
	return "&"
}

// TestRevokedKeyIsRejectedAtOnce: a key that has just worked is refused
// by the very next request after its revocation, on every endpoint, while
// another key of the same account goes on working.
func TestRevokedKeyIsRejectedAtOnce(t *testing.T) {
	e := newEnv(t, nil)
	c := e.caller(100000)
	other := apikey.New()
	k := store.Key{ID: apikey.NewID(), Hash: apikey.Hash(other), AccountID: c.AccountID, Name: "other",
		Tier: ratelimit.Enterprise, Limits: roomy, CreatedAt: httpapitest.Epoch}
	if err := e.faults.Store.CreateKey(context.Background(), k); err != nil {
		t.Fatal(err)
	}
	id := wantStarted(t, e.postJSON("/api/gen/text-to-video", c.Key, map[string]any{"prompt": "x"}), 190, 100000-190)
	if r := e.get("/api/gen/status/"+id, c.Key); r.status != http.StatusOK {
		t.Fatalf("status before the revocation = %d, want 200", r.status)
	}
	if err := e.faults.Store.RevokeKey(context.Background(), c.KeyID, e.Clock.Now()); err != nil {
		t.Fatal(err)
	}
	before := e.state(c.AccountID)
	for _, req := range []struct{ method, path string }{
		{"GET", "/api/gen/status/" + id}, {"GET", "/api/gen/download/" + id}, {"GET", "/api/gen/history"},
		{"GET", "/api/gen/models"}, {"POST", "/api/gen/text-to-video"}, {"POST", "/api/gen/image-to-video"},
		{"POST", "/api/gen/first-last-frame"},
	} {
		var r response
		switch req.path {
		case "/api/gen/text-to-video":
			r = e.postJSON(req.path, c.Key, map[string]any{"prompt": "x"})
		case "/api/gen/image-to-video":
			r = e.postForm(req.path, c.Key, file("image", "a.png", pngData), field("prompt", "x"))
		case "/api/gen/first-last-frame":
			r = e.postForm(req.path, c.Key, file("firstFrame", "a.png", pngData), file("lastFrame", "a.png", pngData), field("prompt", "x"))
		default:
			r = e.get(req.path, c.Key)
		}
		wantError(t, r, http.StatusUnauthorized, "UNAUTHORIZED")
		if r.body["message"] != httpapi.MessageKeyInvalid {
			t.Errorf("%s %s with the revoked key: message %v, want %q", req.method, req.path, r.body["message"], httpapi.MessageKeyInvalid)
		}
	}
	e.assertUnchanged(before, c.AccountID, "requests with a revoked key")
	if r := e.get("/api/gen/status/"+id, other); r.status != http.StatusOK {
		t.Errorf("the account's other key after the revocation: %d %s, want 200", r.status, r.raw)
	}
}

// burst sends n requests for GET /api/gen/models with each key at once,
// all in one minute window, and returns the answers by key.
func burst(e *env, n int, keys ...string) map[string][]response {
	var mu sync.Mutex
	out := map[string][]response{}
	var wg sync.WaitGroup
	start := make(chan struct{})
	for _, k := range keys {
		for range n {
			wg.Go(func() {
				<-start
				r := e.get("/api/gen/models", k)
				mu.Lock()
				out[k] = append(out[k], r)
				mu.Unlock()
			})
		}
	}
	close(start)
	wg.Wait()
	return out
}

// checkBurst fails the test unless exactly limit of rs passed, each told
// a distinct number of requests remaining, and the others are the 429 of
// the minute window that opened at window (the clock stands at it).
func checkBurst(t *testing.T, who string, rs []response, limit int, window time.Time) {
	t.Helper()
	reset := window.Add(time.Minute).Unix()
	var remaining []int
	refused := 0
	for _, r := range rs {
		switch r.status {
		case http.StatusOK:
			n, err := strconv.Atoi(r.header.Get("X-RateLimit-Remaining"))
			if err != nil {
				t.Errorf("%s: X-RateLimit-Remaining = %q", who, r.header.Get("X-RateLimit-Remaining"))
			}
			remaining = append(remaining, n)
		case http.StatusTooManyRequests:
			refused++
			want429(t, r, "RATE_LIMIT_EXCEEDED", int64(limit), reset, 60)
			if r.header.Get("X-RateLimit-Limit") != strconv.Itoa(limit) || r.header.Get("X-RateLimit-Remaining") != "0" ||
				r.header.Get("X-RateLimit-Reset") != strconv.FormatInt(reset, 10) {
				t.Errorf("%s: 429 with X-RateLimit-Limit/Remaining/Reset %s/%s/%s, want %d/0/%d", who,
					r.header.Get("X-RateLimit-Limit"), r.header.Get("X-RateLimit-Remaining"), r.header.Get("X-RateLimit-Reset"), limit, reset)
			}
		default:
			t.Errorf("%s: status %d %s, want 200 or 429", who, r.status, r.raw)
		}
	}
	if len(remaining) != limit || refused != len(rs)-limit {
		t.Fatalf("%s: %d passed and %d refused of %d concurrent requests, want exactly %d passed", who, len(remaining), refused, len(rs), limit)
	}
	// Each request took its own unit: the counts told are 0..limit-1.
	slices.Sort(remaining)
	for i, n := range remaining {
		if n != i {
			t.Fatalf("%s: remaining counts %v, want each of 0..%d once", who, remaining, limit-1)
		}
	}
}

// TestRequestLimitUnderConcurrency: 61 requests at once on a Standard key
// in one minute: exactly 60 pass and the 61st is a 429 with the contract's
// headers. The budget is the key's: a second key of the same account has
// its own 60, after the first spent its own and when both burst together.
func TestRequestLimitUnderConcurrency(t *testing.T) {
	eachCounting(t, testRequestLimitUnderConcurrency)
}

func testRequestLimitUnderConcurrency(t *testing.T, counting func(*httpapitest.Config)) {
	e := newEnv(t, counting)
	first := httpapitest.NewCaller(t, e.faults.Store, 1000, ratelimit.Standard, store.KeyLimits{})
	second := apikey.New()
	k := store.Key{ID: apikey.NewID(), Hash: apikey.Hash(second), AccountID: first.AccountID, Name: "second",
		Tier: ratelimit.Standard, CreatedAt: httpapitest.Epoch}
	if err := e.faults.Store.CreateKey(context.Background(), k); err != nil {
		t.Fatal(err)
	}

	window := httpapitest.Epoch
	checkBurst(t, "one key", burst(e, 61, first.Key)[first.Key], 60, window)
	checkBurst(t, "the account's second key, once the first has spent its minute", burst(e, 61, second)[second], 60, window)

	e.Clock.Advance(time.Minute)
	window = window.Add(time.Minute)
	rs := burst(e, 61, first.Key, second)
	checkBurst(t, "the first key, bursting with the second", rs[first.Key], 60, window)
	checkBurst(t, "the second key, bursting with the first", rs[second], 60, window)
}
