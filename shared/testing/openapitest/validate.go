package openapitest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"github.com/genvideo/gen/shared/openapi"
)

var loaded = sync.OnceValues(func() (*openapi3.T, error) {
	// An event stream (GET /api/gen/status/{taskId}/events) is text, its
	// schema a string: kin-openapi has no decoder of its own for it.
	openapi3filter.RegisterBodyDecoder("text/event-stream",
		func(r io.Reader, _ http.Header, _ *openapi3.SchemaRef, _ openapi3filter.EncodingFn) (any, error) {
			b, err := io.ReadAll(r)
			return string(b), err
		})
	doc, err := openapi3.NewLoader().LoadFromData(openapi.JSON())
	if err != nil {
		return nil, fmt.Errorf("load openapi document: %w", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, fmt.Errorf("validate openapi document: %w", err)
	}
	return doc, nil
})

// Doc returns the document loaded by kin-openapi and validated (once, from
// openapi.JSON). It is shared: callers must not modify it.
func Doc() (*openapi3.T, error) { return loaded() }

// Validator checks requests and responses against the document.
type Validator struct {
	doc    *openapi3.T
	router routers.Router
	// notFound and notAllowed are the answers to requests the document
	// has no operation for: an unknown path and a listed path with
	// another method.
	notFound, notAllowed *openapi3.ResponseRef
	// openaiNotFound and openaiNotAllowed are the same answers under
	// /openai/v1, in OpenAI's error envelope.
	openaiNotFound, openaiNotAllowed *openapi3.ResponseRef
}

// NewValidator returns a Validator of the embedded document.
func NewValidator() (*Validator, error) {
	doc, err := Doc()
	if err != nil {
		return nil, err
	}
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		return nil, fmt.Errorf("route openapi document: %w", err)
	}
	v := &Validator{doc: doc, router: router,
		notFound: doc.Components.Responses["NotFound"], notAllowed: doc.Components.Responses["MethodNotAllowed"],
		openaiNotFound: doc.Components.Responses["OpenAINotFound"], openaiNotAllowed: doc.Components.Responses["OpenAIMethodNotAllowed"]}
	if v.notFound == nil || v.notAllowed == nil || v.openaiNotFound == nil || v.openaiNotAllowed == nil {
		return nil, errors.New("openapi document: components.responses lacks NotFound, MethodNotAllowed, OpenAINotFound or OpenAIMethodNotAllowed")
	}
	return v, nil
}

// Documents reports whether the document lists req's path (with any
// method).
func (v *Validator) Documents(req *http.Request) bool {
	_, _, err := v.router.FindRoute(withMethod(req, http.MethodGet))
	if err == nil || errors.Is(err, routers.ErrMethodNotAllowed) {
		return true
	}
	_, _, err = v.router.FindRoute(withMethod(req, http.MethodPost))
	return err == nil || errors.Is(err, routers.ErrMethodNotAllowed)
}

// ValidateResponse checks the response to req: its status must be one the
// operation documents (an undocumented status is an error), and its
// headers and body must match that response. A request for a path the
// document does not list must have been answered with the NotFound
// response; a listed path with a method it does not take, with
// MethodNotAllowed. A HEAD request is checked as the GET it stands for,
// by status only: it has no body.
func (v *Validator) ValidateResponse(ctx context.Context, req *http.Request, status int, header http.Header, body []byte) error {
	route, params, err := v.route(req)
	if err != nil {
		return err
	}
	if req.Method == http.MethodHead {
		if route.Operation.Responses.Status(status) == nil {
			return fmt.Errorf("HEAD %s: status %d is not documented for GET", req.URL.Path, status)
		}
		return nil
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route},
		Status:                 status,
		Header:                 header,
		Options:                &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	}
	in.SetBodyBytes(body)
	if err := openapi3filter.ValidateResponse(ctx, in); err != nil {
		return fmt.Errorf("%s %s -> %d: %w", req.Method, req.URL.Path, status, err)
	}
	return nil
}

// ValidateRequest checks req's parameters, the presence of the key where
// one is needed, and its body, which the caller passes (req.Body is not
// read). It is for clients, whose requests must all be valid.
func (v *Validator) ValidateRequest(ctx context.Context, req *http.Request, body []byte) error {
	route, params, err := v.router.FindRoute(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", req.Method, req.URL.Path, err)
	}
	r := req.Clone(ctx)
	r.Body = io.NopCloser(bytes.NewReader(body))
	in := &openapi3filter.RequestValidationInput{Request: r, PathParams: params, Route: route,
		Options: &openapi3filter.Options{MultiError: true, SkipSettingDefaults: true,
			AuthenticationFunc: func(_ context.Context, a *openapi3filter.AuthenticationInput) error {
				if a.SecurityScheme.Type == "apiKey" && a.RequestValidationInput.Request.Header.Get(a.SecurityScheme.Name) == "" {
					return fmt.Errorf("no %s header", a.SecurityScheme.Name)
				}
				return nil
			}}}
	if err := openapi3filter.ValidateRequest(ctx, in); err != nil {
		return fmt.Errorf("%s %s: %w", req.Method, req.URL.Path, err)
	}
	return nil
}

// route finds the operation req was for. Requests the document has no
// operation for get a stand-in operation whose one response is the
// contract's answer to them (404 or 405).
func (v *Validator) route(req *http.Request) (*routers.Route, map[string]string, error) {
	find := req
	if req.Method == http.MethodHead {
		find = withMethod(req, http.MethodGet)
	}
	route, params, err := v.router.FindRoute(find)
	notFound, notAllowed := v.notFound, v.notAllowed
	if strings.Contains(req.URL.Path, "/openai/v1/") {
		notFound, notAllowed = v.openaiNotFound, v.openaiNotAllowed
	}
	switch {
	case err == nil:
		return route, params, nil
	case errors.Is(err, routers.ErrPathNotFound):
		return v.standIn(req, http.StatusNotFound, notFound), nil, nil
	case errors.Is(err, routers.ErrMethodNotAllowed):
		return v.standIn(req, http.StatusMethodNotAllowed, notAllowed), nil, nil
	}
	return nil, nil, fmt.Errorf("%s %s: find route: %w", req.Method, req.URL.Path, err)
}

func (v *Validator) standIn(req *http.Request, status int, resp *openapi3.ResponseRef) *routers.Route {
	op := openapi3.NewOperation()
	op.Responses = openapi3.NewResponses(openapi3.WithStatus(status, resp))
	return &routers.Route{Spec: v.doc, Path: req.URL.Path, Method: req.Method, Operation: op}
}

// withMethod is req as if sent with another method, for route look-ups.
func withMethod(req *http.Request, method string) *http.Request {
	r := *req
	r.Method = strings.ToUpper(method)
	return &r
}
