package awsstack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
)

// SignerSecret is the JSON object the GEN_SIGNER_SECRET_ARN secret holds:
// the access key of the IAM user that signs download URLs. That user may
// do nothing but s3:GetObject on the bucket's videos/ prefix. Its key is
// long-lived, so that a URL signed with it works for its whole 24 hours
// (one signed with the Lambda role's session credentials dies with the
// session); the template builds the secret from an AWS::IAM::AccessKey:
//
//	{"accessKeyId": "AKIA...", "secretAccessKey": "..."}
type SignerSecret struct {
	AccessKeyID     string `json:"accessKeyId"`
	SecretAccessKey string `json:"secretAccessKey"`
}

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
		return aws.Credentials{}, fmt.Errorf("sign download URLs: %s is not set", EnvSignerSecretARN)
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

// parseSignerSecret reads a SignerSecret. The error never quotes the
// secret.
func parseSignerSecret(s string) (aws.Credentials, error) {
	var sec SignerSecret
	if err := json.Unmarshal([]byte(s), &sec); err != nil {
		return aws.Credentials{}, errors.New(`not a JSON object {"accessKeyId": ..., "secretAccessKey": ...}`)
	}
	if strings.TrimSpace(sec.AccessKeyID) == "" || strings.TrimSpace(sec.SecretAccessKey) == "" {
		return aws.Credentials{}, errors.New("accessKeyId or secretAccessKey is empty")
	}
	return aws.Credentials{AccessKeyID: sec.AccessKeyID, SecretAccessKey: sec.SecretAccessKey}, nil
}
