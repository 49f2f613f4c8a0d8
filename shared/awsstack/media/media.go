// Package media is the S3 store of a Lambda's uploaded images and
// generated videos, for the endpoints and the Generate step. Its download
// URLs are signed with the key of a signing user kept in Secrets Manager.
package media

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/genvideo/gen/shared/awsstack"
	"github.com/genvideo/gen/shared/blob/s3blob"
	"github.com/genvideo/gen/shared/blob/s3links"
)

// Store returns the S3 store of GEN_BUCKET. Its download URLs are signed
// with the signing user's keys from the GEN_SIGNER_SECRET_ARN secret,
// fetched on the first signature (never, in a function that does not
// sign) and again hourly, so that a rotated key is picked up.
func Store(s *awsstack.Deployment) (*s3blob.Store, error) {
	if err := s.Require("blob storage", awsstack.EnvBucket); err != nil {
		return nil, err
	}
	return s3blob.New(s3blob.Config{Client: s3.NewFromConfig(s.AWS), Bucket: s.Env.Bucket, Signer: signer(s)})
}

// Links signs the download links of GEN_BUCKET's objects as Store does,
// without S3's client: for a function that signs links and keeps no
// object (status, download).
func Links(s *awsstack.Deployment) (*s3links.Links, error) {
	if err := s.Require("download links", awsstack.EnvBucket); err != nil {
		return nil, err
	}
	return s3links.New(s3links.Config{Bucket: s.Env.Bucket, Region: s.AWS.Region, Endpoint: s3Endpoint(s.AWS),
		Signer: signer(s)})
}

// signer reads the signing user's keys from GEN_SIGNER_SECRET_ARN on
// first use, then hourly.
func signer(s *awsstack.Deployment) aws.CredentialsProvider {
	return aws.NewCredentialsCache(&secretSigner{client: secretsmanager.NewFromConfig(s.AWS), arn: s.Env.SignerSecretARN})
}

// s3Endpoint is the endpoint S3's client would take from cfg: the one its
// configuration sources give S3 (AWS_ENDPOINT_URL_S3), else cfg's own
// (AWS_ENDPOINT_URL); "" for AWS's.
func s3Endpoint(cfg aws.Config) string {
	for _, src := range cfg.ConfigSources {
		if e, ok := src.(interface {
			GetServiceBaseEndpoint(ctx context.Context, sdkID string) (string, bool, error)
		}); ok {
			if u, found, err := e.GetServiceBaseEndpoint(context.Background(), "S3"); err == nil && found {
				return u
			}
		}
	}
	return aws.ToString(cfg.BaseEndpoint)
}
