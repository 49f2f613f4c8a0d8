package devstack

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/genvideo/gen/shared/admin"
	"github.com/genvideo/gen/shared/domain"
	"github.com/genvideo/gen/shared/provider/openai/openaimodels"
	"github.com/genvideo/gen/shared/provider/veo/veomodels"
	"github.com/genvideo/gen/shared/settings"
	"github.com/genvideo/gen/shared/store"
	"github.com/genvideo/gen/shared/task"
	"github.com/genvideo/gen/shared/testing/openaitest"
	"github.com/genvideo/gen/shared/testing/veotest"
)

// costStart is one start of a cost test: its prompt names it at the
// fake, and its outcome there.
type costStart struct {
	prompt  string
	body    string // the start's JSON fields besides the prompt
	samples int
	outcome veotest.Outcome
	// status the task ends in.
	status task.Status
}

// TestVeoCostAndMarginReport drives a mix of starts through the stack
// on each Veo backend's strict fake (completed, partly filtered, failed
// and refunded, refused at submit; two models, with and without audio)
// and checks that:
//   - each completed task records its route (the backend), the provider
//     model the fake was asked for, and a provider cost equal to the
//     price table's price × the seconds × the samples the fake recorded
//     in the submit (filtered samples are billed: veo's billing);
//   - status and history name the route and provider model, and never
//     the cost;
//   - the margin report's totals equal the ledger's charges and refunds,
//     and its provider cost the tasks' recorded costs.
func TestVeoCostAndMarginReport(t *testing.T) {
	starts := []costStart{
		{prompt: "cost fast with audio", body: `"model":"gen-3.1-fast-generate-001","durationSeconds":8`, samples: 2, status: task.Completed},
		{prompt: "cost fast silent", body: `"model":"gen-3.1-fast-generate-001","durationSeconds":6,"generateAudio":false`, samples: 1, status: task.Completed},
		{prompt: "cost lite", body: `"model":"gen-3.1-lite-generate-001","durationSeconds":4`, samples: 1, status: task.Completed},
		{prompt: "cost partly filtered", body: `"model":"gen-3.1-fast-generate-001","durationSeconds":4`, samples: 3,
			outcome: veotest.Outcome{Filtered: 1}, status: task.Completed},
		{prompt: "cost failed when done", body: `"model":"gen-3.1-fast-generate-001","durationSeconds":4`, samples: 1,
			outcome: veotest.Outcome{ErrorCode: 13}, status: task.Failed},
		{prompt: "cost refused at submit", body: `"model":"gen-3.1-lite-generate-001","durationSeconds":4`, samples: 1,
			outcome: veotest.Outcome{SubmitStatus: 400}, status: task.Failed},
	}
	for _, api := range veoAPIs {
		t.Run(api, func(t *testing.T) {
			t.Parallel()
			e := startVeo(t, api, veotest.Config{Delay: time.Second}, "", nil)
			for _, s := range starts {
				e.fake.When(s.prompt, s.outcome)
			}
			since := time.Now().Add(-time.Minute)
			var ran []costStart
			ids := map[string]string{} // prompt -> task id
			keys := map[string]string{}
			for _, s := range starts {
				if s.samples > maxSamples(t, api) {
					continue // refused at start (TestVeoRefusedAtStart)
				}
				k := e.key(10000, store.KeyLimits{})
				r := e.postJSON("/api/gen/text-to-video", k.APIKey, fmt.Sprintf(`{"prompt":%q,"sampleCount":%d,%s}`, s.prompt, s.samples, s.body))
				if r.status != http.StatusAccepted {
					t.Fatalf("%s: start = %d: %s", s.prompt, r.status, r.raw)
				}
				ran = append(ran, s)
				ids[s.prompt], keys[s.prompt] = str(r.body["taskId"]), k.APIKey
			}
			var costs float64
			for _, s := range ran {
				tk := waitTask(t, e.env, ids[s.prompt], time.Minute)
				if tk.Status != s.status {
					t.Fatalf("%s: task is %s (%+v), want %s", s.prompt, tk.Status, tk.Failure, s.status)
				}
				if s.status != task.Completed {
					if tk.Billing != (task.Billing{}) {
						t.Errorf("%s: a failed task records billing %+v, want none", s.prompt, tk.Billing)
					}
					continue
				}
				sub := veoSubmit(t, e.fake, s.prompt)
				want := task.Billing{Route: api, ProviderModel: sub.Model, CostUSD: veoCost(t, api, sub)}
				if tk.Billing != want || want.CostUSD == 0 {
					t.Errorf("%s: billing %+v, want %+v (from the fake's recorded submit)", s.prompt, tk.Billing, want)
				}
				costs += tk.Billing.CostUSD
				checkMadeBy(t, e.env, keys[s.prompt], tk.ID, want)
			}
			checkReport(t, e.env, since, costs)
		})
	}
}

