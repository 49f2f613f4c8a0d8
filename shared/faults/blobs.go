package faults

import (
	"context"
	"io"
	"time"

	"github.com/genvideo/gen/shared/blob"
)

var _ blob.Store = (*Blobs)(nil)

// Blobs is a blob.Store whose calls go through an Injector, named
// "Blobs.<Method>".
type Blobs struct {
	b  blob.Store
	in *Injector
}

// WrapBlobs returns b with the faults in decides.
func WrapBlobs(b blob.Store, in *Injector) *Blobs { return &Blobs{b: b, in: in} }

func (b *Blobs) call(ctx context.Context, method string, fn func() error) error {
	return b.in.call(ctx, "Blobs."+method, plainFailure, fn)
}

// Put stores r under key. A fault before the call leaves r unread.
func (b *Blobs) Put(ctx context.Context, key string, r io.Reader, contentType string) (n int64, err error) {
	err = b.call(ctx, "Put", func() error { n, err = b.b.Put(ctx, key, r, contentType); return err })
	return n, err
}

// Get opens the object under key. With a fault after the call, the
// object's reader is closed before the error is returned.
func (b *Blobs) Get(ctx context.Context, key string) (rc io.ReadCloser, err error) {
	err = b.call(ctx, "Get", func() error { rc, err = b.b.Get(ctx, key); return err })
	if err != nil && rc != nil {
		rc.Close()
		rc = nil
	}
	return rc, err
}

// Delete removes the object under key.
func (b *Blobs) Delete(ctx context.Context, key string) error {
	return b.call(ctx, "Delete", func() error { return b.b.Delete(ctx, key) })
}

// SignURL returns a URL serving key until expires.
func (b *Blobs) SignURL(ctx context.Context, key string, expires time.Time) (url string, err error) {
	err = b.call(ctx, "SignURL", func() error { url, err = b.b.SignURL(ctx, key, expires); return err })
	return url, err
}
