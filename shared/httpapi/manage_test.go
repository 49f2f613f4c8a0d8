package httpapi_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/genvideo/gen/shared/domain"
	"github.com/genvideo/gen/shared/store/audit"
	"github.com/genvideo/gen/shared/task"
)

// Cancel fails a task in flight with CANCELLED, refunds it once, stops
// its workflow and answers its status body; a repeat answers the same;
// a finished task is 409; another account's or a malformed id is 404.
func TestCancel(t *testing.T) {
	e := newEnv(t, nil)
	c := e.caller(10000)
	other := e.caller(10000)
	ids := tasksInEveryState(t, e, c.Key)
	before := e.state(c.AccountID).Credits

	for _, name := range []string{"pending", "processing"} {
		id := ids[name]
		cost := e.task(id).CreditsCost
		for attempt := range 2 {
			r := e.do(http.MethodPost, "/api/gen/cancel/"+id, c.Key, "", nil)
			if r.status != http.StatusOK {
				t.Fatalf("cancel %s (attempt %d) = %d %s", name, attempt, r.status, r.raw)
			}
			if r.body["status"] != "failed" || obj(t, r.body, "error")["code"] != task.FailCancelled ||
				num(t, r.body, "creditsRefunded") != int64(cost) || r.body["taskId"] != id {
				t.Errorf("cancel %s answered %s", name, r.raw)
			}
			if r.header.Get("Retry-After") != "" {
				t.Errorf("cancel %s: Retry-After %q on a finished task", name, r.header.Get("Retry-After"))
			}
		}
		before += int64(cost)
		if got := e.state(c.AccountID).Credits; got != before {
			t.Errorf("after cancelling %s the balance is %d, want %d (refunded once)", name, got, before)
		}
		if s := e.get("/api/gen/status/"+id, c.Key); s.body["status"] != "failed" || obj(t, s.body, "error")["code"] != "CANCELLED" {
			t.Errorf("status of the cancelled %s task: %s", name, s.raw)
		}
	}
	if got, want := e.Executions.Stopped(), []string{ids["pending"], ids["pending"], ids["processing"], ids["processing"]}; !slices.Equal(got, want) {
		t.Errorf("stopped workflows %v, want %v", got, want)
	}

	for _, name := range []string{"completed", "partial", "failed"} {
		snap := e.state(c.AccountID)
		r := e.do(http.MethodPost, "/api/gen/cancel/"+ids[name], c.Key, "", nil)
		wantError(t, r, http.StatusConflict, "TASK_NOT_CANCELLABLE")
		if d := obj(t, r.body, "details"); d["status"] != string(e.task(ids[name]).Status) {
			t.Errorf("cancel %s: details %v", name, d)
		}
		e.assertUnchanged(snap, c.AccountID, "cancel of a "+name+" task")
	}
	for _, path := range []string{
		"/api/gen/cancel/gen_1700000000000_abcdefghij", // unknown
		"/api/gen/cancel/not-a-task-id",
	} {
		wantError(t, e.do(http.MethodPost, path, c.Key, "", nil), http.StatusNotFound, "TASK_NOT_FOUND")
	}
	// Another account's task in flight: 404, and it stays in flight.
	tk := e.postJSON("/api/gen/text-to-video", c.Key, map[string]any{"prompt": "mine"})
	mine := tk.body["taskId"].(string)
	wantError(t, e.do(http.MethodPost, "/api/gen/cancel/"+mine, other.Key, "", nil), http.StatusNotFound, "TASK_NOT_FOUND")
	if st := e.task(mine).Status; st != task.Pending {
		t.Errorf("another account's cancel left the task %s", st)
	}
	wantError(t, e.do(http.MethodGet, "/api/gen/cancel/"+mine, c.Key, "", nil), http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED")
	if p, err := audit.Account(context.Background(), e.faults.Store, c.AccountID); err != nil || len(p) > 0 {
		t.Errorf("audit: %v %v", p, err)
	}
}

// Delete removes a finished task's objects and record; its ledger
// entries stay; a task in flight is 409, another account's 404.
func TestDelete(t *testing.T) {
	e := newEnv(t, nil)
	c := e.caller(10000)
	other := e.caller(10000)
	ids := tasksInEveryState(t, e, c.Key)
	ctx := context.Background()
	done := ids["completed"]
	for _, v := range e.task(done).Videos {
		if _, err := e.Blobs.Put(ctx, v.Key, strings.NewReader("video"), "video/mp4"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.Blobs.Put(ctx, "unrelated/object", strings.NewReader("x"), "text/plain"); err != nil {
		t.Fatal(err)
	}
	ledger := e.state(c.AccountID).Ledger

	for _, name := range []string{"pending", "processing"} {
		snap := e.state(c.AccountID)
		r := e.do(http.MethodDelete, "/api/gen/tasks/"+ids[name], c.Key, "", nil)
		wantError(t, r, http.StatusConflict, "TASK_NOT_FINISHED")
		e.assertUnchanged(snap, c.AccountID, "delete of a "+name+" task")
	}
	snap := e.state(c.AccountID)
	wantError(t, e.do(http.MethodDelete, "/api/gen/tasks/"+done, other.Key, "", nil), http.StatusNotFound, "TASK_NOT_FOUND")
	wantError(t, e.do(http.MethodDelete, "/api/gen/tasks/..%2fx", c.Key, "", nil), http.StatusNotFound, "TASK_NOT_FOUND")
	e.assertUnchanged(snap, c.AccountID, "delete by another account")

	for _, name := range []string{"completed", "failed"} {
		r := e.do(http.MethodDelete, "/api/gen/tasks/"+ids[name], c.Key, "", nil)
		if r.status != http.StatusNoContent || len(r.raw) != 0 {
			t.Fatalf("delete %s = %d %q, want 204 and no body", name, r.status, r.raw)
		}
		wantError(t, e.get("/api/gen/status/"+ids[name], c.Key), http.StatusNotFound, "TASK_NOT_FOUND")
		wantError(t, e.get("/api/gen/download/"+ids[name], c.Key), http.StatusNotFound, "TASK_NOT_FOUND")
		wantError(t, e.do(http.MethodDelete, "/api/gen/tasks/"+ids[name], c.Key, "", nil), http.StatusNotFound, "TASK_NOT_FOUND")
	}
	if keys := e.Blobs.Keys(); !slices.Equal(keys, []string{"unrelated/object"}) {
		t.Errorf("blobs after delete: %v, want only the unrelated one", keys)
	}
	h := e.get("/api/gen/history?limit=100", c.Key)
	for _, v := range list(t, h.body, "videos") {
		if id := v.(map[string]any)["taskId"]; id == done || id == ids["failed"] {
			t.Errorf("history still lists deleted task %v", id)
		}
	}
	if n := num(t, obj(t, h.body, "pagination"), "total"); n != 3 {
		t.Errorf("history total %d after deleting 2 of 5", n)
	}
	if got := e.state(c.AccountID).Ledger; len(got) != len(ledger) {
		t.Errorf("the ledger has %d entries after delete, want the %d it had", len(got), len(ledger))
	}
	if p, err := audit.Account(ctx, e.faults.Store, c.AccountID); err != nil || len(p) > 0 {
		t.Errorf("audit: %v %v", p, err)
	}
}

// A start replayed under the Idempotency-Key of a task deleted since is
// 409 TASK_DELETED and charges nothing.
func TestDeleteThenReplay(t *testing.T) {
	e := newEnv(t, nil)
	c := e.caller(10000)
	sr := jsonStart(`{"prompt":"once"}`)
	first := e.sendIdem(sr, c.Key, "idem-1")
	if first.status != http.StatusAccepted {
		t.Fatalf("start = %d %s", first.status, first.raw)
	}
	id := first.body["taskId"].(string)
	if r := e.do(http.MethodPost, "/api/gen/cancel/"+id, c.Key, "", nil); r.status != http.StatusOK {
		t.Fatalf("cancel = %d %s", r.status, r.raw)
	}
	if r := e.do(http.MethodDelete, "/api/gen/tasks/"+id, c.Key, "", nil); r.status != http.StatusNoContent {
		t.Fatalf("delete = %d %s", r.status, r.raw)
	}
	snap := e.state(c.AccountID)
	r := e.sendIdem(sr, c.Key, "idem-1")
	wantError(t, r, http.StatusConflict, "TASK_DELETED")
	if obj(t, r.body, "details")["taskId"] != id {
		t.Errorf("details %v, want taskId %s", r.body["details"], id)
	}
	e.assertUnchanged(snap, c.AccountID, "a replay of a deleted task's start")
}

// Credits shows the balance, the credits held, the limits left and the
// ledger newest first, page by page.
func TestCredits(t *testing.T) {
	e := newEnv(t, nil)
	c := e.caller(10000)
	ids := tasksInEveryState(t, e, c.Key)
	ctx := context.Background()
	acct, _ := e.faults.Store.Account(ctx, c.AccountID)
	held := int64(e.task(ids["pending"]).CreditsCost + e.task(ids["processing"]).CreditsCost)

	r := e.get("/api/gen/credits?limit=3", c.Key)
	if r.status != http.StatusOK {
		t.Fatalf("credits = %d %s", r.status, r.raw)
	}
	if num(t, r.body, "balance") != acct.Credits || num(t, r.body, "held") != held ||
		num(t, r.body, "inFlight") != 2 || r.body["tier"] != "enterprise" {
		t.Errorf("credits = %s; want balance %d, held %d, inFlight 2, tier enterprise", r.raw, acct.Credits, held)
	}
	limits := obj(t, r.body, "limits")
	rpm := obj(t, limits, "requestsPerMinute")
	if num(t, rpm, "limit") != int64(roomy.RequestsPerMinute) || num(t, rpm, "remaining") >= int64(roomy.RequestsPerMinute) {
		t.Errorf("requestsPerMinute %v", rpm)
	}
	if rpm["remaining"] != obj(t, limits, "requestsPerMinute")["remaining"] || r.header.Get("X-RateLimit-Remaining") == "" {
		t.Errorf("headers %v", r.header)
	}
	if s := obj(t, limits, "startsPerMinute"); num(t, s, "limit") != int64(roomy.StartsPerMinute) || num(t, s, "remaining") != int64(roomy.StartsPerMinute-5) {
		t.Errorf("startsPerMinute %v, want 5 of %d taken", s, roomy.StartsPerMinute)
	}
	if g := obj(t, limits, "concurrentGenerations"); num(t, g, "remaining") != int64(roomy.MaxInFlight-2) {
		t.Errorf("concurrentGenerations %v", g)
	}

	all := e.state(c.AccountID).Ledger
	var paged []map[string]any
	for path, pages := "/api/gen/credits?limit=3", 0; path != ""; pages++ {
		r := e.get(path, c.Key)
		if r.status != http.StatusOK || pages > 10 {
			t.Fatalf("%s = %d %s", path, r.status, r.raw)
		}
		for _, x := range list(t, r.body, "ledger") {
			paged = append(paged, x.(map[string]any))
		}
		p := obj(t, r.body, "pagination")
		next, _ := p["nextCursor"].(string)
		if (next != "") != (p["hasMore"] == true) {
			t.Errorf("pagination %v", p)
		}
		path = ""
		if next != "" {
			path = "/api/gen/credits?limit=3&cursor=" + next
		}
	}
	if len(paged) != len(all) {
		t.Fatalf("paged %d entries, want %d", len(paged), len(all))
	}
	for i, got := range paged {
		want := all[len(all)-1-i]
		if got["kind"] != want.Kind || num(t, got, "amount") != want.Amount || num(t, got, "balance") != want.Balance {
			t.Errorf("entry %d = %v, want %+v", i, got, want)
		}
	}

	for _, q := range []string{"limit=0", "limit=101", "cursor=nope", "cursor=" + "MTcwMDAwMDAwMDAwMC5nZW5feA"} {
		wantError(t, e.get("/api/gen/credits?"+q, c.Key), http.StatusBadRequest, "VALIDATION_ERROR")
	}
	wantError(t, e.get("/api/gen/credits", ""), http.StatusUnauthorized, "UNAUTHORIZED")
}

// Count passes through to the store, as faults.Store does, so that the
// credits endpoint reads the starts window.
func (f *faultStore) Count(ctx context.Context, c domain.Window, at time.Time) (int, error) {
	return f.Store.(interface {
		Count(context.Context, domain.Window, time.Time) (int, error)
	}).Count(ctx, c, at)
}
