package devstack

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/genvideo/gen/shared/admin"
	"github.com/genvideo/gen/shared/store"
	"github.com/genvideo/gen/shared/testing/storetest"
)

// capStart is a start of the cheapest generation (lite, no audio, 4 s).
const (
	capPrice = 35
	capStart = `{"prompt":"capped %d","model":"gen-3.1-lite-generate-001","generateAudio":false,"durationSeconds":4}`
)

// setCaps sets the operator's caps of key keyID as genctl keys update does.
func setCaps(t *testing.T, s store.Store, keyID string, day, month int64) {
	t.Helper()
	if _, err := admin.New(s).SetCaps(context.Background(), keyID,
		admin.CapsUpdate{MaxCreditsPerDay: &day, MaxCreditsPerMonth: &month}); err != nil {
		t.Fatalf("SetCaps: %v", err)
	}
}

// nextUTCDay is the start of the UTC day after now.
func nextUTCDay() string {
	n := time.Now().UTC()
	return time.Date(n.Year(), n.Month(), n.Day()+1, 0, 0, 0, 0, time.UTC).Format("2006-01-02T15:04:05.000Z")
}

// 50 concurrent starts against a daily cap that allows 20 of them, on an
// account that could pay for all 50: exactly 20 are charged, the others
// refused with the cap's code, naming the cap and its reset.
func TestSpendingCapUnderConcurrency(t *testing.T) {
	e := startEnv(t, "", nil)
	k := e.key(10000, store.KeyLimits{})
	setCaps(t, e.store, k.KeyID, 20*capPrice, 0)

	// On the AWS assembly a start that stays contended on DynamoDB Local
	// past its Lambda's budget answers 503: a client tries it again under
	// the same Idempotency-Key, as this one does, a few times, so that a
	// 503 whose charge went through after all is answered as that start.
	// Never on the embedded stack.
	start := func(i int) response {
		idem := http.Header{"Idempotency-Key": {fmt.Sprintf("cap-%d-%s", i, k.KeyID)}}
		for attempt := 1; ; attempt++ {
			r := e.doWith(http.MethodPost, "/api/gen/text-to-video", k.APIKey, "application/json",
				strings.NewReader(fmt.Sprintf(capStart, i)), idem)
			if r.status != http.StatusServiceUnavailable || e.aws == nil || attempt == 5 {
				return r
			}
			time.Sleep(time.Duration(attempt) * 200 * time.Millisecond)
		}
	}
	var wg sync.WaitGroup
	results := make([]response, 50)
	for i := range results {
		wg.Go(func() { results[i] = start(i) })
	}
	wg.Wait()
	count := map[int]int{}
	reset := nextUTCDay()
	var remaining []int
	for _, r := range results {
		count[r.status]++
		switch r.status {
		case http.StatusAccepted:
			left, err := strconv.Atoi(r.header.Get("X-Spend-Remaining-Day"))
			if r.header.Get("X-Spend-Limit-Day") != "700" || err != nil ||
				!strings.HasPrefix(r.header.Get("X-Spend-Reset-Day"), reset[:10]) {
				t.Errorf("accepted start's spend headers: limit %q, remaining %q, reset %q; want 700, a number, %s",
					r.header.Get("X-Spend-Limit-Day"), r.header.Get("X-Spend-Remaining-Day"), r.header.Get("X-Spend-Reset-Day"), reset)
			}
			remaining = append(remaining, left)
		case http.StatusServiceUnavailable:
			// Contended five times over (see start): a known gap, the
			// cap's 402 is what it should be.
			if e.aws == nil || r.body["error"] != "SERVICE_UNAVAILABLE" {
				t.Errorf("start = 503 %s, want the cap's 402", r.raw)
			}
		case http.StatusPaymentRequired:
			d, _ := r.body["details"].(map[string]any)
			if r.body["error"] != "SPENDING_CAP_EXCEEDED" || d["cap"] != "day" || num(d["limit"]) != 700 ||
				num(d["remaining"]) != 0 || num(d["creditsRequired"]) != capPrice || str(d["resetsAt"]) != reset {
				t.Errorf("refusal = %s, want SPENDING_CAP_EXCEEDED of the day cap of 700, 0 left, reset %s", r.raw, reset)
			}
		}
	}
	if count[http.StatusServiceUnavailable] > 0 {
		t.Logf("%d starts stayed contended past their budget on the assembly (503, nothing charged)", count[http.StatusServiceUnavailable])
	}
	if count[http.StatusAccepted] != 20 || count[http.StatusPaymentRequired]+count[http.StatusServiceUnavailable] != 30 {
		t.Errorf("responses = %v, want exactly 20 accepted and 30 refused by the cap", count)
	}
	// The headers are what each start's own transaction left: on the
	// embedded stack, where it read the window it wrote, each of the 20
	// shows its own step down the cap. (On DynamoDB the transaction
	// adds without reading, and the window is read right after it: a
	// concurrent start's charge may be in it.)
	if e.aws == nil {
		slices.Sort(remaining)
		want := make([]int, 20)
		for i := range want {
			want[i] = i * capPrice
		}
		if !slices.Equal(remaining, want) {
			t.Errorf("X-Spend-Remaining-Day of the accepted starts = %v, want each of %v once", remaining, want)
		}
	}
	if got := e.balance(k.AccountID); got != 10000-20*capPrice {
		t.Errorf("balance = %d, want %d", got, 10000-20*capPrice)
	}
	// The books are checked once nothing moves: the accepted tasks done.
	for _, r := range results {
		if r.status == http.StatusAccepted {
			e.wait(k.APIKey, str(r.body["taskId"]))
		}
	}
	storetest.CheckInvariants(t, e.store, k.AccountID)

	// The credits endpoint shows the spend and the cap.
	cr := e.do(http.MethodGet, "/api/gen/credits", k.APIKey, "", nil)
	caps, _ := cr.body["spendingCaps"].(map[string]any)
	day, _ := caps["day"].(map[string]any)
	if cr.status != http.StatusOK || num(day["limit"]) != 700 || num(day["spent"]) != 700 ||
		num(day["remaining"]) != 0 || str(day["reset"]) != reset || num(day["operatorLimit"]) != 700 {
		t.Errorf("credits = %d %s, want the day cap of 700 spent, resetting %s", cr.status, cr.raw, reset)
	}
	// A quote names the cap as the limit that would refuse.
	q := e.postJSON("/api/gen/quote/text-to-video", k.APIKey, fmt.Sprintf(capStart, 99))
	refusal, _ := q.body["refusal"].(map[string]any)
	if q.status != http.StatusOK || q.body["allowed"] != false || refusal["error"] != "SPENDING_CAP_EXCEEDED" ||
		num(refusal["status"]) != http.StatusPaymentRequired {
		t.Errorf("quote = %d %s, want a refusal 402 SPENDING_CAP_EXCEEDED", q.status, q.raw)
	}
	// The OpenAI-compatible start goes through the same start.
	req, _ := http.NewRequest(http.MethodPost, e.url+"/openai/v1/videos", strings.NewReader(`{"prompt":"capped"}`))
	req.Header.Set("Authorization", "Bearer "+k.APIKey)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var oe struct {
		Error struct{ Code, Type string }
	}
	if err := json.NewDecoder(res.Body).Decode(&oe); err != nil || res.StatusCode != http.StatusPaymentRequired ||
		oe.Error.Code != "spending_cap_exceeded" {
		t.Errorf("OpenAI-compatible start = %d %+v (%v), want 402 spending_cap_exceeded", res.StatusCode, oe, err)
	}
	if got := e.balance(k.AccountID); got != 10000-20*capPrice {
		t.Errorf("balance after the refused starts = %d, want %d", got, 10000-20*capPrice)
	}
}

