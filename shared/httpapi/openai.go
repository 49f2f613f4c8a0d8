package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"strings"

	"github.com/genvideo/gen/shared/catalog"
	"github.com/genvideo/gen/shared/openaiapi"
	"github.com/genvideo/gen/shared/params"
	"github.com/genvideo/gen/shared/service"
	"github.com/genvideo/gen/shared/store"
	"github.com/genvideo/gen/shared/strictjson"
	"github.com/genvideo/gen/shared/task"
	"github.com/genvideo/gen/shared/wire"
)

// The OpenAI-compatible videos API (issue 23), beside the contract under
// openaiapi.Base: the same service, keys (as Authorization: Bearer),
// credits, limits, idempotency, webhooks and history, in the shapes the
// OpenAI SDKs read (shared/openaiapi). A task started here is a task of
// the contract and the other way round; its id is the video's id.
var (
	OpenAIVideos = Endpoint{methods: []method{
		{http.MethodPost, openaiapi.Base + "/videos", (*API).openaiCreate},
		{http.MethodGet, openaiapi.Base + "/videos", (*API).openaiList},
	}, dialect: &openaiDialect}
	OpenAIVideo = Endpoint{methods: []method{
		{http.MethodGet, openaiapi.Base + "/videos/{taskId}", (*API).openaiRetrieve},
		{http.MethodDelete, openaiapi.Base + "/videos/{taskId}", (*API).openaiDelete},
	}, dialect: &openaiDialect}
	OpenAIContent = Endpoint{methods: []method{{http.MethodGet, openaiapi.Base + "/videos/{taskId}/content", (*API).openaiContent}},
		dialect: &openaiDialect}
	// OpenAIExtensions is OpenAI's videos.extend (issue 37): the
	// contract's extension (Extend) of a completed video, named by
	// video[id].
	OpenAIExtensions = Endpoint{methods: []method{{http.MethodPost, openaiapi.Base + "/videos/extensions", (*API).openaiExtend}},
		dialect: &openaiDialect}
)

// openaiDialect: the key as a bearer token (what the OpenAI SDKs send),
// OpenAI's error envelope.
var openaiDialect = dialect{authenticate: (*API).authenticateBearer, writeError: writeOpenAIError}

// writeOpenAIError writes e in OpenAI's error envelope: the status and
// headers WriteError would send, the body that the OpenAI SDKs read.
func writeOpenAIError(w http.ResponseWriter, e *Error) {
	setAllow(w, e)
	if e.Status == http.StatusTooManyRequests {
		secs := 1
		if e.RateLimit != nil {
			secs = e.RateLimit.RetryAfter
		}
		setRetryAfter(w, secs)
	}
	writeJSON(w, e.Status, openaiapi.NewError(e.Status, e.Code, e.Message, e.Field))
}

// openaiNotFound answers a path under openaiapi.Base that is no route of
// it, in OpenAI's shape.
func openaiNotFound(w http.ResponseWriter, r *http.Request) {
	writeOpenAIError(w, &Error{Status: http.StatusNotFound, Code: wire.CodeNotFound,
		Message: "no such endpoint: " + r.Method + " " + r.URL.Path})
}

// openaiEndpoint names the requests of the OpenAI shape in idempotency
// hashes: the same Idempotency-Key on a contract start is another
// request.
const openaiEndpoint = "openai/videos"

// openaiCreate starts a generation: text-to-video, or image-to-video
// when a multipart body carries input_reference. The body is JSON or
// multipart (what the SDKs send); its fields are translated into the
// contract's (openaiapi.ContractFields) and validated by the one
// validator, before anything is charged.
func (a *API) openaiCreate(w http.ResponseWriter, r *http.Request, c *service.Caller) error {
	key, err := idempotencyKey(r)
	if err != nil {
		return err
	}
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	id := task.NewID(c.Now)
	var (
		fields  map[string]string
		inputs  []task.Input
		digests map[string]string
	)
	if mt == "multipart/form-data" {
		up, err := a.readFiles(w, r, id, map[string]string{openaiapi.FieldInputReference: task.RoleImage})
		if err != nil {
			return err
		}
		inputs, digests = up.inputs, up.digests
		handedOver := false
		defer func() {
			if !handedOver {
				a.deleteInputs(r.Context(), inputs)
			}
		}()
		if fields, err = onceEach(up.fields); err != nil {
			return err
		}
		req, idem, err := openaiRequest(fields, inputs, digests, key)
		if err != nil {
			return err
		}
		handedOver = true
		return a.start(w, r, c, service.StartRequest{TaskID: id, Request: req, Inputs: inputs, Idempotency: idem}, openaiStarted)
	}
	body, err := readJSONBody(w, r, maxJSONBody)
	if err != nil {
		return err
	}
	if fields, err = openaiJSONFields(body); err != nil {
		return err
	}
	req, idem, err := openaiRequest(fields, nil, nil, key)
	if err != nil {
		return err
	}
	return a.start(w, r, c, service.StartRequest{TaskID: id, Request: req, Idempotency: idem}, openaiStarted)
}

