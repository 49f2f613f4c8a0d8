package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/genvideo/gen/shared/admin"
	"github.com/genvideo/gen/shared/devstack"
	"github.com/genvideo/gen/shared/domain"
	"github.com/genvideo/gen/shared/params"
	"github.com/genvideo/gen/shared/store"
	"github.com/genvideo/gen/shared/task"
)

// reportBase is the start of the period the report tests ask for.
var reportBase = time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)

// seedReport writes, on s, tasks in and around the day from reportBase:
// two completed on vertex (one refunded a filtered sample), one failed
// and refunded, one charged the day before and refunded in the day, one
// charged the day after. It returns the account.
func seedReport(t *testing.T, s store.Store) string {
	t.Helper()
	ctx := t.Context()
	k, err := admin.New(s).CreateKey(ctx, admin.KeyRequest{Name: "report", Credits: 10000})
	if err != nil {
		t.Fatal(err)
	}
	at := func(h int) time.Time { return reportBase.Add(time.Duration(h) * time.Hour) }
	newTask := func(model string, cost, created int) string {
		id := task.NewID(at(created))
		tk := task.Task{ID: id, AccountID: k.AccountID, KeyName: "report", Type: "text-to-video", Model: model,
			Prompt: "a report", Params: params.Parameters{SampleCount: 1, DurationSeconds: 8, AspectRatio: "16:9", Resolution: "720p"},
			CreditsCost: cost, Status: task.Pending, CreatedAt: at(created)}
		if _, err := s.CreateTask(ctx, tk, domain.StartGuard{}); err != nil {
			t.Fatalf("CreateTask: %v", err)
		}
		return id
	}
	videos := []task.Video{{Key: "videos/x/0.mp4", MimeType: "video/mp4", Size: 1}}
	complete := func(id string, refund int, b task.Billing, h int) {
		if _, err := s.Complete(ctx, id, domain.Completion{Videos: videos, Refund: refund, Billing: b}, at(h)); err != nil {
			t.Fatalf("Complete: %v", err)
		}
	}
	fail := func(id string, h int) {
		if _, err := s.Fail(ctx, id, task.Failure{Code: task.FailGeneration}, at(h)); err != nil {
			t.Fatalf("Fail: %v", err)
		}
	}
	fast, lite := "gen-3.1-fast-generate-001", "gen-3.1-lite-generate-001"
	complete(newTask(fast, 120, 1), 0, task.Billing{Route: "vertex", ProviderModel: "veo-3.1-fast-generate-001", CostUSD: 1.2}, 2)
	complete(newTask(fast, 240, 3), 120, task.Billing{Route: "vertex", ProviderModel: "veo-3.1-fast-generate-001", CostUSD: 2.4}, 4)
	fail(newTask(lite, 65, 5), 6)
	fail(newTask(fast, 120, -2), 7) // charged the day before, refunded in the day
	newTask(lite, 65, 25)           // charged the day after
	return k.AccountID
}

// checkReportOutput: the report of the day reads the ledger exactly.
func checkReportOutput(t *testing.T, genctl func(args ...string) (string, error)) {
	t.Helper()
	out, err := genctl("report", "--json", "--since", "2026-11-01", "--until", "2026-11-02T00:00:00Z", "--credit-usd", "0.02")
	if err != nil {
		t.Fatalf("report: %v\n%s", err, out)
	}
	var rep struct {
		Rows  []reportRow
		Total reportRow
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("report output: %v\n%s", err, out)
	}
	// Charges in the day: 120 + 240 + 65; refunds: 120 + 65 + 120.
	want := reportRow{Tasks: 3, Charged: 425, Refunded: 305, ProviderCostUSD: 1.2 + 2.4,
		RevenueUSD: 120 * 0.02, MarginUSD: 120*0.02 - (1.2 + 2.4)}
	if !sameRow(rep.Total, want) {
		t.Errorf("total %+v, want %+v", rep.Total, want)
	}
	wantRows := []reportRow{
		{Model: "gen-3.1-fast-generate-001", Tasks: 0, Refunded: 120, RevenueUSD: -120 * 0.02, MarginUSD: -120 * 0.02},
		{Model: "gen-3.1-fast-generate-001", Route: "vertex", Tasks: 2, Charged: 360, Refunded: 120, ProviderCostUSD: 3.6,
			RevenueUSD: 240 * 0.02, MarginUSD: 240*0.02 - 3.6},
		{Model: "gen-3.1-lite-generate-001", Tasks: 1, Charged: 65, Refunded: 65},
	}
	if len(rep.Rows) != len(wantRows) {
		t.Fatalf("rows %+v, want %+v", rep.Rows, wantRows)
	}
	for i := range wantRows {
		if !sameRow(rep.Rows[i], wantRows[i]) {
			t.Errorf("row %d: %+v, want %+v", i, rep.Rows[i], wantRows[i])
		}
	}
	text, err := genctl("report", "--since", "2026-11-01", "--until", "2026-11-02")
	if err != nil || !strings.Contains(text, "TOTAL") || !strings.Contains(text, "vertex") {
		t.Errorf("report = %v\n%s\nwant a table with a TOTAL line", err, text)
	}
	if out, err := genctl("report", "--since", "2026-11-02", "--until", "2026-11-01"); err == nil {
		t.Errorf("report of an empty period succeeded:\n%s", out)
	}
}

// sameRow: the same counts, and money within a millionth of a dollar.
func sameRow(a, b reportRow) bool {
	near := func(x, y float64) bool { return x-y < 1e-6 && y-x < 1e-6 }
	return a.Model == b.Model && a.Route == b.Route && a.Tasks == b.Tasks && a.Charged == b.Charged && a.Refunded == b.Refunded &&
		near(a.ProviderCostUSD, b.ProviderCostUSD) && near(a.RevenueUSD, b.RevenueUSD) && near(a.MarginUSD, b.MarginUSD)
}

// TestReportLocal: the report on the local stack's data directory.
func TestReportLocal(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(envBackend, "")
	s, err := devstack.OpenStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	seedReport(t, s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	checkReportOutput(t, func(args ...string) (string, error) {
		return run(t, append([]string{"--data-dir", filepath.Clean(dir)}, args...)...)
	})
}

// TestAWSReport: the same report from DynamoDB.
func TestAWSReport(t *testing.T) {
	e := newAWSEnv(t)
	seedReport(t, e.store)
	checkReportOutput(t, e.genctl)
}
