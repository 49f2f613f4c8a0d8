// Package endpoint holds what the API Lambdas (text-to-video, ...,
// webhooks) are assembled from, each in its own main: the stack (the
// environment, the DynamoDB store, the logger), the S3 media, the
// service's configuration on them, and the adapter of one httpapi.Endpoint
// to API Gateway REST proxy events. A main names what else it needs (the
// Step Functions executions of a start, in package executions), so that a
// Lambda links only what it runs.
package endpoint

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/awslabs/aws-lambda-go-api-proxy/core"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"github.com/genvideo/gen/shared/availability"
	"github.com/genvideo/gen/shared/awsstack"
	"github.com/genvideo/gen/shared/awsstack/media"
	"github.com/genvideo/gen/shared/awsstack/providerconfig"
	"github.com/genvideo/gen/shared/blob/s3blob"
	"github.com/genvideo/gen/shared/blob/s3links"
	"github.com/genvideo/gen/shared/httpapi"
	"github.com/genvideo/gen/shared/provider/tables"
	"github.com/genvideo/gen/shared/service"
)

// ProxyFunc handles API Gateway REST proxy events; lambda.Start takes it.
type ProxyFunc func(context.Context, events.APIGatewayProxyRequest) (events.APIGatewayProxyResponse, error)

// Must returns v, or ends the cold start on err (awsstack.Exit), so that
// bad configuration fails the function's initialisation loudly, not its
// requests.
func Must[T any](v T, err error) T {
	if err != nil {
		awsstack.Exit(err)
	}
	return v
}

// MustDeployment reads the environment, loads the AWS configuration and opens
// the DynamoDB store (awsstack.FromEnv), or ends the cold start: the
// endpoints that neither check starts nor list models, which need no
// provider configuration.
func MustDeployment() *awsstack.Deployment { return Must(awsstack.FromEnv(context.Background())) }

// MustProviderDeployment is MustDeployment with the provider
// configuration, the routes and the declared models, read as well, from
// its secret when the function is given one (providerconfig.FromEnv):
// the starts, the quote and the models, which call Offers.
func MustProviderDeployment() *awsstack.Deployment {
	return Must(providerconfig.FromEnv(context.Background()))
}

// Media is the S3 store of GEN_BUCKET, whose links are signed with the
// key in GEN_SIGNER_SECRET_ARN: an endpoint checks both at its cold
// start, though it signs only when asked for a link.
func Media(s *awsstack.Deployment) (*s3blob.Store, error) {
	if err := s.Require("the API", awsstack.EnvBucket, awsstack.EnvSignerSecretARN); err != nil {
		return nil, err
	}
	return media.Store(s)
}

// Links signs the download links of GEN_BUCKET's objects with the key in
// GEN_SIGNER_SECRET_ARN, without S3's client: the service's Links in a
// function that signs links and keeps no object (status, download).
func Links(s *awsstack.Deployment) (*s3links.Links, error) {
	if err := s.Require("the API", awsstack.EnvBucket, awsstack.EnvSignerSecretARN); err != nil {
		return nil, err
	}
	return media.Links(s)
}

// Config is the service's configuration on the stack: its DynamoDB store
// (which counts the requests, and keeps the webhook endpoints and signing
// secrets, which a start with webhookUrl needs too), blobs (which also
// sign direct uploads: larger images go straight to S3; nil in a
// function that keeps and signs no object), executions (nil in a
// function that starts nothing) and the environment's settings.
// Webhook URLs are checked as on the local stack, private addresses
// refused unless GEN_WEBHOOK_ALLOW_PRIVATE, which the template never
// sets. What the providers accept is Offers'.
func Config(s *awsstack.Deployment, blobs *s3blob.Store, executions service.Executions) service.Config {
	cfg := service.Config{
		Store:               s.Store,
		Executions:          executions,
		Logger:              s.Logger,
		GenerationTimeout:   s.Env.GenerationTimeout,
		MaxEventStreams:     s.Env.MaxEventStreams,
		Webhooks:            s.Store,
		WebhookAllowPrivate: s.Env.WebhookAllowPrivate,
	}
	if blobs != nil { // not a typed nil inside the interfaces
		cfg.Blobs, cfg.Uploads = blobs, blobs
	}
	return cfg
}

