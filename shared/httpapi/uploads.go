package httpapi

import (
	"net/http"

	"github.com/genvideo/gen/shared/service"
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
func (a *API) useUploads(r *http.Request, c *service.Caller, taskID string, up *form, roles []string) error {
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
