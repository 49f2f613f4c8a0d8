package awsstack

import (
	"context"
	"os"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
)

// LambdaConfig is the AWS configuration a Lambda runs with, read from the
// variables Lambda sets: AWS_REGION, and the execution role's
// AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN, valid
// for the life of the execution environment. AWS_ENDPOINT_URL and
// AWS_ENDPOINT_URL_<SERVICE> are honoured as the SDK does.
//
// config.LoadDefaultConfig would find the same, and also knows shared
// files, SSO, STS role chains and the instance metadata service, none of
// which a Lambda uses: linking them made every endpoint bootstrap about
// 2 MB larger (infra/docs/lambdas.md).
func LambdaConfig(lookup func(string) (string, bool)) aws.Config {
	get := func(k string) string { v, _ := lookup(k); return v }
	cfg := aws.Config{
		Region:        get("AWS_REGION"),
		ConfigSources: []any{envEndpoints{lookup: lookup}},
	}
	if id := get("AWS_ACCESS_KEY_ID"); id != "" {
		cfg.Credentials = aws.NewCredentialsCache(credentials.NewStaticCredentialsProvider(
			id, get("AWS_SECRET_ACCESS_KEY"), get("AWS_SESSION_TOKEN")))
	}
	if u := get("AWS_ENDPOINT_URL"); u != "" {
		cfg.BaseEndpoint = aws.String(u)
	}
	return cfg
}

// envEndpoints gives each service client its AWS_ENDPOINT_URL_<SERVICE>,
// as the SDK's own environment source does: the service's SDK id in
// capitals, spaces as underscores (AWS_ENDPOINT_URL_SECRETS_MANAGER).
type envEndpoints struct {
	lookup func(string) (string, bool)
}

// GetServiceBaseEndpoint is what the service clients ask their
// configuration sources for.
func (e envEndpoints) GetServiceBaseEndpoint(_ context.Context, sdkID string) (string, bool, error) {
	v, ok := e.lookup("AWS_ENDPOINT_URL_" + strings.ToUpper(strings.ReplaceAll(sdkID, " ", "_")))
	return v, ok && v != "", nil
}

// osLookup is the process environment.
var osLookup = os.LookupEnv
