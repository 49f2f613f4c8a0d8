package service

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strings"
	"time"

	"github.com/genvideo/gen/shared/blob"
	"github.com/genvideo/gen/shared/task"
	"github.com/genvideo/gen/shared/wire"
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
	// UploadNotImage: the image's first bytes are not a JPEG's or a
	// PNG's, whatever was declared (INVALID_IMAGE_TYPE).
	UploadNotImage
	// UploadDamaged: the bytes are not one whole JPEG or PNG image of a
	// kind accepted (INVALID_IMAGE_TYPE).
	UploadDamaged
	// UploadEmpty: a file field without bytes (MISSING_IMAGE).
	UploadEmpty
	// UploadUnreadable: the request's body failed while the image was
	// read (VALIDATION_ERROR).
	UploadUnreadable
	// UploadTooLarge: over MaxUploadBytes (FILE_TOO_LARGE).
	UploadTooLarge
	// UploadUnavailable: this deployment has no direct uploads.
	UploadUnavailable
	// UploadCanvas: the image is wider or taller than MaxImageSide
	// (VALIDATION_ERROR).
	UploadCanvas
)

// DefaultMaxImageSide is the widest and tallest image accepted (the
// default of shared/intake): an 8192 x 8192 canvas is the renderer's
// limit of 64 Mi pixels.
const DefaultMaxImageSide = 8192

// UploadError is a refused upload, or a refused use of one.
type UploadError struct {
	Problem UploadProblem
	Field   string // the request field that named it
	Message string
	Max     int64 // UploadTooLarge: the limit
	// Width, Height and MaxSide describe an UploadCanvas.
	Width, Height, MaxSide int
	// Err is the failure of an UploadUnreadable.
	Err error
}

func (e *UploadError) Error() string { return e.Message }

// Unwrap returns the failure of an UploadUnreadable.
func (e *UploadError) Unwrap() error { return e.Err }

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
// caller's account and pass the image intake (Config.Images) as a file
// sent with the start does, at most MaxUploadBytes. Its bytes are copied
// to the task's own input key (inputs/<task>/<role>.<ext>), which the
// start owns (a refused start deletes it); the upload itself stays until
// the bucket's inputs/ expiry, so that a start retried under its
// Idempotency-Key is replayed, not refused, or until a task made from it
// is deleted (Delete, through Input.Upload). It returns the input and the
// hex SHA-256 of its bytes.
func (s *Service) ResolveUpload(ctx context.Context, c Caller, field, id, role, taskID string) (task.Input, string, error) {
	missing := &UploadError{Problem: UploadMissing, Field: field,
		Message: fmt.Sprintf("No upload %q: it was not made with this key's account, not uploaded yet, or expired.", id)}
	if !wire.IsUploadID(id) {
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
	in, digest, err := s.putImage(ctx, rc, ImageSource{Field: field, Subject: fmt.Sprintf("upload %q", id),
		Key: inputKey(taskID, role), Role: role, OriginalName: id, Upload: src, MaxBytes: s.cfg.MaxUploadBytes})
	var ue *UploadError
	switch {
	case errors.As(err, &ue) && ue.Problem == UploadUnreadable:
		// The source is blob storage: its failure is the storage's.
		return task.Input{}, "", &BlobError{Err: fmt.Errorf("read upload %s: %w", id, ue.Err)}
	case ue != nil && (ue.Problem == UploadEmpty || ue.Problem == UploadNotImage):
		// Not an image at all: no start can ever use it.
		s.DeleteBlob(ctx, src)
	}
	return in, digest, err
}

// TakeImage is the intake of the image of role of the task taskID that a
// start's form streams in, named by fileName, at most limit.Bytes: see
// ResolveUpload. It returns the input and the hex SHA-256 of its bytes.
func (s *Service) TakeImage(ctx context.Context, src io.Reader, taskID, role, fileName string, limit ImageLimit) (task.Input, string, error) {
	return s.putImage(ctx, src, ImageSource{Field: role, Subject: fmt.Sprintf("file %q", role),
		Key: inputKey(taskID, role), Role: role, OriginalName: fileName, MaxBytes: limit.Bytes, LimitNote: limit.Note})
}

// putImage passes one image through the intake; whatever part of a
// refused one was stored goes.
func (s *Service) putImage(ctx context.Context, src io.Reader, img ImageSource) (task.Input, string, error) {
	if s.cfg.Images == nil {
		return task.Input{}, "", &UploadError{Problem: UploadUnavailable, Field: img.Field, Message: "This deployment takes no images."}
	}
	in, digest, err := s.cfg.Images.Put(ctx, src, img)
	if err != nil {
		if in.Key != "" {
			s.DeleteBlob(ctx, in.Key)
		}
		return task.Input{}, "", err
	}
	return in, digest, nil
}

// inputKey is where the image of role of a task is kept, less the
// extension of its type.
func inputKey(taskID, role string) string { return "inputs/" + taskID + "/" + role }

// ImageIntake checks and stores the images a request brings
// (shared/intake): Put reads one from src to img.Key plus the extension
// of its type and returns the input and the hex SHA-256 of its bytes. A
// refusal is an *UploadError made by img's Refuse or TooLarge, a storage
// failure a *BlobError; on either, the input's Key names what may have
// been stored.
type ImageIntake interface {
	Put(ctx context.Context, src io.Reader, img ImageSource) (task.Input, string, error)
}

// ImageLimit bounds an image a start's form streams in.
type ImageLimit struct {
	Bytes int64
	// Note is an extra sentence of the refusal of a larger one, e.g. why a
	// deployment's limit is lower than the contract's 20 MiB.
	Note string
}

// TooLarge is the refusal of a start's form that passed the limit of
// its images while field (empty between parts) was read.
func (l ImageLimit) TooLarge(field string) *UploadError {
	subject := "request body"
	if field != "" {
		subject = fmt.Sprintf("file %q", field)
	}
	return ImageSource{Field: field, Subject: subject, MaxBytes: l.Bytes, LimitNote: l.Note}.TooLarge()
}

// ImageSource is an image on its way in: where it comes from, how the
// refusals name it, and where it goes.
type ImageSource struct {
	// Field is the request's field that brought it; Subject names it in
	// messages (file "image", upload "upl_…").
	Field, Subject string
	// Key is its blob key, less the extension of its type.
	Key string
	// Role, OriginalName and Upload are the input's.
	Role, OriginalName, Upload string
	// MaxBytes is its limit; LimitNote is ImageLimit.Note.
	MaxBytes  int64
	LimitNote string
}

// Refuse is the refusal of the image for problem, its message formatted.
func (img ImageSource) Refuse(problem UploadProblem, format string, args ...any) *UploadError {
	return &UploadError{Problem: problem, Field: img.Field, Message: fmt.Sprintf(format, args...)}
}

// TooLarge is the refusal of the image as larger than MaxBytes.
func (img ImageSource) TooLarge() *UploadError {
	limit := fmt.Sprintf("%d bytes", img.MaxBytes)
	if img.MaxBytes%(1<<20) == 0 {
		limit = fmt.Sprintf("%d MiB (%d bytes)", img.MaxBytes>>20, img.MaxBytes)
	}
	e := img.Refuse(UploadTooLarge, "The %s is larger than the limit of %s.", img.Subject, limit)
	if img.LimitNote != "" {
		e.Message += " " + img.LimitNote
	}
	e.Max = img.MaxBytes
	return e
}
