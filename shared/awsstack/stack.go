// Package awsstack composes the service's AWS dependencies for the
// Lambdas: it reads the environment once (env.go), loads the AWS
// configuration, and builds what a function serves — an endpoint's
// net/http handler, the workflow steps, the authorizer, the sweeper — on
// the DynamoDB store, S3 blobs and the Step Functions starter. Each
// functions/<name>/main.go calls FromEnv and one builder at cold start, so
// that clients are made once per container, then hands the result to
// lambda.Start. The docs function calls Docs instead: it serves documents
// compiled into it and needs no AWS client at all.
//
// The SDK finds its credentials and region the usual way (the Lambda
// role), and honours AWS_ENDPOINT_URL and AWS_ENDPOINT_URL_<SERVICE>
// (DYNAMODB, S3, SFN, SECRETS_MANAGER), which the tests use to point a
// function at local fakes.
package awsstack

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/genvideo/gen/shared/authorizer"
	"github.com/genvideo/gen/shared/blob/s3blob"
	"github.com/genvideo/gen/shared/httpapi"
	"github.com/genvideo/gen/shared/render"
	"github.com/genvideo/gen/shared/sfnstart"
	"github.com/genvideo/gen/shared/store/dynamostore"
	"github.com/genvideo/gen/shared/sweeper"
	"github.com/genvideo/gen/shared/workflow"
)

// Stack is one Lambda's view of the deployment.
type Stack struct {
	Env    Env
	AWS    aws.Config
	Logger *slog.Logger
	// Store is the DynamoDB store on the tables GEN_TABLE_PREFIX names.
	Store *dynamostore.Store
}

// FromEnv reads the environment, loads the AWS configuration and opens the
// store. Every function needs GEN_TABLE_PREFIX; the builders check the
// variables they need besides. It also makes the stack's logger the
// default one, so that everything logs JSON lines with the request id.
func FromEnv(ctx context.Context) (*Stack, error) {
	env, err := ParseEnv(os.LookupEnv)
	if err != nil {
		return nil, err
	}
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, fmt.Errorf("load AWS configuration: %w", err)
	}
	logger := NewLogger(os.Stdout, env.LogLevel)
	slog.SetDefault(logger)
	return New(env, cfg, logger)
}

// New builds a stack on a parsed environment and an AWS configuration.
func New(env Env, cfg aws.Config, logger *slog.Logger) (*Stack, error) {
	if err := env.require("every function", EnvTablePrefix); err != nil {
		return nil, err
	}
	if logger == nil {
		logger = slog.Default()
	}
	st := dynamostore.New(dynamodb.NewFromConfig(cfg), dynamostore.Config{TablePrefix: env.TablePrefix})
	return &Stack{Env: env, AWS: cfg, Logger: logger, Store: st}, nil
}

// Blobs returns the S3 store of GEN_BUCKET. Its download URLs are signed
// with the signing user's keys from the GEN_SIGNER_SECRET_ARN secret,
// fetched on the first signature (never, in a function that does not
// sign) and again hourly, so that a rotated key is picked up.
func (s *Stack) Blobs() (*s3blob.Store, error) {
	if err := s.Env.require("blob storage", EnvBucket); err != nil {
		return nil, err
	}
	signer := aws.NewCredentialsCache(&secretSigner{
		client: secretsmanager.NewFromConfig(s.AWS),
		arn:    s.Env.SignerSecretARN,
	})
	return s3blob.New(s3blob.Config{Client: s3.NewFromConfig(s.AWS), Bucket: s.Env.Bucket, Signer: signer})
}

// Starter returns the Step Functions starter of GEN_STATE_MACHINE_ARN.
func (s *Stack) Starter() (*sfnstart.Starter, error) {
	if err := s.Env.require("starting the workflow", EnvStateMachineARN); err != nil {
		return nil, err
	}
	st, err := sfnstart.New(sfn.NewFromConfig(s.AWS), s.Env.StateMachineARN, nil)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", EnvStateMachineARN, err)
	}
	return st, nil
}

// ImageLimitMessage is what the 413 of an image over the limit adds on
// AWS: why the limit is lower than the contract's 20 MiB.
func ImageLimitMessage(maxRequestImageBytes int64) string {
	return fmt.Sprintf("This deployment receives uploads through API Gateway and AWS Lambda, "+
		"which cap a request at 6 MB once base64-encoded, so it accepts at most %s of images per request "+
		"(first-last-frame: half of it per frame). Larger images, up to the contract's 20 MiB, "+
		"need a direct upload, which this deployment does not offer yet.", sizeText(maxRequestImageBytes))
}