// Offers is cfg with what the configured providers accept, for the
// functions that check starts or list models, on a deployment with the
// provider configuration (MustProviderDeployment). A function that does
// neither leaves it out: it is given no routes, declared models or model
// mapping (template.yaml), and a check of the generator's own table
// without them could refuse its cold start over prices it never quotes.
func Offers(s *awsstack.Deployment, cfg service.Config) service.Config {
	// A start is checked against what the configured generator accepts
	// (GEN_GENERATOR, GEN_PROVIDER_MODELS, GEN_CREDIT_USD), or one of the
	// model's routes (GEN_ROUTES), as the generate step's provider is,
	// and models shows its limits.
	cfg.Capabilities = Must(tables.Capabilities(s.Env.Provider))
	// Which models no route serves, as the scheduled model check last
	// found (functions/model-check), read at most once a minute per
	// process (availability.ReaderTTL).
	cfg.Availability = availability.NewReader(availability.ReaderConfig{Store: s.Store,
		Routes: tables.Availability(s.Env.Provider), Logger: s.Logger})
	return cfg
}

// Images is the HTTP configuration of a start that takes frames images
// in one request: GEN_MAX_IMAGE_BYTES bounds them together, because the
// request as a whole must pass API Gateway and Lambda (first-last-frame
// takes half of it per frame), and the 413 says why.
func Images(s *awsstack.Deployment, frames int64) httpapi.Config {
	return httpapi.Config{MaxImageBytes: s.Env.MaxImageBytes / frames, ImageLimitMessage: imageLimitMessage(s.Env.MaxImageBytes)}
}

// Cursors is the HTTP configuration of a function whose answers page by
// cursor (history, credits, webhook deliveries): the cursors are sealed
// with a key of the signer secret's, which every such Lambda reads alike.
func Cursors(s *awsstack.Deployment) httpapi.Config {
	return httpapi.Config{CursorKeys: media.CursorKeys(s)}
}

// Proxy serves endpoint r alone over svc (httpapi.EndpointHandler),
// adapted to API Gateway REST proxy events, base64 bodies included.
func Proxy(svc *service.Service, cfg httpapi.Config, r httpapi.Endpoint) ProxyFunc {
	return withReserve(httpadapter.New(httpapi.EndpointHandler(svc, cfg, r)).ProxyWithContext)
}

// StreamFunc handles API Gateway REST proxy events of an integration
// whose responseTransferMode is STREAM; lambda.Start takes it.
type StreamFunc func(context.Context, events.APIGatewayProxyRequest) (*events.APIGatewayProxyStreamingResponse, error)

// Stream serves endpoint r alone over svc (httpapi.EndpointHandler) as a
// streamed response: what the handler writes reaches API Gateway as it is
// written, not when the handler returns. The request is converted as Proxy
// converts it; the response is the format API Gateway reads from a Lambda
// proxy integration with response streaming ("Set up a Lambda proxy
// integration with payload response streaming in API Gateway",
// https://docs.aws.amazon.com/apigateway/latest/developerguide/response-transfer-mode-lambda.html):
// a JSON prelude with statusCode and headers (all of them as
// multiValueHeaders, as the buffered adapter sends them), eight NUL bytes,
// then the body. aws-lambda-go's APIGatewayProxyStreamingResponse writes
// exactly that, and its runtime client posts it to the Runtime API chunk by
// chunk (lambda.Start on provided.al2023, built with -tags lambda.norpc).
func Stream(svc *service.Service, cfg httpapi.Config, r httpapi.Endpoint) StreamFunc {
	return streamHandler(httpapi.EndpointHandler(svc, cfg, r))
}

// StreamHandler serves h, a handler of its own rather than a route's
// (the MCP endpoint's, shared/awsstack/mcplambda), as Stream serves a
// route: what h writes reaches API Gateway as it is written.
func StreamHandler(h http.Handler) StreamFunc { return streamHandler(h) }

