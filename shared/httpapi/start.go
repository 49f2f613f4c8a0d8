package httpapi

import (
	"fmt"
	"net/http"
	"time"

	"github.com/genvideo/gen/shared/catalog"
	"github.com/genvideo/gen/shared/params"
	"github.com/genvideo/gen/shared/service"
	"github.com/genvideo/gen/shared/task"
	"github.com/genvideo/gen/shared/wire"
)

// maxJSONBody bounds a text-to-video body: the longest valid request (a
// 2,000-character prompt and a 1,000-character negative prompt, up to 4
// bytes each) is far below it.
const maxJSONBody = 64 << 10

func (a *API) textToVideo(w http.ResponseWriter, r *http.Request, c *service.Caller) error {
	in, err := a.readTextStart(w, r, c)
	if err != nil {
		return err
	}
	return a.start(w, r, c, in, a.accepted)
}

func (a *API) imageToVideo(w http.ResponseWriter, r *http.Request, c *service.Caller) error {
	in, err := a.readImageStart(w, r, c, catalog.ImageToVideo, []string{task.RoleImage})
	if err != nil {
		return err
	}
	return a.start(w, r, c, in, a.accepted)
}

func (a *API) firstLastFrame(w http.ResponseWriter, r *http.Request, c *service.Caller) error {
	in, err := a.readImageStart(w, r, c, catalog.FirstLastFrame, []string{task.RoleFirstFrame, task.RoleLastFrame})
	if err != nil {
		return err
	}
	return a.start(w, r, c, in, a.accepted)
}

// readStart reads and validates the body of a start of kind, as its
// endpoint does: the start endpoints and the quote share it.
func (a *API) readStart(w http.ResponseWriter, r *http.Request, c *service.Caller, kind string) (service.StartRequest, error) {
	if kind == catalog.TextToVideo {
		return a.readTextStart(w, r, c)
	}
	return a.readImageStart(w, r, c, kind, imageRoles[kind])
}

// readTextStart reads a text-to-video body: JSON, or a form with
// reference images as files (references.go).
func (a *API) readTextStart(w http.ResponseWriter, r *http.Request, c *service.Caller) (service.StartRequest, error) {
	if isMultipart(r) {
		return a.readReferenceForm(w, r, c)
	}
	key, err := idempotencyKey(r)
	if err != nil {
		return service.StartRequest{}, err
	}
	body, err := readJSONBody(w, r, maxJSONBody)
	if err != nil {
		return service.StartRequest{}, err
	}
	req, err := params.ParseJSON(catalog.TextToVideo, body)
	if err != nil {
		return service.StartRequest{}, err
	}
	var rh *requestHash
	if key != "" {
		fields, err := canonicalJSON(body)
		if err != nil {
			return service.StartRequest{}, err
		}
		rh = newRequestHash(catalog.TextToVideo)
		rh.fields(fields)
	}
	id := task.NewID(c.Now)
	inputs, digests, err := a.referenceUploads(r, c, id, req.ReferenceUploads)
	if err != nil {
		return service.StartRequest{}, err
	}
	var idem *service.Idempotency
	if rh != nil {
		rh.images(inputs, digests)
		idem = &service.Idempotency{Key: key, RequestHash: rh.sum()}
	}
	return service.StartRequest{TaskID: id, Request: req, Inputs: inputs, Idempotency: idem}, nil
}

