package awsstack

// SignerSecret is the JSON object the GEN_SIGNER_SECRET_ARN secret holds:
// the access key of the IAM user that signs download URLs. That user may
// do nothing but s3:GetObject on the bucket's videos/ prefix. Its key is
// long-lived, so that a URL signed with it works for its whole 24 hours
// (one signed with the Lambda role's session credentials dies with the
// session); the template builds the secret from an AWS::IAM::AccessKey:
//
//	{"accessKeyId": "AKIA...", "secretAccessKey": "..."}
//
// The media package reads it.
type SignerSecret struct {
	AccessKeyID     string `json:"accessKeyId"`
	SecretAccessKey string `json:"secretAccessKey"`
}
