package client_test

import (
	"context"
	"errors"
	"image/color"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/genvideo/gen/shared/client"
	"github.com/genvideo/gen/shared/settings"
	"github.com/genvideo/gen/shared/store"
	"github.com/genvideo/gen/shared/testing/devstacktest"
	"github.com/genvideo/gen/shared/testing/veotest"
)

// Reference images and extensions are Veo's (issue 37), so this test
// has a stack of its own, routed to the strict Veo fake on the Gemini
// API (on either GEN_E2E_STACK): a start with reference images sent as
// files and one naming direct uploads, each as its quote said; the
// extension of the first one's video, as its quote said; and refusals
// (an unknown task, another account's, reference images on a model
// that takes none), each the client's *Error, charging nothing.
func TestReferenceImagesAndExtension(t *testing.T) {
	t.Parallel()
	e, fake := devstacktest.StartVeo(t, settings.GeneratorGemini, veotest.Config{Delay: time.Second}, nil)
	k := e.Key(t, 100000, store.KeyLimits{})
	c := clientOf(t, e.URL, k.APIKey, true)
	ctx := context.Background()
	red := pngImage(t, color.RGBA{200, 20, 20, 255})
	green := pngImage(t, color.RGBA{20, 200, 20, 255})
	req := client.Request{Prompt: "the fox in the red dress", Model: client.ModelQuality, Resolution: "720p"}

	// Files travel in the start's own form.
	s, err := c.TextToVideoWithReferences(ctx, req, []client.Image{client.ImageBytes("red.png", red), client.ImageBytes("green.png", green)})
	if err != nil {
		t.Fatalf("TextToVideoWithReferences(files): %v", err)
	}
	want := []client.ImageInfo{{OriginalName: "red.png", Size: int64(len(red)), MimeType: "image/png"},
		{OriginalName: "green.png", Size: int64(len(green)), MimeType: "image/png"}}
	if len(s.ReferenceImages) != 2 || s.ReferenceImages[0] != want[0] || s.ReferenceImages[1] != want[1] {
		t.Errorf("referenceImages = %+v, want the two files in order %+v", s.ReferenceImages, want)
	}

	// An upload made already and a file: a request carries either files
	// or upload ids, so the file is uploaded too, and both are named by
	// their ids, in order; the quote said what the start charged.
	id, err := c.UploadImage(ctx, client.ImageBytes("red.png", red))
	if err != nil {
		t.Fatalf("UploadImage: %v", err)
	}
	mixed := req
	mixed.Prompt = "the fox and the frog"
	refs := []client.Image{client.UploadedImage(id), client.ImageBytes("green.png", green)}
	q, err := c.QuoteTextToVideoWithReferences(ctx, mixed, refs)
	if err != nil || !q.Allowed || q.Endpoint != "text-to-video" {
		t.Fatalf("QuoteTextToVideoWithReferences = %+v, %v; want an allowed text-to-video quote", q, err)
	}
	s2, err := c.TextToVideoWithReferences(ctx, mixed, refs)
	if err != nil {
		t.Fatalf("TextToVideoWithReferences(upload, file): %v", err)
	}
	if len(s2.ReferenceImages) != 2 || s2.ReferenceImages[0].OriginalName != id ||
		!strings.HasPrefix(s2.ReferenceImages[1].OriginalName, "upl_") || s2.ReferenceImages[1].OriginalName == id ||
		s2.ReferenceImages[1].Size != int64(len(green)) {
		t.Errorf("referenceImages = %+v, want upload %s, then the green file's own upload", s2.ReferenceImages, id)
	}
	if s2.CreditsUsed != q.CreditsRequired {
		t.Errorf("the start charged %d credits, its quote said %d", s2.CreditsUsed, q.CreditsRequired)
	}

	// Files over the direct-upload size shared among them are uploaded
	// first: two of n bytes each under a size of 2n-1.
	small := clientOf(t, e.URL, k.APIKey, true, client.WithDirectUploadAbove(int64(2*len(red)-1)))
	s3, err := small.TextToVideoWithReferences(ctx, req, []client.Image{client.ImageBytes("red.png", red), client.ImageBytes("green.png", green)})
	if err != nil {
		t.Fatalf("TextToVideoWithReferences(large files): %v", err)
	}
	if len(s3.ReferenceImages) != 2 || !strings.HasPrefix(s3.ReferenceImages[0].OriginalName, "upl_") ||
		!strings.HasPrefix(s3.ReferenceImages[1].OriginalName, "upl_") || s3.ReferenceImages[1].Size != int64(len(green)) {
		t.Errorf("referenceImages = %+v, want both files uploaded directly, in order", s3.ReferenceImages)
	}

	// The extension of the first video, as its quote said.
	if task, err := c.Wait(ctx, s.TaskID, client.WaitOptions{Timeout: time.Minute}); err != nil || task.Status != client.StatusCompleted {
		t.Fatalf("Wait(%s) = %+v, %v; want it completed", s.TaskID, task, err)
	}
	ext := client.ExtendRequest{Prompt: "and then she dances"}
	q, err = c.QuoteExtend(ctx, s.TaskID, ext)
	if err != nil || !q.Allowed || q.Endpoint != "extend" || q.Model != client.ModelQuality {
		t.Fatalf("QuoteExtend = %+v, %v; want an allowed extension of the quality model", q, err)
	}
	x, err := c.Extend(ctx, s.TaskID, ext, client.WithIdempotencyKey(client.NewIdempotencyKey()))
	if err != nil {
		t.Fatalf("Extend: %v", err)
	}
	if x.ExtendsTaskID != s.TaskID || x.CreditsUsed != q.CreditsRequired || x.IdempotencyKey == "" {
		t.Errorf("Extend = %+v, want the extension of %s charged %d credits, its key kept", x, s.TaskID, q.CreditsRequired)
	}
	task, err := c.Wait(ctx, x.TaskID, client.WaitOptions{Timeout: time.Minute})
	if err != nil || task.Type != "video-extension" || len(task.Videos) != 1 {
		t.Fatalf("Wait(%s) = %+v, %v; want a completed video-extension with its video", x.TaskID, task, err)
	}
	if n := fake.Accepted("and then she dances"); n != 1 {
		t.Errorf("Google was asked for the extension %d times, want once", n)
	}

	// Refusals: the client's *Error, nothing charged.
	balance := e.Balance(t, k.AccountID)
	other := e.Key(t, 1000, store.KeyLimits{})
	lite := client.Request{Prompt: "x", Model: client.ModelLite}
	withIDs := lite
	withIDs.ReferenceImages = []string{id}
	for _, r := range []struct {
		name        string
		call        func(*client.Client) error
		status      int
		code, field string
	}{
		{"extension of an unknown task", func(c *client.Client) error {
			_, err := c.Extend(ctx, "gen_1767225600000_unknown001", ext)
			return err
		}, http.StatusNotFound, client.CodeTaskNotFound, ""},
		{"quote of an unknown task's extension", func(c *client.Client) error {
			_, err := c.QuoteExtend(ctx, "gen_1767225600000_unknown001", ext)
			return err
		}, http.StatusNotFound, client.CodeTaskNotFound, ""},
		{"extension of another account's task", func(*client.Client) error {
			_, err := clientOf(t, e.URL, other.APIKey, true).Extend(ctx, s.TaskID, ext)
			return err
		}, http.StatusNotFound, client.CodeTaskNotFound, ""},
		{"reference files with lite", func(c *client.Client) error {
			_, err := c.TextToVideoWithReferences(ctx, lite, []client.Image{client.ImageBytes("red.png", red)})
			return err
		}, http.StatusBadRequest, client.CodeValidation, "referenceImages"},
		{"reference uploads with lite", func(c *client.Client) error {
			_, err := c.TextToVideo(ctx, withIDs)
			return err
		}, http.StatusBadRequest, client.CodeValidation, "referenceImages"},
		{"an extension at 4k (Gemini extends 720p)", func(c *client.Client) error {
			_, err := c.Extend(ctx, s.TaskID, client.ExtendRequest{Prompt: "x", Resolution: "4k"})
			return err
		}, http.StatusBadRequest, client.CodeValidation, "resolution"},
	} {
		err := r.call(c)
		var ae *client.Error
		if !errors.As(err, &ae) || ae.Status != r.status || ae.Code != r.code || ae.Field != r.field {
			t.Errorf("%s: %v, want a *client.Error %d %s naming %q", r.name, err, r.status, r.code, r.field)
		}
	}
	if got := e.Balance(t, k.AccountID); got != balance {
		t.Errorf("balance %d after the refusals, want %d: nothing charged", got, balance)
	}
	if got := e.Balance(t, other.AccountID); got != 1000 {
		t.Errorf("the other account's balance is %d, want 1000", got)
	}
}
