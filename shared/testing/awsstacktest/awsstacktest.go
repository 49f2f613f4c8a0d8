// Package awsstacktest runs the Lambdas of functions/ the way AWS does, on
// one machine and without an account: each function is its real binary,
// fed events through a fake Lambda Runtime API (StartFunction), with the
// SDK pointed by AWS_ENDPOINT_URL_<SERVICE> at DynamoDB Local (the store's
// real engine, from dynamolocal), a fake S3 that checks presigned URLs
// (s3blobtest), a fake Step Functions (sfnstarttest) and the fake Secrets
// Manager of this package holding the URL signer's keys.
//
// Tests that use it call dynamolocal.Main from TestMain.
package awsstacktest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/genvideo/gen/shared/awsstack"
	"github.com/genvideo/gen/shared/awsstack/localsecrets"
	"github.com/genvideo/gen/shared/store/dynamostore"
	"github.com/genvideo/gen/shared/store/dynamostore/dynamolocal"
	"github.com/genvideo/gen/shared/testing/s3blobtest"
	"github.com/genvideo/gen/shared/testing/sfnstarttest"
)

// The fixed names of the environment.
const (
	Region          = "us-east-1"
	Bucket          = "gen-test-media"
	SignerSecretARN = "arn:aws:secretsmanager:us-east-1:123456789012:secret:gen-url-signer-AbCdEf"
	// RoleKeyID is the access key of the functions' "role": the S3 fake
	// does not honour URLs it presigns, only the POST uploads it signs
	// (POST /api/gen/uploads).
	RoleKeyID     = "ASIAFUNCTIONROLE0001"
	roleSecretKey = "function-role-secret"
	// SignerKeyID is the signing user's access key, held by the secret.
	SignerKeyID     = "AKIAURLSIGNER0000001"
	signerSecretKey = "url-signer-secret-access-key"
)

// Env is a running set of backing services and the environment that
// points a function at them.
type Env struct {
	Dynamo      *dynamolocal.Server
	Store       *dynamostore.Store
	TablePrefix string
	S3          *s3blobtest.Server
	SFN         *sfnstarttest.Server
	Secrets     *Secrets
}

// Start starts the services: DynamoDB Local (shared by the test binary)
// with fresh tables under a prefix of their own, and the fakes, all
// stopped when the test ends.
func Start(t testing.TB) *Env {
	t.Helper()
	db := dynamolocal.Shared(t)
	e := &Env{Dynamo: db, TablePrefix: "fn-" + randomHex(4) + "-"}
	e.Store = dynamostore.New(db.Client(), dynamostore.Config{TablePrefix: e.TablePrefix})
	if err := e.Store.CreateTables(context.Background()); err != nil {
		t.Fatalf("create tables: %v", err)
	}
	e.S3 = s3blobtest.NewServer(t, Bucket)
	e.S3.AddSigner(SignerKeyID, signerSecretKey)
	e.S3.AddUploadSigner(RoleKeyID, roleSecretKey)
	e.SFN = sfnstarttest.NewServer(t)
	e.Secrets = NewSecrets(t)
	secret, _ := json.Marshal(awsstack.SignerSecret{AccessKeyID: SignerKeyID, SecretAccessKey: signerSecretKey})
	e.Secrets.Put(SignerSecretARN, string(secret))
	return e
}

// Environ is the environment of a function: the variables template.yaml
// sets, the SDK's endpoints and static credentials, and extra ("NAME=value",
// overriding). Nothing of the test's own environment leaks in but PATH.
func (e *Env) Environ(t testing.TB, extra ...string) []string {
	t.Helper()
	tmp := t.TempDir()
	vars := map[string]string{
		"PATH":                             os.Getenv("PATH"),
		"HOME":                             tmp,
		"TMPDIR":                           tmp,
		"AWS_REGION":                       Region,
		"AWS_ACCESS_KEY_ID":                RoleKeyID,
		"AWS_SECRET_ACCESS_KEY":            roleSecretKey,
		"AWS_SESSION_TOKEN":                "function-role-session-token",
		"AWS_CONFIG_FILE":                  tmp + "/no-aws-config",
		"AWS_SHARED_CREDENTIALS_FILE":      tmp + "/no-aws-credentials",
		"AWS_EC2_METADATA_DISABLED":        "true",
		"AWS_ENDPOINT_URL_DYNAMODB":        e.Dynamo.Endpoint,
		"AWS_ENDPOINT_URL_S3":              e.S3.URL,
		"AWS_ENDPOINT_URL_SFN":             e.SFN.URL,
		"AWS_ENDPOINT_URL_SECRETS_MANAGER": e.Secrets.URL,
		awsstack.EnvTablePrefix:            e.TablePrefix,
		awsstack.EnvBucket:                 Bucket,
		awsstack.EnvStateMachineARN:        sfnstarttest.StateMachineARN,
		awsstack.EnvSignerSecretARN:        SignerSecretARN,
		awsstack.EnvLogLevel:               "INFO",
	}
	for _, kv := range extra {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			t.Fatalf("environment entry %q is not NAME=value", kv)
		}
		if v == "" {
			delete(vars, k)
			continue
		}
		vars[k] = v
	}
	env := make([]string, 0, len(vars))
	for k, v := range vars {
		env = append(env, k+"="+v)
	}
	return env
}

// Secrets is the Secrets Manager of localsecrets, on loopback.
type Secrets struct {
	*localsecrets.Server
	// URL is the endpoint, http://127.0.0.1:<port>.
	URL string
}

// NewSecrets starts the fake; it stops when the test ends.
func NewSecrets(t testing.TB) *Secrets {
	t.Helper()
	s := localsecrets.New()
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return &Secrets{Server: s, URL: srv.URL}
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}
