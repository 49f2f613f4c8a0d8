package service

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/genvideo/gen/shared/blob"
	"github.com/genvideo/gen/shared/imagecheck"
	"github.com/genvideo/gen/shared/task"
)

// Uploads signs direct uploads to blob storage (s3blob's presigned POST,
// fsblob's signed form).
type Uploads interface {
	SignUpload(ctx context.Context, key string, p blob.UploadPolicy) (blob.SignedUpload, error)
}

const (
	// DefaultMaxUploadBytes is the contract's limit on an image: 20 MiB.
	DefaultMaxUploadBytes = 20 << 20
	// UploadLifetime is how long a signed upload may be used.
	UploadLifetime = 15 * time.Minute
	// uploadPrefix holds direct uploads, under inputs/ so that they share
	// its lifecycle expiry and permissions: inputs/uploads/<account>/<id>.
	uploadPrefix = "inputs/uploads/"
)

// uploadTypes are the content types an upload may declare: the images a
// start takes.
var uploadTypes = []string{"image/jpeg", "image/png"}

// uploadIDPattern is an upload id: "upl_" and 32 hex digits.
var uploadIDPattern = regexp.MustCompile(`^upl_[0-9a-f]{32}$`)

// Upload is a signed direct upload of one image.
type Upload struct {
	ID          string
	ContentType string
	MaxBytes    int64
	ExpiresAt   time.Time
	Signed      blob.SignedUpload
}

// UploadProblem names what is wrong with an upload a request uses.
type UploadProblem int

const (
	// UploadBadType: the declared content type is not an image a start
	// takes (INVALID_IMAGE_TYPE).
	UploadBadType UploadProblem = iota
	// UploadMissing: no such upload of the caller's account, or not
	// uploaded yet, or already used (MISSING_IMAGE).
	UploadMissing
	// UploadNotImage: the uploaded bytes are not a JPEG or PNG image,
	// whatever was declared (INVALID_IMAGE_TYPE).
	UploadNotImage
	// UploadTooLarge: over MaxUploadBytes (FILE_TOO_LARGE).
	UploadTooLarge
	// UploadUnavailable: this deployment has no direct uploads.
	UploadUnavailable
	// UploadCanvas: the image is wider or taller than MaxImageSide
	// (VALIDATION_ERROR).
	UploadCanvas
)

// DefaultMaxImageSide is the widest and tallest image accepted: an
// 8192 x 8192 canvas is the renderer's limit of 64 Mi pixels.
const DefaultMaxImageSide = 8192

// UploadError is a refused upload, or a refused use of one.
type UploadError struct {
	Problem UploadProblem
	Field   string // the request field that named it
	Message string
	Max     int64 // UploadTooLarge: the limit
	// Width, Height and MaxSide describe an UploadCanvas.
	Width, Height, MaxSide int
}

func (e *UploadError) Error() string { return e.Message }

// CreateUpload signs a direct upload of one image of contentType for the
// caller: up to MaxUploadBytes, within UploadLifetime. Blob storage itself
// enforces the type and size; ResolveUpload checks the bytes when a start
// uses it.
func (s *Service) CreateUpload(ctx context.Context, c Caller, contentType string) (Upload, error) {
	if s.cfg.Uploads == nil {
		return Upload{}, &UploadError{Problem: UploadUnavailable, Message: "This deployment takes images in the start request only."}
	}
	ct := strings.ToLower(strings.TrimSpace(contentType))
	if !slices.Contains(uploadTypes, ct) {
		return Upload{}, &UploadError{Problem: UploadBadType, Field: "contentType",
			Message: fmt.Sprintf("contentType must be one of %s.", strings.Join(uploadTypes, ", "))}
	}
	var raw [16]byte
	rand.Read(raw[:])
	id := "upl_" + hex.EncodeToString(raw[:])
	u := Upload{ID: id, ContentType: ct, MaxBytes: s.cfg.MaxUploadBytes, ExpiresAt: c.Now.Add(UploadLifetime).UTC().Truncate(time.Second)}
	signed, err := s.cfg.Uploads.SignUpload(ctx, uploadKey(c.Key.AccountID, id),
		blob.UploadPolicy{ContentType: ct, MaxBytes: u.MaxBytes, Expires: u.ExpiresAt})
	if err != nil {
		return Upload{}, &BlobError{Err: fmt.Errorf("sign upload %s: %w", id, err)}
	}
	u.Signed = signed
	return u, nil
}

func uploadKey(accountID, id string) string { return uploadPrefix + accountID + "/" + id }