// streamHandler serves h as Stream does.
func streamHandler(h http.Handler) StreamFunc {
	return func(ctx context.Context, event events.APIGatewayProxyRequest) (*events.APIGatewayProxyStreamingResponse, error) {
		// The handler's context ends when the runtime closes the body
		// (the client left and the runtime stopped posting it: see
		// streamBody), not only at the invocation's deadline.
		ctx, cancel := context.WithCancel(ctx)
		req, err := (&core.RequestAccessor{}).EventToRequestWithContext(ctx, event)
		if err != nil {
			cancel()
			return nil, fmt.Errorf("stream %s %s: %w", event.HTTPMethod, event.Path, err)
		}
		pr, pw := io.Pipe()
		w := &streamWriter{header: http.Header{}, body: pw, ready: make(chan struct{})}
		go func() {
			defer cancel()
			defer pw.Close()
			defer w.WriteHeader(http.StatusOK) // a handler that wrote nothing
			h.ServeHTTP(w, req)
		}()
		<-w.ready
		return &events.APIGatewayProxyStreamingResponse{StatusCode: w.status, MultiValueHeaders: w.sent,
			Body: &streamBody{PipeReader: pr, cancel: cancel}}, nil
	}
}

// streamBody is a streamed response's body as the runtime reads it.
// aws-lambda-go posts it to the Runtime API and closes it once the post
// ends (lambda/invoke_loop.go, v1.55.1), whether the body was read to its
// end or the post failed: the Runtime API stopped taking the stream, as
// when its client is gone. Closing the pipe makes the handler's next
// write fail, and cancelling its context wakes it between writes, so a
// stream whose client left stops at once rather than at its bound.
type streamBody struct {
	*io.PipeReader
	cancel context.CancelFunc
}

func (b *streamBody) Close() error {
	b.cancel()
	return b.PipeReader.Close()
}

// streamWriter is the http.ResponseWriter of a streamed response: the
// status and headers are fixed at the first write (ready), then every
// write goes straight to the pipe the runtime reads from, so it needs no
// Flush.
type streamWriter struct {
	header http.Header
	sent   http.Header // the header as the status was written
	body   *io.PipeWriter
	status int
	once   sync.Once
	ready  chan struct{}
}

func (w *streamWriter) Header() http.Header { return w.header }

func (w *streamWriter) WriteHeader(status int) {
	w.once.Do(func() {
		w.status = status
		w.sent = w.header.Clone() // later changes are not sent
		close(w.ready)
	})
}

func (w *streamWriter) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.body.Write(b)
}

// Reserve is how long before the Lambda's own deadline a request's
// context ends. What a request does with a context (store writes, the
// StartExecution of a start) then fails in time for the compensation that
// follows (the refund of a start that did not start, which ignores the
// deadline) and for the 503 to reach the client before API Gateway's 29
// seconds; the template gives the API functions 20 seconds.
const Reserve = 5 * time.Second

// withReserve ends the context it passes on Reserve before the Lambda's
// deadline.
func withReserve(next ProxyFunc) ProxyFunc {
	return func(ctx context.Context, req events.APIGatewayProxyRequest) (events.APIGatewayProxyResponse, error) {
		if d, ok := ctx.Deadline(); ok {
			var cancel context.CancelFunc
			ctx, cancel = context.WithDeadline(ctx, d.Add(-Reserve))
			defer cancel()
		}
		return next(ctx, req)
	}
}

// imageLimitMessage is what the 413 of an image over the limit adds on
// AWS: why the limit is lower than the contract's 20 MiB.
func imageLimitMessage(maxRequestImageBytes int64) string {
	return fmt.Sprintf("This deployment receives uploads through API Gateway and AWS Lambda, "+
		"which cap a request at 6 MB once base64-encoded, so it accepts at most %s of images per request "+
		"(first-last-frame: half of it per frame). Larger images, up to the contract's 20 MiB, "+
		"go through a direct upload: POST /api/gen/uploads, then send its uploadId in place of the file.", sizeText(maxRequestImageBytes))
}

func sizeText(n int64) string {
	if n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}
