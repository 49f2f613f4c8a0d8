package media

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/genvideo/gen/shared/awsstack"
	"github.com/genvideo/gen/shared/strictjson"
)

// signerRefresh is how long the signer's keys are used before the secret
// is read again, so that a rotation reaches running containers.
const signerRefresh = time.Hour

// secretSigner reads the signer's keys from Secrets Manager. Wrapped in an
// aws.CredentialsCache it reads them on first use and hourly.
type secretSigner struct {
	client *secretsmanager.Client
	arn    string
}

func (p *secretSigner) Retrieve(ctx context.Context) (aws.Credentials, error) {
	if p.arn == "" {
		return aws.Credentials{}, fmt.Errorf("sign download URLs: %s is not set", awsstack.EnvSignerSecretARN)
	}
	out, err := p.client.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: &p.arn})
	if err != nil {
		return aws.Credentials{}, fmt.Errorf("read the signer secret %s: %w", p.arn, err)
	}
	creds, err := parseSignerSecret(aws.ToString(out.SecretString))
	if err != nil {
		return aws.Credentials{}, fmt.Errorf("signer secret %s: %w", p.arn, err)
	}
	creds.Source = "signer secret " + p.arn
	creds.CanExpire = true
	creds.Expires = time.Now().Add(signerRefresh)
	return creds, nil
}

// parseSignerSecret reads an awsstack.SignerSecret. The error never
// quotes the secret.
func parseSignerSecret(s string) (aws.Credentials, error) {
	var sec awsstack.SignerSecret
	if err := strictjson.Unmarshal([]byte(s), &sec); err != nil {
		return aws.Credentials{}, errors.New(`not a JSON object {"accessKeyId": ..., "secretAccessKey": ...}`)
	}
	if strings.TrimSpace(sec.AccessKeyID) == "" || strings.TrimSpace(sec.SecretAccessKey) == "" {
		return aws.Credentials{}, errors.New("accessKeyId or secretAccessKey is empty")
	}
	return aws.Credentials{AccessKeyID: sec.AccessKeyID, SecretAccessKey: sec.SecretAccessKey}, nil
}
