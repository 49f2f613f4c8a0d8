package omnitest_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/genvideo/gen/shared/testing/omnitest"
)

// TestRefusesAsTheAPI: the fake refuses what the Interactions API
// refuses on each API (omnimodels), in that API's error shape, and
// starts no interaction.
func TestRefusesAsTheAPI(t *testing.T) {
	const ok = `"model": "gemini-omni-1.2-flash", "input": "a cat", "background": true`
	const gemini, vertex = "/v1beta/interactions", "/v1beta1/projects/p1/locations/global/interactions"
	key := http.Header{"X-Goog-Api-Key": {"k"}}
	bearer := http.Header{"Authorization": {"Bearer ya29.t"}}
	tests := []struct {
		name, path string
		header     http.Header
		body       string
		status     int
		says       string
	}{
		{"taken", gemini, key, `{` + ok + `, "response_format": {"type": "video", "duration": "15s", "resolution": "4k"}}`, 200, ""},
		{"the key refused", gemini, http.Header{"X-Goog-Api-Key": {"bad"}}, `{` + ok + `}`, 400, "API key not valid"},
		{"a bearer token on the Gemini API", gemini, bearer, `{` + ok + `}`, 403, "bearer token"},
		{"an unknown field", gemini, key, `{` + ok + `, "sample_count": 2}`, 400, "unknown field"},
		{"16 seconds", gemini, key, `{` + ok + `, "response_format": {"type": "video", "duration": "16s"}}`, 400, "duration"},
		{"2 seconds", gemini, key, `{` + ok + `, "response_format": {"type": "video", "duration": "2s"}}`, 400, "duration"},
		{"a resolution it does not render", gemini, key, `{` + ok + `, "response_format": {"type": "video", "resolution": "2k"}}`, 400, "resolution"},
		{"a square video", gemini, key, `{` + ok + `, "response_format": {"type": "video", "aspect_ratio": "1:1"}}`, 400, "aspect_ratio"},
		{"no video asked", gemini, key, `{` + ok + `}`, 400, "want video"},
		{"Vertex's gcs_uri", gemini, key, `{` + ok + `, "response_format": {"type": "video", "gcs_uri": "gs://b"}}`, 400, "gcs_uri"},
		{"a task it does not name", gemini, key, `{` + ok + `, "response_format": {"type": "video"}, "generation_config": {"video_config": {"task": "first_last_frame"}}}`, 400, "task"},
		{"a retired model", gemini, key, `{"model": "gemini-omni-1.1-flash", "input": "a cat", "response_format": {"type": "video"}}`, 404, "not found"},

		{"taken on Vertex AI", vertex, bearer, `{` + ok + `, "response_format": {"type": "video", "delivery": "inline"}}`, 200, ""},
		{"an API key on Vertex AI", vertex, key, `{` + ok + `}`, 401, "API keys are not supported"},
		{"a wrong token", vertex, http.Header{"Authorization": {"Bearer ya29.other"}}, `{` + ok + `}`, 401, "invalid authentication credentials"},
		{"another project", "/v1beta1/projects/p2/locations/global/interactions", bearer, `{` + ok + `}`, 403, "project p2"},
		{"by URI without gcs_uri", vertex, bearer, `{` + ok + `, "response_format": {"type": "video", "delivery": "uri"}}`, 400, "gcs_uri is required"},
		{"by URI into Cloud Storage, which the fake does not write", vertex, bearer,
			`{` + ok + `, "response_format": {"type": "video", "delivery": "uri", "gcs_uri": "gs://b/o"}}`, 501, "Cloud Storage"},
		{"a delivery it does not name", vertex, bearer, `{` + ok + `, "response_format": {"type": "video", "delivery": "email"}}`, 400, "delivery"},
		{"a retired model on Vertex AI", vertex, bearer, `{"model": "gemini-omni-1.1-flash", "input": "a cat", "response_format": {"type": "video"}}`, 404, "Publisher Model"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := omnitest.New(omnitest.Config{Key: "k", Token: "ya29.t", Project: "p1", Retired: []string{"gemini-omni-1.1-flash"}})
			srv := httptest.NewServer(fake)
			defer srv.Close()
			req, _ := http.NewRequest(http.MethodPost, srv.URL+tt.path, strings.NewReader(tt.body))
			for k, v := range tt.header {
				req.Header[k] = v
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var body struct {
				Error struct {
					Code    json.RawMessage `json:"code"`
					Message string          `json:"message"`
				} `json:"error"`
			}
			json.NewDecoder(resp.Body).Decode(&body)
			if resp.StatusCode != tt.status || !strings.Contains(body.Error.Message, tt.says) {
				t.Errorf("status %d %q, want %d saying %q", resp.StatusCode, body.Error.Message, tt.status, tt.says)
			}
			// Vertex AI answers a google.rpc.Status (a numeric code), the
			// Gemini API's Interactions API a string code.
			if tt.status != 200 {
				numeric := len(body.Error.Code) > 0 && body.Error.Code[0] != '"'
				if wantNumeric := tt.path != gemini; numeric != wantNumeric {
					t.Errorf("error code %s, want numeric %v", body.Error.Code, wantNumeric)
				}
			}
			if n := fake.Accepted("a cat"); n != 0 && tt.status != 200 {
				t.Errorf("refused, yet %d interactions started", n)
			}
		})
	}
}

// TestInteractionStaysWhereMade: an interaction made on one API, in one
// project and location, is not found from another.
func TestInteractionStaysWhereMade(t *testing.T) {
	fake := omnitest.New(omnitest.Config{})
	srv := httptest.NewServer(fake)
	defer srv.Close()
	post := func(path string) string {
		resp, err := http.Post(srv.URL+path, "application/json",
			strings.NewReader(`{"model": "gemini-omni-1.2-flash", "input": "a cat", "background": true, "response_format": {"type": "video"}}`))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var in struct{ ID string }
		json.NewDecoder(resp.Body).Decode(&in)
		return in.ID
	}
	const here = "/v1beta1/projects/p/locations/us-central1/interactions"
	id := post(here)
	for path, want := range map[string]int{
		here + "/" + id: 200,
		"/v1beta1/projects/p/locations/global/interactions/" + id: 404,
		"/v1beta/interactions/" + id:                              404,
	} {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("GET %s = %d, want %d", path, resp.StatusCode, want)
		}
	}
}
