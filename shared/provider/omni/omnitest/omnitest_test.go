package omnitest_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/genvideo/gen/shared/provider/omni/omnitest"
)

// TestRefusesAsTheAPI: the fake refuses what the Interactions API
// refuses (omnimodels), in its error shape, and starts no interaction.
func TestRefusesAsTheAPI(t *testing.T) {
	const ok = `"model": "gemini-omni-1.2-flash", "input": "a cat", "background": true`
	tests := []struct {
		name, key, body string
		status          int
		says            string
	}{
		{"taken", "k", `{` + ok + `, "response_format": {"type": "video", "duration": "15s", "resolution": "4k"}}`, 200, ""},
		{"the key refused", "bad", `{` + ok + `}`, 400, "API key not valid"},
		{"an unknown field", "k", `{` + ok + `, "sample_count": 2}`, 400, "unknown field"},
		{"16 seconds", "k", `{` + ok + `, "response_format": {"type": "video", "duration": "16s"}}`, 400, "duration"},
		{"2 seconds", "k", `{` + ok + `, "response_format": {"type": "video", "duration": "2s"}}`, 400, "duration"},
		{"a resolution it does not render", "k", `{` + ok + `, "response_format": {"type": "video", "resolution": "2k"}}`, 400, "resolution"},
		{"a square video", "k", `{` + ok + `, "response_format": {"type": "video", "aspect_ratio": "1:1"}}`, 400, "aspect_ratio"},
		{"no video asked", "k", `{` + ok + `}`, 400, "want video"},
		{"Vertex's gcs_uri", "k", `{` + ok + `, "response_format": {"type": "video", "gcs_uri": "gs://b"}}`, 400, "gcs_uri"},
		{"a task it does not name", "k", `{` + ok + `, "response_format": {"type": "video"}, "generation_config": {"video_config": {"task": "first_last_frame"}}}`, 400, "task"},
		{"a retired model", "k", `{"model": "gemini-omni-1.1-flash", "input": "a cat", "response_format": {"type": "video"}}`, 404, "not found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := omnitest.New(omnitest.Config{Key: "k", Retired: []string{"gemini-omni-1.1-flash"}})
			srv := httptest.NewServer(fake)
			defer srv.Close()
			req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1beta/interactions", strings.NewReader(tt.body))
			req.Header.Set("x-goog-api-key", tt.key)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var body struct {
				Error struct{ Code, Message string } `json:"error"`
			}
			json.NewDecoder(resp.Body).Decode(&body)
			if resp.StatusCode != tt.status || !strings.Contains(body.Error.Message, tt.says) {
				t.Errorf("status %d %q, want %d saying %q", resp.StatusCode, body.Error.Message, tt.status, tt.says)
			}
			if n := fake.Accepted("a cat"); n != 0 && tt.status != 200 {
				t.Errorf("refused, yet %d interactions started", n)
			}
		})
	}
}
