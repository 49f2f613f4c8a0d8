// Package intake takes in the images a request brings, one way whether a
// start's form streams them in or a start names a direct upload that is
// copied: the first bytes name the type, the bytes are stored as they
// are read, through a counter that stops them past the limit, a hash for
// the request hash of an Idempotency-Key, and shared/imagecheck, so that
// what is not one whole JPEG or PNG of an accepted canvas is refused
// before anything is charged. It is the service's ImageIntake, given by
// the programs that take images (the local server, image-to-video and
// first-last-frame), so that no other program links the image checks.
package intake

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/genvideo/gen/shared/blob"
	"github.com/genvideo/gen/shared/imagecheck"
	"github.com/genvideo/gen/shared/service"
	"github.com/genvideo/gen/shared/task"
)

// Intake checks and stores images in blob storage.
type Intake struct {
	blobs   blob.Store
	maxSide int
}

// New is the intake into blobs of images at most maxSide pixels wide and
// tall (service.DefaultMaxImageSide if not positive).
func New(blobs blob.Store, maxSide int) *Intake {
	if maxSide <= 0 {
		maxSide = service.DefaultMaxImageSide
	}
	return &Intake{blobs: blobs, maxSide: maxSide}
}

// Put reads one image from src into img.Key plus the extension of its
// type. A refusal is a *service.UploadError, a failure of the blob
// storage a *service.BlobError; either way the returned input's Key names
// what may have been stored, which the caller deletes.
func (i *Intake) Put(ctx context.Context, src io.Reader, img service.ImageSource) (task.Input, string, error) {
	br := bufio.NewReaderSize(src, 512)
	head, err := br.Peek(imagecheck.SignatureLen)
	if err != nil && err != io.EOF {
		return task.Input{}, "", readError(img, err)
	}
	if len(head) == 0 {
		return task.Input{}, "", img.Refuse(service.UploadEmpty, "The %s is empty.", img.Subject)
	}
	mimeType, ext := imagecheck.Sniff(head)
	if mimeType == "" {
		return task.Input{}, "", img.Refuse(service.UploadNotImage, "The %s is not a JPEG or PNG image.", img.Subject)
	}

	in := task.Input{Role: img.Role, Key: img.Key + "." + ext, OriginalName: img.OriginalName, MimeType: mimeType, Upload: img.Upload}
	cr := &countingReader{r: br, max: img.MaxBytes}
	digest := sha256.New()
	check := imagecheck.New(i.maxSide)
	_, err = i.blobs.Put(ctx, in.Key, io.TeeReader(cr, io.MultiWriter(digest, check)), mimeType)
	_, imgErr := check.Close()
	switch {
	case cr.tooLarge:
		return in, "", img.TooLarge()
	case cr.err != nil:
		return in, "", readError(img, cr.err)
	case err != nil:
		return in, "", &service.BlobError{Err: fmt.Errorf("put %s: %w", in.Key, err)}
	case imgErr != nil:
		return in, "", i.notAnImage(img, imgErr)
	}
	in.Size = cr.n
	return in, hex.EncodeToString(digest.Sum(nil)), nil
}

// readError is the refusal of an image whose source failed: past the
// bound of an HTTP body it is too large, anything else unreadable.
func readError(img service.ImageSource, err error) *service.UploadError {
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return img.TooLarge()
	}
	e := img.Refuse(service.UploadUnreadable, "The %s could not be read: the body is malformed or was interrupted.", img.Subject)
	e.Err = err
	return e
}

// notAnImage is the refusal of bytes imagecheck refused: too large a
// canvas, or not a whole image of a kind accepted.
func (i *Intake) notAnImage(img service.ImageSource, err error) *service.UploadError {
	var ie *imagecheck.Error
	if !errors.As(err, &ie) {
		ie = &imagecheck.Error{Kind: imagecheck.ErrDamaged, Reason: "it could not be read"}
	}
	if errors.Is(ie, imagecheck.ErrCanvas) {
		e := img.Refuse(service.UploadCanvas, "The %s is %dx%d pixels; the largest accepted is %dx%d pixels.",
			img.Subject, ie.Width, ie.Height, i.maxSide, i.maxSide)
		e.Width, e.Height, e.MaxSide = ie.Width, ie.Height, i.maxSide
		return e
	}
	what := "is not a whole JPEG or PNG image"
	if errors.Is(ie, imagecheck.ErrUnsupported) {
		what = "is a kind of image not accepted (send a still JPEG or PNG)"
	}
	return img.Refuse(service.UploadDamaged, "The %s %s: %s.", img.Subject, what, ie.Reason)
}

// errTooLarge stops a Put past the image limit.
var errTooLarge = errors.New("image larger than the limit")

// countingReader passes at most max bytes through and notes why it
// stopped: too large, or the source failed.
type countingReader struct {
	r        io.Reader
	max      int64
	n        int64
	tooLarge bool
	err      error
}

func (c *countingReader) Read(b []byte) (int, error) {
	if c.tooLarge {
		return 0, errTooLarge
	}
	// Read one byte past the limit at most: seeing it proves the image is
	// too large without reading any further.
	if rest := c.max + 1 - c.n; int64(len(b)) > rest {
		b = b[:rest]
	}
	n, err := c.r.Read(b)
	c.n += int64(n)
	if c.n > c.max {
		c.tooLarge = true
		c.n = c.max + 1
		return 0, errTooLarge
	}
	if err != nil && err != io.EOF {
		c.err = err
	}
	return n, err
}
