package admin_test

import (
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/genvideo/gen/shared/admin"
	"github.com/genvideo/gen/shared/domain"
	"github.com/genvideo/gen/shared/params"
	"github.com/genvideo/gen/shared/store/sqlitestore"
	"github.com/genvideo/gen/shared/task"
)

// TestMarginReport: a deleted task's entries stay in the report under
// the model "deleted" (the ledger keeps them), entries outside the
// period are left out, and an empty period is refused.
func TestMarginReport(t *testing.T) {
	s, err := sqlitestore.Open(filepath.Join(t.TempDir(), "gen.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	ctx := t.Context()
	k, err := admin.New(s).CreateKey(ctx, admin.KeyRequest{Name: "report", Credits: 1000})
	if err != nil {
		t.Fatal(err)
	}
	base := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	start := func(at time.Time) string {
		tk := task.Task{ID: task.NewID(at), AccountID: k.AccountID, Type: "text-to-video", Model: "gen-3.1-fast-generate-001",
			Prompt: "p", Params: params.Parameters{SampleCount: 1, DurationSeconds: 4, AspectRatio: "16:9", Resolution: "720p"},
			CreditsCost: 100, Status: task.Pending, CreatedAt: at}
		if _, err := s.CreateTask(ctx, tk, domain.StartGuard{}); err != nil {
			t.Fatal(err)
		}
		return tk.ID
	}
	gone := start(base.Add(time.Hour))
	b := task.Billing{Route: "gemini", ProviderModel: "veo-3.1-fast-generate-001", CostUSD: 0.4}
	if _, err := s.Complete(ctx, gone, domain.Completion{Videos: []task.Video{{Key: "v", MimeType: "video/mp4"}}, Billing: b}, base.Add(2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.DeleteTask(ctx, gone); err != nil {
		t.Fatal(err)
	}
	start(base.Add(-time.Hour))     // before the period
	start(base.Add(48 * time.Hour)) // after it

	rep, err := admin.MarginReport(ctx, s, base, base.Add(24*time.Hour), 0.015)
	if err != nil {
		t.Fatal(err)
	}
	want := []admin.ReportRow{{Model: admin.DeletedModel, Tasks: 1, Charged: 100}}
	if len(rep.Rows) != 1 || rep.Rows[0] != want[0] || rep.Total != (admin.ReportRow{Tasks: 1, Charged: 100}) {
		t.Errorf("report rows %+v, total %+v; want %+v and the same total", rep.Rows, rep.Total, want)
	}
	if got := rep.Total.MarginUSD(0.015); got != 1.5 {
		t.Errorf("margin %v, want 1.5 (100 credits at $0.015, the deleted task's cost unknown)", got)
	}
	if _, err := admin.MarginReport(ctx, s, base, base, 0.015); !errors.Is(err, admin.ErrInvalid) {
		t.Errorf("report of an empty period: %v, want ErrInvalid", err)
	}
}
