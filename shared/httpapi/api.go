// Package httpapi serves the public HTTP contract of the service: the three
// start endpoints, status, download, history and models, the extensions
// (cancel, delete, credits, uploads, webhooks), and beside them the
// OpenAI-compatible videos API under /openai/v1 (openai.go, in the shapes
// of shared/openaiapi). It maps each request to a use case of the
// shared/service it is given (which authenticates, counts, charges and
// reads) and each outcome to the contract's body, in one error table
// (errors.go). It is plain net/http: the local server mounts New's Handler,
// and each AWS Lambda serves one Endpoint alone (EndpointHandler), with the
// same authentication, limits and error handling. PublicDocs serves the two
// public documents alone, for a Lambda that has no store.
package httpapi

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/genvideo/gen/shared/cursor"
	"github.com/genvideo/gen/shared/openaiapi"
	"github.com/genvideo/gen/shared/service"
)

// DefaultMaxImageBytes is Config.MaxImageBytes's default: the contract's
// 20 MiB.
const DefaultMaxImageBytes = 20 * 1024 * 1024

// Config is what the HTTP layer adds to the service it serves: the bound
// of a request's images, lower on AWS, where API Gateway and Lambda cap a
// request's size.
type Config struct {
	// MaxImageBytes bounds each uploaded image (default 20 MiB).
	MaxImageBytes int64
	// ImageLimitMessage is an extra sentence for the 413 message, e.g. why
	// a deployment's limit is lower than the contract's 20 MiB.
	ImageLimitMessage string
	// CursorKeys seal the cursors of history, the ledger and webhook
	// deliveries (shared/cursor); they must be the same for every process
	// serving the API. Nil makes a random key: cursors then open only in
	// this process.
	CursorKeys cursor.Keys
}

// API serves the contract over a service. Build it with New (every
// endpoint, behind one router) or Endpoint (one endpoint alone).
type API struct {
	cfg      Config
	svc      *service.Service
	cursors  *cursor.Sealer
	log      *slog.Logger
	handler  http.Handler
	items    itemCache // history's
	statuses statusCache
}

// method is one method of an endpoint: its name, its ServeMux path
// pattern and its handler, a method expression, so that a Lambda links
// the handlers of its own endpoint alone.
type method struct {
	method  string
	pattern string
	serve   func(*API, http.ResponseWriter, *http.Request, *service.Caller) error
}

// Endpoint is one path of the API and the handler of each of its methods:
// what a Lambda of the template serves (EndpointHandler), as a path's other
// methods reach the same function, whose 405 must name every method the
// path allows.
type Endpoint struct {
	methods []method
	// dialect is how the endpoint's requests carry the key and how its
	// errors are written; nil is the contract's (contractDialect).
	dialect *dialect
}

// dialect is what differs between the contract's routes and the
// OpenAI-compatible ones (openai.go), so that the middleware every route
// shares knows of neither.
type dialect struct {
	// authenticate finds the caller of a request.
	authenticate func(*API, *http.Request, time.Time) (service.Caller, error)
	// writeError answers an error.
	writeError func(http.ResponseWriter, *Error)
}

// contractDialect: the key in X-API-Key, the contract's error bodies.
var contractDialect = dialect{authenticate: (*API).authenticate, writeError: WriteError}

func (r Endpoint) speaks() dialect {
	if r.dialect == nil {
		return contractDialect
	}
	return *r.dialect
}

// The endpoints of the API. Each is a static value naming its handlers, so
// that a program that uses one links no other.
var (
	TextToVideo    = Endpoint{methods: []method{{http.MethodPost, "/api/gen/text-to-video", (*API).textToVideo}}}
	ImageToVideo   = Endpoint{methods: []method{{http.MethodPost, "/api/gen/image-to-video", (*API).imageToVideo}}}
	FirstLastFrame = Endpoint{methods: []method{{http.MethodPost, "/api/gen/first-last-frame", (*API).firstLastFrame}}}
	Status         = Endpoint{methods: []method{{http.MethodGet, "/api/gen/status/{taskId}", (*API).status}}}
	// StatusEvents (events.go): the task's status as Server-Sent Events,
	// an extension.
	StatusEvents = Endpoint{methods: []method{{http.MethodGet, "/api/gen/status/{taskId}/events", (*API).events}}}
	Download     = Endpoint{methods: []method{{http.MethodGet, "/api/gen/download/{taskId}", (*API).download}}}
	History      = Endpoint{methods: []method{{http.MethodGet, "/api/gen/history", (*API).history}}}
	Models       = Endpoint{methods: []method{{http.MethodGet, "/api/gen/models", (*API).models}}}
	Uploads      = Endpoint{methods: []method{{http.MethodPost, "/api/gen/uploads", (*API).createUpload}}}
	// Cancel, delete and credits (manage.go): extensions of the contract.
	Cancel     = Endpoint{methods: []method{{http.MethodPost, "/api/gen/cancel/{taskId}", (*API).cancel}}}
	DeleteTask = Endpoint{methods: []method{{http.MethodDelete, "/api/gen/tasks/{taskId}", (*API).deleteTask}}}
	// PATCH credits sets the key holder's spending caps (caps.go).
	Credits = Endpoint{methods: []method{
		{http.MethodGet, "/api/gen/credits", (*API).credits},
		{http.MethodPatch, "/api/gen/credits", (*API).setCaps},
	}}
	// Quote (quote.go): what a start would charge, an extension.
	Quote = Endpoint{methods: []method{{http.MethodPost, "/api/gen/quote/{endpoint}", (*API).quote}}}
	// The webhook endpoints (webhooks.go), an extension of the contract.
	Webhooks = Endpoint{methods: []method{
		{http.MethodPost, "/api/gen/webhooks", (*API).createWebhook},
		{http.MethodGet, "/api/gen/webhooks", (*API).listWebhooks},
	}}
	WebhookSecret     = Endpoint{methods: []method{{http.MethodGet, "/api/gen/webhooks/secret", (*API).webhookSecret}}}
	WebhookDelete     = Endpoint{methods: []method{{http.MethodDelete, "/api/gen/webhooks/{webhookId}", (*API).deleteWebhook}}}
	WebhookDeliveries = Endpoint{methods: []method{{http.MethodGet, "/api/gen/webhooks/{webhookId}/deliveries", (*API).webhookAttempts}}}
	WebhookReplay     = Endpoint{methods: []method{{http.MethodPost, "/api/gen/webhooks/{webhookId}/deliveries/{deliveryId}/replay", (*API).replayDelivery}}}
)

