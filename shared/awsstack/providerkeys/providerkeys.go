// Package providerkeys reads the providers' API keys from Secrets
// Manager: the Gemini API key of the generator variables
// (GEN_GEMINI_API_KEY_SECRET_ARN) and a route's (apiKeySecretArn of
// GEN_ROUTES). The functions that build providers use it: the generate
// and poll steps, and the scheduled model check.
package providerkeys

import (
	"context"
	"fmt"

	"github.com/genvideo/gen/shared/awsstack"
	"github.com/genvideo/gen/shared/awsstack/secrets"
)

// GeminiKey reads the Gemini API key from its secret. The error never
// quotes the secret.
func GeminiKey(ctx context.Context, s *awsstack.Deployment, generator string) (string, error) {
	arn := s.Env.GeminiKeySecretARN
	if arn == "" {
		return "", fmt.Errorf("the %s generator needs %s", generator, awsstack.EnvGeminiKeySecretARN)
	}
	return Secret(ctx, s, arn, "the Gemini API key")
}

// RouteKey reads a route's key from the secret its apiKeySecretArn
// names: factory.Options.Secret on AWS.
func RouteKey(s *awsstack.Deployment) func(ctx context.Context, arn string) (string, error) {
	return func(ctx context.Context, arn string) (string, error) { return Secret(ctx, s, arn, "a route's API key") }
}

// Secret reads the string of a Secrets Manager secret holding what;
// the error never quotes it.
func Secret(ctx context.Context, s *awsstack.Deployment, arn, what string) (string, error) {
	return secrets.String(ctx, s.AWS, arn, what)
}
