// Package blob is the contract of blob storage, which holds uploaded
// images and generated videos and makes the signed URLs clients download
// videos by. Its backends: fsblob (local files, links signed with an HMAC
// and served by the local server), s3blob (S3, presigned URLs) and
// memblob (memory, for tests). The API, the workflow and the stacks all
// take a Store.
package blob

import (
	"context"
	"io"
	"time"
)

// Store is blob storage.
type Store interface {
	// Put stores everything r yields under key, replacing any object
	// there, and returns its size. When r fails, Put fails, and the caller
	// deletes whatever was stored.
	Put(ctx context.Context, key string, r io.Reader, contentType string) (int64, error)
	// Get opens the object under key.
	Get(ctx context.Context, key string) (io.ReadCloser, error)
	// Delete removes the object under key; a missing one is no error.
	Delete(ctx context.Context, key string) error
	// SignURL returns a URL that serves key until expires, without a key.
	SignURL(ctx context.Context, key string, expires time.Time) (string, error)
}
