package fsblob

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// writeSource writes a file for PutFile to take, outside the store.
func writeSource(t *testing.T, dir string, data []byte, perm os.FileMode) string {
	t.Helper()
	f, err := os.CreateTemp(dir, "source-*")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := f.Chmod(perm); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return f.Name()
}

// TestPutFile: the file is moved under key, whole, with the type rules of
// Put, owner-only as Put's objects are, and is gone from where it was.
func TestPutFile(t *testing.T) {
	data := bytes.Repeat([]byte("video bytes "), 10000)
	for _, tc := range []struct {
		name, key, put, want string
		perm                 os.FileMode
		meta                 bool
	}{
		{"video", "videos/gen_1/0.mp4", "video/mp4", "video/mp4", 0o600, false},
		{"poster", "videos/gen_1/0.jpg", "image/jpeg", "image/jpeg", 0o644, false},
		{"type the extension does not say", "inputs/b/x.png", "image/webp", "image/webp", 0o600, true},
		{"no extension", "inputs/b/noext", "video/mp4", "video/mp4", 0o640, true},
		{"no type", "inputs/b/y.mp4", "", defaultContentType, 0o600, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newStore(t)
			src := writeSource(t, t.TempDir(), data, tc.perm)
			n, err := s.PutFile(context.Background(), tc.key, src, tc.put)
			if err != nil {
				t.Fatalf("PutFile: %v", err)
			}
			if n != int64(len(data)) {
				t.Errorf("PutFile returned %d, want %d", n, len(data))
			}
			if got := get(t, s, tc.key); !bytes.Equal(got, data) {
				t.Errorf("Get returned %d bytes differing from the %d put", len(got), len(data))
			}
			f, ct, err := s.open(tc.key)
			if err != nil {
				t.Fatal(err)
			}
			f.Close()
			_, err = os.Stat(s.metaPath(tc.key))
			if ct != tc.want || (err == nil) != tc.meta {
				t.Errorf("type %q, meta file %v; want %q, %v", ct, err == nil, tc.want, tc.meta)
			}
			if st, err := os.Stat(s.dataPath(tc.key)); err != nil || st.Mode().Perm() != 0o600 {
				t.Errorf("stored file: %v, %v; want mode 0600", st.Mode(), err)
			}
			if _, err := os.Stat(src); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("source after PutFile: %v, want it gone", err)
			}
			if left, _ := os.ReadDir(filepath.Join(s.dir, "tmp")); len(left) != 0 {
				t.Errorf("tmp/ holds %d files after PutFile", len(left))
			}
		})
	}
}

// TestPutFileOverwrites: PutFile replaces what Put or PutFile stored,
// type and all.
func TestPutFileOverwrites(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	const key = "inputs/a/x.png"
	if _, err := s.Put(ctx, key, strings.NewReader("webp"), "image/webp"); err != nil {
		t.Fatal(err)
	}
	for _, step := range []struct{ data, put string }{
		{"png", "image/png"},   // drops the type file Put left
		{"gif", "image/gif"},   // writes one again
		{"png 2", "image/png"}, // and drops it
		{"", "image/png"},      // an empty file is an object too
		{"again", "image/png"},
	} {
		src := writeSource(t, t.TempDir(), []byte(step.data), 0o600)
		if _, err := s.PutFile(ctx, key, src, step.put); err != nil {
			t.Fatalf("PutFile(%q): %v", step.data, err)
		}
		f, ct, err := s.open(key)
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
		if got := get(t, s, key); string(got) != step.data || ct != step.put {
			t.Errorf("after PutFile(%q, %s): %q, %s", step.data, step.put, got, ct)
		}
	}
}

// TestPutFileFailureChangesNothing: a PutFile that cannot store leaves
// the object that was there, and the file where it was.
func TestPutFileFailureChangesNothing(t *testing.T) {
	dir := t.TempDir()
	src := writeSource(t, dir, []byte("new"), 0o600)
	for _, tc := range []struct{ name, key, path, put string }{
		{"missing file", "videos/a/0.mp4", filepath.Join(dir, "missing.mp4"), "video/mp4"},
		{"directory", "videos/a/0.mp4", dir, "video/mp4"},
		{"invalid key", "../0.mp4", src, "video/mp4"},
		{"bad content type", "videos/a/0.mp4", src, "video/mp4\r\nX-Evil: 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newStore(t)
			ctx := context.Background()
			if _, err := s.Put(ctx, "videos/a/0.mp4", strings.NewReader("old"), "text/plain"); err != nil {
				t.Fatal(err)
			}
			if _, err := s.PutFile(ctx, tc.key, tc.path, tc.put); err == nil {
				t.Fatalf("PutFile succeeded")
			}
			f, ct, err := s.open("videos/a/0.mp4")
			if err != nil {
				t.Fatal(err)
			}
			f.Close()
			if got := get(t, s, "videos/a/0.mp4"); string(got) != "old" || ct != "text/plain" {
				t.Errorf("object after a failed PutFile: %q, %s; want the old one", got, ct)
			}
			if got, err := os.ReadFile(src); err != nil || string(got) != "new" {
				t.Errorf("source after a failed PutFile: %q, %v", got, err)
			}
			if left, _ := os.ReadDir(filepath.Join(s.dir, "tmp")); len(left) != 0 {
				t.Errorf("tmp/ holds %d files after PutFile", len(left))
			}
		})
	}
}

// TestPutFileCopy: a file that cannot be renamed into the store (EXDEV,
// another file system) is copied, as Put would, and then removed.
// copyFile is that fallback, called directly so that the test does not
// depend on the machine's mounts.
func TestPutFileCopy(t *testing.T) {
	s := newStore(t)
	src := writeSource(t, t.TempDir(), []byte("across"), 0o600)
	f, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n, err := s.copyFile(context.Background(), "videos/a/0.mp4", f, src, "video/mp4")
	if err != nil || n != int64(len("across")) {
		t.Fatalf("copyFile = %d, %v", n, err)
	}
	if got := get(t, s, "videos/a/0.mp4"); string(got) != "across" {
		t.Errorf("Get = %q", got)
	}
	if _, err := os.Stat(src); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("source after copyFile: %v, want it gone", err)
	}
}

// TestPutFileAcrossFileSystems: where the machine has a tmpfs at
// /dev/shm beside the store's disk, PutFile from there takes the EXDEV
// fallback end to end.
func TestPutFileAcrossFileSystems(t *testing.T) {
	shm, err := os.MkdirTemp("/dev/shm", "fsblob-test-")
	if err != nil {
		t.Skipf("no /dev/shm: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(shm) })
	s := newStore(t)
	src := writeSource(t, shm, []byte("from tmpfs"), 0o644)
	probe := filepath.Join(s.dir, "tmp", "probe")
	if err := os.Link(src, probe); !errors.Is(err, syscall.EXDEV) {
		os.Remove(probe)
		t.Skipf("/dev/shm is on the store's file system here (link: %v)", err)
	}
	n, err := s.PutFile(context.Background(), "videos/a/0.mp4", src, "video/mp4")
	if err != nil || n != int64(len("from tmpfs")) {
		t.Fatalf("PutFile = %d, %v", n, err)
	}
	if got := get(t, s, "videos/a/0.mp4"); string(got) != "from tmpfs" {
		t.Errorf("Get = %q", got)
	}
	if _, err := os.Stat(src); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("source after PutFile: %v, want it gone", err)
	}
}
