package client_test

import (
	"bytes"
	"encoding/binary"
	"image/jpeg"
	"net/http"
	"testing"
	"time"

	"github.com/genvideo/gen/shared/client"
	"github.com/genvideo/gen/shared/store"
	"github.com/genvideo/gen/shared/testing/devstacktest"
)

// Every completed video has a poster frame: a JPEG of the video's size
// behind a signed link like the video's, gone once the task is deleted.
func TestPosters(t *testing.T) {
	t.Parallel()
	k := stack.Key(t, 1000, store.KeyLimits{})
	c := newClient(t, k.APIKey)
	ctx := t.Context()
	for _, aspect := range []string{"16:9", "9:16"} {
		req := lite("a paper lantern rising")
		req.SampleCount, req.AspectRatio = 2, aspect
		s, err := c.TextToVideo(ctx, req)
		if err != nil {
			t.Fatalf("TextToVideo: %v", err)
		}
		task, err := c.Wait(ctx, s.TaskID, client.WaitOptions{Timeout: 2 * time.Minute})
		if err != nil || len(task.Videos) != 2 {
			t.Fatalf("Wait = %+v, %v; want two videos", task, err)
		}
		for i, v := range task.Videos {
			if v.PosterURL == "" {
				t.Fatalf("%s video %d has no posterUrl", aspect, i)
			}
			w, h := mp4Size(t, devstacktest.Fetch(t, v.URL))
			img, err := jpeg.Decode(bytes.NewReader(devstacktest.Fetch(t, v.PosterURL)))
			if err != nil {
				t.Fatalf("%s video %d: the poster is not a JPEG: %v", aspect, i, err)
			}
			if b := img.Bounds(); b.Dx() != w || b.Dy() != h {
				t.Errorf("%s video %d: poster %dx%d, video %dx%d", aspect, i, b.Dx(), b.Dy(), w, h)
			}
		}
		if err := c.Delete(ctx, s.TaskID); err != nil {
			t.Fatalf("Delete: %v", err)
		}
		for i, v := range task.Videos {
			if code := status(t, v.PosterURL); code == http.StatusOK {
				t.Errorf("%s video %d: the poster is still served after the delete", aspect, i)
			}
		}
	}
}

// status is the status a GET of url answers.
func status(t *testing.T, url string) int {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	res.Body.Close()
	return res.StatusCode
}

// mp4Size reads the width and height of an MP4's video track: the last
// two fields (16.16 fixed point) of the first track header ("tkhd" box,
// ISO/IEC 14496-12 8.3.2) whose width is not 0, as an audio track's is.
func mp4Size(t *testing.T, mp4 []byte) (w, h int) {
	t.Helper()
	for rest, off := mp4, 0; ; {
		i := bytes.Index(rest, []byte("tkhd"))
		if i < 4 {
			t.Fatal("the video has no track header with a size")
		}
		start := off + i - 4
		size := int(binary.BigEndian.Uint32(mp4[start:]))
		if size < 92 || start+size > len(mp4) {
			t.Fatalf("a track header of %d bytes", size)
		}
		end := start + size
		w = int(binary.BigEndian.Uint32(mp4[end-8:]) >> 16)
		h = int(binary.BigEndian.Uint32(mp4[end-4:]) >> 16)
		if w > 0 {
			return w, h
		}
		off = end
		rest = mp4[end:]
	}
}
