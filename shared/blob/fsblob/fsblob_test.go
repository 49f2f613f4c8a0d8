package fsblob

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

var testSecret = []byte("0123456789abcdef0123456789abcdef")

func newStore(t *testing.T) *Store {
	t.Helper()
	s, err := New(t.TempDir(), "http://files.test", testSecret)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return s
}

func get(t *testing.T, s *Store, key string) []byte {
	t.Helper()
	rc, err := s.Get(context.Background(), key)
	if err != nil {
		t.Fatalf("Get(%q): %v", key, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatalf("read %q: %v", key, err)
	}
	return b
}

func TestRoundTrip(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	data := bytes.Repeat([]byte("video bytes "), 10000)
	n, err := s.Put(ctx, "videos/gen_1/sample-0.mp4", bytes.NewReader(data), "video/mp4")
	if err != nil {
		t.Fatalf("Put: %v", err)
	}
	if n != int64(len(data)) {
		t.Errorf("Put returned %d, want %d", n, len(data))
	}
	if got := get(t, s, "videos/gen_1/sample-0.mp4"); !bytes.Equal(got, data) {
		t.Errorf("Get returned %d bytes differing from the %d put", len(got), len(data))
	}
	if _, err := s.Put(ctx, "empty", strings.NewReader(""), ""); err != nil {
		t.Fatalf("Put(empty): %v", err)
	}
	if got := get(t, s, "empty"); len(got) != 0 {
		t.Errorf("Get(empty) = %q, want nothing", got)
	}
}

// TestContentTypes: a type the key's extension says is kept without a
// file of its own; any other is kept in one; and an overwrite takes the
// new object's type either way.
func TestContentTypes(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	for _, step := range []struct {
		key, put, want string
		meta           bool
	}{
		{"videos/a/0.mp4", "video/mp4", "video/mp4", false},
		{"videos/a/0.jpg", "image/jpeg", "image/jpeg", false},
		{"inputs/b/x.png", "image/png", "image/png", false},
		{"inputs/b/x.png", "image/webp", "image/webp", true}, // overwritten with another type
		{"inputs/b/x.png", "image/png", "image/png", false},  // and back
		{"inputs/b/noext", "image/png", "image/png", true},
		{"inputs/b/y.mp4", "", defaultContentType, true},
	} {
		if _, err := s.Put(ctx, step.key, strings.NewReader("x"), step.put); err != nil {
			t.Fatal(err)
		}
		f, ct, err := s.open(step.key)
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
		_, err = os.Stat(s.metaPath(step.key))
		if ct != step.want || (err == nil) != step.meta {
			t.Errorf("Put(%s, %q): type %q, meta file %v; want %q, %v", step.key, step.put, ct, err == nil, step.want, step.meta)
		}
	}
}

func TestPutRejectsBadContentType(t *testing.T) {
	s := newStore(t)
	if _, err := s.Put(context.Background(), "k", strings.NewReader("x"), "text/plain\r\nX-Evil: 1"); err == nil {
		t.Errorf("Put with a header-injecting content type succeeded")
	}
}

func TestGetMissing(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	if _, err := s.Put(ctx, "dir/obj", strings.NewReader("x"), "text/plain"); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"nothing", "dir", "dir/obj/below", "dir/other"} {
		_, err := s.Get(ctx, key)
		if !errors.Is(err, ErrNotFound) || !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("Get(%q) error = %v, want ErrNotFound wrapping fs.ErrNotExist", key, err)
		}
	}
}

func TestOverwriteIsAtomic(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	a := bytes.Repeat([]byte{'a'}, 1<<20)
	b := bytes.Repeat([]byte{'b'}, 1<<20)
	if _, err := s.Put(ctx, "k", bytes.NewReader(a), "text/plain"); err != nil {
		t.Fatal(err)
	}
	// Readers racing with overwriters must always see one whole version.
	var wg sync.WaitGroup
	stop := make(chan struct{})
	errs := make(chan string, 100)
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				rc, err := s.Get(ctx, "k")
				if err != nil {
					errs <- err.Error()
					return
				}
				got, _ := io.ReadAll(rc)
				rc.Close()
				if !bytes.Equal(got, a) && !bytes.Equal(got, b) {
					errs <- "a reader saw a mixed or partial object"
					return
				}
			}
		}()
	}
	for i := range 20 {
		data := a
		if i%2 == 0 {
			data = b
		}
		if _, err := s.Put(ctx, "k", bytes.NewReader(data), "text/plain"); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	if got := get(t, s, "k"); !bytes.Equal(got, a) {
		t.Errorf("after the last overwrite Get is not the last version")
	}
	// No temporary file is left behind.
	if left, _ := os.ReadDir(filepath.Join(s.dir, "tmp")); len(left) != 0 {
		t.Errorf("%d temporary files left after Put", len(left))
	}
}

// failingReader fails after some bytes, like a client that disconnects.
type failingReader struct{ n int }

func (f *failingReader) Read(p []byte) (int, error) {
	if f.n <= 0 {
		return 0, errors.New("connection reset")
	}
	k := min(len(p), f.n)
	f.n -= k
	return k, nil
}