// newAPI is an API over svc without routes.
func newAPI(svc *service.Service, cfg Config) *API {
	if cfg.MaxImageBytes <= 0 {
		cfg.MaxImageBytes = DefaultMaxImageBytes
	}
	if cfg.CursorKeys == nil {
		cfg.CursorKeys = cursor.Random()
	}
	sc := svc.Config()
	return &API{cfg: cfg, svc: svc,
		cursors: &cursor.Sealer{Keys: cfg.CursorKeys}, log: sc.Logger,
		items: newItemCache(), statuses: newStatusCache()}
}

// New serves every endpoint of the API over svc, behind one router, with
// the public documents (docs.go): the local server mounts its Handler.
func New(svc *service.Service, cfg Config) *API {
	a := newAPI(svc, cfg)
	mux := http.NewServeMux()
	// The patterns name no method: the endpoint answers a wrong method
	// itself, so that the 405 has the contract's body and an Allow header
	// (ServeMux's own 405 is plain text), in the router and in a Lambda.
	for _, r := range []Endpoint{TextToVideo, ImageToVideo, FirstLastFrame, Status, StatusEvents, Download, History, Models, Uploads,
		Cancel, DeleteTask, Credits, Quote, Webhooks, WebhookSecret, WebhookDelete, WebhookDeliveries, WebhookReplay, Extend} {
		mux.Handle(r.methods[0].pattern, a.serve(r))
	}
	// The OpenAI-compatible videos API (openai.go), with its own 404.
	// (Listed here, not in a package-level slice, whose initialisation
	// would link their handlers into every Lambda.)
	for _, r := range []Endpoint{OpenAIVideos, OpenAIVideo, OpenAIContent, OpenAIExtensions} {
		mux.Handle(r.methods[0].pattern, a.serve(r))
	}
	mux.Handle(openaiapi.Base+"/", unrouted(a.log, http.HandlerFunc(openaiNotFound)))
	// The document and its page need no key (docs.go).
	for _, rt := range docsRoutes(a.log) {
		mux.Handle(rt.path, rt.handler)
	}
	mux.Handle("/", unrouted(a.log, http.HandlerFunc(notFoundRoute)))
	a.handler = canonicalPaths(a.log, mux)
	return a
}

// Router serves the given endpoints alone over svc, behind one router
// that answers any other path as New's does (404 NOT_FOUND): the REST API
// a Lambda calls in-process (the MCP endpoint's, shared/mcpserver), which
// links those endpoints' handlers and no other's.
func Router(svc *service.Service, cfg Config, endpoints ...Endpoint) http.Handler {
	a := newAPI(svc, cfg)
	mux := http.NewServeMux()
	for _, r := range endpoints {
		mux.Handle(r.methods[0].pattern, a.serve(r))
	}
	mux.Handle("/", unrouted(a.log, http.HandlerFunc(notFoundRoute)))
	return canonicalPaths(a.log, mux)
}

// Handler returns the router serving every endpoint of the contract.
// An unknown path is a 404 NOT_FOUND; a known path with another method a
// 405 METHOD_NOT_ALLOWED. Neither needs a key.
func (a *API) Handler() http.Handler { return a.handler }

// EndpointHandler serves endpoint r alone over svc, under any path (a
// Lambda's request carries the stage's), with the authentication, limits
// and error handling of every endpoint: the handler of a Lambda that
// serves one endpoint, which links that endpoint's code and no other's.
func EndpointHandler(svc *service.Service, cfg Config, r Endpoint) http.Handler {
	return newAPI(svc, cfg).serve(r)
}
