package httpapi

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/genvideo/gen/shared/task"
)

// TestHistoryItemBytes: an item from the cache is encoded in the page
// exactly as the item itself would be, HTML characters included.
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
	type plain struct {
		Success    bool          `json:"success"`
		Videos     []historyItem `json:"videos"`
		Pagination pagination    `json:"pagination"`
	}
	want := plain{Success: true, Pagination: pagination{Total: 3, Limit: 20}}
	var c itemCache
	got := historyResponse{Success: true, Pagination: want.Pagination}
	for _, tk := range tasks {
		want.Videos = append(want.Videos, historyItemOf(tk))
		c.item(tk)
		got.Videos = append(got.Videos, c.item(tk)) // from the cache
	}
	enc := func(v any) []byte {
		rec := httptest.NewRecorder()
		writeJSON(rec, 200, v)
		return rec.Body.Bytes()
	}
	if w, g := enc(want), enc(got); !bytes.Equal(w, g) {
		t.Errorf("page with cached items:\n%s\nwant\n%s", g, w)
	}
	var back struct{ Videos []historyItem }
	if err := json.Unmarshal(enc(got), &back); err != nil || len(back.Videos) != 3 {
		t.Fatalf("decode: %v", err)
	}
}