func TestFailedPutKeepsOldObject(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	if _, err := s.Put(ctx, "k", strings.NewReader("old"), "text/plain"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Put(ctx, "k", &failingReader{n: 1000}, "text/plain"); err == nil {
		t.Fatalf("Put from a failing reader succeeded")
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := s.Put(cancelled, "k", strings.NewReader("new"), "text/plain"); !errors.Is(err, context.Canceled) {
		t.Errorf("Put with a cancelled context: got %v, want context.Canceled", err)
	}
	if got := get(t, s, "k"); string(got) != "old" {
		t.Errorf("after failed Puts Get = %q, want %q", got, "old")
	}
	if left, _ := os.ReadDir(filepath.Join(s.dir, "tmp")); len(left) != 0 {
		t.Errorf("%d temporary files left after failed Puts", len(left))
	}
}

func TestDelete(t *testing.T) {
	s := newStore(t)
	ctx := context.Background()
	if _, err := s.Put(ctx, "a/b", strings.NewReader("x"), "text/plain"); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, "a/b"); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if _, err := s.Get(ctx, "a/b"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Get after Delete: got %v, want ErrNotFound", err)
	}
	for _, key := range []string{"a/b", "never", "a", "x/y/z"} {
		if err := s.Delete(ctx, key); err != nil {
			t.Errorf("Delete(%q) of a missing object: %v, want nil", key, err)
		}
	}
	if err := s.Delete(ctx, "../x"); !errors.Is(err, ErrInvalidKey) {
		t.Errorf("Delete(../x): got %v, want ErrInvalidKey", err)
	}
}

func TestValidKey(t *testing.T) {
	tests := []struct {
		key  string
		want bool
	}{
		{"a", true},
		{"videos/gen_1763000000000_abc/sample-0.mp4", true},
		{"inputs/A-Z.0_9/x.png", true},
		{"", false},
		{"/abs", false},
		{"trailing/", false},
		{"a//b", false},
		{"..", false},
		{"../etc/passwd", false},
		{"a/../b", false},
		{"a/..", false},
		{"a..b", false},
		{".", false},
		{"a/./b", false},
		{`a\b`, false},
		{"a b", false},
		{"a%2e", false},
		{"a?b", false},
		{"ünï", false},
		{"a\nb", false},
		{"a\x00b", false},
		{strings.Repeat("x", 1024), true},
		{strings.Repeat("x", 1025), false},
	}
	for _, tt := range tests {
		if got := ValidKey(tt.key); got != tt.want {
			t.Errorf("ValidKey(%q) = %v, want %v", tt.key, got, tt.want)
		}
	}
	s := newStore(t)
	for _, tt := range tests {
		if tt.want {
			continue
		}
		_, err := s.Put(context.Background(), tt.key, strings.NewReader("x"), "text/plain")
		if !errors.Is(err, ErrInvalidKey) {
			t.Errorf("Put(%q): got %v, want ErrInvalidKey", tt.key, err)
		}
		if _, err := s.Get(context.Background(), tt.key); !errors.Is(err, ErrInvalidKey) {
			t.Errorf("Get(%q): got %v, want ErrInvalidKey", tt.key, err)
		}
		if _, err := s.SignURL(context.Background(), tt.key, s.now()); !errors.Is(err, ErrInvalidKey) {
			t.Errorf("SignURL(%q): got %v, want ErrInvalidKey", tt.key, err)
		}
	}
}

func TestNew(t *testing.T) {
	tests := []struct {
		name    string
		baseURL string
		secret  []byte
		ok      bool
	}{
		{"good", "https://cdn.example.com/base/", testSecret, true},
		{"short secret", "https://cdn.example.com", []byte("short"), false},
		{"relative URL", "/files", testSecret, false},
		{"query in URL", "https://x.test/?a=1", testSecret, false},
		{"other scheme", "ftp://x.test", testSecret, false},
	}
	for _, tt := range tests {
		_, err := New(t.TempDir(), tt.baseURL, tt.secret)
		if (err == nil) != tt.ok {
			t.Errorf("%s: New(%q) error = %v, want ok=%v", tt.name, tt.baseURL, err, tt.ok)
		}
	}
}

func TestLoadOrCreateSecret(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keys", "blob.secret")
	first, err := LoadOrCreateSecret(path)
	if err != nil {
		t.Fatalf("LoadOrCreateSecret (create): %v", err)
	}
	if len(first) != SecretSize {
		t.Errorf("secret is %d bytes, want %d", len(first), SecretSize)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if mode := st.Mode().Perm(); mode != 0o600 {
		t.Errorf("secret file mode = %v, want 0600", mode)
	}
	again, err := LoadOrCreateSecret(path)
	if err != nil {
		t.Fatalf("LoadOrCreateSecret (load): %v", err)
	}
	if !bytes.Equal(first, again) {
		t.Errorf("the secret changed between loads")
	}
	other, err := LoadOrCreateSecret(filepath.Join(t.TempDir(), "s"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(first, other) {
		t.Errorf("two new secrets are equal")
	}

	short := filepath.Join(t.TempDir(), "short")
	if err := os.WriteFile(short, []byte("tiny"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadOrCreateSecret(short); err == nil {
		t.Errorf("a 4-byte secret file was accepted")
	}
}

func TestLoadOrCreateSecretConcurrent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s")
	const n = 8
	secrets := make([][]byte, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := LoadOrCreateSecret(path)
			if err != nil {
				t.Error(err)
			}
			secrets[i] = s
		}()
	}
	wg.Wait()
	for i := 1; i < n; i++ {
		if !bytes.Equal(secrets[i], secrets[0]) {
			t.Fatalf("concurrent callers got different secrets")
		}
	}
}
