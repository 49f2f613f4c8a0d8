package httpapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"time"

	"github.com/genvideo/gen/shared/catalog"
	"github.com/genvideo/gen/shared/params"
	"github.com/genvideo/gen/shared/ratelimit"
	"github.com/genvideo/gen/shared/store"
	"github.com/genvideo/gen/shared/task"
)

// maxJSONBody bounds a text-to-video body: the longest valid request (a
// 2,000-character prompt and a 1,000-character negative prompt, up to 4
// bytes each) is far below it.
const maxJSONBody = 64 << 10

// startFailure is what a task records when its workflow could not start.
var startFailure = task.Failure{Code: task.FailInternal, Message: "the generation could not be started"}

// startResponse is the 202 of every start endpoint. image-to-video adds
// imageInfo; first-last-frame adds firstFrame and lastFrame, each of
// imageInfo's shape, one per uploaded frame. The cost is creditsUsed in
// every start response (contract decisions, "Image inputs").
type startResponse struct {
	Success           bool        `json:"success"`
	Message           string      `json:"message"`
	TaskID            string      `json:"taskId"`
	Status            task.Status `json:"status"`
	EstimatedWaitTime string      `json:"estimatedWaitTime"`
	CreditsUsed       int         `json:"creditsUsed"`
	RemainingCredits  int64       `json:"remainingCredits"`
	StatusURL         string      `json:"statusUrl"`
	DownloadURL       string      `json:"downloadUrl"`
	ImageInfo         *imageInfo  `json:"imageInfo,omitempty"`
	FirstFrame        *imageInfo  `json:"firstFrame,omitempty"`
	LastFrame         *imageInfo  `json:"lastFrame,omitempty"`
}

// imageInfo describes an uploaded image: its name as the client sent it,
// its size in bytes and its type as detected from its bytes.
type imageInfo struct {
	OriginalName string `json:"originalName"`
	Size         int64  `json:"size"`
	MimeType     string `json:"mimeType"`
}

func (a *API) textToVideo(w http.ResponseWriter, r *http.Request, c *caller) error {
	key, err := idempotencyKey(r)
	if err != nil {
		return err
	}
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/json" {
		return badRequest("", "Content-Type must be application/json.")
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxJSONBody))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return badRequest("", "The request body is larger than %d bytes.", maxJSONBody)
		}
		return badRequest("", "The request body could not be read.")
	}
	req, err := params.ParseJSON(catalog.TextToVideo, body)
	if err != nil {
		return err
	}
	var idem *idempotency
	if key != "" {
		fields, err := canonicalJSON(body)
		if err != nil {
			return err
		}
		rh := newRequestHash(catalog.TextToVideo)
		rh.fields(fields)
		idem = &idempotency{key: key, hash: rh.sum()}
	}
	return a.start(w, r, c, task.NewID(c.now), req, nil, idem)
}

func (a *API) imageToVideo(w http.ResponseWriter, r *http.Request, c *caller) error {
	return a.startFromImages(w, r, c, catalog.ImageToVideo, []string{task.RoleImage})
}

func (a *API) firstLastFrame(w http.ResponseWriter, r *http.Request, c *caller) error {
	return a.startFromImages(w, r, c, catalog.FirstLastFrame, []string{task.RoleFirstFrame, task.RoleLastFrame})
}

// startFromImages serves a multipart start: the images are streamed into
// blob storage as they arrive, then the form is validated. Any rejection
// deletes what was uploaded.
func (a *API) startFromImages(w http.ResponseWriter, r *http.Request, c *caller, kind string, roles []string) error {
	key, err := idempotencyKey(r)
	if err != nil {
		return err
	}
	// The id comes first so that the uploads' blob keys are known.
	id := task.NewID(c.now)
	up, err := a.readUpload(w, r, id, roles)
	if err != nil {
		return err
	}
	handedOver := false
	defer func() {
		if !handedOver {
			a.deleteInputs(r.Context(), up.inputs)
		}
	}()
	req, err := params.ParseForm(kind, up.fields)
	if err != nil {
		return err
	}
	for _, role := range roles {
		if _, ok := up.input(role); !ok {
			return &Error{Status: http.StatusBadRequest, Code: CodeMissingImage, Field: role,
				Message: fmt.Sprintf("The file field %q is required (a JPEG or PNG image).", role)}
		}
	}
	var idem *idempotency
	if key != "" {
		// ParseForm accepted the form: each field has one value.
		fields := make(map[string]string, len(up.fields))
		for name, vals := range up.fields {
			fields[name] = vals[0]
		}
		rh := newRequestHash(kind)
		rh.fields(fields)
		rh.images(up.inputs, up.digests)
		idem = &idempotency{key: key, hash: rh.sum()}
	}
	handedOver = true
	return a.start(w, r, c, id, req, up.inputs, idem)
}

