package httpapi_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/genvideo/gen/shared/domain"
	"github.com/genvideo/gen/shared/localcount"
	"github.com/genvideo/gen/shared/ratelimit"
	"github.com/genvideo/gen/shared/service"
	"github.com/genvideo/gen/shared/store"
	"github.com/genvideo/gen/shared/store/sqlitestore"
	"github.com/genvideo/gen/shared/task"
	"github.com/genvideo/gen/shared/testing/httpapitest"
)

// BenchmarkStatusPoll is a status poll of a finished task with a video,
// served by the handler as the local stack serves it (requests counted in
// memory, key and task from the store's caches), with its allocations:
// the work of a poll beyond what net/http does, which make bench's
// figures include.
func BenchmarkStatusPoll(b *testing.B) {
	st, err := sqlitestore.Open(filepath.Join(b.TempDir(), "gen.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	counts := localcount.New(localcount.Config{Persister: st,
		Persist: func(c domain.Window) bool { return c.Kind == ratelimit.Day }})
	defer counts.Close()
	env := httpapitest.Start(b, httpapitest.Config{Config: service.Config{Store: st, Limiter: counts,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}})
	c := httpapitest.NewCaller(b, st, 1000, ratelimit.Enterprise,
		store.KeyLimits{RequestsPerMinute: 1 << 30, RequestsPerDay: 1 << 30, StartsPerMinute: 1 << 30, MaxInFlight: 1 << 20})
	at := httpapitest.Epoch
	tk := task.Task{ID: task.NewID(at), AccountID: c.AccountID, KeyName: c.KeyName, Type: "text-to-video", Model: "m",
		Prompt: "a poll", CreditsCost: 10, CreatedAt: at, Deadline: at.Add(10 * 60e9)}
	ctx := b.Context()
	if _, err := st.CreateTask(ctx, tk, domain.StartGuard{}); err != nil {
		b.Fatal(err)
	}
	if _, err := st.Complete(ctx, tk.ID, domain.Completion{Videos: []task.Video{{Key: "videos/" + tk.ID + "/0.mp4", MimeType: "video/mp4"}}}, at); err != nil {
		b.Fatal(err)
	}
	h := env.API.Handler()
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			req := httptest.NewRequest(http.MethodGet, "/api/gen/status/"+tk.ID, nil)
			req.Header.Set("X-API-Key", c.Key)
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != http.StatusOK {
				b.Fatalf("status %d: %s", rec.Code, rec.Body)
			}
		}
	})
}
