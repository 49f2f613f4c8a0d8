// Package endpoint builds the handlers of the seven API Lambdas
// (text-to-video, ..., models): the shared net/http API on the DynamoDB
// store, S3 (media) and Step Functions (executions), adapted to API Gateway
// REST proxy events.
package endpoint

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"github.com/genvideo/gen/shared/awsstack"
	"github.com/genvideo/gen/shared/awsstack/executions"
	"github.com/genvideo/gen/shared/awsstack/media"
	"github.com/genvideo/gen/shared/httpapi"
	"github.com/genvideo/gen/shared/service"
	"github.com/genvideo/gen/shared/veomodels"
)

// ProxyFunc handles API Gateway REST proxy events; lambda.Start takes it.
type ProxyFunc func(context.Context, events.APIGatewayProxyRequest) (events.APIGatewayProxyResponse, error)

// MustProxy builds the named endpoint (httpapi.Endpoint*) from the
// environment and adapts it to API Gateway REST proxy events, base64
// bodies included. On bad configuration it exits with a message naming the
// problem (awsstack.Exit), so that the cold start fails loudly, not the
// requests.
func MustProxy(name string) ProxyFunc {
	stack, err := awsstack.FromEnv(context.Background())
	if err != nil {
		awsstack.Exit(err)
	}
	h, err := New(stack, name)
	if err != nil {
		awsstack.Exit(err)
	}
	return withReserve(httpadapter.New(h).ProxyWithContext)
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

// New returns the handler of one endpoint (httpapi.EndpointStatus, ...).
// Status and download count no rate-limit window (gatewayLimited).
// It needs GEN_BUCKET, GEN_STATE_MACHINE_ARN and GEN_SIGNER_SECRET_ARN.
// GEN_MAX_IMAGE_BYTES bounds the images of one request together, because
// the request as a whole must pass API Gateway and Lambda: first-last-frame
// takes half of it per frame.
func New(s *awsstack.Stack, name string) (http.Handler, error) {
	if err := s.Require("the endpoint "+name, awsstack.EnvBucket, awsstack.EnvStateMachineARN, awsstack.EnvSignerSecretARN); err != nil {
		return nil, err
	}
	blobs, err := media.Store(s)
	if err != nil {
		return nil, err
	}
	st, err := executions.New(s)
	if err != nil {
		return nil, err
	}
	perImage := s.Env.MaxImageBytes
	if name == httpapi.EndpointFirstLastFrame {
		perImage /= 2
	}
	// A start is checked against what the configured generator accepts
	// (GEN_GENERATOR, GEN_PROVIDER_MODELS, GEN_CREDIT_USD), as it is by
	// the generate step's.
	caps, err := veomodels.Capabilities(s.Env.Provider)
	if err != nil {
		return nil, err
	}
	var counters service.Counters // nil: the store counts
	if gatewayLimited[name] {
		counters = readOnlyCounters{windows: s.Store}
	}
	api := httpapi.New(httpapi.Config{
		Store:             s.Store,
		Counters:          counters,
		Blobs:             blobs,
		Executions:        st,
		Logger:            s.Logger,
		GenerationTimeout: s.Env.GenerationTimeout,
		MaxImageBytes:     perImage,
		ImageLimitMessage: imageLimitMessage(s.Env.MaxImageBytes),
		// Larger images go straight to S3 (POST /api/gen/uploads).
		Uploads: blobs,
		// The webhooks table: endpoints and signing secrets, which a
		// start with webhookUrl needs too (its account's secret). URLs
		// are checked as on the local stack, private addresses refused
		// unless GEN_WEBHOOK_ALLOW_PRIVATE, which the template never sets.
		Webhooks:            s.Store,
		WebhookAllowPrivate: s.Env.WebhookAllowPrivate,
		Capabilities:        caps,
		// Cursors (history, ledger, webhook deliveries) are sealed with
		// a key of the signer secret's, which every Lambda reads alike.
		CursorKeys: media.CursorKeys(s),
	})
	h, ok := api.Endpoint(name)
	if !ok {
		return nil, fmt.Errorf("no endpoint %q", name)
	}
	return h, nil
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
