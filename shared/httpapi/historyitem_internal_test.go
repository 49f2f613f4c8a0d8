package httpapi

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/genvideo/gen/shared/task"
	"github.com/genvideo/gen/shared/wire"
	"github.com/genvideo/gen/shared/wire/taskview"
)

// TestHistoryItemBytes: a page written from cached items is the bytes
// writeJSON writes for the page's wire.HistoryPage, HTML characters
// included.
func TestHistoryItemBytes(t *testing.T) {
	at := time.Date(2030, 1, 2, 3, 4, 5, 6e6, time.UTC)
	tasks := []task.Task{
		{ID: "gen_1_aaaaaaaaa", Type: "text-to-video", Model: "m", Prompt: `<b>"a & b"</b> é`, Status: task.Pending, CreditsCost: 3, CreatedAt: at, KeyName: "k<1>"},
		{ID: "gen_1_bbbbbbbbb", Type: "image-to-video", Model: "m", Prompt: "p", Status: task.Completed, CreditsCost: 3, CreatedAt: at,
			StartedAt: at, CompletedAt: at.Add(time.Minute), CreditsRefunded: 1, Videos: []task.Video{{Key: "v"}},
			Inputs: []task.Input{{Role: task.RoleImage, Key: "i"}}},
		{ID: "gen_1_ccccccccc", Type: "text-to-video", Model: "m", Prompt: "p", Status: task.Failed, CreditsCost: 3, CreatedAt: at,
			CompletedAt: at.Add(time.Minute), CreditsRefunded: 3, Failure: &task.Failure{Code: "CANCELLED", Message: "x < y"}},
	}
	enc := func(v any) []byte {
		rec := httptest.NewRecorder()
		writeJSON(rec, 200, v)
		return rec.Body.Bytes()
	}
	for _, tc := range []struct {
		name  string
		tasks []task.Task
		page  wire.Pagination
	}{
		{"all three", tasks, wire.Pagination{Total: 3, Limit: 20}},
		{"a cursor to follow", tasks[:2], wire.Pagination{Total: 3, Limit: 2, HasMore: true, NextCursor: "c<&>"}},
		{"a sealed cursor", tasks[:1], wire.Pagination{Total: 3, Limit: 1, Skip: 7, HasMore: true, NextCursor: "Zm9v-YmFy_AZaz09"}},
		{"a cursor JSON escapes", tasks[:1], wire.Pagination{Total: 3, Limit: 1, HasMore: true, NextCursor: "q\"b\\c\x01\u2028é\x7f"}},
		{"negative and large", nil, wire.Pagination{Total: 1 << 40, Limit: -1, Skip: 0}},
		{"empty", nil, wire.Pagination{Total: 0, Limit: 20}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := wire.HistoryPage{Success: true, Items: []wire.HistoryItem{}, Pagination: tc.page}
			c := newItemCache()
			var items []json.RawMessage
			for _, tk := range tc.tasks {
				want.Items = append(want.Items, taskview.History(tk))
				c.item(&tk)
				items = append(items, c.item(&tk)) // from the cache
			}
			var got bytes.Buffer
			encodeHistory(&got, items, tc.page)
			if w := enc(want); !bytes.Equal(w, got.Bytes()) {
				t.Errorf("page with cached items:\n%s\nwant\n%s", got.Bytes(), w)
			}
			var back wire.HistoryPage
			if err := json.Unmarshal(got.Bytes(), &back); err != nil || len(back.Items) != len(tc.tasks) {
				t.Fatalf("decode: %v", err)
			}
		})
	}
}

// TestStatusCache: a body kept for a task is answered again only while
// its status, its progress and its videos' links are those it was made
// with.
func TestStatusCache(t *testing.T) {
	tk := task.Task{ID: "gen_1_aaaaaaaaa", Status: task.Processing, Progress: 10}
	at := wire.TimeOf(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC))
	links := []wire.Video{{URL: "https://x/v?sig=1", MimeType: "video/mp4", ExpiresAt: at}}
	c := newStatusCache()
	c.put(tk, nil, []byte("processing 10"))
	for _, tc := range []struct {
		name   string
		change func(*task.Task)
		videos []wire.Video
		want   string // "" for a miss
	}{
		{"the same", func(*task.Task) {}, nil, "processing 10"},
		{"progress moved", func(t *task.Task) { t.Progress = 20 }, nil, ""},
		{"completed", func(t *task.Task) { t.Status = task.Completed }, links, ""},
		{"another task", func(t *task.Task) { t.ID = "gen_1_bbbbbbbbb" }, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := tk
			tc.change(&k)
			got, ok := c.get(k, tc.videos)
			if ok != (tc.want != "") || string(got) != tc.want {
				t.Errorf("get = %q, %v; want %q", got, ok, tc.want)
			}
		})
	}
	done := tk
	done.Status = task.Completed
	c.put(done, links, []byte("completed"))
	resigned := []wire.Video{{URL: "https://x/v?sig=2", MimeType: "video/mp4", ExpiresAt: wire.TimeOf(at.Add(time.Hour))}}
	if _, ok := c.get(done, resigned); ok {
		t.Error("a body with links signed before was answered for new links")
	}
	if got, ok := c.get(done, slices.Clone(links)); !ok || string(got) != "completed" {
		t.Errorf("get = %q, %v; want the completed body", got, ok)
	}
}

func TestCanonicalAPIKey(t *testing.T) {
	if got := http.CanonicalHeaderKey(headerAPIKey); got != canonicalAPIKey {
		t.Errorf("CanonicalHeaderKey(%q) = %q, want %q", headerAPIKey, got, canonicalAPIKey)
	}
}
