// Package rotatesignerlambda is the Secrets Manager rotation function of
// the signing user's access key (the secret awsstack.SignerSecret
// describes, which the status and download functions sign download URLs
// with).
//
// A download URL lives 24 hours and dies with the key that signed it, so a
// rotation never deletes the key that signs now: createSecret deletes the
// key before it (current two rotations ago, unused for signing since the
// last rotation, at least two days ago: SignerRotationDays >= 2) and
// creates a new one as AWSPENDING; finishSecret makes it AWSCURRENT. The
// functions pick the new key up within the hour (media's credentials
// cache); the previous key keeps working until the next rotation.
package rotatesignerlambda

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	smtypes "github.com/aws/aws-sdk-go-v2/service/secretsmanager/types"

	"github.com/genvideo/gen/shared/awsstack"
	"github.com/genvideo/gen/shared/settings"
	"github.com/genvideo/gen/shared/strictjson"
)

// Event is what Secrets Manager invokes a rotation function with.
type Event struct {
	Step               string `json:"Step"`
	SecretID           string `json:"SecretId"`
	ClientRequestToken string `json:"ClientRequestToken"`
}

// Secrets is the part of the Secrets Manager client a rotation calls.
type Secrets interface {
	DescribeSecret(context.Context, *secretsmanager.DescribeSecretInput, ...func(*secretsmanager.Options)) (*secretsmanager.DescribeSecretOutput, error)
	GetSecretValue(context.Context, *secretsmanager.GetSecretValueInput, ...func(*secretsmanager.Options)) (*secretsmanager.GetSecretValueOutput, error)
	PutSecretValue(context.Context, *secretsmanager.PutSecretValueInput, ...func(*secretsmanager.Options)) (*secretsmanager.PutSecretValueOutput, error)
	UpdateSecretVersionStage(context.Context, *secretsmanager.UpdateSecretVersionStageInput, ...func(*secretsmanager.Options)) (*secretsmanager.UpdateSecretVersionStageOutput, error)
}

// Keys is the part of the IAM client a rotation calls.
type Keys interface {
	ListAccessKeys(context.Context, *iam.ListAccessKeysInput, ...func(*iam.Options)) (*iam.ListAccessKeysOutput, error)
	CreateAccessKey(context.Context, *iam.CreateAccessKeyInput, ...func(*iam.Options)) (*iam.CreateAccessKeyOutput, error)
	DeleteAccessKey(context.Context, *iam.DeleteAccessKeyInput, ...func(*iam.Options)) (*iam.DeleteAccessKeyOutput, error)
}

// Rotator rotates the access key of one IAM user held in a secret.
type Rotator struct {
	Secrets Secrets
	Keys    Keys
	User    string // the signing IAM user
	Logger  *slog.Logger
	// HTTP answers CloudFormation's custom resource requests (SignerKey);
	// nil is http.DefaultClient.
	HTTP *http.Client
	// setup is why the rotator cannot work (FromEnv): every request is
	// answered with it.
	setup error
}

const (
	stageCurrent = "AWSCURRENT"
	stagePending = "AWSPENDING"
)

// Rotate runs one step of a rotation. Each step may run again (Secrets
// Manager retries a failed one): each looks before it acts.
func (r *Rotator) Rotate(ctx context.Context, ev Event) error {
	if r.setup != nil {
		return fmt.Errorf("rotation of %s: %w", ev.SecretID, r.setup)
	}
	desc, err := r.Secrets.DescribeSecret(ctx, &secretsmanager.DescribeSecretInput{SecretId: &ev.SecretID})
	if err != nil {
		return fmt.Errorf("describe secret: %w", err)
	}
	stages, ok := desc.VersionIdsToStages[ev.ClientRequestToken]
	if !ok {
		return fmt.Errorf("secret version %s is not part of the rotation of %s", ev.ClientRequestToken, ev.SecretID)
	}
	switch ev.Step {
	case "createSecret":
		return r.create(ctx, ev, stages)
	case "setSecret", "testSecret":
		// An IAM access key works from its creation; the functions test
		// it by signing. Nothing to do.
		return nil
	case "finishSecret":
		return r.finish(ctx, ev, desc.VersionIdsToStages)
	}
	return fmt.Errorf("unknown rotation step %q", ev.Step)
}

