package httpapi

import (
	"errors"
	"net/http"

	"github.com/genvideo/gen/shared/params"
	"github.com/genvideo/gen/shared/service"
	"github.com/genvideo/gen/shared/task"
	"github.com/genvideo/gen/shared/wire"
)

// Extend is POST /api/gen/extend/{taskId}, an extension of the contract
// (issue 37, infra/docs/contract.md): a start that continues the video
// of one of the caller's completed tasks by about 7 seconds. Its JSON
// body is a text-to-video start's without model, aspectRatio,
// sampleCount or referenceImages (the task's model and aspect ratio,
// one video); it creates a task of type video-extension, charged,
// refunded and listed as any other. Its quote is POST
// /api/gen/quote/extend?taskId={taskId} with the same body.
var Extend = Endpoint{methods: []method{{http.MethodPost, "/api/gen/extend/{taskId}", (*API).extend}}}

// extendEndpoint is the quote's name of an extension.
const extendEndpoint = "extend"

func (a *API) extend(w http.ResponseWriter, r *http.Request, c *service.Caller) error {
	req, src, err := a.readExtension(w, r, c, r.PathValue("taskId"))
	if err != nil {
		return extensionError(err)
	}
	return a.startExtension(w, r, c, src, req, a.accepted)
}

// startExtension starts req, the extension of src, and answers it with
// answer: the one start of an extension, for the contract's route and
// the OpenAI-compatible one.
func (a *API) startExtension(w http.ResponseWriter, r *http.Request, c *service.Caller, src task.Task, req service.StartRequest,
	answer func(http.ResponseWriter, service.Started)) error {
	st, err := a.svc.Extend(r.Context(), *c, src, req)
	if err != nil {
		return extensionError(err)
	}
	answerStarted(w, st, answer)
	return nil
}

// readExtension reads and validates the extension of the caller's task
// id, as the start and its quote do: the body, then the task (another
// account's is a 404; a failed, unfinished or deleted one a 400 naming
// taskId), then the body's fields for the task's model.
func (a *API) readExtension(w http.ResponseWriter, r *http.Request, c *service.Caller, id string) (service.StartRequest, task.Task, error) {
	key, err := idempotencyKey(r)
	if err != nil {
		return service.StartRequest{}, task.Task{}, err
	}
	body, err := readJSONBody(w, r, maxJSONBody)
	if err != nil {
		return service.StartRequest{}, task.Task{}, err
	}
	if err := params.CheckExtensionJSON(body); err != nil {
		return service.StartRequest{}, task.Task{}, err
	}
	src, err := a.svc.ExtensionSource(r.Context(), *c, id)
	if err != nil {
		return service.StartRequest{}, task.Task{}, err
	}
	req, err := params.ParseExtensionJSON(src.Model, body)
	if err != nil {
		return service.StartRequest{}, task.Task{}, err
	}
	var idem *service.Idempotency
	if key != "" {
		fields, err := canonicalJSON(body)
		if err != nil {
			return service.StartRequest{}, task.Task{}, err
		}
		rh := newRequestHash(extendEndpoint + "/" + id)
		rh.fields(fields)
		idem = &service.Idempotency{Key: key, RequestHash: rh.sum()}
	}
	return service.StartRequest{TaskID: task.NewID(c.Now), Request: service.ExtensionRequest(src, req, c.Now), Idempotency: idem}, src, nil
}

// quoteExtension answers what the extension of the task named by the
// query's taskId would charge, reading its body as the start does.
func (a *API) quoteExtension(w http.ResponseWriter, r *http.Request, c *service.Caller) error {
	req, _, err := a.readExtension(w, r, c, r.URL.Query().Get("taskId"))
	if err != nil {
		return extensionError(err)
	}
	q, err := a.svc.Quote(r.Context(), *c, req)
	if err != nil {
		return err
	}
	a.writeQuote(w, c, extendEndpoint, q)
	return nil
}

// extensionError is err as the contract answers it: a refusal for the
// source task is a 400 naming taskId (in OpenAI's shape, video:
// openaiapi.Param).
func extensionError(err error) error {
	var e *service.ExtensionError
	if errors.As(err, &e) {
		return &Error{Status: http.StatusBadRequest, Code: wire.CodeValidation, Field: "taskId", Value: e.TaskID, Message: e.Message}
	}
	return err
}
