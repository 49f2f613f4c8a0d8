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
	"path"
	"strings"
	"time"
)

// PosterKey is the key of the poster frame (a JPEG) stored beside the
// video under videoKey: the same name with the extension .jpg
// (videos/<task>/0.mp4: videos/<task>/0.jpg), so that whatever lists or
// deletes a task's videos by prefix finds its posters with them.
func PosterKey(videoKey string) string {
	return strings.TrimSuffix(videoKey, path.Ext(videoKey)) + ".jpg"
}

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

// UploadPolicy is what a direct upload may put: one object, of one of
// the content types, of at most MaxBytes, until Expires.
type UploadPolicy struct {
	ContentType string
	MaxBytes    int64
	Expires     time.Time
}

// SignedUpload is a direct upload a client makes without a key: an HTML
// form POST (multipart/form-data) to URL with Fields, in any order,
// followed by the file in a field named "file". Storage itself enforces
// the UploadPolicy (S3's POST policy, or the local server).
type SignedUpload struct {
	URL    string            `json:"url"`
	Fields map[string]string `json:"fields"`
}
