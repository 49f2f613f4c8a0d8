package httpapi

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"slices"
	"strings"

	"github.com/genvideo/gen/shared/imagecheck"
	"github.com/genvideo/gen/shared/service"
	"github.com/genvideo/gen/shared/task"
)

// Bounds of a multipart start request besides its images. A form has at
// most a dozen parameters; a value is at most a 2,000-character prompt.
const (
	maxFieldBytes = 16 << 10
	maxParts      = 32
	// maxFormBytes is the room the whole body has beyond its images: the
	// text fields and the multipart framing.
	maxFormBytes = maxParts*maxFieldBytes + 1<<20
)

// upload is a multipart form whose images are already in blob storage.
type upload struct {
	fields map[string][]string
	inputs []task.Input
	// digests holds the hex SHA-256 of each image's bytes, by role, for
	// the request hash of an Idempotency-Key.
	digests map[string]string
}

func (u upload) input(role string) (task.Input, bool) {
	for _, in := range u.inputs {
		if in.Role == role {
			return in, true
		}
	}
	return task.Input{}, false
}

// readUpload streams a multipart body: text fields are read (bounded), the
// file fields named by roles are sniffed and streamed into blob storage
// under inputs/<id>/<role>.<ext>. Parts come in any order. On error
// nothing uploaded is left behind.
func (a *API) readUpload(w http.ResponseWriter, r *http.Request, id string, roles []string) (up upload, _ error) {
	mt, ps, perr := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if perr != nil || mt != "multipart/form-data" || ps["boundary"] == "" {
		return upload{}, badRequest("", "Content-Type must be multipart/form-data with a boundary.")
	}
	// The multipart reader reads a bounded copy of the body (r.Body stays
	// as it is, so that the server still knows how much was left unread).
	body := http.MaxBytesReader(w, r.Body, int64(len(roles))*a.cfg.MaxImageBytes+maxFormBytes)
	mr := multipart.NewReader(body, ps["boundary"])

	up.fields = map[string][]string{}
	up.digests = map[string]string{}
	done := false
	defer func() {
		// Also on a panic: nothing uploaded may outlive a refused request.
		if !done {
			a.deleteInputs(r.Context(), up.inputs)
			up.inputs = nil
		}
	}()
	for parts := 0; ; parts++ {
		p, err := mr.NextPart()
		if err == io.EOF {
			done = true
			return up, nil
		}
		if err != nil {
			return up, a.bodyError(err, "")
		}
		if parts == maxParts {
			return up, badRequest("", "The form has more than %d parts.", maxParts)
		}
		name := p.FormName()
		if name == "" {
			return up, badRequest("", "Every part of the form needs a name.")
		}
		if slices.Contains(roles, name) {
			if _, dup := up.input(name); dup {
				return up, badRequest(name, "The file field %q is given more than once; send one file.", name)
			}
			in, digest, err := a.putImage(r.Context(), p, id, name)
			if err != nil {
				return up, err
			}
			up.inputs = append(up.inputs, in)
			up.digests[name] = digest
			continue
		}
		if p.FileName() != "" {
			return up, badRequest(name, "Unexpected file field %q; this endpoint takes the file fields %s.", name, strings.Join(roles, ", "))
		}
		v, err := io.ReadAll(io.LimitReader(p, maxFieldBytes+1))
		if err != nil {
			return up, a.bodyError(err, name)
		}
		if len(v) > maxFieldBytes {
			return up, badRequest(name, "The field %q is longer than %d bytes.", name, maxFieldBytes)
		}
		up.fields[name] = append(up.fields[name], string(v))
	}
}