// ResolveUpload turns the caller's upload id, named by field, into the
// input of role of the task taskID: the object must exist under the
// caller's account, be a JPEG or PNG image by its first bytes, and be at
// most MaxUploadBytes. Its bytes are copied to the task's own input key
// (inputs/<task>/<role>.<ext>, as a file sent with the start), which the
// start owns (a refused start deletes it); the upload itself stays until
// the bucket's inputs/ expiry, so that a start retried under its
// Idempotency-Key is replayed, not refused, or until a task made from it
// is deleted (Delete, through Input.Upload). It returns the input and the
// hex SHA-256 of its bytes.
func (s *Service) ResolveUpload(ctx context.Context, c Caller, field, id, role, taskID string) (task.Input, string, error) {
	missing := &UploadError{Problem: UploadMissing, Field: field,
		Message: fmt.Sprintf("No upload %q: it was not made with this key's account, not uploaded yet, or expired.", id)}
	if !uploadIDPattern.MatchString(id) {
		return task.Input{}, "", missing
	}
	src := uploadKey(c.Key.AccountID, id)
	rc, err := s.cfg.Blobs.Get(ctx, src)
	// Denied is missing too: S3 answers a missing key 403 to a principal
	// that may not list it, and the start functions may read every key
	// under inputs/uploads/, so a 403 there says the upload is not there
	// (wrong id, expired, or never uploaded), never a retry.
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
		return task.Input{}, "", missing
	}
	if err != nil {
		return task.Input{}, "", &BlobError{Err: fmt.Errorf("read upload %s: %w", id, err)}
	}
	defer rc.Close()
	br := bufio.NewReader(rc)
	head, _ := br.Peek(imagecheck.SignatureLen)
	mimeType, ext := imagecheck.Sniff(head)
	if mimeType == "" {
		s.DeleteBlob(ctx, src)
		return task.Input{}, "", &UploadError{Problem: UploadNotImage, Field: field,
			Message: fmt.Sprintf("The upload %q is not a JPEG or PNG image.", id)}
	}
	dst := "inputs/" + taskID + "/" + role + "." + ext
	digest := sha256.New()
	// The bytes are checked whole as they are copied, as a streamed
	// upload is (shared/imagecheck): a signature over garbage, a cut
	// image or too large a canvas is refused before anything is charged.
	check := imagecheck.New(s.cfg.MaxImageSide)
	lr := &io.LimitedReader{R: br, N: s.cfg.MaxUploadBytes + 1}
	n, err := s.cfg.Blobs.Put(ctx, dst, io.TeeReader(lr, io.MultiWriter(digest, check)), mimeType)
	if err != nil {
		s.DeleteBlob(ctx, dst)
		return task.Input{}, "", &BlobError{Err: fmt.Errorf("copy upload %s to %s: %w", id, dst, err)}
	}
	if n > s.cfg.MaxUploadBytes {
		s.DeleteBlob(ctx, dst)
		return task.Input{}, "", &UploadError{Problem: UploadTooLarge, Field: field, Max: s.cfg.MaxUploadBytes,
			Message: fmt.Sprintf("The upload %q is larger than %d bytes.", id, s.cfg.MaxUploadBytes)}
	}
	if _, err := check.Close(); err != nil {
		s.DeleteBlob(ctx, dst)
		return task.Input{}, "", s.imageProblem(field, id, err)
	}
	in := task.Input{Role: role, Key: dst, OriginalName: id, Size: n, MimeType: mimeType, Upload: src}
	return in, hex.EncodeToString(digest.Sum(nil)), nil
}

// imageProblem is the refusal of an upload whose bytes imagecheck refused.
func (s *Service) imageProblem(field, id string, err error) *UploadError {
	var ie *imagecheck.Error
	if !errors.As(err, &ie) {
		ie = &imagecheck.Error{Kind: imagecheck.ErrDamaged, Reason: "it could not be read"}
	}
	if errors.Is(ie, imagecheck.ErrCanvas) {
		side := s.cfg.MaxImageSide
		return &UploadError{Problem: UploadCanvas, Field: field, Width: ie.Width, Height: ie.Height, MaxSide: side,
			Message: fmt.Sprintf("The upload %q is %dx%d pixels; the largest accepted is %dx%d pixels.", id, ie.Width, ie.Height, side, side)}
	}
	return &UploadError{Problem: UploadNotImage, Field: field,
		Message: fmt.Sprintf("The upload %q is not a whole JPEG or PNG image: %s.", id, ie.Reason)}
}