// onceEach is a form's text fields, each given once.
func onceEach(form map[string][]string) (map[string]string, error) {
	fields := make(map[string]string, len(form))
	for name, vals := range form {
		if len(vals) != 1 {
			return nil, badRequest(name, "The field %q is given %d times; send it once.", name, len(vals))
		}
		fields[name] = vals[0]
	}
	return fields, nil
}

// openaiJSONFields reads a JSON body as form fields: strings as they
// are, numbers (seconds: 8) as their text, and an extension's video
// object as the SDKs encode it in a form, a field per member named
// video[member] ({"video": {"id": ...}} is video[id]); any other object
// is refused naming its own member, as the client wrote it. input_reference
// as JSON (an image_url or a file_id) is not taken: the image is a file.
func openaiJSONFields(body []byte) (map[string]string, error) {
	var raw map[string]json.RawMessage
	if err := strictjson.Unmarshal(body, &raw); err != nil {
		const shape = "The request body must be a JSON object, or multipart/form-data."
		return nil, params.JSONError(err, shape, shape)
	}
	fields := make(map[string]string, len(raw))
	for name, v := range raw {
		if name == openaiapi.FieldInputReference {
			return nil, badRequest(name, "input_reference must be an image file in a multipart/form-data body; image_url and file_id are not supported.")
		}
		var s string
		var n json.Number
		var obj map[string]string
		switch {
		case string(v) == "null":
			continue
		case json.Unmarshal(v, &s) == nil:
			fields[name] = s
		case json.Unmarshal(v, &n) == nil:
			fields[name] = n.String()
		case name == openaiapi.FieldVideo && json.Unmarshal(v, &obj) == nil && len(obj) > 0:
			for member, s := range obj {
				fields[name+"["+member+"]"] = s
			}
		default:
			return nil, badRequest(name, "The field %q must be a string.", name)
		}
	}
	return fields, nil
}

// openaiRequest validates a create's fields (and image) as a contract
// start, and hashes it for its Idempotency-Key.
func openaiRequest(fields map[string]string, inputs []task.Input, digests map[string]string, key string) (params.Request, *service.Idempotency, error) {
	form, err := openaiapi.ContractFields(fields)
	if err != nil {
		return params.Request{}, nil, err
	}
	kind := catalog.TextToVideo
	if len(inputs) > 0 {
		kind = catalog.ImageToVideo
	}
	req, err := params.ParseForm(kind, form)
	if err != nil {
		return params.Request{}, nil, err
	}
	var idem *service.Idempotency
	if key != "" {
		rh := newRequestHash(openaiEndpoint)
		rh.fields(fields)
		rh.images(inputs, digests)
		idem = &service.Idempotency{Key: key, RequestHash: rh.sum()}
	}
	return req, idem, nil
}

// openaiExtendEndpoint names an extension in idempotency hashes.
const openaiExtendEndpoint = "openai/videos/extensions"

// openaiExtend is OpenAI's videos.extend: the contract's extension
// (extend.go) of the caller's completed video that video[id] names, from
// a multipart body (what both SDKs send) or JSON. Its fields are
// translated (openaiapi.ExtensionFields) and validated by the one
// validator for the video's model, and it is started, charged and
// answered by the extension's one start, as a video object.
func (a *API) openaiExtend(w http.ResponseWriter, r *http.Request, c *service.Caller) error {
	key, err := idempotencyKey(r)
	if err != nil {
		return err
	}
	var fields map[string]string
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt == "multipart/form-data" {
		up, err := a.readFiles(w, r, "", nil)
		if err != nil {
			var he *Error
			if errors.As(err, &he) && he.Field == openaiapi.FieldVideo {
				return badRequest(openaiapi.FieldVideo, "video must name a completed video of yours, as video[id]; an uploaded video is not extended.")
			}
			return err
		}
		if fields, err = onceEach(up.fields); err != nil {
			return err
		}
	} else {
		body, err := readJSONBody(w, r, maxJSONBody)
		if err != nil {
			return err
		}
		if fields, err = openaiJSONFields(body); err != nil {
			return err
		}
	}
	form, videoID, err := openaiapi.ExtensionFields(fields)
	if err != nil {
		return err
	}
	src, err := a.svc.ExtensionSource(r.Context(), *c, videoID)
	if err != nil {
		return extensionError(err)
	}
	preq, err := params.ParseExtensionForm(src.Model, form)
	if err != nil {
		return err
	}
	var idem *service.Idempotency
	if key != "" {
		rh := newRequestHash(openaiExtendEndpoint)
		rh.fields(fields)
		idem = &service.Idempotency{Key: key, RequestHash: rh.sum()}
	}
	req := service.StartRequest{TaskID: task.NewID(c.Now), Request: service.ExtensionRequest(src, preq, c.Now), Idempotency: idem}
	return a.startExtension(w, r, c, src, req, openaiStarted)
}

// openaiStarted answers a start with the new video object (200, as
// OpenAI does).
func openaiStarted(w http.ResponseWriter, st service.Started) {
	writeJSON(w, http.StatusOK, openaiVideo(st.Task))
}

