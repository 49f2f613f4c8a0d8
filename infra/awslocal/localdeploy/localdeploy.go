// Package localdeploy is what a running AWS assembly on one machine
// (infra/aws-local) tells the operator CLI about itself: a file in the
// data directory naming its table prefix, usage plans and the loopback
// endpoints of DynamoDB Local and the API Gateway control plane, so that
// `genctl` with the same GEN_DATA_DIR works on it as `genctl --aws` works
// on a deployed stack.
package localdeploy

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// FileName is the file's name in the data directory.
const FileName = "aws-local.json"

// Deployment describes a running assembly.
type Deployment struct {
	Region            string `json:"region"`
	TablePrefix       string `json:"tablePrefix"`
	UsagePlanStandard string `json:"usagePlanStandard"`
	UsagePlanPro      string `json:"usagePlanPro"`
	DynamoDBEndpoint  string `json:"dynamodbEndpoint"`
	GatewayEndpoint   string `json:"apiGatewayEndpoint"`
	// AccessKeyID and SecretAccessKey are the static, made-up credentials
	// the local services accept.
	AccessKeyID     string `json:"accessKeyId"`
	SecretAccessKey string `json:"secretAccessKey"`
	BaseURL         string `json:"baseUrl"`
	// Endpoint answers every AWS service of the assembly (DynamoDB, S3,
	// Step Functions, Secrets Manager) on one port, told apart by the
	// service each request is signed for: what AWS_ENDPOINT_URL in an
	// env.json of sam local invoke points at.
	Endpoint string `json:"endpoint"`
	// Functions are the template's variables of each function (by
	// logical id) as the assembly set them: real table prefix, bucket,
	// state machine and signer secret ARNs, the host's ffmpeg.
	Functions map[string]map[string]string `json:"functions"`
}

// Write records d in dataDir.
func Write(dataDir string, d Deployment) error {
	b, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dataDir, FileName), append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("record the local deployment: %w", err)
	}
	return nil
}

// Read returns the deployment recorded in dataDir; ok is false when there
// is none (the data directory is make run's).
func Read(dataDir string) (d Deployment, ok bool, err error) {
	b, err := os.ReadFile(filepath.Join(dataDir, FileName))
	if os.IsNotExist(err) {
		return d, false, nil
	}
	if err != nil {
		return d, false, fmt.Errorf("read the local deployment: %w", err)
	}
	if err := json.Unmarshal(b, &d); err != nil {
		return d, false, fmt.Errorf("read the local deployment %s: %w", filepath.Join(dataDir, FileName), err)
	}
	return d, true, nil
}

// Environ is the environment that points the AWS SDK at the deployment.
func (d Deployment) Environ() map[string]string {
	return map[string]string{
		"AWS_REGION":                   d.Region,
		"AWS_ACCESS_KEY_ID":            d.AccessKeyID,
		"AWS_SECRET_ACCESS_KEY":        d.SecretAccessKey,
		"AWS_ENDPOINT_URL_DYNAMODB":    d.DynamoDBEndpoint,
		"AWS_ENDPOINT_URL_API_GATEWAY": d.GatewayEndpoint,
		"AWS_EC2_METADATA_DISABLED":    "true",
	}
}
