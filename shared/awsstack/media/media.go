// Package media is the S3 store of a Lambda's uploaded images and
// generated videos, for the endpoints and the Generate step. Its download
// URLs are signed with the key of a signing user kept in Secrets Manager.
package media

import (
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/genvideo/gen/shared/awsstack"
	"github.com/genvideo/gen/shared/blob/s3blob"
)

// Store returns the S3 store of GEN_BUCKET. Its download URLs are signed
// with the signing user's keys from the GEN_SIGNER_SECRET_ARN secret,
// fetched on the first signature (never, in a function that does not
// sign) and again hourly, so that a rotated key is picked up.
func Store(s *awsstack.Stack) (*s3blob.Store, error) {
	if err := s.Require("blob storage", awsstack.EnvBucket); err != nil {
		return nil, err
	}
	signer := aws.NewCredentialsCache(&secretSigner{
		client: secretsmanager.NewFromConfig(s.AWS),
		arn:    s.Env.SignerSecretARN,
	})
	return s3blob.New(s3blob.Config{Client: s3.NewFromConfig(s.AWS), Bucket: s.Env.Bucket, Signer: signer})
}