// The holder lowers its key's caps, never above the operator's; a
// refund gives back allowance.
func TestSpendingCapHolderAndRefund(t *testing.T) {
	e := startEnv(t, "", func(c *Config) { c.FaultInjection = true })
	k := e.key(10000, store.KeyLimits{})
	setCaps(t, e.store, k.KeyID, 3*capPrice, 0)

	patch := func(body string) response {
		return e.do(http.MethodPatch, "/api/gen/credits", k.APIKey, "application/json", strings.NewReader(body))
	}
	// Raising above the operator's cap leaves the operator's in force.
	r := patch(`{"maxCreditsPerDay": 1000}`)
	day, _ := r.body["spendingCaps"].(map[string]any)["day"].(map[string]any)
	if r.status != http.StatusOK || num(day["limit"]) != 3*capPrice || num(day["holderLimit"]) != 1000 {
		t.Fatalf("PATCH credits above the operator's cap = %d %s, want the operator's %d in force", r.status, r.raw, 3*capPrice)
	}
	// Lowering it to two starts' worth.
	r = patch(`{"maxCreditsPerDay": 70}`)
	day, _ = r.body["spendingCaps"].(map[string]any)["day"].(map[string]any)
	if r.status != http.StatusOK || num(day["limit"]) != 2*capPrice {
		t.Fatalf("PATCH credits to 70 = %d %s, want 70 in force", r.status, r.raw)
	}
	if r := patch(`{"maxCreditsPerDay": -1}`); r.status != http.StatusBadRequest || r.body["error"] != "VALIDATION_ERROR" {
		t.Errorf("PATCH credits with a negative cap = %d %s, want 400 VALIDATION_ERROR", r.status, r.raw)
	}

	failing := `{"prompt":"[fail] a storm at sea","model":"gen-3.1-lite-generate-001","generateAudio":false,"durationSeconds":4}`
	first := e.postJSON("/api/gen/text-to-video", k.APIKey, failing)
	if first.status != http.StatusAccepted {
		t.Fatalf("first start = %d %s", first.status, first.raw)
	}
	second := e.postJSON("/api/gen/text-to-video", k.APIKey, fmt.Sprintf(capStart, 2))
	if second.status != http.StatusAccepted {
		t.Fatalf("second start = %d %s", second.status, second.raw)
	}
	// The first fails and is refunded: its credits are allowance again.
	if done := e.wait(k.APIKey, str(first.body["taskId"])); done.body["status"] != "failed" {
		t.Fatalf("first task = %s, want failed", done.raw)
	}
	cr := e.do(http.MethodGet, "/api/gen/credits", k.APIKey, "", nil)
	day, _ = cr.body["spendingCaps"].(map[string]any)["day"].(map[string]any)
	if num(day["spent"]) != capPrice || num(day["remaining"]) != capPrice {
		t.Errorf("credits after the refund = %s, want %d spent and %d left", cr.raw, capPrice, capPrice)
	}
	again := e.postJSON("/api/gen/text-to-video", k.APIKey, fmt.Sprintf(capStart, 3))
	if again.status != http.StatusAccepted || again.header.Get("X-Spend-Remaining-Day") != "0" {
		t.Fatalf("start after the refund = %d (remaining %q) %s, want 202 with 0 left", again.status,
			again.header.Get("X-Spend-Remaining-Day"), again.raw)
	}
	if over := e.postJSON("/api/gen/text-to-video", k.APIKey, fmt.Sprintf(capStart, 4)); over.status != http.StatusPaymentRequired ||
		over.body["error"] != "SPENDING_CAP_EXCEEDED" {
		t.Errorf("start over the holder's cap = %d %s, want 402 SPENDING_CAP_EXCEEDED", over.status, over.raw)
	}
	e.wait(k.APIKey, str(second.body["taskId"]))
	e.wait(k.APIKey, str(again.body["taskId"]))
	storetest.CheckInvariants(t, e.store, k.AccountID)
}
