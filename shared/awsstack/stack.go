// Package awsstack is the base every Lambda of functions/ starts from: it
// reads the environment once (env.go), loads the AWS configuration, makes
// the JSON logger and opens the DynamoDB store. What a function serves is
// built on that by a package of its own, which only the functions that
// serve it import, so that each binary links only what it runs:
//
//   - endpoint: an endpoint's net/http handler, on S3 (media) and Step
//     Functions (executions), for the seven API functions;
//   - docs: GET /openapi.json and GET /docs, with no AWS client at all;
//   - steps: the workflow steps that need only the store;
//   - generate: the Generate step, with S3 and the ffmpeg renderer;
//   - sweep: the sweeper, with Step Functions;
//   - providerconfig: the start of the functions that read the routes and
//     declared models, which may be in a Secrets Manager secret.
//
// The authorizer needs only the store (shared/authorizer on Deployment.Store).
// Each functions/<name>/main.go builds its handler at cold start, so that
// clients are made once per container, then hands it to lambda.Start.
//
// The SDK takes its credentials and region from the variables Lambda sets
// (the function's role; awsconfig.go), and honours AWS_ENDPOINT_URL and
// AWS_ENDPOINT_URL_<SERVICE> (DYNAMODB, S3, SFN, SECRETS_MANAGER), which
// the tests use to point a function at local fakes.
package awsstack

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/genvideo/gen/shared/catalog"
	"github.com/genvideo/gen/shared/store/dynamostore"
)

// Deployment is one Lambda's view of the deployment: its environment,
// AWS configuration, logger and store (the running local service is
// devstack.Stack).
type Deployment struct {
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
//
// It reads no secret: a function that needs the provider configuration
// (routes and declared models), which may be in a secret, starts from
// awsstack/providerconfig's FromEnv instead, and one that gets
// GEN_PROVIDER_CONFIG_SECRET_ARN here stops, so that it never runs on
// the contract's catalog by mistake.
func FromEnv(ctx context.Context) (*Deployment, error) {
	env, err := ParseEnv(os.LookupEnv)
	if err != nil {
		return nil, err
	}
	if env.ProviderConfigSecretARN != "" {
		return nil, fmt.Errorf("%s is set, and this function does not read the provider configuration: "+
			"template.yaml gives it only to the functions that do (awsstack/providerconfig)", EnvProviderConfigSecretARN)
	}
	return Open(env, LambdaConfig(osLookup))
}

// Open makes env the function's: it installs its catalog, makes its
// JSON logger the default one and opens the store (New).
func Open(env Env, cfg aws.Config) (*Deployment, error) {
	InstallCatalog(env)
	logger := NewLogger(os.Stdout, env.LogLevel)
	slog.SetDefault(logger)
	return New(env, cfg, logger)
}

// InstallCatalog makes the stack's catalog (settings.ProviderConfig.Catalog:
// the operator's models, our Omni model where a route serves Omni) the
// function's, before anything reads it (package catalog says why it is
// the process's). Otherwise the catalog stays the contract's.
func InstallCatalog(env Env) {
	if env.Provider.OwnCatalog() {
		catalog.Install(env.Provider.Catalog())
	}
}

// New builds a stack on a parsed environment and an AWS configuration.
func New(env Env, cfg aws.Config, logger *slog.Logger) (*Deployment, error) {
	if err := env.require("every function", EnvTablePrefix); err != nil {
		return nil, err
	}
	if logger == nil {
		logger = slog.Default()
	}
	st := dynamostore.New(dynamodb.NewFromConfig(cfg), dynamostore.Config{TablePrefix: env.TablePrefix, TaskRetention: env.TaskRetention})
	return &Deployment{Env: env, AWS: cfg, Logger: logger, Store: st}, nil
}

// Require fails naming every one of the variables (EnvBucket, ...) that is
// not set, and what needs it: the builders call it first, so that a
// missing variable stops the cold start, not the first request.
func (s *Deployment) Require(what string, names ...string) error {
	return s.Env.require(what, names...)
}

// Exit reports an error of a cold start and ends the process: Lambda
// reports the function's initialisation as failed, with this line in its
// log.
func Exit(err error) {
	fmt.Fprintf(os.Stderr, "cold start failed: %v\n", err)
	os.Exit(1)
}
