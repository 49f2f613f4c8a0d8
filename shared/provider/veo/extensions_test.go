package veo_test

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/genvideo/gen/shared/catalog"
	"github.com/genvideo/gen/shared/params"
	"github.com/genvideo/gen/shared/provider"
	"github.com/genvideo/gen/shared/provider/veo"
	"github.com/genvideo/gen/shared/task"
)

// await polls name until it is done.
func await(t *testing.T, p provider.Provider, name string, job provider.Job) provider.Operation {
	t.Helper()
	for range 50 {
		op, err := p.Poll(t.Context(), name, job)
		if err != nil {
			t.Fatal(err)
		}
		if op.Done {
			return op
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("the operation is not done")
	return provider.Operation{}
}

// TestReferenceImagesRequest: a start's reference images reach each API
// as Google documents them (veomodels [genai-video], [vertex-refs]): the
// instance's referenceImages, in the start's order, each an asset image
// with its bytes and type, and the fake takes them.
func TestReferenceImagesRequest(t *testing.T) {
	first := writeImage(t, "first.png", png)
	second := writeImage(t, "second.jpg", jpeg)
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			fake, url := newFake(t)
			r := params.Request{Type: catalog.TextToVideo, References: 2, Model: "gen-3.1-generate-001",
				Params: params.Parameters{SampleCount: 1, DurationSeconds: 8, AspectRatio: "16:9", Resolution: "720p",
					GenerateAudio: true, EnhancePrompt: true}, Sent: map[string]bool{"resolution": true}}
			if err := b.caps(t).Apply(&r); err != nil {
				t.Fatal(err)
			}
			job := provider.Job{TaskID: "gen_1_x", Type: catalog.TextToVideo, Model: r.Model, Prompt: "p", Params: r.Params,
				Images: map[string]string{task.ReferenceRole(1): second, task.ReferenceRole(0): first}, OutDir: t.TempDir()}
			if _, err := b.provider(t, url).Submit(t.Context(), job); err != nil {
				t.Fatal(err)
			}
			in := decode(t, fake.Submits()[0].Instance)
			refs, _ := in["referenceImages"].([]any)
			if len(refs) != 2 || len(in) != 2 {
				t.Fatalf("instance %v, want the prompt and two reference images", in)
			}
			for i, want := range []struct {
				b    []byte
				mime string
			}{{png, "image/png"}, {jpeg, "image/jpeg"}} {
				ref := refs[i].(map[string]any)
				img := ref["image"].(map[string]any)
				if ref["referenceType"] != "asset" || img["bytesBase64Encoded"] != base64.StdEncoding.EncodeToString(want.b) || img["mimeType"] != want.mime {
					t.Errorf("referenceImages[%d] = %v, want the asset image %s", i, ref, want.mime)
				}
			}
			if p := decode(t, fake.Submits()[0].Parameters); p["personGeneration"] != "allow_adult" || p["durationSeconds"] != json.Number("8") {
				t.Errorf("parameters %v, want allow_adult at 8 s", p)
			}
		})
	}
}

// TestExtensionRequest: an extension names its video as each API takes
// it (veomodels [genai-video]): on the Gemini API by the file uri the
// generation answered (or its bytes, when it came inline), on Vertex AI
// by its gs:// object (or its bytes without a storage URI), at 720p;
// and the fake extends it.
func TestExtensionRequest(t *testing.T) {
	for _, tt := range []struct {
		name    string
		backend int
		storage string
		want    func(made provider.Operation, path string) map[string]any
	}{
		{"gemini by its uri", 1, "", func(made provider.Operation, _ string) map[string]any {
			return map[string]any{"uri": made.Result.URIs[0]}
		}},
		{"vertex by its gs:// object", 0, "gs://bucket/gen", func(made provider.Operation, _ string) map[string]any {
			return map[string]any{"gcsUri": made.Result.URIs[0], "mimeType": "video/mp4"}
		}},
		{"vertex inline", 0, "", func(_ provider.Operation, path string) map[string]any {
			b, _ := os.ReadFile(path)
			return map[string]any{"bytesBase64Encoded": base64.StdEncoding.EncodeToString(b), "mimeType": "video/mp4"}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b := backends[tt.backend]
			fake, url := newFake(t)
			p := b.provider(t, url)
			if tt.storage != "" {
				v, err := veo.NewVertex(t.Context(), veo.VertexConfig{Project: "proj-1", Location: "europe-west4",
					Endpoint: url, AccessToken: token, StorageURI: tt.storage})
				if err != nil {
					t.Fatal(err)
				}
				p = v
			}
			caps := b.caps(t)
			made := provider.Job{TaskID: "gen_1_a", Type: catalog.TextToVideo, Model: "gen-3.1-fast-generate-001", Prompt: "a",
				Params: valid(t, b, 1), OutDir: t.TempDir()}
			op, err := p.Submit(t.Context(), made)
			if err != nil {
				t.Fatal(err)
			}
			done := await(t, p, op.Name, made)
			if len(done.Result.URIs) != 1 || (tt.storage != "" || b.name == "gemini") && done.Result.URIs[0] == "" {
				t.Fatalf("URIs %q, want the video's address", done.Result.URIs)
			}
			r, err := params.ParseExtensionJSON(made.Model, []byte(`{"prompt":"and then"}`))
			if err != nil {
				t.Fatal(err)
			}
			r.Params.AspectRatio = made.Params.AspectRatio
			r.Extends = &params.Source{TaskID: made.TaskID, Route: b.name, Seconds: 8, Resolution: made.Params.Resolution}
			if err := caps.Apply(&r); err != nil {
				t.Fatal(err)
			}
			path := done.Result.Paths[0]
			ext := provider.Job{TaskID: "gen_1_b", Type: catalog.VideoExtension, Model: made.Model, Prompt: r.Prompt, Params: r.Params,
				Video: &provider.SourceVideo{Path: path, URI: done.Result.URIs[0], Route: b.name}, OutDir: t.TempDir()}
			if _, err := p.Submit(t.Context(), ext); err != nil {
				t.Fatalf("the fake refused the extension: %v", err)
			}
			subs := fake.Submits()
			in := decode(t, subs[len(subs)-1].Instance)
			v, _ := in["video"].(map[string]any)
			want := tt.want(done, path)
			if len(v) != len(want) {
				t.Fatalf("video = %v, want %v", v, want)
			}
			for k, w := range want {
				if v[k] != w {
					t.Errorf("video.%s = %.60v, want %.60v", k, v[k], w)
				}
			}
			if par := decode(t, subs[len(subs)-1].Parameters); par["resolution"] != "720p" {
				t.Errorf("parameters %v, want 720p", par)
			}
		})
	}
}
