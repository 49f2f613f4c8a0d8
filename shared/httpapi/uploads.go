package httpapi

import (
	"errors"
	"io"
	"mime"
	"net/http"

	"github.com/genvideo/gen/shared/params"
	"github.com/genvideo/gen/shared/service"
	"github.com/genvideo/gen/shared/strictjson"
	"github.com/genvideo/gen/shared/wire"
)

// uploadFileField is the form field of the file in a direct upload.
const uploadFileField = "file"

// uploadIDField is the form field of a start that names a direct upload
// instead of sending the image of role: imageUploadId, firstFrameUploadId,
// lastFrameUploadId.
func uploadIDField(role string) string { return role + "UploadId" }

// createUpload serves POST /api/gen/uploads: {"contentType": "image/png"}
// gets a signed form for one image of that type, up to the contract's 20
// MiB, uploaded straight to storage; a start then names it by its
// uploadId instead of carrying the file.
func (a *API) createUpload(w http.ResponseWriter, r *http.Request, c *service.Caller) error {
	var req wire.UploadRequest
	if err := decodeObject(w, r, 4<<10, &req, "The body must be a JSON object with contentType (image/jpeg or image/png)."); err != nil {
		return err
	}
	up, err := a.svc.CreateUpload(r.Context(), *c, req.ContentType)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, wire.Upload{
		Success: true, UploadID: up.ID, UploadURL: up.Signed.URL, Method: http.MethodPost,
		Fields: up.Signed.Fields, FileField: uploadFileField, ContentType: up.ContentType,
		MaxBytes: up.MaxBytes, ExpiresAt: wire.TimeOf(up.ExpiresAt),
	})
	return nil
}

// useUploads moves the upload ids of a start's form into its inputs: each
// role without a file may name a direct upload instead. The inputs are
// the start's from then on (a refused start deletes them).
func (a *API) useUploads(r *http.Request, c *service.Caller, taskID string, up *upload, roles []string) error {
	for _, role := range roles {
		field := uploadIDField(role)
		vals, ok := up.fields[field]
		if !ok {
			continue
		}
		delete(up.fields, field)
		if len(vals) != 1 {
			return badRequest(field, "The field %q is given more than once.", field)
		}
		if _, dup := up.input(role); dup {
			return badRequest(field, "Send either the file %q or the field %q, not both.", role, field)
		}
		in, digest, err := a.svc.ResolveUpload(r.Context(), *c, field, vals[0], role, taskID)
		if err != nil {
			return err
		}
		up.inputs = append(up.inputs, in)
		up.digests[role] = digest
	}
	return nil
}

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
