package storetest

import (
	"slices"
	"testing"
	"time"

	"github.com/genvideo/gen/shared/domain"
	"github.com/genvideo/gen/shared/store"
	"github.com/genvideo/gen/shared/task"
)

func testWebhookEndpoints(t *testing.T, s Backend) {
	ctx := t.Context()
	mustAccount(t, s, "acct-a", 100)
	mustAccount(t, s, "acct-b", 100)
	a1 := domain.WebhookEndpoint{ID: "wh_1", AccountID: "acct-a", URL: "https://a.example/1",
		Events: []string{domain.EventCompleted}, Secret: "whsec_AAAA", CreatedAt: at(0)}
	a2 := domain.WebhookEndpoint{ID: "wh_2", AccountID: "acct-a", URL: "https://a.example/2",
		Events: domain.EventTypes, Secret: "whsec_BBBB", CreatedAt: at(time.Second)}
	mustWebhooks(t, s, a1, a2)
	wantErrIs(t, "CreateWebhook(same id)", s.CreateWebhook(ctx, a1), domain.ErrExists)
	wantErrIs(t, "CreateWebhook(unknown account)", s.CreateWebhook(ctx,
		domain.WebhookEndpoint{ID: "wh_3", AccountID: "nobody", URL: "https://x", Events: domain.EventTypes, CreatedAt: at(0)}),
		domain.ErrNotFound)
	got, err := s.Webhooks(ctx, "acct-a")
	if err != nil || len(got) != 2 || got[0].ID != "wh_1" || got[1].ID != "wh_2" ||
		got[0].Secret != a1.Secret || !slices.Equal(got[1].Events, domain.EventTypes) || !sameTime(got[0].CreatedAt, a1.CreatedAt) {
		t.Fatalf("Webhooks(acct-a) = %+v, %v", got, err)
	}
	if got, err := s.Webhooks(ctx, "acct-b"); err != nil || len(got) != 0 {
		t.Fatalf("Webhooks(acct-b) = %+v, %v", got, err)
	}
	wantErrIs(t, "DeleteWebhook(other account's)", s.DeleteWebhook(ctx, "acct-b", "wh_1", at(time.Minute)), domain.ErrNotFound)
	if err := s.DeleteWebhook(ctx, "acct-a", "wh_1", at(time.Minute)); err != nil {
		t.Fatalf("DeleteWebhook: %v", err)
	}
	wantErrIs(t, "DeleteWebhook(again)", s.DeleteWebhook(ctx, "acct-a", "wh_1", at(time.Minute)), domain.ErrNotFound)
	if got, _ := s.Webhooks(ctx, "acct-a"); len(got) != 1 || got[0].ID != "wh_2" {
		t.Fatalf("Webhooks after delete = %+v", got)
	}

	first, err := s.SigningSecret(ctx, "acct-a", "whsec_first")
	if err != nil || first != "whsec_first" {
		t.Fatalf("SigningSecret = %q, %v", first, err)
	}
	if again, err := s.SigningSecret(ctx, "acct-a", "whsec_second"); err != nil || again != "whsec_first" {
		t.Fatalf("SigningSecret again = %q, %v; want the first kept", again, err)
	}
}

// mustWebhooks registers es and fails the test if the store refuses one.
func mustWebhooks(t *testing.T, w store.Webhooks, es ...domain.WebhookEndpoint) {
	t.Helper()
	for _, e := range es {
		if err := w.CreateWebhook(t.Context(), e); err != nil {
			t.Fatalf("CreateWebhook(%s): %v", e.ID, err)
		}
	}
}

// claimAll claims every delivery due at now.
func claimAll(t *testing.T, w store.Webhooks, now time.Time) map[string]domain.Delivery {
	t.Helper()
	ds, err := w.ClaimDeliveries(t.Context(), now, time.Minute, 100, nil)
	if err != nil {
		t.Fatalf("ClaimDeliveries: %v", err)
	}
	out := map[string]domain.Delivery{}
	for _, d := range ds {
		out[d.ID] = d
	}
	return out
}

