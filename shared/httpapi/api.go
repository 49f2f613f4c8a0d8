// Package httpapi serves the public HTTP contract of the service: the
// three start endpoints, status, download, history and models. It maps
// each request to a use case of shared/service (which authenticates,
// counts, charges and reads) and each outcome to the contract's body, in
// one error table (errors.go). It is plain net/http: the local server mounts Handler, and a per-endpoint AWS Lambda
// serves one of the per-endpoint handlers (TextToVideo, Status, ...), which
// carry the same authentication, limits and error handling. PublicDocs
// serves the two public documents alone, for a Lambda that has no store.
package httpapi

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/genvideo/gen/shared/blob"
	"github.com/genvideo/gen/shared/capability"
	"github.com/genvideo/gen/shared/cursor"
	"github.com/genvideo/gen/shared/params"
	"github.com/genvideo/gen/shared/service"
	"github.com/genvideo/gen/shared/store"
	"github.com/genvideo/gen/shared/webhook"
)

// Defaults of Config.
const (
	DefaultMaxImageBytes = 20 * 1024 * 1024
	// DefaultMaxImageSide is the widest and tallest image accepted.
	DefaultMaxImageSide = service.DefaultMaxImageSide
)

// Config is what an API is built from. Store, Blobs and Executions are
// required; every other field has a default.
type Config struct {
	Store      service.Store
	Blobs      blob.Store
	Executions service.Executions
	// Counters counts requests (default Store).
	Counters service.Counters
	// Now is the clock (default time.Now).
	Now    func() time.Time
	Logger *slog.Logger // default slog.Default()
	// GenerationTimeout sets a task's deadline: createdAt + this.
	GenerationTimeout time.Duration
	// MaxImageBytes bounds each uploaded image (default 20 MiB).
	MaxImageBytes int64
	// ImageLimitMessage is an extra sentence for the 413 message, e.g. why
	// a deployment's limit is lower than the contract's 20 MiB.
	ImageLimitMessage string
	// MaxImageSide bounds each uploaded image's width and height in
	// pixels (default DefaultMaxImageSide).
	MaxImageSide int
	// Estimate gives the range of estimatedWaitTime in a start response.
	Estimate func(params.Parameters) (min, max time.Duration)
	// RetryAfter is the polling hint of a pending or processing status.
	RetryAfter time.Duration
	// Uploads signs direct uploads (POST /api/gen/uploads), which the
	// start endpoints then take by id instead of the file; nil answers
	// that endpoint 503.
	Uploads service.Uploads
	// MaxUploadBytes bounds a direct upload (default 20 MiB).
	MaxUploadBytes int64
	// Webhooks, WebhookAllowPrivate and WebhookResolver: see
	// service.Config.
	Webhooks            store.Webhooks
	WebhookAllowPrivate bool
	WebhookResolver     webhook.Resolver
	// Capabilities: see service.Config.
	Capabilities capability.Table
	// CursorKeys seal the cursors of history, the ledger and webhook
	// deliveries (shared/cursor); they must be the same for every process
	// serving the API. Nil makes a random key: cursors then open only in
	// this process.
	CursorKeys cursor.Keys
}

// API serves the contract. Build it with New.
type API struct {
	cfg       Config
	svc       *service.Service
	cursors   *cursor.Sealer
	log       *slog.Logger
	endpoints map[string]http.Handler
	handler   http.Handler
}

// Endpoint names, for Endpoint.
const (
	EndpointTextToVideo    = "text-to-video"
	EndpointImageToVideo   = "image-to-video"
	EndpointFirstLastFrame = "first-last-frame"
	EndpointStatus         = "status"
	EndpointDownload       = "download"
	EndpointHistory        = "history"
	EndpointModels         = "models"
	EndpointUploads        = "uploads"
	// Cancel, delete and credits (manage.go): extensions of the contract.
	EndpointCancel     = "cancel"
	EndpointDeleteTask = "delete-task"
	EndpointCredits    = "credits"
)

// route is one endpoint: its method, its ServeMux path pattern and its
// handler.
type route struct {
	name    string
	method  string
	pattern string
	serve   handlerFunc
}

