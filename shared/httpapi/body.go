package httpapi

import (
	"context"
	"errors"
	"io"
	"maps"
	"mime"
	"mime/multipart"
	"net/http"
	"slices"
	"strings"

	"github.com/genvideo/gen/shared/params"
	"github.com/genvideo/gen/shared/service"
	"github.com/genvideo/gen/shared/strictjson"
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

// form is a multipart form whose images are already in blob storage.
type form struct {
	fields map[string][]string
	inputs []task.Input
	// digests holds the hex SHA-256 of each image's bytes, by role, for
	// the request hash of an Idempotency-Key.
	digests map[string]string
}

func (u form) input(role string) (task.Input, bool) {
	for _, in := range u.inputs {
		if in.Role == role {
			return in, true
		}
	}
	return task.Input{}, false
}

// readForm streams a multipart body: text fields are read (bounded), the
// file fields named by roles are sniffed and streamed into blob storage
// under inputs/<id>/<role>.<ext>. Parts come in any order. On error
// nothing uploaded is left behind.
func (a *API) readForm(w http.ResponseWriter, r *http.Request, id string, roles []string) (up form, _ error) {
	files := make(map[string]string, len(roles))
	for _, role := range roles {
		files[role] = role
	}
	return a.readFiles(w, r, id, files)
}

// readFiles is readForm with file fields named otherwise than their
// roles: files maps a field's name to the role of its image (the OpenAI
// shape's input_reference is the image of image-to-video).
func (a *API) readFiles(w http.ResponseWriter, r *http.Request, id string, files map[string]string) (up form, _ error) {
	mt, ps, perr := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if perr != nil || mt != "multipart/form-data" || ps["boundary"] == "" {
		return form{}, badRequest("", "Content-Type must be multipart/form-data with a boundary.")
	}
	// The multipart reader reads a bounded copy of the body (r.Body stays
	// as it is, so that the server still knows how much was left unread).
	body := http.MaxBytesReader(w, r.Body, int64(imageCount(files))*a.cfg.MaxImageBytes+maxFormBytes)
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
		if role, ok := files[name]; ok {
			if role == task.RoleReferences {
				// Up to three files under one name, each its own role.
				if role = up.nextReference(); role == "" {
					return up, badRequest(name, "The file field %q is given more than %d times.", name, params.MaxReferenceImages)
				}
			}
			if _, dup := up.input(role); dup {
				return up, badRequest(name, "The file field %q is given more than once; send one file.", name)
			}
			// The service's image intake streams it into blob storage as
			// it arrives, never buffered whole, and refuses what is over
			// the limit or not one whole JPEG or PNG before anything is
			// charged.
			in, digest, err := a.svc.TakeImage(r.Context(), p, id, role, p.FileName(), a.imageLimit())
			if err != nil {
				return up, err
			}
			up.inputs = append(up.inputs, in)
			up.digests[role] = digest
			continue
		}
		if p.FileName() != "" {
			if len(files) == 0 {
				return up, badRequest(name, "Unexpected file field %q; this endpoint takes no file.", name)
			}
			return up, badRequest(name, "Unexpected file field %q; this endpoint takes the file fields %s.", name, strings.Join(slices.Sorted(maps.Keys(files)), ", "))
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

// imageLimit is what bounds each image of a start's form.
func (a *API) imageLimit() service.ImageLimit {
	return service.ImageLimit{Bytes: a.cfg.MaxImageBytes, Note: a.cfg.ImageLimitMessage}
}

// bodyError answers a failure to read the request body: past the body's
// bound it is a 413, anything else a malformed or interrupted body.
func (a *API) bodyError(err error, field string) error {
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return a.imageLimit().TooLarge(field)
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

// readJSONBody reads a request's JSON body: a JSON Content-Type and at
// most max bytes, each refused with its own message.
func readJSONBody(w http.ResponseWriter, r *http.Request, max int64) ([]byte, error) {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/json" {
		return nil, badRequest("", "Content-Type must be application/json.")
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, max))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return nil, badRequest("", "The request body is larger than %d bytes.", max)
		}
		return nil, badRequest("", "The request body could not be read.")
	}
	return body, nil
}

// decodeObject reads the JSON body of a request other than a start into v
// by the one strict decoder (strictjson), as a start's: a JSON
// Content-Type, at most max bytes, one object and nothing after it, each
// key exactly one of v's fields and given once, and no null. shape is
// the message of a body that is not such an object.
func decodeObject(w http.ResponseWriter, r *http.Request, max int64, v any, shape string) error {
	body, err := readJSONBody(w, r, max)
	if err != nil {
		return err
	}
	if err := strictjson.Unmarshal(body, v); err != nil {
		return params.JSONError(err, shape, shape)
	}
	return nil
}
