// Package memblob is an in-memory blob.Store for tests, with switches
// that make it fail as an unreachable storage would, and accessors to look
// at what it holds.
package memblob

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"time"
)

// ErrNotFound is returned (wrapped) by Get and Delete for a key the store
// does not hold. It wraps fs.ErrNotExist, as fsblob.ErrNotFound does.
var ErrNotFound = fmt.Errorf("no such blob: %w", fs.ErrNotExist)

// Store is an in-memory blob store, safe for concurrent use. Build it
// with New.
type Store struct {
	mu      sync.Mutex
	objects map[string]object
	puts    int
	putErr  error
	signErr error
}

type object struct {
	data        []byte
	contentType string
}

// New returns an empty store.
func New() *Store { return &Store{objects: map[string]object{}} }

// Put stores what r yields under key, replacing any object there, and
// returns its size. When r fails, Put keeps what it had read, as a naive
// backend would, so that tests see whether the caller deletes it. A
// context cancelled by the time r is read stores nothing.
func (s *Store) Put(ctx context.Context, key string, r io.Reader, contentType string) (int64, error) {
	s.mu.Lock()
	putErr := s.putErr
	s.mu.Unlock()
	if putErr != nil {
		return 0, putErr
	}
	var buf bytes.Buffer
	n, err := io.Copy(&buf, r)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		s.objects[key] = object{data: buf.Bytes(), contentType: contentType}
		return n, fmt.Errorf("put %s: %w", key, err)
	}
	if err := ctx.Err(); err != nil {
		return 0, fmt.Errorf("put %s: %w", key, err)
	}
	s.objects[key] = object{data: buf.Bytes(), contentType: contentType}
	s.puts++
	return n, nil
}

// Get opens the object under key; a missing one is an error wrapping
// ErrNotFound.
func (s *Store) Get(ctx context.Context, key string) (io.ReadCloser, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o, ok := s.objects[key]
	if !ok {
		return nil, fmt.Errorf("get %s: %w", key, ErrNotFound)
	}
	// Stored bytes are never written again (Put replaces them), so the
	// reader needs no copy.
	return io.NopCloser(bytes.NewReader(o.data)), nil
}

// Delete removes the object under key. Unlike S3 it refuses a key it does
// not hold (an error wrapping ErrNotFound), so that a test sees a delete
// of something that was never stored.
func (s *Store) Delete(ctx context.Context, key string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.objects[key]; !ok {
		return fmt.Errorf("delete %s: %w", key, ErrNotFound)
	}
	delete(s.objects, key)
	return nil
}

// SignURL returns https://storage.test/<key>?expires=<unix seconds>, or
// the error SetSignErr gave. Like a presigner, it does not check that key
// is stored.
func (s *Store) SignURL(ctx context.Context, key string, expires time.Time) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.signErr != nil {
		return "", s.signErr
	}
	return "https://storage.test/" + key + "?expires=" + url.QueryEscape(strconv.FormatInt(expires.Unix(), 10)), nil
}

// SetPutErr makes every later Put fail with err, reading nothing (nil:
// succeed again).
func (s *Store) SetPutErr(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.putErr = err
}

// SetSignErr makes every later SignURL fail with err (nil: succeed again).
func (s *Store) SetSignErr(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.signErr = err
}

// Keys lists the stored keys, sorted.
func (s *Store) Keys() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	keys := make([]string, 0, len(s.objects))
	for k := range s.objects {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// Object returns a copy of the bytes stored under key and their content
// type; ok is false when there is none.
func (s *Store) Object(key string) (data []byte, contentType string, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o, ok := s.objects[key]
	return slices.Clone(o.data), o.contentType, ok
}

// Puts counts the Puts that succeeded so far.
func (s *Store) Puts() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.puts
}
