package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/apigateway"

	"github.com/genvideo/gen/infra/awslocal/localdeploy"
	"github.com/genvideo/gen/shared/admin"
	"github.com/genvideo/gen/shared/awsstack"
	"github.com/genvideo/gen/shared/devstack"
	"github.com/genvideo/gen/shared/store/dynamostore"
	"github.com/genvideo/gen/shared/usageplans"
)

// envBackend chooses the backend when --aws is not given: "local" (the
// default) or "aws".
const envBackend = "GEN_BACKEND"

// options are the root command's flags.
type options struct {
	dataDir string
	aws     awsOptions
}

// awsOptions say which deployment --aws works on. The SDK finds the
// credentials and the region the usual way (AWS_PROFILE, AWS_REGION, ...)
// and honours AWS_ENDPOINT_URL_DYNAMODB and AWS_ENDPOINT_URL_API_GATEWAY,
// which the tests use to point it at DynamoDB Local and a fake gateway.
type awsOptions struct {
	enabled      bool
	region       string
	tablePrefix  string
	planStandard string
	planPro      string
}

// backendFromEnv reads GEN_BACKEND.
func backendFromEnv() (aws bool, err error) {
	switch v := strings.TrimSpace(os.Getenv(envBackend)); strings.ToLower(v) {
	case "", "local":
		return false, nil
	case "aws":
		return true, nil
	default:
		return false, fmt.Errorf("%s=%q: want local or aws", envBackend, v)
	}
}

// backend is what a command works on: the operator's actions on the
// store, and on AWS the usage plans the keys are wired to.
type backend struct {
	admin *admin.Admin
	// store is the store the admin works on, for the margin report.
	store admin.ReportStore
	// plans is nil on the local backend, which has no gateway.
	plans *usageplans.Plans
	// dynamo is the store on AWS (nil locally), for invoke-env's tasks.
	dynamo *dynamostore.Store
}

// withBackend opens the backend for one command and closes it after.
func withBackend(ctx context.Context, opts *options, fn func(b *backend) error) error {
	if !opts.aws.enabled {
		s, err := devstack.OpenStore(opts.dataDir)
		if err != nil {
			return err
		}
		defer s.Close()
		return fn(&backend{admin: admin.New(s), store: s})
	}
	b, err := openAWS(ctx, opts.aws)
	if err != nil {
		return err
	}
	return fn(b)
}

// openAWS builds the DynamoDB store the Lambdas use, through awsstack as
// they do, and the API Gateway client.
func openAWS(ctx context.Context, o awsOptions) (*backend, error) {
	if o.tablePrefix == "" {
		return nil, fmt.Errorf("--aws needs the stack's table prefix: set --table-prefix or %s to the stack output TablePrefix",
			awsstack.EnvTablePrefix)
	}
	env, err := awsstack.ParseEnv(func(name string) (string, bool) {
		if name == awsstack.EnvTablePrefix {
			return o.tablePrefix, true
		}
		return "", false
	})
	if err != nil {
		return nil, err
	}
	var loadOpts []func(*config.LoadOptions) error
	if o.region != "" {
		loadOpts = append(loadOpts, config.WithRegion(o.region))
	}
	cfg, err := config.LoadDefaultConfig(ctx, loadOpts...)
	if err != nil {
		return nil, fmt.Errorf("load AWS configuration: %w", err)
	}
	if cfg.Region == "" {
		return nil, fmt.Errorf("--aws needs a region: set --region or AWS_REGION")
	}
	stack, err := awsstack.New(env, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		return nil, err
	}
	return &backend{
		admin:  admin.New(stack.Store),
		store:  stack.Store,
		dynamo: stack.Store,
		plans:  &usageplans.Plans{API: apigateway.NewFromConfig(cfg), Standard: o.planStandard, Pro: o.planPro},
	}, nil
}

// useLocalDeployment switches to the AWS backend when the data directory
// is that of a running `make run-aws-local` (localdeploy), pointing the SDK
// at its DynamoDB Local and API Gateway control plane.
func useLocalDeployment(opts *options) (bool, error) {
	d, ok, err := localdeploy.Read(opts.dataDir)
	if err != nil || !ok {
		return false, err
	}
	for k, v := range d.Environ() {
		os.Setenv(k, v)
	}
	opts.aws.enabled = true
	opts.aws.region = d.Region
	opts.aws.tablePrefix = d.TablePrefix
	opts.aws.planStandard = d.UsagePlanStandard
	opts.aws.planPro = d.UsagePlanPro
	return true, nil
}