// openaiVideo is t as OpenAI's video object.
func openaiVideo(t task.Task) openaiapi.Video {
	return openaiapi.FromTask(t, t.CompletedAt.Add(service.URLLifetime).Unix())
}

// openaiTaskID is the video id the path names: the segment after
// "videos", also when the path carries a stage's prefix (a Lambda's).
func openaiTaskID(r *http.Request) string {
	if id := r.PathValue("taskId"); id != "" {
		return id
	}
	segs := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	for i := len(segs) - 2; i >= 0; i-- {
		if segs[i] == "videos" {
			return segs[i+1]
		}
	}
	return ""
}

func (a *API) openaiRetrieve(w http.ResponseWriter, r *http.Request, c *service.Caller) error {
	t, err := a.svc.Task(r.Context(), *c, openaiTaskID(r))
	if err != nil {
		return err
	}
	if !t.Status.Terminal() {
		w.Header().Set("Retry-After", seconds(a.svc.PollHint(t)))
	}
	writeJSON(w, http.StatusOK, openaiVideo(t))
	return nil
}

func (a *API) openaiDelete(w http.ResponseWriter, r *http.Request, c *service.Caller) error {
	id := openaiTaskID(r)
	if err := a.svc.Delete(r.Context(), *c, id); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, openaiapi.NewDeleted(id))
	return nil
}

// openaiContent redirects (302) to the signed link of the video, or with
// variant=thumbnail of its poster frame (a JPEG, made with every video),
// which the SDKs follow; the link works until the video's expires_at.
// gen makes no sprite sheet: variant=spritesheet is a 400.
func (a *API) openaiContent(w http.ResponseWriter, r *http.Request, c *service.Caller) error {
	variant := openaiapi.VariantVideo
	if vs, ok := r.URL.Query()["variant"]; ok {
		if len(vs) > 1 || (vs[0] != openaiapi.VariantVideo && vs[0] != openaiapi.VariantThumbnail) {
			return &Error{Status: http.StatusBadRequest, Code: wire.CodeValidation, Field: "variant", Value: vs[0],
				Message: fmt.Sprintf("variant %q is not available: this service makes the video and its poster frame (no spritesheet); use variant=video, variant=thumbnail, or leave it out.", vs[0])}
		}
		variant = vs[0]
	}
	t, err := a.svc.Task(r.Context(), *c, openaiTaskID(r))
	if err != nil {
		return err
	}
	videos, err := a.svc.Videos(r.Context(), t)
	if err != nil {
		return err
	}
	if len(videos) == 0 {
		return &service.NotReadyError{TaskID: t.ID, Status: t.Status}
	}
	link := videos[0].URL
	if variant == openaiapi.VariantThumbnail {
		// A video whose poster could not be made, or stored before
		// posters were, has none.
		if link = videos[0].PosterURL; link == "" {
			return &Error{Status: http.StatusNotFound, Code: wire.CodeNotFound,
				Message: "This video has no thumbnail: its poster frame could not be made, or it was stored before gen made them. variant=video still serves it."}
		}
	}
	h := w.Header()
	h.Set("Location", link)
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusFound)
	return nil
}

// openaiList is a page of the caller's videos: limit 1 to 100 (default
// 20), order desc (newest first, the default, as OpenAI's) or asc (oldest
// first), after a video id (the SDK's last_id) in that order.
func (a *API) openaiList(w http.ResponseWriter, r *http.Request, c *service.Caller) error {
	q := r.URL.Query()
	limit, err := intParam(q, "limit", defaultHistoryLimit, 1, maxHistoryLimit)
	if err != nil {
		return err
	}
	order := store.NewestFirst
	if vs, ok := q["order"]; ok {
		switch {
		case len(vs) == 1 && vs[0] == "desc":
		case len(vs) == 1 && vs[0] == "asc":
			order = store.OldestFirst
		default:
			return &Error{Status: http.StatusBadRequest, Code: wire.CodeValidation, Field: "order", Value: vs[0],
				Message: "order must be desc (newest first) or asc (oldest first)."}
		}
	}
	var after store.TaskCursor
	if vs, ok := q["after"]; ok {
		t, err := a.svc.Task(r.Context(), *c, vs[0])
		if len(vs) > 1 || errors.Is(err, service.ErrTaskNotFound) {
			return &Error{Status: http.StatusBadRequest, Code: wire.CodeValidation, Field: "after", Value: vs[0],
				Message: "after must be the id of one of your videos (a page's last_id)."}
		}
		if err != nil {
			return err
		}
		after = store.CursorOf(t)
	}
	tasks, _, err := a.svc.History(r.Context(), *c, store.TaskQuery{Order: order, After: after, Limit: limit + 1})
	if err != nil {
		return err
	}
	more := len(tasks) > limit
	tasks = tasks[:min(len(tasks), limit)]
	videos := make([]openaiapi.Video, 0, len(tasks))
	for _, t := range tasks {
		videos = append(videos, openaiVideo(t))
	}
	writeJSON(w, http.StatusOK, openaiapi.NewList(videos, more))
	return nil
}