func testWebhookOutbox(t *testing.T, s Backend) {
	ctx := t.Context()
	mustAccount(t, s, "acct-a", 100)
	all := domain.WebhookEndpoint{ID: "wh_all", AccountID: "acct-a", URL: "https://a.example/all",
		Events: domain.EventTypes, Secret: "whsec_ALL", CreatedAt: at(0)}
	done := domain.WebhookEndpoint{ID: "wh_done", AccountID: "acct-a", URL: "https://a.example/done",
		Events: []string{domain.EventCompleted, domain.EventFailed}, Secret: "whsec_DONE", CreatedAt: at(0)}
	mustWebhooks(t, s, all, done)
	if _, err := s.SigningSecret(ctx, "acct-a", "whsec_TASK"); err != nil {
		t.Fatal(err)
	}
	tk := newTask("acct-a", taskID(at(0), "aaaaaaaaaa"), 10, at(0))
	tk.WebhookURL = "https://task.example/hook"
	mustCreate(t, s, tk)
	want0 := tk
	want0.Status = task.Pending
	checkTask(t, "Task with a webhook URL", mustTask(t, s, tk.ID), want0)
	if got := claimAll(t, s, at(time.Hour)); len(got) != 0 {
		t.Fatalf("a created task wrote events: %v", got)
	}

	mustMarkProcessing(t, s, tk.ID, at(time.Second))
	got := claimAll(t, s, at(time.Second))
	want := map[string]string{
		domain.DeliveryID(tk.ID, domain.EventProcessing, "wh_all"): "whsec_ALL",
		domain.DeliveryID(tk.ID, domain.EventProcessing, ""):       "whsec_TASK",
	}
	checkDeliveries(t, "after MarkProcessing", got, want, domain.EventProcessing, task.Processing)
	// Again: the task does not move, nothing is written.
	mustMarkProcessing(t, s, tk.ID, at(2*time.Second))
	if got := claimAll(t, s, at(30*time.Second)); len(got) != 0 {
		t.Fatalf("MarkProcessing again wrote %v", got)
	}

	videos := []task.Video{{Key: "videos/a/0.mp4", MimeType: "video/mp4", Size: 1}}
	mustComplete(t, s, tk.ID, domain.Completion{Videos: videos}, at(time.Minute))
	// The processing rows were leased until 1s + 1m; the completed ones
	// are due at the move.
	got = claimAll(t, s, at(time.Minute))
	want = map[string]string{
		domain.DeliveryID(tk.ID, domain.EventCompleted, "wh_all"):  "whsec_ALL",
		domain.DeliveryID(tk.ID, domain.EventCompleted, "wh_done"): "whsec_DONE",
		domain.DeliveryID(tk.ID, domain.EventCompleted, ""):        "whsec_TASK",
	}
	checkDeliveries(t, "after Complete", got, want, domain.EventCompleted, task.Completed)
	for _, d := range got {
		if !slices.Equal(d.Task.Videos, videos) || !sameTime(d.CreatedAt, at(time.Minute)) {
			t.Errorf("%s: videos %v, created %v", d.ID, d.Task.Videos, d.CreatedAt)
		}
		if d.EndpointID == "" && d.URL != tk.WebhookURL || d.EndpointID == "wh_all" && d.URL != all.URL {
			t.Errorf("%s: URL %s", d.ID, d.URL)
		}
	}
}

// checkDeliveries checks the claimed deliveries against want (id ->
// secret), all of event and carrying the task in status.
func checkDeliveries(t *testing.T, what string, got map[string]domain.Delivery, want map[string]string, event string, status task.Status) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d deliveries %v, want %d", what, len(got), slices.Collect(mapKeys(got)), len(want))
	}
	for id, secret := range want {
		d, ok := got[id]
		if !ok {
			t.Errorf("%s: no delivery %s", what, id)
			continue
		}
		if d.Secret != secret || d.Event != event || d.Task.Status != status || d.State != domain.DeliveryPending ||
			d.AccountID != "acct-a" {
			t.Errorf("%s: %s = secret %q, event %s, task %s, state %s", what, id, d.Secret, d.Event, d.Task.Status, d.State)
		}
	}
}

func mapKeys(m map[string]domain.Delivery) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