// New builds the API, filling in Config's defaults. A Config without
// Store, Blobs or Executions is a wiring bug: New panics naming it.
func New(cfg Config) *API {
	switch {
	case cfg.Store == nil:
		panic("httpapi.New: Config.Store is nil")
	case cfg.Blobs == nil:
		panic("httpapi.New: Config.Blobs is nil")
	case cfg.Executions == nil:
		panic("httpapi.New: Config.Executions is nil")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.MaxImageBytes <= 0 {
		cfg.MaxImageBytes = DefaultMaxImageBytes
	}
	if cfg.MaxImageSide <= 0 {
		cfg.MaxImageSide = DefaultMaxImageSide
	}
	svc := service.New(service.Config{
		Store:               cfg.Store,
		Blobs:               cfg.Blobs,
		Executions:          cfg.Executions,
		Counters:            cfg.Counters,
		Now:                 cfg.Now,
		Logger:              cfg.Logger,
		GenerationTimeout:   cfg.GenerationTimeout,
		Estimate:            cfg.Estimate,
		RetryAfter:          cfg.RetryAfter,
		Uploads:             cfg.Uploads,
		MaxUploadBytes:      cfg.MaxUploadBytes,
		MaxImageSide:        cfg.MaxImageSide,
		Webhooks:            cfg.Webhooks,
		WebhookAllowPrivate: cfg.WebhookAllowPrivate,
		WebhookResolver:     cfg.WebhookResolver,
		Capabilities:        cfg.Capabilities,
	})
	if cfg.CursorKeys == nil {
		cfg.CursorKeys = cursor.Random()
	}
	a := &API{cfg: cfg, svc: svc, cursors: &cursor.Sealer{Keys: cfg.CursorKeys}, log: cfg.Logger, endpoints: map[string]http.Handler{}}

	routes := []route{
		{EndpointTextToVideo, http.MethodPost, "/api/gen/text-to-video", a.textToVideo},
		{EndpointImageToVideo, http.MethodPost, "/api/gen/image-to-video", a.imageToVideo},
		{EndpointFirstLastFrame, http.MethodPost, "/api/gen/first-last-frame", a.firstLastFrame},
		{EndpointStatus, http.MethodGet, "/api/gen/status/{taskId}", a.status},
		{EndpointDownload, http.MethodGet, "/api/gen/download/{taskId}", a.download},
		{EndpointHistory, http.MethodGet, "/api/gen/history", a.history},
		{EndpointModels, http.MethodGet, "/api/gen/models", a.models},
		{EndpointUploads, http.MethodPost, "/api/gen/uploads", a.createUpload},
	}
	routes = append(routes, manageRoutes(a)...)
	// The patterns name no method: the endpoint answers a wrong method
	// itself, so that the 405 has the contract's body and an Allow header
	// (ServeMux's own 405 is plain text), in the router and in a Lambda.
	routes = append(routes, a.webhookRoutes()...)
	mux := http.NewServeMux()
	byPattern := map[string][]route{}
	var patterns []string
	for _, rt := range routes {
		a.endpoints[rt.name] = a.endpoint(rt)
		if byPattern[rt.pattern] == nil {
			patterns = append(patterns, rt.pattern)
		}
		byPattern[rt.pattern] = append(byPattern[rt.pattern], rt)
	}
	for _, p := range patterns {
		mux.Handle(p, a.methods(byPattern[p]))
	}
	for name, p := range pathEndpoints {
		a.endpoints[name] = a.methods(byPattern[p])
	}
	// The document and its page need no key (docs.go).
	for _, rt := range docsRoutes(a.log) {
		a.endpoints[rt.name] = rt.handler
		mux.Handle(rt.path, rt.handler)
	}
	mux.Handle("/", unrouted(a.log, http.HandlerFunc(notFoundRoute)))
	a.handler = canonicalPaths(a.log, mux)
	return a
}

// Handler returns the router serving every endpoint of the contract.
// An unknown path is a 404 NOT_FOUND; a known path with another method a
// 405 METHOD_NOT_ALLOWED. Neither needs a key.
func (a *API) Handler() http.Handler { return a.handler }

// Endpoint returns the handler of one endpoint by name (EndpointStatus,
// ...), for a Lambda that serves exactly one.
func (a *API) Endpoint(name string) (http.Handler, bool) {
	h, ok := a.endpoints[name]
	return h, ok
}