// putImage streams one file part into blob storage through a counter that
// stops it past MaxImageBytes, so that an oversized image is refused while
// it arrives, never buffered whole, and through imagecheck, so that what
// is not one whole JPEG or PNG of an accepted canvas is refused before
// anything is charged. A file over the size limit is a 413 whatever its
// bytes. It returns the stored input and the hex SHA-256 of its bytes.
func (a *API) putImage(ctx context.Context, p *multipart.Part, id, role string) (task.Input, string, error) {
	br := bufio.NewReaderSize(p, 512)
	head, err := br.Peek(imagecheck.SignatureLen)
	if err != nil && err != io.EOF {
		return task.Input{}, "", a.bodyError(err, role)
	}
	if len(head) == 0 {
		return task.Input{}, "", &Error{Status: http.StatusBadRequest, Code: CodeMissingImage, Field: role,
			Message: fmt.Sprintf("The file field %q is empty.", role)}
	}
	mimeType, ext := imagecheck.Sniff(head)
	if mimeType == "" {
		return task.Input{}, "", &Error{Status: http.StatusBadRequest, Code: CodeInvalidImageType, Field: role,
			Message: fmt.Sprintf("The file field %q must be a JPEG or PNG image.", role)}
	}

	key := "inputs/" + id + "/" + role + "." + ext
	cr := &countingReader{r: br, max: a.cfg.MaxImageBytes}
	digest := sha256.New()
	check := imagecheck.New(a.cfg.MaxImageSide)
	_, err = a.cfg.Blobs.Put(ctx, key, io.TeeReader(cr, io.MultiWriter(digest, check)), mimeType)
	_, imgErr := check.Close()
	if err != nil || cr.tooLarge || imgErr != nil {
		// Whatever part of the file was stored goes.
		a.deleteBlob(ctx, key)
		switch {
		case cr.tooLarge:
			return task.Input{}, "", a.fileTooLarge(role)
		case cr.err != nil:
			return task.Input{}, "", a.bodyError(cr.err, role)
		case err != nil:
			return task.Input{}, "", &service.BlobError{Err: fmt.Errorf("put %s: %w", key, err)}
		default:
			return task.Input{}, "", a.notAnImage(role, imgErr)
		}
	}
	in := task.Input{Role: role, Key: key, OriginalName: p.FileName(), Size: cr.n, MimeType: mimeType}
	return in, hex.EncodeToString(digest.Sum(nil)), nil
}

// notAnImage answers a file that imagecheck refused: one whose canvas is
// too large is a VALIDATION_ERROR naming the limit, anything else (not a
// whole image, damaged, of a kind not accepted) an INVALID_IMAGE_TYPE
// saying what is wrong.
func (a *API) notAnImage(field string, err error) *Error {
	var ie *imagecheck.Error
	if !errors.As(err, &ie) {
		ie = &imagecheck.Error{Kind: imagecheck.ErrDamaged, Reason: "it could not be read"}
	}
	if errors.Is(ie, imagecheck.ErrCanvas) {
		side := a.cfg.MaxImageSide
		return &Error{Status: http.StatusBadRequest, Code: CodeValidation, Field: field,
			Message: fmt.Sprintf("The image %q is %dx%d pixels; the largest accepted is %dx%d pixels.", field, ie.Width, ie.Height, side, side),
			Details: map[string]any{"width": ie.Width, "height": ie.Height, "maxWidth": side, "maxHeight": side}}
	}
	what := "is not a whole JPEG or PNG image"
	if errors.Is(ie, imagecheck.ErrUnsupported) {
		what = "is a kind of image not accepted (send a still JPEG or PNG)"
	}
	return &Error{Status: http.StatusBadRequest, Code: CodeInvalidImageType, Field: field,
		Message: fmt.Sprintf("The file %q %s: %s.", field, what, ie.Reason)}
}

// errTooLarge stops a Put past the image limit.
var errTooLarge = errors.New("image larger than the limit")

// countingReader passes at most max bytes through and notes why it
// stopped: too large, or the body failed.
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
	// Read one byte past the limit at most: seeing it proves the file is
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

// fileTooLarge is the 413 of an image over MaxImageBytes.
func (a *API) fileTooLarge(field string) *Error {
	limit := fmt.Sprintf("%d bytes", a.cfg.MaxImageBytes)
	if a.cfg.MaxImageBytes%(1<<20) == 0 {
		limit = fmt.Sprintf("%d MiB (%d bytes)", a.cfg.MaxImageBytes>>20, a.cfg.MaxImageBytes)
	}
	msg := fmt.Sprintf("The file %q is larger than the limit of %s.", field, limit)
	if a.cfg.ImageLimitMessage != "" {
		msg += " " + a.cfg.ImageLimitMessage
	}
	return &Error{Status: http.StatusRequestEntityTooLarge, Code: CodeFileTooLarge, Field: field, Message: msg,
		Details: map[string]any{"maxBytes": a.cfg.MaxImageBytes}}
}

// bodyError answers a failure to read the request body: past the body's
// bound it is a 413, anything else a malformed or interrupted body.
func (a *API) bodyError(err error, field string) *Error {
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return a.fileTooLarge(field)
	}
	return badRequest(field, "The multipart body is malformed or was interrupted.")
}

// deleteInputs removes uploaded images of a request that was refused. It
// runs even when the client has gone away.
func (a *API) deleteInputs(ctx context.Context, inputs []task.Input) {
	for _, in := range inputs {
		a.deleteBlob(ctx, in.Key)
	}
}

func (a *API) deleteBlob(ctx context.Context, key string) { a.svc.DeleteBlob(ctx, key) }