func testWebhookOutboxRefused(t *testing.T, s Backend) {
	ctx := t.Context()
	mustAccount(t, s, "acct-a", 100)
	mustWebhooks(t, s, domain.WebhookEndpoint{ID: "wh_all", AccountID: "acct-a",
		URL: "https://a.example", Events: domain.EventTypes, Secret: "whsec_A", CreatedAt: at(0)})
	tk := newTask("acct-a", taskID(at(0), "aaaaaaaaaa"), 10, at(0))
	mustCreate(t, s, tk)
	mustFail(t, s, tk.ID, task.Failure{Code: task.FailGeneration, Message: "x"}, at(time.Second))
	if got := claimAll(t, s, at(time.Second)); len(got) != 1 {
		t.Fatalf("Fail wrote %d events, want 1", len(got))
	}
	// Refused moves: complete a failed task, fail it again, start it.
	_, err := s.Complete(ctx, tk.ID, domain.Completion{}, at(time.Minute))
	wantErrIs(t, "Complete(failed)", err, domain.ErrTerminal)
	mustFail(t, s, tk.ID, task.Failure{Code: task.FailGeneration, Message: "y"}, at(time.Minute))
	mustMarkProcessing(t, s, tk.ID, at(time.Minute))
	if got := claimAll(t, s, at(time.Hour)); len(got) != 1 {
		t.Fatalf("refused moves wrote events: %d due an hour later, want only the leased one", len(got))
	}
	// A Complete refused for its refund writes nothing either.
	other := newTask("acct-a", taskID(at(0), "bbbbbbbbbb"), 10, at(0))
	mustCreate(t, s, other)
	if _, err := s.Complete(ctx, other.ID, domain.Completion{Refund: 999}, at(time.Minute)); err == nil {
		t.Fatal("Complete with a refund out of range succeeded")
	}
	if got := claimAll(t, s, at(2*time.Hour)); len(got) != 1 {
		t.Fatalf("a refused Complete wrote events: %v", got)
	}
}

