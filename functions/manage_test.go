package functions_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/genvideo/gen/shared/sfnstart"
	"github.com/genvideo/gen/shared/task"
	"github.com/genvideo/gen/shared/testing/awsstacktest"
	"github.com/genvideo/gen/shared/testing/sfnstarttest"
)

// testManage drives the cancel, credits and delete-task functions: a
// cancel fails and refunds a pending task and aborts its execution; a
// finished task is not cancellable; a delete removes task1's video from
// S3, so that its presigned URL stops working, and its record.
func testManage(t *testing.T, h *harness, newTask func(string, time.Time) task.Task) {
	env := h.env
	ctx := context.Background()

	t.Run("credits", func(t *testing.T) {
		var body struct {
			Balance  int64
			Held     int64
			InFlight int
			Tier     string
			Ledger   []struct{ Kind string }
		}
		resp := response(t, h.fn(t, "credits").Invoke(t, readEvent(t, "credits")), &body)
		acct, err := env.Store.Account(ctx, accountID)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusOK || body.Balance != acct.Credits || body.InFlight != acct.InFlight ||
			body.Tier != "pro" || len(body.Ledger) == 0 || len(body.Ledger) > 5 {
			t.Errorf("credits: %d %s; want 200, balance %d, tier pro, 1-5 entries", resp.StatusCode, resp.Body, acct.Credits)
		}
	})

	t.Run("quote", func(t *testing.T) {
		var body struct {
			CreditsRequired int
			Balance         int64
			BalanceAfter    int64
			Allowed         bool
		}
		before, err := env.Store.Account(ctx, accountID)
		if err != nil {
			t.Fatal(err)
		}
		resp := response(t, h.fn(t, "quote").Invoke(t, readEvent(t, "quote")), &body)
		after, err := env.Store.Account(ctx, accountID)
		if err != nil {
			t.Fatal(err)
		}
		// The event quotes the lite model without audio: 35 credits.
		if resp.StatusCode != http.StatusOK || !body.Allowed || body.CreditsRequired != 35 ||
			body.Balance != before.Credits || body.BalanceAfter != before.Credits-35 {
			t.Errorf("quote: %d %s; want 200, allowed, 35 credits of %d", resp.StatusCode, resp.Body, before.Credits)
		}
		if after != before {
			t.Errorf("quote moved the account from %+v to %+v", before, after)
		}
	})

	const task3 = "gen_1767225600000_testdata03"
	t.Run("cancel", func(t *testing.T) {
		tk := newTask(task3, time.Now().UTC().Truncate(time.Millisecond))
		ex, err := sfnstart.New(env.SFN.Client(), sfnstarttest.StateMachineARN, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := ex.Start(ctx, tk); err != nil {
			t.Fatal(err)
		}
		before, _ := env.Store.Account(ctx, accountID)
		for range 2 { // a repeat answers the same, refunding nothing more
			var body struct {
				Status          string
				Error           struct{ Code string }
				CreditsRefunded int
			}
			resp := response(t, h.fn(t, "cancel").Invoke(t, readEvent(t, "cancel")), &body)
			if resp.StatusCode != http.StatusOK || body.Status != "failed" || body.Error.Code != task.FailCancelled || body.CreditsRefunded != 35 {
				t.Fatalf("cancel: %d %s, want 200 failed CANCELLED refunding 35", resp.StatusCode, resp.Body)
			}
		}
		after, _ := env.Store.Account(ctx, accountID)
		if after.Credits != before.Credits+35 || after.InFlight != before.InFlight-1 {
			t.Errorf("cancel moved the account from %+v to %+v, want +35 credits and one fewer in flight", before, after)
		}
		i := slices.IndexFunc(env.SFN.Executions(), func(e sfnstarttest.Execution) bool { return e.Name == task3 })
		if i < 0 || env.SFN.Executions()[i].Status != "ABORTED" {
			t.Errorf("executions %+v, want %s ABORTED", env.SFN.Executions(), task3)
		}

		ev := proxyEvent(t, "cancel")
		ev.Path = "/api/gen/cancel/" + task1
		ev.PathParameters = map[string]string{"taskId": task1}
		var body struct{ Error string }
		resp := response(t, h.fn(t, "cancel").Invoke(t, mustJSON(t, ev)), &body)
		if resp.StatusCode != http.StatusConflict || body.Error != "TASK_NOT_CANCELLABLE" {
			t.Errorf("cancel of a completed task: %d %s, want 409 TASK_NOT_CANCELLABLE", resp.StatusCode, resp.Body)
		}
	})

	t.Run("delete-task", func(t *testing.T) {
		var dl struct{ Videos []struct{ URL string } }
		if resp := response(t, h.fn(t, "download").Invoke(t, readEvent(t, "download")), &dl); resp.StatusCode != http.StatusOK || len(dl.Videos) == 0 {
			t.Fatalf("download: %d %s", resp.StatusCode, resp.Body)
		}
		if code := get(t, dl.Videos[0].URL); code != http.StatusOK {
			t.Fatalf("GET of the presigned URL before delete: %d", code)
		}
		res := h.fn(t, "delete-task").Invoke(t, readEvent(t, "delete-task"))
		if res.IsError {
			t.Fatalf("delete-task: %s %s", res.ErrorType, res.ErrorMessage)
		}
		var resp events.APIGatewayProxyResponse
		if err := json.Unmarshal(res.Payload, &resp); err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusNoContent || resp.Body != "" {
			t.Fatalf("delete-task: %d %q, want 204 and no body", resp.StatusCode, resp.Body)
		}
		if keys := env.S3.Keys(t, awsstacktest.Bucket, "videos/"+task1+"/"); len(keys) != 0 {
			t.Errorf("objects left after delete: %v", keys)
		}
		if code := get(t, dl.Videos[0].URL); code != http.StatusNotFound && code != http.StatusForbidden {
			t.Errorf("GET of the presigned URL after delete: %d, want 404 or 403", code)
		}
		var body struct{ Error string }
		if resp := response(t, h.fn(t, "status").Invoke(t, readEvent(t, "status")), &body); resp.StatusCode != http.StatusNotFound || body.Error != "TASK_NOT_FOUND" {
			t.Errorf("status after delete: %d %s, want 404 TASK_NOT_FOUND", resp.StatusCode, resp.Body)
		}
	})
}

func get(t *testing.T, url string) int {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}
