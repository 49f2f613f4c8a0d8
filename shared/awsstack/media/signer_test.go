package media

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/genvideo/gen/shared/awsstack"
)

func TestParseSignerSecret(t *testing.T) {
	creds, err := parseSignerSecret(`{"accessKeyId":"AKIAEXAMPLE","secretAccessKey":"s3cr3t"}`)
	if err != nil || creds.AccessKeyID != "AKIAEXAMPLE" || creds.SecretAccessKey != "s3cr3t" || creds.SessionToken != "" {
		t.Errorf("parseSignerSecret = %+v, %v; want the keys, no session token", creds, err)
	}
	// Issue 31: the strict decoder's refusals too, each of which
	// encoding/json took: another case, a key twice, a second object.
	for _, s := range []string{``, `AKIA:secret`, `{"accessKeyId":"AKIA"}`, `{"AccessKeyId":" ","secretAccessKey":"x"}`,
		`{"AccessKeyId":"AKIA","secretAccessKey":"x"}`,
		`{"accessKeyId":"AKIA","secretAccessKey":"x","secretAccessKey":"y"}`,
		`{"accessKeyId":"AKIA","secretAccessKey":"x"}{"accessKeyId":"AKIB","secretAccessKey":"y"}`} {
		_, err := parseSignerSecret(s)
		if err == nil {
			t.Errorf("parseSignerSecret(%q): no error", s)
			continue
		}
		if strings.Contains(err.Error(), "secret\"") || (s != "" && strings.Contains(err.Error(), s)) {
			t.Errorf("error %q quotes the secret", err)
		}
	}
}

func TestSignerWithoutARN(t *testing.T) {
	_, err := (&secretSigner{}).Retrieve(context.Background())
	if err == nil || !strings.Contains(err.Error(), awsstack.EnvSignerSecretARN) {
		t.Errorf("Retrieve without a secret ARN = %v, want an error naming %s", err, awsstack.EnvSignerSecretARN)
	}
}

func TestStoreNeedsTheBucket(t *testing.T) {
	s, err := awsstack.New(awsstack.Env{TablePrefix: "gen-"}, aws.Config{Region: "us-east-1"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Store(s); err == nil || !strings.Contains(err.Error(), awsstack.EnvBucket) {
		t.Errorf("Store without a bucket = %v, want an error naming %s", err, awsstack.EnvBucket)
	}
}
