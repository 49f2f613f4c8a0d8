// Package s3blob is blob storage in an S3 bucket, for the service on AWS:
// uploaded images and generated videos are objects, and download links are
// S3 presigned GET URLs.
//
// A presigned URL lives no longer than the credentials that signed it: one
// signed with a Lambda role's session credentials dies with the session
// (an hour or so), whatever its X-Amz-Expires says. Download links must
// work for 24 hours, so SignURL signs with the long-lived access key of a
// dedicated IAM user that may only read the videos (Config.Signer; the
// Lambdas read it from Secrets Manager). The alternative, CloudFront signed
// URLs with a key group, puts a distribution in front of the bucket; a
// signing user keeps the stack small, at the price of a long-lived key to
// rotate (keep the old key active for a day after switching, so that the
// links it signed live out their 24 hours).
package s3blob

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"maps"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"

	"github.com/genvideo/gen/shared/blob"
	"github.com/genvideo/gen/shared/blob/s3links"
)

// ErrNotFound is returned (wrapped) by Get for a key with no object. It
// wraps fs.ErrNotExist, as fsblob's does.
var ErrNotFound = fmt.Errorf("blob not found: %w", fs.ErrNotExist)

// MaxURLLifetime is the longest a SigV4 presigned URL can live: S3 refuses
// an X-Amz-Expires over seven days.
const MaxURLLifetime = s3links.MaxLifetime

// DefaultPartSize is the size of the parts of a multipart upload, and the
// most Put buffers. S3 wants at least 5 MiB in every part but the last.
const DefaultPartSize = 8 << 20

const minPartSize = 5 << 20

// api is the part of the S3 client the store calls.
type api interface {
	PutObject(context.Context, *s3.PutObjectInput, ...func(*s3.Options)) (*s3.PutObjectOutput, error)
	GetObject(context.Context, *s3.GetObjectInput, ...func(*s3.Options)) (*s3.GetObjectOutput, error)
	DeleteObject(context.Context, *s3.DeleteObjectInput, ...func(*s3.Options)) (*s3.DeleteObjectOutput, error)
	CreateMultipartUpload(context.Context, *s3.CreateMultipartUploadInput, ...func(*s3.Options)) (*s3.CreateMultipartUploadOutput, error)
	UploadPart(context.Context, *s3.UploadPartInput, ...func(*s3.Options)) (*s3.UploadPartOutput, error)
	CompleteMultipartUpload(context.Context, *s3.CompleteMultipartUploadInput, ...func(*s3.Options)) (*s3.CompleteMultipartUploadOutput, error)
	AbortMultipartUpload(context.Context, *s3.AbortMultipartUploadInput, ...func(*s3.Options)) (*s3.AbortMultipartUploadOutput, error)
}

// Config is what a Store is built from.
type Config struct {
	// Client reads and writes the objects (with the Lambda role's
	// credentials). It also presigns, with Signer's credentials instead.
	Client *s3.Client
	Bucket string
	// Signer supplies the credentials download URLs are signed with. They
	// must outlive the URLs: long-lived keys of a signing user, not
	// session credentials. It is only called when a URL is signed, so a
	// Lambda that never signs never fetches them.
	Signer aws.CredentialsProvider
	// PartSize overrides DefaultPartSize (at least 5 MiB).
	PartSize int
	// Now is the clock URLs are signed at; nil means time.Now.
	Now func() time.Time
}

// Store is a bucket of objects. It is safe for concurrent use.
type Store struct {
	api      api
	links    *s3links.Links
	post     *s3.PresignClient // with the client's own credentials
	bucket   string
	partSize int
	now      func() time.Time
}

// New returns the store of cfg.Bucket.
func New(cfg Config) (*Store, error) {
	switch {
	case cfg.Client == nil:
		return nil, errors.New("s3blob: Config.Client is nil")
	case cfg.Bucket == "":
		return nil, errors.New("s3blob: Config.Bucket is empty")
	case cfg.Signer == nil:
		return nil, errors.New("s3blob: Config.Signer is nil")
	}
	part := cfg.PartSize
	if part == 0 {
		part = DefaultPartSize
	}
	if part < minPartSize {
		return nil, fmt.Errorf("s3blob: PartSize %d is below S3's minimum of %d", part, minPartSize)
	}
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	s := &Store{api: cfg.Client, bucket: cfg.Bucket, partSize: part, now: now}
	s.post = s3.NewPresignClient(cfg.Client)
	// Download links are the client's presigned GET URLs, made by
	// s3links (which a Lambda that only signs uses without the client).
	opts := cfg.Client.Options()
	links, err := s3links.New(s3links.Config{Bucket: cfg.Bucket, Region: opts.Region, Endpoint: aws.ToString(opts.BaseEndpoint),
		PathStyle: opts.UsePathStyle, Signer: cfg.Signer, Now: now})
	if err != nil {
		return nil, err
	}
	s.links = links
	return s, nil
}

