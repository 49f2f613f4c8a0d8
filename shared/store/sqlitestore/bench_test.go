package sqlitestore

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/genvideo/gen/shared/domain"
	"github.com/genvideo/gen/shared/store"
	"github.com/genvideo/gen/shared/task"
)

// BenchmarkHistoryPage is a history page of 20 (asked with one more, as
// the endpoint asks) of an account of 10,000 finished tasks, from many
// goroutines: what `make bench`'s history workload asks of the store.
func BenchmarkHistoryPage(b *testing.B) {
	s, err := Open(filepath.Join(b.TempDir(), "gen.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := b.Context()
	if err := s.CreateAccount(ctx, domain.Account{ID: "acct-a", CreatedAt: t0}); err != nil {
		b.Fatal(err)
	}
	err = s.ImportTasks(ctx, 10000, func(i int) task.Task {
		created := t0.Add(time.Duration(i) * time.Millisecond)
		return task.Task{ID: fmt.Sprintf("gen_%d_bench%05d", created.UnixMilli(), i), AccountID: "acct-a", Type: "text-to-video",
			Model: "m", Prompt: "p", Status: task.Completed, CreatedAt: created, CompletedAt: created.Add(time.Second),
			Videos: []task.Video{{Key: "videos/v.mp4", MimeType: "video/mp4"}}}
	})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if page, total, err := s.Tasks(ctx, "acct-a", store.TaskQuery{Limit: 21}); err != nil || len(page) != 21 || total != 10000 {
				b.Fatalf("Tasks = %d, %d, %v", len(page), total, err)
			}
		}
	})
}

// BenchmarkGeneration is the store's side of one generation: its start
// (CreateTask, charged), then MarkProcessing and Complete, one after
// another on the one writer: what bounds make bench's starts per second
// on the store's side.
func BenchmarkGeneration(b *testing.B) {
	s, err := Open(filepath.Join(b.TempDir(), "gen.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	ctx := b.Context()
	if err := s.CreateAccount(ctx, domain.Account{ID: "acct-a", Credits: 1 << 40, CreatedAt: t0}); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		created := t0.Add(time.Duration(i) * time.Millisecond)
		tk := task.Task{ID: fmt.Sprintf("gen_%d_gen%07d", created.UnixMilli(), i), AccountID: "acct-a", Type: "text-to-video",
			Model: "m", Prompt: "p", CreditsCost: 10, CreatedAt: created, Deadline: created.Add(time.Hour)}
		if _, err := s.CreateTask(ctx, tk, domain.StartGuard{}); err != nil {
			b.Fatal(err)
		}
		if _, err := s.MarkProcessing(ctx, tk.ID, created); err != nil {
			b.Fatal(err)
		}
		if _, err := s.Complete(ctx, tk.ID, domain.Completion{Videos: []task.Video{{Key: "v", MimeType: "video/mp4"}}}, created); err != nil {
			b.Fatal(err)
		}
	}
}
