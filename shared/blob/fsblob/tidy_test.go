package fsblob

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// age sets the modification time of each path to d ago.
func age(t *testing.T, d time.Duration, paths ...string) {
	t.Helper()
	when := time.Now().Add(-d)
	for _, p := range paths {
		if err := os.Chtimes(p, when, when); err != nil {
			t.Fatal(err)
		}
	}
}

func TestWalk(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	for _, k := range []string{"inputs/a/image.png", "inputs/b/firstFrame.jpg", "inputs/b/lastFrame.png", "videos/a/0.mp4", "inputsX"} {
		if _, err := s.Put(ctx, k, strings.NewReader(k), "image/png"); err != nil {
			t.Fatal(err)
		}
	}
	// A temporary file and a content type alone are no objects.
	os.WriteFile(filepath.Join(s.dir, "tmp", "put-1"), []byte("x"), 0o600)
	os.MkdirAll(filepath.Join(s.dir, "meta", "inputs", "c"), 0o750)
	os.WriteFile(filepath.Join(s.dir, "meta", "inputs", "c", "image.png"), []byte("image/png"), 0o600)
	for prefix, want := range map[string][]string{
		"inputs/":   {"inputs/a/image.png", "inputs/b/firstFrame.jpg", "inputs/b/lastFrame.png"},
		"inputs/b/": {"inputs/b/firstFrame.jpg", "inputs/b/lastFrame.png"},
		"inputs":    {"inputs/a/image.png", "inputs/b/firstFrame.jpg", "inputs/b/lastFrame.png", "inputsX"},
		"nothing/":  nil,
		"":          {"inputs/a/image.png", "inputs/b/firstFrame.jpg", "inputs/b/lastFrame.png", "inputsX", "videos/a/0.mp4"},
	} {
		var got []string
		err := s.Walk(prefix, func(key string, written time.Time) error {
			if time.Since(written) > time.Minute {
				t.Errorf("%s written %v", key, written)
			}
			got = append(got, key)
			return nil
		})
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("Walk(%q) = %v, %v; want %v", prefix, got, err, want)
		}
	}
}

// TestTidy: what a killed writer leaves goes once it is old enough; what
// is young, and every object, stays.
func TestTidy(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	for _, k := range []string{"inputs/kept/image.png", "videos/kept/0.mp4"} {
		// A type the key does not say, so that each has its meta file.
		if _, err := s.Put(ctx, k, strings.NewReader("bytes"), "image/webp"); err != nil {
			t.Fatal(err)
		}
	}
	in := func(p ...string) string { return filepath.Join(append([]string{s.dir}, p...)...) }
	write := func(p string) string {
		os.MkdirAll(filepath.Dir(p), 0o750)
		if err := os.WriteFile(p, []byte("partial"), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	oldTemp := write(in("tmp", "put-111"))
	newTemp := write(in("tmp", "put-222"))
	oldMeta := write(in("meta", "inputs", "gone", "image.png"))
	newMeta := write(in("meta", "inputs", "going", "image.png"))
	os.MkdirAll(in("data", "inputs", "refused"), 0o750)
	os.MkdirAll(in("data", "videos", "empty", "deeper"), 0o750)
	os.MkdirAll(in("data", "inputs", "fresh"), 0o750)
	age(t, 2*time.Hour, oldTemp, oldMeta, in("meta", "inputs", "gone"), in("data", "inputs", "refused"),
		in("data", "videos", "empty", "deeper"), in("data", "videos", "empty"),
		in("data", "inputs", "kept", "image.png"), in("meta", "inputs", "kept", "image.png"), in("data", "inputs", "kept"))

	n, err := s.Tidy(time.Now().Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{oldTemp, oldMeta, in("meta", "inputs", "gone"), in("data", "inputs", "refused"), in("data", "videos", "empty")} {
		if _, err := os.Lstat(p); !os.IsNotExist(err) {
			t.Errorf("%s is still there (%v)", p, err)
		}
	}
	for _, p := range []string{newTemp, newMeta, in("data", "inputs", "fresh"), in("data", "inputs", "kept", "image.png")} {
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("%s was removed: %v", p, err)
		}
	}
	for _, k := range []string{"inputs/kept/image.png", "videos/kept/0.mp4"} {
		if string(get(t, s, k)) != "bytes" {
			t.Errorf("%s changed", k)
		}
	}
	if n != 6 {
		t.Errorf("Tidy removed %d entries, want 6", n)
	}
	// A Put into a directory Tidy just removed makes it again.
	if _, err := s.Put(ctx, "inputs/refused/image.png", strings.NewReader("x"), "image/png"); err != nil {
		t.Errorf("Put after Tidy: %v", err)
	}
}

// TestDeleteLeavesNoEmptyDirectory: a refused upload's directory goes
// with its last object.
func TestDeleteLeavesNoEmptyDirectory(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	for _, k := range []string{"inputs/x/a.png", "inputs/x/b.png", "inputs/y/a.png"} {
		// A type the key does not say, so that each has its meta file.
		if _, err := s.Put(ctx, k, strings.NewReader("x"), "image/webp"); err != nil {
			t.Fatal(err)
		}
	}
	dirs := func() (out []string) {
		for _, tree := range []string{"data", "meta"} {
			filepath.WalkDir(filepath.Join(s.dir, tree), func(p string, d os.DirEntry, err error) error {
				if err == nil && d.IsDir() {
					rel, _ := filepath.Rel(s.dir, p)
					out = append(out, filepath.ToSlash(rel))
				}
				return nil
			})
		}
		return out
	}
	for _, step := range []struct {
		key  string
		want []string
	}{
		{"inputs/x/a.png", []string{"data", "data/inputs", "data/inputs/x", "data/inputs/y", "meta", "meta/inputs", "meta/inputs/x", "meta/inputs/y"}},
		{"inputs/x/b.png", []string{"data", "data/inputs", "data/inputs/y", "meta", "meta/inputs", "meta/inputs/y"}},
		{"inputs/y/a.png", []string{"data", "meta"}},
	} {
		if err := s.Delete(ctx, step.key); err != nil {
			t.Fatal(err)
		}
		if got := dirs(); !slices.Equal(got, step.want) {
			t.Errorf("after deleting %s the directories are %v, want %v", step.key, got, step.want)
		}
	}
}
