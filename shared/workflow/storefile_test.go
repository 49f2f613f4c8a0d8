package workflow_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/genvideo/gen/shared/blob"
	"github.com/genvideo/gen/shared/blob/fsblob"
	"github.com/genvideo/gen/shared/blob/memblob"
	"github.com/genvideo/gen/shared/provider"
	"github.com/genvideo/gen/shared/workflow"
)

// movingBlobs is the real fsblob, counting the files it was handed to
// move (PutFile) rather than copy.
type movingBlobs struct {
	*fsblob.Store
	moved atomic.Int64
}

func (m *movingBlobs) PutFile(ctx context.Context, key, path, contentType string) (int64, error) {
	n, err := m.Store.PutFile(ctx, key, path, contentType)
	if err == nil {
		m.moved.Add(1)
	}
	return n, err
}

// object reads what b holds under key, with its content type: memblob's
// own record, or what fsblob's handler serves on a signed link.
func object(t *testing.T, b blob.Store, key string) (data []byte, contentType string, ok bool) {
	t.Helper()
	switch b := b.(type) {
	case *memblob.Store:
		return b.Object(key)
	case *movingBlobs:
		u, err := b.SignURL(context.Background(), key, time.Now().Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		rec := httptest.NewRecorder()
		b.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, u, nil))
		if rec.Code == http.StatusNotFound {
			return nil, "", false
		}
		if rec.Code != http.StatusOK {
			t.Fatalf("GET %s: %d %s", key, rec.Code, rec.Body)
		}
		return rec.Body.Bytes(), rec.Header().Get("Content-Type"), true
	}
	t.Fatalf("no way to read a %T", b)
	return nil, "", false
}

// framer is a workflow.Posters that reads the video, as ffmpeg does:
// its poster says what the video held, and it fails where the video is
// not (moved away before the poster was made).
type framer struct{}

func (framer) Poster(_ context.Context, video, out string) error {
	data, err := os.ReadFile(video)
	if err != nil {
		return err
	}
	return os.WriteFile(out, fmt.Appendf(nil, "frame of %s", data), 0o600)
}

// noVideo hands a video path with nothing there.
type noVideo struct{}

func (noVideo) Generate(_ context.Context, job provider.Job) (provider.Result, error) {
	return provider.Result{Paths: []string{filepath.Join(job.OutDir, "sample-0.mp4")}}, nil
}

// TestVideosStoredEitherWay: a blob store that takes files (fsblob,
// which moves the generator's file into place) and one that is handed
// bytes (memblob, Put) end with the same objects: the video, its type
// and size, and its poster, handed by the generator or made from the
// video before the video was moved; a handed poster that is not there
// leaves the video without one, and a video that is not there fails
// the generation rather than being retried as storage's fault.
func TestVideosStoredEitherWay(t *testing.T) {
	stores := []struct {
		name string
		new  func(t *testing.T) blob.Store
	}{
		{"put", func(*testing.T) blob.Store { return memblob.New() }},
		{"put file", func(t *testing.T) blob.Store {
			s, err := fsblob.New(t.TempDir(), "http://files.test", []byte("0123456789abcdef0123456789abcdef"))
			if err != nil {
				t.Fatal(err)
			}
			return &movingBlobs{Store: s}
		}},
	}
	cases := []struct {
		name    string
		posters []string
		// want is each video's stored poster: "" none.
		want []string
	}{
		{"given", []string{"given", "given"}, []string{"given poster 0", "given poster 1"}},
		{"made from the video", nil, []string{"frame of video", "frame of video"}},
		{"one given, one made", []string{"", "given"}, []string{"frame of video", "given poster 1"}},
		{"given file missing", []string{"gone", "given"}, []string{"", "given poster 1"}},
	}
	for _, st := range stores {
		for _, tc := range cases {
			t.Run(st.name+"/"+tc.name, func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					e := newEnv(t, nil)
					blobs := st.new(t)
					e.steps.Blobs, e.steps.Generator, e.steps.Posters = blobs, handing{tc.posters}, framer{}
					ctx := context.Background()
					tk := e.newTask("stored", 2)
					if _, err := e.steps.MarkProcessing(ctx, workflow.TaskRef{TaskID: tk.ID}); err != nil {
						t.Fatal(err)
					}
					g, err := e.steps.Generate(ctx, workflow.TaskRef{TaskID: tk.ID})
					if err != nil || !g.Done || len(g.Videos) != 2 {
						t.Fatalf("Generate = %+v, %v; want done with two videos", g, err)
					}
					stored := 0
					for i, v := range g.Videos {
						data, ct, ok := object(t, blobs, v.Key)
						if !ok || string(data) != "video" || ct != "video/mp4" || v.Size != int64(len("video")) || v.MimeType != "video/mp4" {
							t.Errorf("video %d: %+v holding %q (%s), present %v; want the generator's 5 bytes as video/mp4", i, v, data, ct, ok)
						}
						stored++
						key := blob.PosterKey(v.Key)
						data, ct, ok = object(t, blobs, key)
						if tc.want[i] == "" {
							if v.Poster != "" || ok {
								t.Errorf("video %d: poster %q, stored %v; want none", i, v.Poster, ok)
							}
							continue
						}
						if v.Poster != key || string(data) != tc.want[i] || ct != "image/jpeg" {
							t.Errorf("video %d: poster %q holding %q (%s); want %s holding %q (image/jpeg)",
								i, v.Poster, data, ct, key, tc.want[i])
						}
						stored++
					}
					if m, ok := blobs.(*movingBlobs); ok && m.moved.Load() != int64(stored) {
						t.Errorf("%d objects were moved into place, want all %d", m.moved.Load(), stored)
					}
					e.checkWorkDirEmpty()
				})
			})
		}
		t.Run(st.name+"/video missing", func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e := newEnv(t, nil)
				e.steps.Blobs, e.steps.Generator = st.new(t), noVideo{}
				ctx := context.Background()
				tk := e.newTask("no video", 1)
				if _, err := e.steps.MarkProcessing(ctx, workflow.TaskRef{TaskID: tk.ID}); err != nil {
					t.Fatal(err)
				}
				_, err := e.steps.Generate(ctx, workflow.TaskRef{TaskID: tk.ID})
				var gf *workflow.GenerationFailed
				if !errors.As(err, &gf) {
					t.Errorf("Generate = %v, want *GenerationFailed", err)
				}
				e.checkWorkDirEmpty()
			})
		})
	}
}