// Put stores everything r yields under key, replacing any object there,
// and returns its size. It streams: a body that fits one part is one
// PutObject; a longer one becomes a multipart upload, holding one part in
// memory at a time. When r or S3 fails, the upload is aborted and nothing
// is stored.
func (s *Store) Put(ctx context.Context, key string, r io.Reader, contentType string) (int64, error) {
	if key == "" {
		return 0, errors.New("put: empty key")
	}
	if contentType == "" {
		contentType = "application/octet-stream"
	}
	first, err := readPart(r, s.partSize)
	if err != nil {
		return 0, fmt.Errorf("put %s: read: %w", key, err)
	}
	if len(first) < s.partSize {
		// The whole body fits one part.
		_, err := s.api.PutObject(ctx, &s3.PutObjectInput{
			Bucket:        &s.bucket,
			Key:           &key,
			Body:          bytes.NewReader(first),
			ContentLength: aws.Int64(int64(len(first))),
			ContentType:   &contentType,
		})
		if err != nil {
			return 0, fmt.Errorf("put %s: %w", key, err)
		}
		return int64(len(first)), nil
	}
	size, err := s.putMultipart(ctx, key, contentType, first, r)
	if err != nil {
		return 0, fmt.Errorf("put %s: %w", key, err)
	}
	return size, nil
}

// readPart reads up to size bytes of r: fewer only at the end of r. It
// grows its buffer as the bytes come, so that a small body costs little.
func readPart(r io.Reader, size int) ([]byte, error) {
	var b bytes.Buffer
	_, err := b.ReadFrom(io.LimitReader(r, int64(size)))
	return b.Bytes(), err
}

// putMultipart uploads first (a full part) and the rest of r in parts.
func (s *Store) putMultipart(ctx context.Context, key, contentType string, first []byte, r io.Reader) (size int64, err error) {
	// The upload declares CRC32, every part carries its CRC32, computed
	// here, and the completion lists them all. S3 refuses a completion
	// that drops a checksum a part was uploaded with (InvalidPart: what
	// the SDK's automatic part checksums once caused, aws-sdk-go-v2 issue
	// 3005); carrying them ourselves does not depend on the SDK's defaults
	// and makes S3 check every part.
	up, err := s.api.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{
		Bucket: &s.bucket, Key: &key, ContentType: &contentType, ChecksumAlgorithm: types.ChecksumAlgorithmCrc32,
	})
	if err != nil {
		return 0, fmt.Errorf("create multipart upload: %w", err)
	}
	defer func() {
		if err != nil {
			// An upload left open keeps its parts (and costs) until a
			// lifecycle rule aborts it; abort even if ctx is done.
			actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			defer cancel()
			s.api.AbortMultipartUpload(actx, &s3.AbortMultipartUploadInput{
				Bucket: &s.bucket, Key: &key, UploadId: up.UploadId,
			})
		}
	}()

	var parts []types.CompletedPart
	for num, part := int32(1), first; len(part) > 0; num++ {
		sum := crc32Base64(part)
		out, err := s.api.UploadPart(ctx, &s3.UploadPartInput{
			Bucket: &s.bucket, Key: &key, UploadId: up.UploadId, PartNumber: aws.Int32(num),
			Body: bytes.NewReader(part), ContentLength: aws.Int64(int64(len(part))),
			ChecksumAlgorithm: types.ChecksumAlgorithmCrc32, ChecksumCRC32: &sum,
		})
		if err != nil {
			return 0, fmt.Errorf("upload part %d: %w", num, err)
		}
		parts = append(parts, types.CompletedPart{ETag: out.ETag, PartNumber: aws.Int32(num), ChecksumCRC32: &sum})
		size += int64(len(part))
		if len(part) < s.partSize {
			break // that was the last
		}
		if part, err = readPart(r, s.partSize); err != nil {
			return 0, fmt.Errorf("read part %d: %w", num+1, err)
		}
	}
	_, err = s.api.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{
		Bucket: &s.bucket, Key: &key, UploadId: up.UploadId,
		MultipartUpload: &types.CompletedMultipartUpload{Parts: parts},
	})
	if err != nil {
		return 0, fmt.Errorf("complete multipart upload: %w", err)
	}
	return size, nil
}

