// Package fsblob is blob storage on the local filesystem, standing in for
// S3 when the service runs on one machine. Objects are files under a
// directory; downloads go through signed, expiring URLs that the store's
// own HTTP handler checks, the way S3 presigned URLs work.
//
// Layout under the store's directory:
//
//	data/<key>  the object's bytes
//	meta/<key>  its content type
//	tmp/        files being written; renamed into place when complete
//
// PutFile renames a finished file from elsewhere on the same file system
// (a generated video) straight into data/, without a copy in tmp/.
//
// A process killed while writing leaves files in tmp/, content types
// without their object, and empty directories; Tidy removes them.
package fsblob

import (
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// ErrNotFound is returned (wrapped) for a key with no object. It wraps
// fs.ErrNotExist, so either test works.
var ErrNotFound = fmt.Errorf("blob not found: %w", fs.ErrNotExist)

// ErrInvalidKey is returned (wrapped) for a key that fails ValidKey.
var ErrInvalidKey = errors.New("invalid blob key")

// SecretSize is the length of the signing secret LoadOrCreateSecret makes.
const SecretSize = 32

// minSecret is the shortest secret New accepts: 128 bits.
const minSecret = 16

const defaultContentType = "application/octet-stream"

// Store is a directory of objects. It is safe for concurrent use, also by
// several processes sharing the directory.
type Store struct {
	dir     string
	baseURL string
	secret  []byte
	links   *linkCache // SignURL's

	// Now is the clock that expiry is checked against; tests replace it
	// before serving. Nil means time.Now.
	Now func() time.Time
}

// New opens (creating if needed) the store in dir. baseURL is the absolute
// URL the Handler is reachable at (without /files); secret signs the URLs
// and must be the same in every process that signs or serves them.
func New(dir string, baseURL string, secret []byte) (*Store, error) {
	if len(secret) < minSecret {
		return nil, fmt.Errorf("blob signing secret is %d bytes; at least %d are needed", len(secret), minSecret)
	}
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("blob base URL %q must be an absolute http(s) URL without query", baseURL)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("blob directory %q: %w", dir, err)
	}
	for _, sub := range []string{"data", "meta", "tmp"} {
		if err := os.MkdirAll(filepath.Join(abs, sub), 0o750); err != nil {
			return nil, fmt.Errorf("create blob directory: %w", err)
		}
	}
	return &Store{dir: abs, baseURL: strings.TrimRight(baseURL, "/"), secret: append([]byte(nil), secret...), links: newLinkCache()}, nil
}

// ValidKey reports whether key can name an object: 1 to 1024 characters
// of [A-Za-z0-9._/-], slash-separated segments none of which is empty,
// "." or contains "..". Such a key can never leave the store's directory.
func ValidKey(key string) bool {
	if key == "" || len(key) > 1024 || strings.Contains(key, "..") {
		return false
	}
	for _, c := range key {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			c == '.' || c == '_' || c == '/' || c == '-'
		if !ok {
			return false
		}
	}
	for seg := range strings.SplitSeq(key, "/") { // a poll signs links: no slice
		if seg == "" || seg == "." {
			return false
		}
	}
	return true
}

func checkKey(key string) error {
	if !ValidKey(key) {
		return fmt.Errorf("%w %q: use 1-1024 characters of [A-Za-z0-9._/-] in non-empty segments, without \"..\"", ErrInvalidKey, key)
	}
	return nil
}

func (s *Store) dataPath(key string) string {
	return filepath.Join(s.dir, "data", filepath.FromSlash(key))
}

func (s *Store) metaPath(key string) string {
	return filepath.Join(s.dir, "meta", filepath.FromSlash(key))
}

// Put stores the bytes of r under key, replacing any object there, and
// returns their number. The object appears whole or not at all: it is
// written to a temporary file and renamed into place. An empty
// contentType is stored as application/octet-stream.
func (s *Store) Put(ctx context.Context, key string, r io.Reader, contentType string) (int64, error) {
	contentType, err := checkPut(key, contentType)
	if err != nil {
		return 0, fmt.Errorf("put: %w", err)
	}
	n, err := s.put(ctx, key, r, contentType)
	if err != nil {
		return 0, fmt.Errorf("put %s: %w", key, err)
	}
	return n, nil
}

