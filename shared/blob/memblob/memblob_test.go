package memblob_test

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/genvideo/gen/shared/blob"
	"github.com/genvideo/gen/shared/blob/memblob"
)

var (
	_ blob.Store = (*memblob.Store)(nil)
)

func TestPutGetDelete(t *testing.T) {
	ctx := context.Background()
	s := memblob.New()
	n, err := s.Put(ctx, "videos/a/0.mp4", strings.NewReader("first"), "video/mp4")
	if err != nil || n != 5 {
		t.Fatalf("Put = %d, %v; want 5, nil", n, err)
	}
	if _, err := s.Put(ctx, "videos/a/0.mp4", strings.NewReader("second"), "video/webm"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Put(ctx, "inputs/a/image.png", strings.NewReader("png"), "image/png"); err != nil {
		t.Fatal(err)
	}
	data, ct, ok := s.Object("videos/a/0.mp4")
	if !ok || string(data) != "second" || ct != "video/webm" {
		t.Errorf("Object = %q, %q, %v; want the second Put's bytes and type", data, ct, ok)
	}
	data[0] = 'X' // a copy: the store keeps its bytes
	rc, err := s.Get(ctx, "videos/a/0.mp4")
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(rc)
	rc.Close()
	if string(got) != "second" {
		t.Errorf("Get read %q, want second", got)
	}
	if got, want := s.Keys(), []string{"inputs/a/image.png", "videos/a/0.mp4"}; !slices.Equal(got, want) {
		t.Errorf("Keys = %v, want %v", got, want)
	}
	if got := s.Puts(); got != 3 {
		t.Errorf("Puts = %d, want 3", got)
	}

	if err := s.Delete(ctx, "inputs/a/image.png"); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if err := s.Delete(ctx, "inputs/a/image.png"); !errors.Is(err, memblob.ErrNotFound) || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("second Delete = %v, want ErrNotFound wrapping fs.ErrNotExist", err)
	}
	if _, err := s.Get(ctx, "inputs/a/image.png"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Get of a deleted key = %v, want fs.ErrNotExist", err)
	}
	if _, _, ok := s.Object("inputs/a/image.png"); ok {
		t.Error("Object of a deleted key is present")
	}
}

// A reader that fails leaves what it yielded stored, so that tests see
// whether the caller cleans up; a cancelled context stores nothing.
func TestPutFailures(t *testing.T) {
	s := memblob.New()
	boom := errors.New("connection reset")
	n, err := s.Put(context.Background(), "partial", io.MultiReader(strings.NewReader("abc"), iotest.ErrReader(boom)), "image/png")
	if !errors.Is(err, boom) || n != 3 {
		t.Errorf("Put of a failing reader = %d, %v; want 3 bytes and its error", n, err)
	}
	if data, _, ok := s.Object("partial"); !ok || string(data) != "abc" {
		t.Errorf("after the failed Put: %q present %v, want the 3 bytes read", data, ok)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Put(ctx, "cancelled", strings.NewReader("x"), "image/png"); !errors.Is(err, context.Canceled) {
		t.Errorf("Put with a cancelled context = %v, want context.Canceled", err)
	}

	outage := errors.New("storage unreachable")
	s.SetPutErr(outage)
	r := strings.NewReader("unread")
	if _, err := s.Put(context.Background(), "refused", r, "image/png"); err != outage {
		t.Errorf("Put with SetPutErr = %v, want %v", err, outage)
	}
	if r.Len() != len("unread") {
		t.Errorf("Put with SetPutErr read %d bytes, want none", len("unread")-r.Len())
	}
	s.SetPutErr(nil)
	if _, err := s.Put(context.Background(), "ok", strings.NewReader("y"), "image/png"); err != nil {
		t.Errorf("Put after SetPutErr(nil) = %v", err)
	}
	if got, want := s.Keys(), []string{"ok", "partial"}; !slices.Equal(got, want) {
		t.Errorf("Keys = %v, want %v", got, want)
	}
	if got := s.Puts(); got != 1 {
		t.Errorf("Puts = %d, want 1 (only the Put that succeeded)", got)
	}
}

func TestSignURL(t *testing.T) {
	s := memblob.New()
	expires := time.Date(2030, 1, 3, 3, 4, 0, 0, time.UTC)
	got, err := s.SignURL(context.Background(), "videos/gen_1/0.mp4", expires)
	if want := "https://storage.test/videos/gen_1/0.mp4?expires=1893639840"; err != nil || got != want {
		t.Errorf("SignURL = %q, %v; want %q", got, err, want)
	}
	outage := errors.New("signer unavailable")
	s.SetSignErr(outage)
	if _, err := s.SignURL(context.Background(), "k", expires); err != outage {
		t.Errorf("SignURL with SetSignErr = %v, want %v", err, outage)
	}
	s.SetSignErr(nil)
	if _, err := s.SignURL(context.Background(), "k", expires); err != nil {
		t.Errorf("SignURL after SetSignErr(nil) = %v", err)
	}
}
