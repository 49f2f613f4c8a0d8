// Package providerconfig starts the functions that need the provider
// configuration, the routes and the declared models: the starts, the
// quote and the models, which check and price starts or list models, the
// Complete step, which prices what it refunds, and the Generate and Poll
// steps and the model check, which build the routes.
// Template.yaml gives only them the configuration, as GEN_ROUTES and
// GEN_MODELS, or as the secret GEN_PROVIDER_CONFIG_SECRET_ARN names
// (awsstack.ConfigSecret), which they read once at cold start: routes
// and models past Lambda's 4 KB environment fit there.
package providerconfig

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/genvideo/gen/shared/awsstack"
	"github.com/genvideo/gen/shared/awsstack/secrets"
)

// FromEnv is awsstack.FromEnv with the provider configuration read
// (ReadEnv).
func FromEnv(ctx context.Context) (*awsstack.Deployment, error) {
	cfg := awsstack.LambdaConfig(os.LookupEnv)
	env, err := ReadEnv(ctx, os.LookupEnv, cfg)
	if err != nil {
		return nil, err
	}
	return awsstack.Open(env, cfg)
}

// ReadEnv is awsstack.ParseEnv, and when GEN_PROVIDER_CONFIG_SECRET_ARN
// names a secret, it reads it with cfg and parses with it
// (awsstack.ParseEnvWith). A secret that cannot be read stops the cold
// start, naming it.
func ReadEnv(ctx context.Context, lookup func(string) (string, bool), cfg aws.Config) (awsstack.Env, error) {
	arn, _ := lookup(awsstack.EnvProviderConfigSecretARN)
	arn = strings.TrimSpace(arn)
	if !strings.HasPrefix(arn, "arn:") {
		// Unset, or malformed: ParseEnv says so with the rest.
		return awsstack.ParseEnv(lookup)
	}
	secret, err := secrets.String(ctx, cfg, arn, "the provider configuration")
	if err != nil {
		return awsstack.Env{}, fmt.Errorf("%s: %w", awsstack.EnvProviderConfigSecretARN, err)
	}
	return awsstack.ParseEnvWith(lookup, secret)
}