// checkPut checks a Put's key and content type and answers the type to
// store.
func checkPut(key, contentType string) (string, error) {
	if err := checkKey(key); err != nil {
		return "", err
	}
	if contentType == "" {
		contentType = defaultContentType
	}
	if _, _, err := mime.ParseMediaType(contentType); err != nil {
		return "", fmt.Errorf("%s: content type %q: %w", key, contentType, err)
	}
	return contentType, nil
}

// put is Put past its checks.
func (s *Store) put(ctx context.Context, key string, r io.Reader, contentType string) (int64, error) {
	data, n, err := s.writeTemp(ctx, r)
	if err != nil {
		return 0, err
	}
	defer os.Remove(data) // a no-op once renamed
	if err := s.place(ctx, key, data, contentType); err != nil {
		return 0, err
	}
	return n, nil
}

// PutFile stores the file at path under key, replacing any object there,
// by renaming it into place rather than copying it: the file must be a
// complete one that nothing writes any more, and it is the store's once
// PutFile succeeds (gone from path). It returns the file's size. The
// rules are Put's: the same keys and content types, the bytes synced
// before they appear under key. A file on another file system than the
// store's is copied, as Put would, and then removed. On failure the
// file is left at path and the store is as before (as a failed Put
// leaves it).
//
// It is what storing a generated video costs on one machine: the
// generator's file is already on the store's file system (issue 25).
func (s *Store) PutFile(ctx context.Context, key, path, contentType string) (int64, error) {
	contentType, err := checkPut(key, contentType)
	if err != nil {
		return 0, fmt.Errorf("put file: %w", err)
	}
	if err := ctx.Err(); err != nil {
		return 0, fmt.Errorf("put file %s: %w", key, err)
	}
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("put file %s: %w", key, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err == nil && !st.Mode().IsRegular() {
		err = fmt.Errorf("%s is not a regular file", path)
	}
	if err == nil && st.Mode().Perm()&0o077 != 0 {
		// Objects are their owner's alone, as Put's temporary files
		// (0600) are; a generator's file may be readable by others.
		err = f.Chmod(0o600)
	}
	if err == nil {
		err = f.Sync()
	}
	if err == nil {
		err = s.place(ctx, key, path, contentType)
	}
	if errors.Is(err, syscall.EXDEV) {
		return s.copyFile(ctx, key, f, path, contentType)
	}
	if err != nil {
		return 0, fmt.Errorf("put file %s: %w", key, err)
	}
	return st.Size(), nil
}

// copyFile is PutFile for a file f (open at its start, at path) that
// cannot be renamed into the store: Put's copy, then the file's removal.
func (s *Store) copyFile(ctx context.Context, key string, f *os.File, path, contentType string) (int64, error) {
	n, err := s.put(ctx, key, f, contentType)
	if err != nil {
		return 0, fmt.Errorf("put file %s: copy from another file system: %w", key, err)
	}
	// Stored: a file left behind is only litter in the caller's
	// directory, not a failure of the Put.
	os.Remove(path)
	return n, nil
}

// place renames the complete, synced file data into place under key,
// with its content type.
func (s *Store) place(ctx context.Context, key, data, contentType string) error {
	moves := []struct{ from, to string }{{data, s.dataPath(key)}}
	if contentType == typeByExtension(key) {
		// The key's extension says the type (every video and poster):
		// no file for it, which was half a generation's file system
		// work. One an earlier Put left goes first, as below.
		if err := os.Remove(s.metaPath(key)); err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, errNotDir) {
			return err
		}
	} else {
		meta, _, err := s.writeTemp(ctx, strings.NewReader(contentType))
		if err != nil {
			return err
		}
		defer os.Remove(meta)
		moves = append([]struct{ from, to string }{{meta, s.metaPath(key)}}, moves...)
	}

	// The content type goes first: a reader that sees the new bytes sees
	// their type. (One that reads in between gets the new type with the
	// old bytes, a window only an overwrite with another type can hit.)
	for _, mv := range moves {
		err := os.MkdirAll(filepath.Dir(mv.to), 0o750)
		if err == nil {
			err = os.Rename(mv.from, mv.to)
		}
		if errors.Is(err, fs.ErrNotExist) {
			// Tidy or a Delete removed the directory, empty, in
			// between: once more.
			if err = os.MkdirAll(filepath.Dir(mv.to), 0o750); err == nil {
				err = os.Rename(mv.from, mv.to)
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// writeTemp copies r into a new file under tmp/ and syncs it.
func (s *Store) writeTemp(ctx context.Context, r io.Reader) (path string, n int64, err error) {
	f, err := os.CreateTemp(filepath.Join(s.dir, "tmp"), "put-*")
	if err != nil {
		return "", 0, err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	n, err = io.Copy(f, ctxReader{ctx, r})
	if err != nil {
		return "", 0, err
	}
	if err := f.Sync(); err != nil {
		return "", 0, err
	}
	if err := f.Close(); err != nil {
		return "", 0, err
	}
	return f.Name(), n, nil
}

// ctxReader stops a long copy when the context ends.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// Get opens the object under key. A missing object is ErrNotFound.
func (s *Store) Get(ctx context.Context, key string) (io.ReadCloser, error) {
	if err := checkKey(key); err != nil {
		return nil, fmt.Errorf("get: %w", err)
	}
	f, _, err := s.open(key)
	if err != nil {
		return nil, fmt.Errorf("get %s: %w", key, err)
	}
	return f, nil
}

// open opens an object's data and reads its content type.
func (s *Store) open(key string) (*os.File, string, error) {
	f, err := os.Open(s.dataPath(key))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, errNotDir) {
			return nil, "", ErrNotFound
		}
		return nil, "", err
	}
	if st, err := f.Stat(); err != nil || st.IsDir() {
		f.Close()
		if err == nil {
			err = ErrNotFound // a key prefix of other keys is not an object
		}
		return nil, "", err
	}
	ct, err := os.ReadFile(s.metaPath(key))
	if err != nil || len(ct) == 0 {
		return f, cmp.Or(typeByExtension(key), defaultContentType), nil
	}
	return f, string(ct), nil
}

// typeByExtension is the content type key's extension names, of the
// types the service stores, or "".
func typeByExtension(key string) string {
	switch path.Ext(key) {
	case ".mp4":
		return "video/mp4"
	case ".jpg":
		return "image/jpeg"
	case ".png":
		return "image/png"
	}
	return ""
}

// Delete removes the object under key; a missing one is not an error.
// Directories it leaves empty go too (a refused upload's inputs/<id>/), so
// that refused requests leave nothing.
func (s *Store) Delete(ctx context.Context, key string) error {
	if err := checkKey(key); err != nil {
		return fmt.Errorf("delete: %w", err)
	}
	defer s.removeEmptyParents(key)
	for _, p := range []string{s.dataPath(key), s.metaPath(key)} {
		st, err := os.Lstat(p)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, errNotDir) {
				continue
			}
			return fmt.Errorf("delete %s: %w", key, err)
		}
		if st.IsDir() {
			continue // other objects live below this prefix
		}
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("delete %s: %w", key, err)
		}
	}
	return nil
}

