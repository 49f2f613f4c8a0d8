package httpapi

import (
	"mime"
	"net/http"

	"github.com/genvideo/gen/shared/catalog"
	"github.com/genvideo/gen/shared/params"
	"github.com/genvideo/gen/shared/service"
	"github.com/genvideo/gen/shared/task"
	"github.com/genvideo/gen/shared/wire"
)

// Reference images (issue 37, infra/docs/contract.md): a text-to-video
// start brings up to three, as upload ids in its JSON body
// (referenceImages) or as files of a multipart form, each repeating the
// file field referenceImages. They are checked as every start's images
// are (the image intake, 20 MiB), each kept under its own role,
// task.ReferenceRole(i), in the order given.

// isMultipart reports whether r's body is a multipart form.
func isMultipart(r *http.Request) bool {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return err == nil && mt == "multipart/form-data"
}

// imageCount is how many images a form with these file fields may carry.
func imageCount(files map[string]string) int {
	n := len(files)
	for _, role := range files {
		if role == task.RoleReferences {
			n += params.MaxReferenceImages - 1
		}
	}
	return n
}

// nextReference is the role of the next reference image of the form, ""
// when it has all it may.
func (u form) nextReference() string {
	for i := range params.MaxReferenceImages {
		if _, ok := u.input(task.ReferenceRole(i)); !ok {
			return task.ReferenceRole(i)
		}
	}
	return ""
}

// referenceUploads copies the direct uploads a JSON start names as its
// reference images into the task's inputs, in their order, with the
// digests of their bytes by role. On error nothing copied is left.
func (a *API) referenceUploads(r *http.Request, c *service.Caller, taskID string, ids []string) ([]task.Input, map[string]string, error) {
	var inputs []task.Input
	digests := map[string]string{}
	for i, id := range ids {
		role := task.ReferenceRole(i)
		in, digest, err := a.svc.ResolveUpload(r.Context(), *c, task.RoleReferences, id, role, taskID)
		if err != nil {
			a.deleteInputs(r.Context(), inputs)
			return nil, nil, err
		}
		inputs = append(inputs, in)
		digests[role] = digest
	}
	return inputs, digests, nil
}

// readReferenceForm reads a multipart text-to-video start: its reference
// images as files (the file field referenceImages, up to three times)
// and its parameters as text fields.
func (a *API) readReferenceForm(w http.ResponseWriter, r *http.Request, c *service.Caller) (service.StartRequest, error) {
	key, err := idempotencyKey(r)
	if err != nil {
		return service.StartRequest{}, err
	}
	id := task.NewID(c.Now)
	up, err := a.readFiles(w, r, id, map[string]string{task.RoleReferences: task.RoleReferences})
	if err != nil {
		return service.StartRequest{}, err
	}
	handedOver := false
	defer func() {
		if !handedOver {
			a.deleteInputs(r.Context(), up.inputs)
		}
	}()
	req, err := params.ParseForm(catalog.TextToVideo, up.fields)
	if err != nil {
		return service.StartRequest{}, err
	}
	if err := params.TakeReferenceFiles(&req, len(up.inputs)); err != nil {
		return service.StartRequest{}, err
	}
	var idem *service.Idempotency
	if key != "" {
		fields := make(map[string]string, len(up.fields))
		for name, vals := range up.fields {
			fields[name] = vals[0]
		}
		rh := newRequestHash(catalog.TextToVideo)
		rh.fields(fields)
		rh.images(up.inputs, up.digests)
		idem = &service.Idempotency{Key: key, RequestHash: rh.sum()}
	}
	handedOver = true
	return service.StartRequest{TaskID: id, Request: req, Inputs: up.inputs, Idempotency: idem}, nil
}

// referenceInfo describes t's reference images, in their order; nil
// when it has none.
func referenceInfo(t task.Task) []wire.ImageInfo {
	var out []wire.ImageInfo
	for i := range params.MaxReferenceImages {
		if in, ok := t.Input(task.ReferenceRole(i)); ok {
			out = append(out, wire.ImageInfo{OriginalName: in.OriginalName, Size: in.Size, MimeType: in.MimeType})
		}
	}
	return out
}