// TestOpenAICostAndMarginReport: the same on the openai generator, on
// its strict fake: the cost is OpenAI's price of a second × the seconds
// the fake recorded.
func TestOpenAICostAndMarginReport(t *testing.T) {
	e := startOpenAI(t, openaitest.Config{Polls: 1}, nil)
	starts := []struct {
		prompt  string
		outcome openaitest.Outcome
		status  task.Status
	}{
		{"cost sora 4", openaitest.Outcome{}, task.Completed},
		{"cost sora 8", openaitest.Outcome{}, task.Completed},
		{"cost failed job", openaitest.Outcome{FailCode: "internal_error"}, task.Failed},
	}
	since := time.Now().Add(-time.Minute)
	var costs float64
	for i, s := range starts {
		e.fake.When(s.prompt, s.outcome)
		k := e.key(10000, store.KeyLimits{})
		r := e.postJSON("/api/gen/text-to-video", k.APIKey, fmt.Sprintf(`{"prompt":%q,"durationSeconds":%d}`, s.prompt, 4+4*(i%2)))
		if r.status != http.StatusAccepted {
			t.Fatalf("%s: start = %d: %s", s.prompt, r.status, r.raw)
		}
		tk := waitTask(t, e.env, str(r.body["taskId"]), time.Minute)
		if tk.Status != s.status {
			t.Fatalf("%s: task is %s (%+v), want %s", s.prompt, tk.Status, tk.Failure, s.status)
		}
		if s.status != task.Completed {
			continue
		}
		var sub openaitest.Submit
		for _, x := range e.fake.Submits() {
			if x.Fields["prompt"] == s.prompt && x.Video != "" {
				sub = x
			}
		}
		seconds, err := strconv.Atoi(sub.Fields["seconds"])
		if err != nil {
			t.Fatalf("%s: the fake recorded seconds %q", s.prompt, sub.Fields["seconds"])
		}
		m, ok := openaimodels.Priced(settings.ProviderConfig{}, sub.Fields["model"])
		if !ok {
			t.Fatalf("%s: model %q has no price", s.prompt, sub.Fields["model"])
		}
		want := task.Billing{Route: settings.GeneratorOpenAI, ProviderModel: sub.Fields["model"], CostUSD: m.Audio["720p"] * float64(seconds)}
		if tk.Billing != want || want.CostUSD == 0 {
			t.Errorf("%s: billing %+v, want %+v (from the fake's recorded submit)", s.prompt, tk.Billing, want)
		}
		costs += tk.Billing.CostUSD
		checkMadeBy(t, e.env, k.APIKey, tk.ID, want)
	}
	checkReport(t, e.env, since, costs)
}

// TestBuiltinRoute: the built-in generator is its own route, at no
// provider cost.
func TestBuiltinRoute(t *testing.T) {
	if g := os.Getenv("GEN_E2E_GENERATOR"); g != "" {
		t.Skipf("GEN_E2E_GENERATOR=%s: the stack runs on a provider", g)
	}
	e := startEnv(t, "", nil)
	k := e.key(1000, store.KeyLimits{})
	r := e.postJSON("/api/gen/text-to-video", k.APIKey, `{"prompt":"a builtin route","durationSeconds":4}`)
	if r.status != http.StatusAccepted {
		t.Fatalf("start = %d: %s", r.status, r.raw)
	}
	done := e.wait(k.APIKey, str(r.body["taskId"]))
	if str(done.body["route"]) != "builtin" || done.body["providerModel"] != nil {
		t.Errorf("status %s, want route builtin and no provider model", done.raw)
	}
	tk, err := e.store.Task(context.Background(), str(r.body["taskId"]))
	if err != nil || tk.Billing != (task.Billing{Route: "builtin"}) {
		t.Errorf("billing %+v, %v; want route builtin at no cost", tk.Billing, err)
	}
}