// removeEmptyParents removes the directories above key that are empty,
// in both trees. A Put that made one of them a moment ago makes it again
// (see Put).
func (s *Store) removeEmptyParents(key string) {
	for _, root := range []string{filepath.Join(s.dir, "data"), filepath.Join(s.dir, "meta")} {
		for dir := filepath.Dir(filepath.Join(root, filepath.FromSlash(key))); dir != root; dir = filepath.Dir(dir) {
			if os.Remove(dir) != nil {
				break // not empty, or gone
			}
		}
	}
}

// LoadOrCreateSecret reads the signing secret in path, creating it with
// SecretSize random bytes (mode 0600) the first time, so that signed links
// survive a restart. Processes starting together agree on one secret.
func LoadOrCreateSecret(path string) ([]byte, error) {
	secret, err := os.ReadFile(path)
	if err == nil {
		if len(secret) < SecretSize {
			return nil, fmt.Errorf("blob secret %s is %d bytes, want %d: delete it to make a new one (links signed with it stop working)", path, len(secret), SecretSize)
		}
		return secret, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("read blob secret: %w", err)
	}

	secret = make([]byte, SecretSize)
	if _, err := rand.Read(secret); err != nil {
		return nil, fmt.Errorf("make blob secret: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("make blob secret: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".secret-*")
	if err != nil {
		return nil, fmt.Errorf("make blob secret: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(secret); err != nil {
		tmp.Close()
		return nil, fmt.Errorf("make blob secret: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return nil, fmt.Errorf("make blob secret: %w", err)
	}
	// Link fails if another process made the file first; then its secret
	// is the one everybody uses. (CreateTemp made tmp 0600.)
	if err := os.Link(tmp.Name(), path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return LoadOrCreateSecret(path)
		}
		return nil, fmt.Errorf("make blob secret: %w", err)
	}
	return secret, nil
}
