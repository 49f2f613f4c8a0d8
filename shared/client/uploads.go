package client

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"strings"

	"github.com/genvideo/gen/shared/wire"
)

// DefaultDirectUploadAbove is the image size above which a start sends
// the image through a direct upload (POST /api/gen/uploads) rather than in
// its own request: 4 MiB, the most a request through API Gateway and AWS
// Lambda carries (first-last-frame: half of it per frame). Locally a
// request could carry more, but a direct upload works on both stacks.
const DefaultDirectUploadAbove = 4 << 20

// WithDirectUploadAbove sets the image size (bytes) above which starts
// upload the image directly first (default DefaultDirectUploadAbove); 0
// uploads every image directly, a negative n never.
func WithDirectUploadAbove(n int64) Option { return func(c *Client) { c.directAbove = n } }

// Upload is a direct upload the service signed.
type Upload = wire.Upload

// UploadImage uploads image straight to the service's storage (on AWS, an
// S3 presigned POST) and returns the upload's id, which a start takes in
// place of the file. The image may be up to 20 MiB; its type is read from
// its first bytes.
func (c *Client) UploadImage(ctx context.Context, image Image) (string, error) {
	if image.Open == nil {
		return "", fmt.Errorf("gen: upload %q: the image has no Open function", image.Name)
	}
	r, err := image.Open()
	if err != nil {
		return "", fmt.Errorf("gen: open %q: %w", image.Name, err)
	}
	defer r.Close()
	br := bufio.NewReader(r)
	head, _ := br.Peek(8)
	contentType := sniffType(head)
	if contentType == "" {
		return "", fmt.Errorf("gen: upload %q: not a JPEG or PNG image", image.Name)
	}
	reqBody, err := jsonBody(wire.UploadRequest{ContentType: contentType})
	if err != nil {
		return "", fmt.Errorf("gen: upload %q: %w", image.Name, err)
	}
	_, body, err := c.do(ctx, call{method: http.MethodPost, path: "/api/gen/uploads", retry: true, body: reqBody})
	if err != nil {
		return "", err
	}
	var up Upload
	if err := json.Unmarshal(body, &up); err != nil || up.UploadID == "" || up.UploadURL == "" {
		return "", fmt.Errorf("gen: POST /api/gen/uploads: decode answer: %v", err)
	}
	if size, known := image.sizeOf(); known && size > up.MaxBytes {
		return "", tooLarge(image.Name, up.MaxBytes)
	}
	if err := c.postUpload(ctx, up, image.Name, br); err != nil {
		return "", err
	}
	return up.UploadID, nil
}

// tooLarge is the service's FILE_TOO_LARGE for an image over a direct
// upload's limit, which storage itself refuses in its own words.
func tooLarge(name string, maxBytes int64) *Error {
	return &Error{Status: http.StatusRequestEntityTooLarge, Code: CodeFileTooLarge, Field: name,
		Message: fmt.Sprintf("The file %q is larger than the limit of %d MiB (%d bytes).", name, maxBytes>>20, maxBytes),
		Details: map[string]any{"maxBytes": maxBytes}}
}

// postUpload sends the signed form and the file to the storage's URL,
// streaming the file. Storage answers in its own format (S3's XML), so a
// refusal is reported with its text.
func (c *Client) postUpload(ctx context.Context, up Upload, name string, file io.Reader) error {
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	go func() {
		pw.CloseWithError(func() error {
			for k, v := range up.Fields {
				if err := mw.WriteField(k, v); err != nil {
					return err
				}
			}
			field := up.FileField
			if field == "" {
				field = "file"
			}
			fw, err := mw.CreateFormFile(field, name)
			if err != nil {
				return err
			}
			if _, err := io.Copy(fw, file); err != nil {
				return err
			}
			return mw.Close()
		}())
	}()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, up.UploadURL, pr)
	if err != nil {
		pr.Close()
		return fmt.Errorf("gen: upload %q: %w", name, err)
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("User-Agent", c.userAgent)
	res, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("gen: upload %q: %w", name, err)
	}
	defer res.Body.Close()
	if res.StatusCode < 200 || res.StatusCode > 299 {
		b, _ := io.ReadAll(io.LimitReader(res.Body, 4<<10))
		if strings.Contains(string(b), "EntityTooLarge") {
			return tooLarge(name, up.MaxBytes)
		}
		return fmt.Errorf("gen: upload %q: storage answered %s: %s", name, res.Status, strings.TrimSpace(string(b)))
	}
	return nil
}

// sniffType is the type of an image by its first bytes, or "".
func sniffType(head []byte) string {
	switch {
	case len(head) >= 3 && head[0] == 0xFF && head[1] == 0xD8 && head[2] == 0xFF:
		return "image/jpeg"
	case len(head) >= 8 && string(head[:8]) == "\x89PNG\r\n\x1a\n":
		return "image/png"
	}
	return ""
}

// prepareImages uploads directly the images over limit bytes and returns
// the file parts still to send and the upload-id fields that replace the
// others (imageUploadId, ...).
func (c *Client) prepareImages(ctx context.Context, files []filePart, limit int64) ([]filePart, [][2]string, error) {
	var keep []filePart
	var ids [][2]string
	for _, f := range files {
		if f.image.uploadID != "" {
			ids = append(ids, [2]string{f.field + "UploadId", f.image.uploadID})
			continue
		}
		if !c.uploadsFirst(f.image, limit) {
			keep = append(keep, f)
			continue
		}
		id, err := c.UploadImage(ctx, f.image)
		if err != nil {
			return nil, nil, err
		}
		ids = append(ids, [2]string{f.field + "UploadId", id})
	}
	return keep, ids, nil
}

// uploadsFirst reports whether a start sends im through a direct upload
// rather than in its own request: when direct uploads are on and im is
// known to be larger than limit.
func (c *Client) uploadsFirst(im Image, limit int64) bool {
	if c.directAbove < 0 {
		return false
	}
	size, known := im.sizeOf()
	return known && size > limit
}

// sizeOf is the image's size when it can be known without reading it.
func (im Image) sizeOf() (int64, bool) {
	switch {
	case im.size >= 0 && im.sized:
		return im.size, true
	case im.path != "":
		st, err := os.Stat(im.path)
		if err != nil {
			return 0, false
		}
		return st.Size(), true
	}
	return 0, false
}
