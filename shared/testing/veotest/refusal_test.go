package veotest_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/genvideo/gen/shared/testing/veotest"
)

// TestRefusals: the fake refuses what Google documents it refuses, in
// Google's google.rpc.Status shape, and records the refused submit
// without starting an operation.
func TestRefusals(t *testing.T) {
	const img = `{"bytesBase64Encoded":"iVBORw0KGgo=","mimeType":"image/png"}`
	const ref = `{"image":` + img + `,"referenceType":"asset"}`
	tests := []struct {
		name, api, model, instance, parameters string
		status                                 int
		rpc, message                           string
	}{
		{"vertex defaults", "vertex", "veo-3.1-fast-generate-001", `{"prompt":"x"}`, `{}`, 200, "", ""},
		{"gemini text-to-video, allow_all", "gemini", "veo-3.1-generate-001", `{"prompt":"x"}`,
			`{"personGeneration":"allow_all","durationSeconds":8,"resolution":"1080p"}`, 200, "", ""},
		{"gemini image-to-video, allow_adult", "gemini", "veo-3.1-fast-generate-001", `{"prompt":"x","image":` + img + `}`,
			`{"personGeneration":"allow_adult"}`, 200, "", ""},
		{"gemini text-to-video, allow_adult", "gemini", "veo-3.1-fast-generate-001", `{"prompt":"x"}`,
			`{"personGeneration":"allow_adult"}`, 400, "INVALID_ARGUMENT", "allow_adult for personGeneration is currently not supported"},
		{"gemini 1080p at 4 s", "gemini", "veo-3.1-fast-generate-001", `{"prompt":"x"}`,
			`{"durationSeconds":4,"resolution":"1080p"}`, 400, "INVALID_ARGUMENT", "resolution 1080p"},
		{"gemini two videos", "gemini", "veo-3.1-fast-generate-001", `{"prompt":"x"}`, `{"sampleCount":2}`, 400, "INVALID_ARGUMENT", "sampleCount"},
		{"gemini seed", "gemini", "veo-3.1-fast-generate-001", `{"prompt":"x"}`, `{"seed":7}`, 400, "INVALID_ARGUMENT", "seed"},
		{"gemini generateAudio", "gemini", "veo-3.1-fast-generate-001", `{"prompt":"x"}`, `{"generateAudio":false}`, 400, "INVALID_ARGUMENT", "generateAudio"},
		{"vertex allow_all", "vertex", "veo-3.1-generate-001", `{"prompt":"x"}`, `{"personGeneration":"allow_all"}`, 400, "INVALID_ARGUMENT", "personGeneration"},
		{"vertex five videos", "vertex", "veo-3.1-generate-001", `{"prompt":"x"}`, `{"sampleCount":5}`, 400, "INVALID_ARGUMENT", "sampleCount"},
		{"vertex 5 s", "vertex", "veo-3.1-generate-001", `{"prompt":"x"}`, `{"durationSeconds":5}`, 400, "INVALID_ARGUMENT", "durationSeconds"},
		{"vertex enhancePrompt false", "vertex", "veo-3.1-generate-001", `{"prompt":"x"}`, `{"enhancePrompt":false}`, 400, "INVALID_ARGUMENT", "enhancePrompt"},
		{"gemini two frames at 4 s", "gemini", "veo-3.1-fast-generate-001", `{"prompt":"x","image":` + img + `,"lastFrame":` + img + `}`,
			`{"durationSeconds":4}`, 400, "INVALID_ARGUMENT", "durationSeconds 4"},
		{"gemini two frames at 8 s", "gemini", "veo-3.1-fast-generate-001", `{"prompt":"x","image":` + img + `,"lastFrame":` + img + `}`,
			`{"durationSeconds":8}`, 200, "", ""},
		{"vertex two frames at 4 s", "vertex", "veo-3.1-fast-generate-001", `{"prompt":"x","image":` + img + `,"lastFrame":` + img + `}`,
			`{"durationSeconds":4}`, 200, "", ""},
		{"vertex lite from two frames", "vertex", "veo-3.1-lite-generate-001", `{"prompt":"x","image":` + img + `,"lastFrame":` + img + `}`,
			`{"durationSeconds":4}`, 200, "", ""},
		{"gemini lite from two frames at 8 s", "gemini", "veo-3.1-lite-generate-001", `{"prompt":"x","image":` + img + `,"lastFrame":` + img + `}`,
			`{"durationSeconds":8}`, 200, "", ""},
		{"gemini lite from two frames at 4 s", "gemini", "veo-3.1-lite-generate-001", `{"prompt":"x","image":` + img + `,"lastFrame":` + img + `}`,
			`{"durationSeconds":4}`, 400, "INVALID_ARGUMENT", "durationSeconds 4"},
		{"vertex unknown model", "vertex", "veo-9-generate-001", `{"prompt":"x"}`, `{}`, 404, "NOT_FOUND", "Publisher Model"},
		{"vertex retired model", "vertex", "veo-3.0-generate-001", `{"prompt":"x"}`, `{}`, 404, "NOT_FOUND", "veo-3.0-generate-001"},
		{"gemini retired preview", "gemini", "veo-3.1-generate-preview", `{"prompt":"x"}`, `{}`, 404, "NOT_FOUND", "is no longer available"},
		{"gemini unknown model", "gemini", "veo-9", `{"prompt":"x"}`, `{}`, 404, "NOT_FOUND", "is not found"},
		// Reference images, extension and 4K (issue 37).
		{"gemini three references", "gemini", "veo-3.1-generate-001", `{"prompt":"x","referenceImages":[` + ref + `,` + ref + `,` + ref + `]}`,
			`{"durationSeconds":8,"personGeneration":"allow_adult"}`, 200, "", ""},
		{"gemini four references", "gemini", "veo-3.1-generate-001", `{"prompt":"x","referenceImages":[` + ref + `,` + ref + `,` + ref + `,` + ref + `]}`,
			`{"durationSeconds":8,"personGeneration":"allow_adult"}`, 400, "INVALID_ARGUMENT", "1 to 3"},
		{"gemini references with a last frame", "gemini", "veo-3.1-generate-001", `{"prompt":"x","image":` + img + `,"lastFrame":` + img + `,"referenceImages":[` + ref + `]}`,
			`{"durationSeconds":8,"personGeneration":"allow_adult"}`, 400, "INVALID_ARGUMENT", "not supported with image, lastFrame"},
		{"vertex references with an image", "vertex", "veo-3.1-generate-001", `{"prompt":"x","image":` + img + `,"referenceImages":[` + ref + `]}`,
			`{"durationSeconds":8}`, 400, "INVALID_ARGUMENT", "not supported with image, lastFrame"},
		{"gemini references at 6 s", "gemini", "veo-3.1-generate-001", `{"prompt":"x","referenceImages":[` + ref + `]}`,
			`{"durationSeconds":6,"personGeneration":"allow_adult"}`, 400, "INVALID_ARGUMENT", "durationSeconds 6"},
		{"gemini references at 9:16", "gemini", "veo-3.1-generate-001", `{"prompt":"x","referenceImages":[` + ref + `]}`,
			`{"durationSeconds":8,"aspectRatio":"9:16","personGeneration":"allow_adult"}`, 400, "INVALID_ARGUMENT", "aspectRatio 9:16"},
		{"gemini references allow_all", "gemini", "veo-3.1-generate-001", `{"prompt":"x","referenceImages":[` + ref + `]}`,
			`{"durationSeconds":8,"personGeneration":"allow_all"}`, 400, "INVALID_ARGUMENT", "allow_all for personGeneration"},
		{"gemini lite references", "gemini", "veo-3.1-lite-generate-001", `{"prompt":"x","referenceImages":[` + ref + `]}`,
			`{"durationSeconds":8,"personGeneration":"allow_adult"}`, 400, "INVALID_ARGUMENT", "reference-images is not supported"},
		{"vertex style reference", "vertex", "veo-3.1-generate-001", `{"prompt":"x","referenceImages":[{"image":` + img + `,"referenceType":"style"}]}`,
			`{"durationSeconds":8}`, 400, "INVALID_ARGUMENT", "referenceType"},
		{"vertex references at 9:16", "vertex", "veo-3.1-fast-generate-001", `{"prompt":"x","referenceImages":[` + ref + `]}`,
			`{"durationSeconds":8,"aspectRatio":"9:16"}`, 200, "", ""},
		{"gemini 4k at 8 s", "gemini", "veo-3.1-generate-001", `{"prompt":"x"}`, `{"durationSeconds":8,"resolution":"4k"}`, 200, "", ""},
		{"gemini 4k at 4 s", "gemini", "veo-3.1-generate-001", `{"prompt":"x"}`, `{"durationSeconds":4,"resolution":"4k"}`, 400, "INVALID_ARGUMENT", "resolution 4k"},
		{"gemini lite 4k", "gemini", "veo-3.1-lite-generate-001", `{"prompt":"x"}`, `{"durationSeconds":8,"resolution":"4k"}`, 400, "INVALID_ARGUMENT", "resolution 4k"},
		{"vertex lite 4k", "vertex", "veo-3.1-lite-generate-001", `{"prompt":"x"}`, `{"durationSeconds":8,"resolution":"4k"}`, 400, "INVALID_ARGUMENT", "resolution 4k"},
		{"vertex 4k", "vertex", "veo-3.1-generate-001", `{"prompt":"x"}`, `{"durationSeconds":8,"resolution":"4k"}`, 200, "", ""},
		{"gemini extension of a video Veo did not make", "gemini", "veo-3.1-generate-001", `{"prompt":"x","video":{"encodedVideo":"AAAA","encoding":"video/mp4"}}`,
			`{"durationSeconds":8,"resolution":"720p"}`, 400, "INVALID_ARGUMENT", "only supports video extensions for Veo-generated videos"},
		{"gemini extension at 1080p", "gemini", "veo-3.1-generate-001", `{"prompt":"x","video":{"uri":"x"}}`,
			`{"durationSeconds":8,"resolution":"1080p"}`, 400, "INVALID_ARGUMENT", "resolution 1080p is not supported for video-extension"},
		{"gemini lite extension", "gemini", "veo-3.1-lite-generate-001", `{"prompt":"x","video":{"uri":"x"}}`,
			`{"durationSeconds":8}`, 400, "INVALID_ARGUMENT", "video-extension is not supported"},
	}
	fake := veotest.New(veotest.Config{})
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			url := srv.URL + "/v1beta/models/" + tt.model + ":predictLongRunning"
			if tt.api == "vertex" {
				url = srv.URL + "/v1/projects/p/locations/us-central1/publishers/google/models/" + tt.model + ":predictLongRunning"
			}
			body := `{"instances":[` + tt.instance + `],"parameters":` + tt.parameters + `}`
			resp, err := http.Post(url, "application/json", strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var got struct {
				Name  string
				Error *struct {
					Code    int
					Message string
					Status  string
				}
			}
			if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d (%+v), want %d", resp.StatusCode, got.Error, tt.status)
			}
			if tt.status == 200 {
				if got.Name == "" {
					t.Errorf("accepted without an operation name")
				}
				return
			}
			if got.Error == nil || got.Error.Code != tt.status || got.Error.Status != tt.rpc || !strings.Contains(got.Error.Message, tt.message) {
				t.Errorf("error %+v, want code %d %s with a message containing %q", got.Error, tt.status, tt.rpc, tt.message)
			}
			subs := fake.Submits()
			if last := subs[len(subs)-1]; last.Status != tt.status || last.Operation != "" {
				t.Errorf("recorded %+v, want the refusal with no operation", last)
			}
		})
	}
}