func (r *Rotator) create(ctx context.Context, ev Event, stages []string) error {
	if has(stages, stageCurrent) {
		return nil // this version is already the current one
	}
	if _, err := r.Secrets.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: &ev.SecretID,
		VersionId: &ev.ClientRequestToken, VersionStage: aws.String(stagePending)}); err == nil {
		return nil // created by an earlier run of this step
	}
	current, err := r.secret(ctx, ev.SecretID, stageCurrent)
	if err != nil {
		return err
	}
	keys, err := r.Keys.ListAccessKeys(ctx, &iam.ListAccessKeysInput{UserName: &r.User})
	if err != nil {
		return fmt.Errorf("list access keys of %s: %w", r.User, err)
	}
	// An IAM user has at most two keys: delete every one but the key
	// that signs now, to make room for the new one.
	for _, k := range keys.AccessKeyMetadata {
		if id := aws.ToString(k.AccessKeyId); id != current.AccessKeyID {
			if _, err := r.Keys.DeleteAccessKey(ctx, &iam.DeleteAccessKeyInput{UserName: &r.User, AccessKeyId: &id}); err != nil {
				return fmt.Errorf("delete the previous access key %s of %s: %w", id, r.User, err)
			}
			r.Logger.InfoContext(ctx, "rotate: deleted the previous signing key", "user", r.User, "key", id)
		}
	}
	created, err := r.Keys.CreateAccessKey(ctx, &iam.CreateAccessKeyInput{UserName: &r.User})
	if err != nil {
		return fmt.Errorf("create an access key for %s: %w", r.User, err)
	}
	next, _ := json.Marshal(awsstack.SignerSecret{AccessKeyID: aws.ToString(created.AccessKey.AccessKeyId),
		SecretAccessKey: aws.ToString(created.AccessKey.SecretAccessKey)})
	_, err = r.Secrets.PutSecretValue(ctx, &secretsmanager.PutSecretValueInput{SecretId: &ev.SecretID,
		ClientRequestToken: &ev.ClientRequestToken, SecretString: aws.String(string(next)), VersionStages: []string{stagePending}})
	if err != nil {
		return fmt.Errorf("store the new access key: %w", err)
	}
	r.Logger.InfoContext(ctx, "rotate: created the next signing key", "user", r.User, "key", aws.ToString(created.AccessKey.AccessKeyId))
	return nil
}

func (r *Rotator) finish(ctx context.Context, ev Event, versions map[string][]string) error {
	var current string
	for id, stages := range versions {
		if has(stages, stageCurrent) {
			current = id
		}
	}
	if current == ev.ClientRequestToken {
		return nil
	}
	_, err := r.Secrets.UpdateSecretVersionStage(ctx, &secretsmanager.UpdateSecretVersionStageInput{SecretId: &ev.SecretID,
		VersionStage: aws.String(stageCurrent), MoveToVersionId: &ev.ClientRequestToken, RemoveFromVersionId: &current})
	if err != nil {
		return fmt.Errorf("make version %s current: %w", ev.ClientRequestToken, err)
	}
	return nil
}

func (r *Rotator) secret(ctx context.Context, id, stage string) (awsstack.SignerSecret, error) {
	out, err := r.Secrets.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: &id, VersionStage: &stage})
	if err != nil {
		var nf *smtypes.ResourceNotFoundException
		if errors.As(err, &nf) {
			return awsstack.SignerSecret{}, fmt.Errorf("secret %s has no %s version: %w", id, stage, err)
		}
		return awsstack.SignerSecret{}, fmt.Errorf("read secret %s (%s): %w", id, stage, err)
	}
	var s awsstack.SignerSecret
	if err := strictjson.Unmarshal([]byte(aws.ToString(out.SecretString)), &s); err != nil || s.AccessKeyID == "" {
		return awsstack.SignerSecret{}, fmt.Errorf("secret %s (%s) is not a signer secret", id, stage)
	}
	return s, nil
}

func has(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// FromEnv returns the rotator of the stack's rotation function, reading
// only what it needs through lookup (os.LookupEnv): GEN_SIGNER_USER,
// GEN_LOG_LEVEL and the AWS variables Lambda sets. It never parses the
// whole environment (awsstack.ParseEnv): the template's Globals give this
// function the provider settings too, and one the API's functions refuse
// must not stop it, since CloudFormation waits for its answer to
// Custom::SignerKey (an hour by default, and again on the rollback's
// delete). It always returns a rotator: what it cannot use is kept and
// every request is answered with it, FAILED to CloudFormation and an
// error to Secrets Manager. Its logger, JSON lines to w, becomes the
// default one.
func FromEnv(lookup func(string) (string, bool), w io.Writer) *Rotator {
	r := settings.NewReader(lookup)
	level := r.Level(settings.LogLevel, settings.DefaultLogLevel)
	user := r.Check(awsstack.EnvSignerUser, func(s string) bool { return !strings.ContainsAny(s, " /:") },
		"want an IAM user name, not an ARN")
	err := r.Err()
	if err == nil && user == "" {
		err = fmt.Errorf("the rotation function needs %s, which is not set (template.yaml sets it)", awsstack.EnvSignerUser)
	}
	logger := awsstack.NewLogger(w, level)
	slog.SetDefault(logger)
	cfg := awsstack.LambdaConfig(lookup)
	rot := &Rotator{Secrets: secretsmanager.NewFromConfig(cfg), Keys: iam.NewFromConfig(cfg), User: user, Logger: logger, setup: err}
	if err != nil {
		logger.Error("rotate: cannot rotate or answer for the signing key: " + err.Error())
	}
	return rot
}