func testWebhookDeliveries(t *testing.T, s Backend) {
	ctx := t.Context()
	mustAccount(t, s, "acct-a", 100)
	mustAccount(t, s, "acct-b", 100)
	mustWebhooks(t, s, domain.WebhookEndpoint{ID: "wh_all", AccountID: "acct-a",
		URL: "https://a.example", Events: domain.EventTypes, Secret: "whsec_A", CreatedAt: at(0)})
	if _, ok, err := s.NextDelivery(ctx); ok || err != nil {
		t.Fatalf("NextDelivery on none = %v, %v", ok, err)
	}
	tk := newTask("acct-a", taskID(at(0), "aaaaaaaaaa"), 10, at(0))
	mustCreate(t, s, tk)
	mustMarkProcessing(t, s, tk.ID, at(time.Second))
	id := domain.DeliveryID(tk.ID, domain.EventProcessing, "wh_all")
	if next, ok, err := s.NextDelivery(ctx); !ok || err != nil || !sameTime(next, at(time.Second)) {
		t.Fatalf("NextDelivery = %v, %v, %v", next, ok, err)
	}
	if got := claimAll(t, s, at(0)); len(got) != 0 {
		t.Fatalf("claimed before due: %v", got)
	}
	if got := claimAll(t, s, at(time.Second)); len(got) != 1 {
		t.Fatalf("claimed %d", len(got))
	}
	// Leased: not claimed again until the lease ends.
	if got := claimAll(t, s, at(30*time.Second)); len(got) != 0 {
		t.Fatalf("claimed while leased: %v", got)
	}
	if got := claimAll(t, s, at(time.Second+time.Minute)); len(got) != 1 {
		t.Fatalf("not claimed after the lease: %v", got)
	}
	for i := 1; i <= 3; i++ {
		a := store.DeliveryAttempt{DeliveryID: id, Attempt: i, At: at(time.Duration(i) * time.Minute),
			Status: 500, Latency: 15 * time.Millisecond, Error: "receiver answered 500"}
		if err := s.RecordAttempt(ctx, a, domain.DeliveryPending, at(time.Hour)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.RecordAttempt(ctx, store.DeliveryAttempt{DeliveryID: id, Attempt: 4, At: at(time.Hour), Status: 200},
		domain.DeliveryDelivered, at(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if got := claimAll(t, s, at(48*time.Hour)); len(got) != 0 {
		t.Fatalf("a delivered delivery was claimed: %v", got)
	}
	page, next, err := s.Attempts(ctx, "acct-a", "wh_all", store.AttemptQuery{Limit: 3})
	if err != nil || len(page) != 3 || next == "" || page[0].Attempt != 4 || page[0].Status != 200 ||
		page[2].Attempt != 2 || page[1].Error == "" || page[1].Latency != 15*time.Millisecond ||
		page[0].Event != domain.EventProcessing || page[0].TaskID != tk.ID || page[0].DeliveryID != id {
		t.Fatalf("Attempts page 1 = %+v, %q, %v", page, next, err)
	}
	page, next, err = s.Attempts(ctx, "acct-a", "wh_all", store.AttemptQuery{Cursor: next, Limit: 3})
	if err != nil || len(page) != 1 || next != "" || page[0].Attempt != 1 {
		t.Fatalf("Attempts page 2 = %+v, %q, %v", page, next, err)
	}
	_, _, err = s.Attempts(ctx, "acct-a", "wh_all", store.AttemptQuery{Cursor: "not-a-cursor", Limit: 3})
	wantErrIs(t, "Attempts(bad cursor)", err, store.ErrBadCursor)
	_, _, err = s.Attempts(ctx, "acct-b", "wh_all", store.AttemptQuery{})
	wantErrIs(t, "Attempts(other account)", err, domain.ErrNotFound)

	wantErrIs(t, "ReplayDelivery(other account)", s.ReplayDelivery(ctx, "acct-b", "wh_all", id, at(2*time.Hour)), domain.ErrNotFound)
	wantErrIs(t, "ReplayDelivery(unknown)", s.ReplayDelivery(ctx, "acct-a", "wh_all", "msg_nope", at(2*time.Hour)), domain.ErrNotFound)
	if err := s.ReplayDelivery(ctx, "acct-a", "wh_all", id, at(2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	got := claimAll(t, s, at(2*time.Hour))
	if d, ok := got[id]; !ok || d.Attempts != 4 || d.Secret != "whsec_A" {
		t.Fatalf("after replay: %+v", got)
	}
	wantErrIs(t, "RecordAttempt(unknown)", s.RecordAttempt(ctx, store.DeliveryAttempt{DeliveryID: "msg_nope", Attempt: 1},
		domain.DeliveryFailed, at(0)), domain.ErrNotFound)

	// Deleting the endpoint fails its pending deliveries.
	if err := s.ReplayDelivery(ctx, "acct-a", "wh_all", id, at(3*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteWebhook(ctx, "acct-a", "wh_all", at(3*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if got := claimAll(t, s, at(4*time.Hour)); len(got) != 0 {
		t.Fatalf("a deleted endpoint's delivery was claimed: %v", got)
	}
}

// testWebhookClaimFits: a claim takes only the due deliveries its fits
// accepts, asked with those it took before; the others stay due, not
// leased, for the next claim (the worker's bounds per receiver, issue 20).
func testWebhookClaimFits(t *testing.T, s Backend) {
	ctx := t.Context()
	mustAccount(t, s, "acct-a", 100)
	for _, id := range []string{"wh_one", "wh_two"} {
		mustWebhooks(t, s, domain.WebhookEndpoint{ID: id, AccountID: "acct-a", URL: "https://a.example/" + id,
			Events: domain.EventTypes, Secret: "whsec_" + id, CreatedAt: at(0)})
	}
	for _, suffix := range []string{"aaaaaaaaaa", "bbbbbbbbbb", "cccccccccc"} {
		tk := newTask("acct-a", taskID(at(0), suffix), 10, at(0))
		mustCreate(t, s, tk)
		mustMarkProcessing(t, s, tk.ID, at(time.Second))
	}
	// Six due: three per endpoint. One per receiver fits.
	var asked int
	oneEach := func(taken []domain.Delivery, d domain.Delivery) bool {
		asked++
		for _, x := range taken {
			if x.Receiver() == d.Receiver() {
				return false
			}
		}
		return true
	}
	ds, err := s.ClaimDeliveries(ctx, at(time.Second), time.Minute, 100, oneEach)
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 2 || ds[0].Receiver() == ds[1].Receiver() || asked != 6 {
		t.Fatalf("claimed %d (asked %d times), want one of each endpoint after asking of all six", len(ds), asked)
	}
	if got := claimAll(t, s, at(time.Second)); len(got) != 4 {
		t.Fatalf("%d left due, want the 4 that did not fit", len(got))
	}
	if got := claimAll(t, s, at(2*time.Second)); len(got) != 0 {
		t.Fatalf("%d claimed again while leased", len(got))
	}
}
