package openaitest_test

import (
	"bytes"
	"encoding/json"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/genvideo/gen/shared/settings"
	"github.com/genvideo/gen/shared/testing/openaitest"
)

// TestRefusesAsTheHost: the fake refuses what OpenAI refuses, in
// OpenAI's error shape; vLLM-Omni takes the extra fields.
func TestRefusesAsTheHost(t *testing.T) {
	tests := []struct {
		name    string
		profile string
		fields  map[string]string
		status  int
		param   string
		code    string
	}{
		{"accepted", "", map[string]string{"prompt": "a", "model": "sora-2", "seconds": "8", "size": "1280x720"}, 200, "", ""},
		{"no prompt", "", map[string]string{"model": "sora-2"}, 400, "prompt", "missing_required_parameter"},
		{"seconds 6", "", map[string]string{"prompt": "a", "seconds": "6"}, 400, "seconds", "invalid_value"},
		{"pro size on sora-2", "", map[string]string{"prompt": "a", "model": "sora-2", "size": "1792x1024"}, 400, "size", "invalid_value"},
		{"pro size on pro", "", map[string]string{"prompt": "a", "model": "sora-2-pro", "size": "1792x1024"}, 200, "", ""},
		{"1080p", "", map[string]string{"prompt": "a", "size": "1920x1080"}, 400, "size", "invalid_value"},
		{"seed", "", map[string]string{"prompt": "a", "seed": "7"}, 400, "seed", "unknown_parameter"},
		{"unknown model", "", map[string]string{"prompt": "a", "model": "veo-3"}, 404, "model", "model_not_found"},
		{"vllm extras", settings.ProfileVLLMOmni, map[string]string{"prompt": "a", "seconds": "6", "size": "1280x720", "seed": "7", "negative_prompt": "x"}, 200, "", ""},
		{"vllm bad size", settings.ProfileVLLMOmni, map[string]string{"prompt": "a", "size": "big"}, 400, "size", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(openaitest.New(openaitest.Config{Profile: tt.profile}))
			defer srv.Close()
			var body bytes.Buffer
			w := multipart.NewWriter(&body)
			for k, v := range tt.fields {
				w.WriteField(k, v)
			}
			w.Close()
			resp, err := http.Post(srv.URL+"/v1/videos", w.FormDataContentType(), &body)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var got struct {
				ID    string `json:"id"`
				Error *struct {
					Message, Type string
					Param, Code   *string
				} `json:"error"`
			}
			if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d (%+v)", resp.StatusCode, tt.status, got.Error)
			}
			if tt.status == 200 {
				if got.ID == "" || got.Error != nil {
					t.Errorf("answer %+v, want a video", got)
				}
				return
			}
			if got.Error == nil || got.Error.Message == "" || got.Error.Type == "" || got.Error.Param == nil || *got.Error.Param != tt.param ||
				(tt.code != "" && (got.Error.Code == nil || *got.Error.Code != tt.code)) {
				t.Errorf("error %+v, want param %q code %q in OpenAI's shape", got.Error, tt.param, tt.code)
			}
		})
	}
}
