// Package secrets reads the string of a Secrets Manager secret at a
// function's cold start: the providers' API keys (providerkeys) and the
// provider configuration (providerconfig). Only the functions that read
// one import it, so that the others link no Secrets Manager client.
package secrets

import (
	"context"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
)

// String reads the string of the secret arn, which holds what (for
// errors); it is an error for it to be empty. The error never quotes it.
func String(ctx context.Context, cfg aws.Config, arn, what string) (string, error) {
	out, err := secretsmanager.NewFromConfig(cfg).GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: &arn})
	if err != nil {
		return "", fmt.Errorf("read the secret of %s %s: %w", what, arn, err)
	}
	s := strings.TrimSpace(aws.ToString(out.SecretString))
	if s == "" {
		return "", fmt.Errorf("the secret of %s %s is empty", what, arn)
	}
	return s, nil
}