// crc32Base64 is S3's form of a CRC32 checksum: the big-endian bytes in
// base64.
func crc32Base64(b []byte) string {
	var sum [4]byte
	binary.BigEndian.PutUint32(sum[:], crc32.ChecksumIEEE(b))
	return base64.StdEncoding.EncodeToString(sum[:])
}

// ErrDenied is returned (wrapped) by Get when S3 answers 403
// AccessDenied: what S3 answers for a missing key to a principal that may
// not s3:ListBucket it, as well as for an object it may not read. It
// matches fs.ErrPermission.
var ErrDenied = fmt.Errorf("blob access denied: %w", fs.ErrPermission)

// Get opens the object under key. A missing object is ErrNotFound, or
// ErrDenied when the caller may not list it.
func (s *Store) Get(ctx context.Context, key string) (io.ReadCloser, error) {
	out, err := s.api.GetObject(ctx, &s3.GetObjectInput{Bucket: &s.bucket, Key: &key})
	if err != nil {
		if notFound(err) {
			return nil, fmt.Errorf("get %s: %w", key, ErrNotFound)
		}
		if denied(err) {
			return nil, fmt.Errorf("get %s: %w: %w", key, ErrDenied, err)
		}
		return nil, fmt.Errorf("get %s: %w", key, err)
	}
	return out.Body, nil
}

// Delete removes the object under key; a missing one is not an error
// (S3 answers a delete of a missing key with success).
func (s *Store) Delete(ctx context.Context, key string) error {
	if _, err := s.api.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &s.bucket, Key: &key}); err != nil {
		return fmt.Errorf("delete %s: %w", key, err)
	}
	return nil
}

// SignURL returns a presigned GET URL of key that S3 serves until expires
// and refuses from then on, signed with Config.Signer's keys
// (s3links.Links.SignURL). An expires more than MaxURLLifetime away is
// refused.
func (s *Store) SignURL(ctx context.Context, key string, expires time.Time) (string, error) {
	return s.links.SignURL(ctx, key, expires)
}

// SignUpload returns an S3 presigned POST of key under policy p: S3
// itself refuses a file of another content type, larger than p.MaxBytes,
// under another key, or after p.Expires. It is signed with the client's
// own credentials (the Lambda role's, which may put inputs/): an upload
// lives minutes, well within their session.
func (s *Store) SignUpload(ctx context.Context, key string, p blob.UploadPolicy) (blob.SignedUpload, error) {
	life := p.Expires.Sub(s.now()).Truncate(time.Second)
	if life < time.Second || life > MaxURLLifetime {
		return blob.SignedUpload{}, fmt.Errorf("sign upload %s: expiry %s is %v away", key, p.Expires.Format(time.RFC3339), life)
	}
	req, err := s.post.PresignPostObject(ctx, &s3.PutObjectInput{Bucket: &s.bucket, Key: &key}, func(o *s3.PresignPostOptions) {
		o.Expires = life
		o.Conditions = []any{
			map[string]string{"Content-Type": p.ContentType},
			[]any{"content-length-range", 1, p.MaxBytes},
		}
	})
	if err != nil {
		return blob.SignedUpload{}, fmt.Errorf("sign upload %s: %w", key, err)
	}
	fields := maps.Clone(req.Values)
	fields["Content-Type"] = p.ContentType
	return blob.SignedUpload{URL: req.URL, Fields: fields}, nil
}

// denied reports whether S3 answered 403 AccessDenied.
func denied(err error) bool {
	var ae smithy.APIError
	return errors.As(err, &ae) && ae.ErrorCode() == "AccessDenied"
}

// notFound reports whether S3 said the key has no object.
func notFound(err error) bool {
	var nsk *types.NoSuchKey
	if errors.As(err, &nsk) {
		return true
	}
	var ae smithy.APIError
	return errors.As(err, &ae) && (ae.ErrorCode() == "NoSuchKey" || ae.ErrorCode() == "NotFound")
}
