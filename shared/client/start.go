package client

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Image is a file for image-to-video or first-last-frame. It is streamed
// to the service, never read into memory whole. The service recognises
// JPEG and PNG by their bytes and takes at most 20 MiB.
type Image struct {
	// Name is the file name sent (the service echoes it as
	// imageInfo.originalName).
	Name string
	// Open returns the image's bytes; a retry opens it again.
	Open func() (io.ReadCloser, error)

	// once marks an image that can be read only once.
	once bool
	// path, or size when sized, tell the image's size without reading it
	// (to choose a direct upload for a large one).
	path  string
	size  int64
	sized bool
	// uploadID names a direct upload made already (UploadedImage).
	uploadID string
}

// UploadedImage is the image of a direct upload made already (UploadImage,
// or POST /api/gen/uploads and the upload itself): a start sends its id in
// place of the file, and the service checks the uploaded bytes as it
// checks a file sent with the start.
func UploadedImage(uploadID string) Image {
	return Image{Name: uploadID, uploadID: uploadID}
}

// ImageFile is the image in the file at path.
func ImageFile(path string) Image {
	return Image{Name: filepath.Base(path), path: path, Open: func() (io.ReadCloser, error) { return os.Open(path) }}
}

// ImageBytes is an image held in memory.
func ImageBytes(name string, data []byte) Image {
	return Image{Name: name, size: int64(len(data)), sized: true,
		Open: func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }}
}

// ImageReader is an image read from r, which can be read only once: a
// start that uploads it is never retried.
func ImageReader(name string, r io.Reader) Image {
	return Image{Name: name, once: true, Open: func() (io.ReadCloser, error) { return io.NopCloser(r), nil }}
}

// StartOption adjusts one start call.
type StartOption func(*call)

// WithIdempotencyKey sends the start with an Idempotency-Key: the service
// answers the same key and body within 24 hours with the first answer
// (one task, one charge), so the start may be retried. Use a fresh key
// (NewIdempotencyKey) for every generation.
func WithIdempotencyKey(key string) StartOption { return func(c *call) { c.idempotencyKey = key } }

// TextToVideo starts a text-to-video generation.
func (c *Client) TextToVideo(ctx context.Context, req Request, opts ...StartOption) (*Started, error) {
	body, err := jsonBody(req)
	if err != nil {
		return nil, fmt.Errorf("gen: encode request: %w", err)
	}
	return c.start(ctx, call{method: http.MethodPost, path: "/api/gen/text-to-video", body: body}, opts)
}

// TextToVideoWithReferences starts a text-to-video generation whose video
// keeps the person, character or product of up to three reference images
// (an extension of the contract, where the model's backend takes them:
// GET /api/gen/models, mode reference-images). refs come after the
// direct uploads req.ReferenceImages names, if any. The files travel in
// the start's own request (a multipart form) unless one is larger than
// the direct-upload size shared among them, or the start also names a
// direct upload (UploadedImage, req.ReferenceImages): a request carries
// either files or upload ids, so then every file is uploaded first
// (UploadImage, even under WithDirectUploadAbove(-1)) and the start names
// them all. A start with no refs is TextToVideo.
func (c *Client) TextToVideoWithReferences(ctx context.Context, req Request, refs []Image, opts ...StartOption) (*Started, error) {
	body, files, err := c.referenceBody(ctx, req, refs, true)
	if err != nil {
		return nil, err
	}
	return c.start(ctx, call{method: http.MethodPost, path: "/api/gen/text-to-video", body: body}, opts, imagesOf(files)...)
}

// referenceBody is the body of a text-to-video start with the reference
// images refs after req's: a form carrying the files when form allows
// it and it can carry them all, else JSON naming direct uploads, the
// files uploaded now. files are the form's.
func (c *Client) referenceBody(ctx context.Context, req Request, refs []Image, form bool) (body func() (io.ReadCloser, string, error), files []filePart, _ error) {
	upload := !form || len(req.ReferenceImages) > 0
	if len(refs) > 0 {
		limit := c.directAbove / int64(len(refs))
		for _, im := range refs {
			files = append(files, filePart{"referenceImages", im})
			upload = upload || im.uploadID != "" || c.uploadsFirst(im, limit)
		}
	}
	if len(refs) > 0 && !upload {
		return multipartBody(req, files, nil), files, nil
	}
	ids := slices.Clone(req.ReferenceImages)
	for _, im := range refs {
		id := im.uploadID
		if id == "" {
			var err error
			if id, err = c.UploadImage(ctx, im); err != nil {
				return nil, nil, err
			}
		}
		ids = append(ids, id)
	}
	req.ReferenceImages = ids
	body, err := jsonBody(req)
	if err != nil {
		return nil, nil, fmt.Errorf("gen: encode request: %w", err)
	}
	return body, nil, nil
}