// start creates the task (charging for it and checking the start limits
// in one store transaction), starts its workflow and answers 202. It owns
// inputs: unless the task is created, they are deleted.
//
// With idem, a start the account already made under that key is answered
// instead: the same request gets the first start's 202 again (the task
// as it was created, the balance that start left), another request a 409.
// A first start whose workflow never ran answered 503 and was refunded;
// its retry creates a task afresh, taking the key over.
func (a *API) start(w http.ResponseWriter, r *http.Request, c *caller, id string, req params.Request, inputs []task.Input, idem *idempotency) error {
	stored := false
	defer func() {
		// Also on a panic: an uploaded image without a task is garbage.
		if !stored {
			a.deleteInputs(r.Context(), inputs)
		}
	}()
	created := c.now.UTC().Truncate(time.Millisecond)
	t := task.Task{
		ID:          id,
		AccountID:   c.key.AccountID,
		KeyName:     c.key.Name,
		Type:        req.Type,
		Model:       req.Model,
		Prompt:      req.Prompt,
		Params:      req.Params,
		Inputs:      inputs,
		CreditsCost: req.Cost(),
		Status:      task.Pending,
		CreatedAt:   created,
		Deadline:    created.Add(a.cfg.GenerationTimeout),
	}
	g := ratelimit.StartLimits(c.key.ID, c.limits, c.now)
	if idem != nil {
		g.Idempotency = &store.IdempotencyKey{Key: idem.key, RequestHash: idem.hash, ExpiresAt: created.Add(idempotencyTTL)}
	}
	var balance int64
	for {
		var err error
		balance, err = a.cfg.Store.CreateTask(r.Context(), t, g)
		var used *store.IdempotencyError
		if errors.As(err, &used) && idem != nil {
			// Nothing was created: this request's uploads are deleted
			// on return.
			if used.RequestHash != idem.hash {
				return idempotencyConflict(used.TaskID)
			}
			orig, origBalance, err := a.original(r.Context(), c, used.TaskID)
			if err != nil {
				return err
			}
			if !abandoned(orig) {
				w.Header().Set(headerReplayed, "true")
				a.accepted(w, orig, origBalance)
				return nil
			}
			if g.Idempotency.Replaces != "" {
				// A concurrent retry took the key over, and its start
				// failed too.
				return errAbandonedStart
			}
			g.Idempotency.Replaces = orig.ID
			continue
		}
		if errors.Is(err, store.ErrNotFound) {
			// The key's account is gone: our inconsistency, not the
			// client's 404.
			return fmt.Errorf("create task %s: account %s of key %s: %v", id, c.key.AccountID, c.key.ID, err)
		}
		if err != nil {
			a.undoCreate(r.Context(), t, err)
			return fmt.Errorf("create task %s: %w", id, err)
		}
		break
	}
	stored = true

	// The task is charged: from here on it must be started or refunded,
	// even if the client goes away.
	ctx := context.WithoutCancel(r.Context())
	if err := a.cfg.Starter.Start(ctx, t); err != nil {
		a.abandon(ctx, t)
		e := *errAbandonedStart
		e.cause = fmt.Errorf("start task %s: %w", id, err)
		return &e
	}
	a.accepted(w, t, balance)
	return nil
}

// accepted writes the 202 of a start that created t and left balance: the
// answer of the start, and of every replay of it.
func (a *API) accepted(w http.ResponseWriter, t task.Task, balance int64) {
	lo, hi := a.cfg.Estimate(t.Params)
	resp := startResponse{
		Success:           true,
		Message:           "Video generation started.",
		TaskID:            t.ID,
		Status:            task.Pending,
		EstimatedWaitTime: fmt.Sprintf("%d-%d seconds", int(lo/time.Second), int((hi+time.Second-1)/time.Second)),
		CreditsUsed:       t.CreditsCost,
		RemainingCredits:  balance,
		StatusURL:         statusPath(t.ID),
		DownloadURL:       downloadPath(t.ID),
	}
	for _, in := range t.Inputs {
		info := &imageInfo{OriginalName: in.OriginalName, Size: in.Size, MimeType: in.MimeType}
		switch in.Role {
		case task.RoleImage:
			resp.ImageInfo = info
		case task.RoleFirstFrame:
			resp.FirstFrame = info
		case task.RoleLastFrame:
			resp.LastFrame = info
		}
	}
	w.Header().Set("Location", resp.StatusURL)
	writeJSON(w, http.StatusAccepted, resp)
}

// abandon fails a task whose workflow did not start: the store refunds it
// in the same write (tried again briefly, refundUnstarted), and its inputs
// are deleted. The caller logs why the start failed.
func (a *API) abandon(ctx context.Context, t task.Task) {
	if err := a.refundUnstarted(ctx, t); err != nil {
		a.log.LogAttrs(ctx, slog.LevelError, "cannot fail and refund a task whose workflow did not start; it stays charged until the sweep runs it",
			slog.String("task", t.ID), slog.String("error", err.Error()))
	}
	a.deleteInputs(ctx, t.Inputs)
}

func statusPath(id string) string   { return "/api/gen/status/" + id }
func downloadPath(id string) string { return "/api/gen/download/" + id }