func sizeText(n int64) string {
	if n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}

// Endpoint returns the handler of one endpoint (httpapi.EndpointStatus,
// ...). It needs GEN_BUCKET, GEN_STATE_MACHINE_ARN and
// GEN_SIGNER_SECRET_ARN. GEN_MAX_IMAGE_BYTES bounds the images of one
// request together, because the request as a whole must pass API Gateway
// and Lambda: first-last-frame takes half of it per frame.
func (s *Stack) Endpoint(name string) (http.Handler, error) {
	if err := s.Env.require("the endpoint "+name, EnvBucket, EnvStateMachineARN, EnvSignerSecretARN); err != nil {
		return nil, err
	}
	blobs, err := s.Blobs()
	if err != nil {
		return nil, err
	}
	starter, err := s.Starter()
	if err != nil {
		return nil, err
	}
	perImage := s.Env.MaxImageBytes
	if name == httpapi.EndpointFirstLastFrame {
		perImage /= 2
	}
	api := httpapi.New(httpapi.Config{
		Store:             s.Store,
		Blobs:             blobs,
		Starter:           starter,
		Logger:            s.Logger,
		GenerationTimeout: s.Env.GenerationTimeout,
		MaxImageBytes:     perImage,
		ImageLimitMessage: ImageLimitMessage(s.Env.MaxImageBytes),
	})
	h, ok := api.Endpoint(name)
	if !ok {
		return nil, fmt.Errorf("no endpoint %q", name)
	}
	return h, nil
}

// Steps returns the workflow steps that need only the store:
// MarkProcessing, Complete and Fail.
func (s *Stack) Steps() *workflow.Steps {
	return &workflow.Steps{Store: s.Store, Logger: s.Logger}
}

// GenerateSteps returns the workflow steps with blob storage and the
// ffmpeg generator, for Generate. It needs GEN_BUCKET, and ffmpeg at
// GEN_FFMPEG_PATH (checked now, so that a missing layer fails the cold
// start rather than every task).
func (s *Stack) GenerateSteps() (*workflow.Steps, error) {
	blobs, err := s.Blobs()
	if err != nil {
		return nil, err
	}
	r, err := render.New(render.Config{FFmpegPath: s.Env.FFmpegPath, FontFile: s.Env.FontFile})
	if err != nil {
		return nil, fmt.Errorf("generator (%s=%q): %w", EnvFFmpegPath, s.Env.FFmpegPath, err)
	}
	steps := s.Steps()
	steps.Blobs = blobs
	steps.Generator = r
	return steps, nil
}

// Authorizer returns the API Gateway authorizer on the store's keys.
func (s *Stack) Authorizer() *authorizer.Authorizer {
	return authorizer.New(s.Store, s.Logger)
}

// Sweeper returns the sweeper of unfinished tasks. It needs
// GEN_STATE_MACHINE_ARN.
func (s *Stack) Sweeper() (*sweeper.Sweeper, error) {
	starter, err := s.Starter()
	if err != nil {
		return nil, err
	}
	return sweeper.New(sweeper.Config{
		Tasks:      s.Store,
		Failer:     s.Steps(),
		Executions: starter,
		Logger:     s.Logger,
	}), nil
}

// Docs returns the handler of the docs function: GET /openapi.json and
// GET /docs (httpapi.PublicDocs). The documents are compiled in, so it
// needs no table, bucket, state machine or secret and loads no AWS
// configuration; it uses LOG_LEVEL only (the environment is still parsed
// whole, so a malformed value fails the cold start as in every function).
// Like FromEnv, it makes its JSON logger the default one.
func Docs() (http.Handler, error) {
	h, logger, err := docs(os.LookupEnv, os.Stdout)
	if err != nil {
		return nil, err
	}
	slog.SetDefault(logger)
	return h, nil
}

// docs is Docs on an environment and a log destination.
func docs(lookup func(string) (string, bool), w io.Writer) (http.Handler, *slog.Logger, error) {
	env, err := ParseEnv(lookup)
	if err != nil {
		return nil, nil, err
	}
	logger := NewLogger(w, env.LogLevel)
	return httpapi.PublicDocs(logger), logger, nil
}

// Exit reports an error of a cold start and ends the process: Lambda
// reports the function's initialisation as failed, with this line in its
// log.
func Exit(err error) {
	fmt.Fprintf(os.Stderr, "cold start failed: %v\n", err)
	os.Exit(1)
}