// ImageToVideo starts an image-to-video generation from image. An image
// larger than the client's direct-upload size (WithDirectUploadAbove) is
// uploaded first (UploadImage) and named by its upload id.
func (c *Client) ImageToVideo(ctx context.Context, req Request, image Image, opts ...StartOption) (*Started, error) {
	files, ids, err := c.prepareImages(ctx, []filePart{{"image", image}}, c.directAbove)
	if err != nil {
		return nil, err
	}
	body := multipartBody(req, files, ids)
	return c.start(ctx, call{method: http.MethodPost, path: "/api/gen/image-to-video", body: body}, opts, imagesOf(files)...)
}

// FirstLastFrame starts a generation that begins at first and ends at
// last. The Quality and Fast models support it; Lite does not. A frame
// larger than half the direct-upload size is uploaded first: a request
// carries both frames.
func (c *Client) FirstLastFrame(ctx context.Context, req Request, first, last Image, opts ...StartOption) (*Started, error) {
	files, ids, err := c.prepareImages(ctx, []filePart{{"firstFrame", first}, {"lastFrame", last}}, c.directAbove/2)
	if err != nil {
		return nil, err
	}
	body := multipartBody(req, files, ids)
	return c.start(ctx, call{method: http.MethodPost, path: "/api/gen/first-last-frame", body: body}, opts, imagesOf(files)...)
}

func imagesOf(files []filePart) []Image {
	out := make([]Image, len(files))
	for i, f := range files {
		out[i] = f.image
	}
	return out
}

func (c *Client) start(ctx context.Context, cl call, opts []StartOption, images ...Image) (*Started, error) {
	for _, o := range opts {
		o(&cl)
	}
	if cl.idempotencyKey == "" && c.autoKey {
		cl.idempotencyKey = NewIdempotencyKey()
	}
	// Without a key a repeated start could start and charge twice.
	cl.retry = cl.idempotencyKey != ""
	for _, im := range images {
		cl.retry = cl.retry && !im.once
	}
	_, body, err := c.do(ctx, cl)
	if err != nil {
		return nil, err
	}
	s, err := decodeStarted(body)
	if err != nil {
		return nil, fmt.Errorf("gen: POST %s: decode answer: %w", cl.path, err)
	}
	s.IdempotencyKey = cl.idempotencyKey
	return &s, nil
}

type filePart struct {
	field string
	image Image
}

// multipartBody is a body maker that streams the form through a pipe:
// the text fields, then each file as it is read.
func multipartBody(req Request, files []filePart, extra [][2]string) func() (io.ReadCloser, string, error) {
	return func() (io.ReadCloser, string, error) {
		// Open the files first, so that a missing file fails the call
		// before anything is sent.
		readers := make([]io.ReadCloser, len(files))
		for i, f := range files {
			if f.image.Open == nil {
				closeAll(readers)
				return nil, "", fmt.Errorf("gen: %s: the image has no Open function", f.field)
			}
			r, err := f.image.Open()
			if err != nil {
				closeAll(readers)
				return nil, "", fmt.Errorf("gen: open %s %q: %w", f.field, f.image.Name, err)
			}
			readers[i] = r
		}
		pr, pw := io.Pipe()
		w := multipart.NewWriter(pw)
		go func() {
			defer closeAll(readers)
			pw.CloseWithError(writeForm(w, req, files, extra, readers))
		}()
		return pr, w.FormDataContentType(), nil
	}
}

func writeForm(w *multipart.Writer, req Request, files []filePart, extra [][2]string, readers []io.ReadCloser) error {
	for _, f := range append(formFields(req), extra...) {
		if err := w.WriteField(f[0], f[1]); err != nil {
			return err
		}
	}
	for i, f := range files {
		name := f.image.Name
		if name == "" {
			name = f.field
		}
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="%s"; filename="%s"`, f.field, escapeQuotes(name)))
		h.Set("Content-Type", imageType(name))
		pw, err := w.CreatePart(h)
		if err != nil {
			return err
		}
		if _, err := io.Copy(pw, readers[i]); err != nil {
			return fmt.Errorf("read %s %q: %w", f.field, name, err)
		}
	}
	return w.Close()
}

// imageType is the declared type of an upload, from its name. The
// service trusts only the bytes; this is for proxies and logs.
func imageType(name string) string {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".png":
		return "image/png"
	case ".jpg", ".jpeg":
		return "image/jpeg"
	}
	return "application/octet-stream"
}

var quoteEscaper = strings.NewReplacer("\\", "\\\\", `"`, "\\\"", "\r", "", "\n", "")

func escapeQuotes(s string) string { return quoteEscaper.Replace(s) }

func closeAll(rs []io.ReadCloser) {
	for _, r := range rs {
		if r != nil {
			r.Close()
		}
	}
}