// veoSubmit is the fake's accepted submit of the prompt.
func veoSubmit(t *testing.T, fake *veotest.Server, prompt string) veotest.Submit {
	t.Helper()
	var found []veotest.Submit
	for _, s := range fake.Submits() {
		if s.Operation != "" && strings.Contains(string(s.Instance), prompt) {
			found = append(found, s)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%s: the fake accepted %d jobs, want 1", prompt, len(found))
	}
	return found[0]
}

// veoCost is what the price table says the submit's videos cost: its
// model's price of a second at its resolution, with or without audio,
// × its seconds × its samples.
func veoCost(t *testing.T, api string, sub veotest.Submit) float64 {
	t.Helper()
	var p struct {
		DurationSeconds int    `json:"durationSeconds"`
		SampleCount     int    `json:"sampleCount"`
		Resolution      string `json:"resolution"`
		GenerateAudio   *bool  `json:"generateAudio"`
	}
	if err := json.Unmarshal(sub.Parameters, &p); err != nil {
		t.Fatal(err)
	}
	m, ok, _ := veomodels.Lookup(api, sub.Model)
	if !ok {
		t.Fatalf("the fake was asked for %s, which %s does not price", sub.Model, api)
	}
	prices := m.Audio
	if p.GenerateAudio != nil && !*p.GenerateAudio {
		prices = m.Silent
	}
	return prices[p.Resolution] * float64(p.DurationSeconds*p.SampleCount)
}

// checkMadeBy: status and history name the route and provider model of
// a completed task, and nothing of its cost.
func checkMadeBy(t *testing.T, e *env, key, id string, b task.Billing) {
	t.Helper()
	s := e.do(http.MethodGet, "/api/gen/status/"+id, key, "", nil)
	h := e.do(http.MethodGet, "/api/gen/history", key, "", nil)
	items, _ := h.body["videos"].([]any)
	if len(items) != 1 {
		t.Fatalf("history %s, want the one task", h.raw)
	}
	item, _ := items[0].(map[string]any)
	for name, body := range map[string]map[string]any{"status": s.body, "history": item} {
		if str(body["route"]) != b.Route || str(body["providerModel"]) != b.ProviderModel {
			t.Errorf("%s of %s names route %v, provider model %v; want %s, %s", name, id, body["route"], body["providerModel"], b.Route, b.ProviderModel)
		}
	}
	for name, body := range map[string]map[string]any{"status": s.body, "history": item} {
		for k := range body {
			if l := strings.ToLower(k); k != "creditsCost" && (strings.Contains(l, "cost") || strings.Contains(l, "usd")) {
				t.Errorf("the %s of %s shows the client %s: %v", name, id, k, body[k])
			}
		}
	}
}

// checkReport: the margin report over the test's period has, in total,
// the ledger's charges and refunds exactly (every account's entries of
// a task), the tasks' recorded provider cost, and revenue and margin
// that follow from them.
func checkReport(t *testing.T, e *env, since time.Time, costs float64) {
	t.Helper()
	ctx := context.Background()
	until := time.Now().Add(time.Minute)
	rep, err := admin.MarginReport(ctx, e.store, since, until, settings.DefaultCreditUSD)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := e.store.Keys(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	var charged, refunded int64
	tasks := map[string]bool{}
	seen := map[string]bool{}
	for _, k := range keys {
		if seen[k.AccountID] {
			continue
		}
		seen[k.AccountID] = true
		entries, err := e.store.Ledger(ctx, k.AccountID)
		if err != nil {
			t.Fatal(err)
		}
		for _, en := range entries {
			switch en.Kind {
			case domain.EntryCharge:
				charged -= en.Amount // negative: credits taken
				tasks[en.TaskID] = true
			case domain.EntryRefund:
				refunded += en.Amount
			}
		}
	}
	got := rep.Total
	if got.Charged != charged || got.Refunded != refunded || got.Tasks != len(tasks) || charged <= refunded || refunded <= 0 {
		t.Errorf("report totals: %d tasks, %d charged, %d refunded; the ledger: %d tasks, %d charged, %d refunded",
			got.Tasks, got.Charged, got.Refunded, len(tasks), charged, refunded)
	}
	var rowCost float64
	for _, r := range rep.Rows {
		rowCost += r.ProviderCostUSD
	}
	if diff := got.ProviderCostUSD - costs; diff > 1e-9 || diff < -1e-9 || rowCost != got.ProviderCostUSD {
		t.Errorf("report provider cost %v (rows %v), want the tasks' %v", got.ProviderCostUSD, rowCost, costs)
	}
	if want := float64(charged-refunded)*settings.DefaultCreditUSD - got.ProviderCostUSD; got.MarginUSD(settings.DefaultCreditUSD) != want {
		t.Errorf("margin %v, want %v", got.MarginUSD(settings.DefaultCreditUSD), want)
	}
}
