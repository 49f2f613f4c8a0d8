package media

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	smtypes "github.com/aws/aws-sdk-go-v2/service/secretsmanager/types"

	"github.com/genvideo/gen/shared/awsstack"
	"github.com/genvideo/gen/shared/cursor"
)

// cursorRefresh is how long cursor keys are used before the secret is
// read again. Shorter than signerRefresh: after a rotation, a container
// still on the old key cannot open a cursor another container sealed
// with the new one, for at most this long.
const cursorRefresh = 5 * time.Minute

// CursorKeys are the keys of the API's cursors (httpapi.Config.CursorKeys)
// on AWS: derived from the URL signer's secret, the one secret every API
// function is given (GEN_SIGNER_SECRET_ARN), so that every Lambda agrees
// without new infrastructure. The current version's secret access key
// seals; the previous version's (AWSPREVIOUS, after a rotation) still
// opens. Read on the first cursor (never, in a function that has none)
// and every cursorRefresh.
func CursorKeys(s *awsstack.Deployment) cursor.Keys {
	return &cursorKeys{client: secretsmanager.NewFromConfig(s.AWS), arn: s.Env.SignerSecretARN}
}

// secretReader is the part of Secrets Manager cursorKeys reads.
type secretReader interface {
	GetSecretValue(ctx context.Context, in *secretsmanager.GetSecretValueInput, opts ...func(*secretsmanager.Options)) (*secretsmanager.GetSecretValueOutput, error)
}

type cursorKeys struct {
	client secretReader
	arn    string

	mu   sync.Mutex
	keys [][]byte
	read time.Time
}

// CursorKeys implements cursor.Keys.
func (k *cursorKeys) CursorKeys(ctx context.Context) ([][]byte, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.keys != nil && time.Since(k.read) < cursorRefresh {
		return k.keys, nil
	}
	if k.arn == "" {
		return nil, fmt.Errorf("cursor keys: %s is not set", awsstack.EnvSignerSecretARN)
	}
	current, err := k.version(ctx, "AWSCURRENT")
	if err != nil {
		return nil, err
	}
	keys := [][]byte{current}
	previous, err := k.version(ctx, "AWSPREVIOUS")
	var missing *smtypes.ResourceNotFoundException
	switch {
	case errors.As(err, &missing):
		// Never rotated: no previous version.
	case err != nil:
		return nil, err
	default:
		keys = append(keys, previous)
	}
	k.keys, k.read = keys, time.Now()
	return keys, nil
}

// version is the secret access key of one version of the signer secret.
func (k *cursorKeys) version(ctx context.Context, stage string) ([]byte, error) {
	out, err := k.client.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: &k.arn, VersionStage: &stage})
	if err != nil {
		return nil, fmt.Errorf("read the signer secret %s (%s): %w", k.arn, stage, err)
	}
	creds, err := parseSignerSecret(aws.ToString(out.SecretString))
	if err != nil {
		return nil, fmt.Errorf("signer secret %s (%s): %w", k.arn, stage, err)
	}
	return []byte(creds.SecretAccessKey), nil
}