// readImageStart reads a multipart start of kind, whose file fields are
// roles (each start names its own, so that a Lambda serving one links no
// other's): the images are streamed
// into blob storage as they arrive, then the form is validated. Any
// rejection deletes what was uploaded; otherwise the inputs are the
// caller's to hand over or delete.
func (a *API) readImageStart(w http.ResponseWriter, r *http.Request, c *service.Caller, kind string, roles []string) (service.StartRequest, error) {
	key, err := idempotencyKey(r)
	if err != nil {
		return service.StartRequest{}, err
	}
	// The id comes first so that the uploads' blob keys are known.
	id := task.NewID(c.Now)
	up, err := a.readForm(w, r, id, roles)
	if err != nil {
		return service.StartRequest{}, err
	}
	handedOver := false
	defer func() {
		if !handedOver {
			a.deleteInputs(r.Context(), up.inputs)
		}
	}()
	if err := a.useUploads(r, c, id, &up, roles); err != nil {
		return service.StartRequest{}, err
	}
	req, err := params.ParseForm(kind, up.fields)
	if err != nil {
		return service.StartRequest{}, err
	}
	for _, role := range roles {
		if _, ok := up.input(role); !ok {
			return service.StartRequest{}, &Error{Status: http.StatusBadRequest, Code: wire.CodeMissingImage, Field: role,
				Message: fmt.Sprintf("The file field %q is required (a JPEG or PNG image), or the field %q naming a direct upload (POST /api/gen/uploads).", role, uploadIDField(role))}
		}
	}
	var idem *service.Idempotency
	if key != "" {
		// ParseForm accepted the form: each field has one value.
		fields := make(map[string]string, len(up.fields))
		for name, vals := range up.fields {
			fields[name] = vals[0]
		}
		rh := newRequestHash(kind)
		rh.fields(fields)
		rh.images(up.inputs, up.digests)
		idem = &service.Idempotency{Key: key, RequestHash: rh.sum()}
	}
	handedOver = true
	return service.StartRequest{TaskID: id, Request: req, Inputs: up.inputs, Idempotency: idem}, nil
}

// start hands a validated start to the service, sets the headers every
// start's answer carries, and has answer write the body: the contract's
// 202 (accepted) or OpenAI's video object (openaiStarted). It owns req's
// inputs: the service deletes them unless the task is created.
func (a *API) start(w http.ResponseWriter, r *http.Request, c *service.Caller, req service.StartRequest,
	answer func(http.ResponseWriter, service.Started)) error {
	st, err := a.svc.Start(r.Context(), *c, req)
	if err != nil {
		return err
	}
	answerStarted(w, st, answer)
	return nil
}

// answerStarted answers st, a task started (or a replay of its start):
// the headers every start's answer carries, then answer's body.
func answerStarted(w http.ResponseWriter, st service.Started, answer func(http.ResponseWriter, service.Started)) {
	noteTask(w, st.Task.ID)
	if st.Replayed {
		w.Header().Set(headerReplayed, "true")
	}
	spendHeaders(w, st.Spend)
	answer(w, st)
}

// accepted writes the 202 of a start that created t and left balance: the
// answer of the start, and of every replay of it.
func (a *API) accepted(w http.ResponseWriter, st service.Started) {
	t, balance := st.Task, st.Balance
	lo, hi := a.svc.Estimate(t.Params)
	resp := wire.Started{
		Success:           true,
		Message:           "Video generation started.",
		TaskID:            t.ID,
		Status:            wire.StatusPending,
		EstimatedWaitTime: fmt.Sprintf("%d-%d seconds", int(lo/time.Second), int((hi+time.Second-1)/time.Second)),
		CreditsUsed:       t.CreditsCost,
		RemainingCredits:  balance,
		StatusURL:         wire.StatusPath(t.ID),
		DownloadURL:       wire.DownloadPath(t.ID),
	}
	for _, in := range t.Inputs {
		info := &wire.ImageInfo{OriginalName: in.OriginalName, Size: in.Size, MimeType: in.MimeType}
		switch in.Role {
		case task.RoleImage:
			resp.ImageInfo = info
		case task.RoleFirstFrame:
			resp.FirstFrame = info
		case task.RoleLastFrame:
			resp.LastFrame = info
		case task.RoleVideo:
			resp.ExtendsTaskID = in.Task
		}
	}
	resp.ReferenceImages = referenceInfo(t)
	w.Header().Set("Location", resp.StatusURL)
	writeJSON(w, http.StatusAccepted, resp)
}
