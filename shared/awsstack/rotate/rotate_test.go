package rotate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	iamtypes "github.com/aws/aws-sdk-go-v2/service/iam/types"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/genvideo/gen/shared/awsstack"
)

// fakeAWS is Secrets Manager's versions and stages of one secret, and the
// access keys of one IAM user (at most two, as IAM allows).
type fakeAWS struct {
	versions map[string]string   // version id -> secret string
	stages   map[string][]string // version id -> stages
	keys     []string
	next     int
}

func (f *fakeAWS) DescribeSecret(_ context.Context, in *secretsmanager.DescribeSecretInput, _ ...func(*secretsmanager.Options)) (*secretsmanager.DescribeSecretOutput, error) {
	out := map[string][]string{}
	for id, st := range f.stages {
		out[id] = slices.Clone(st)
	}
	return &secretsmanager.DescribeSecretOutput{VersionIdsToStages: out}, nil
}

func (f *fakeAWS) GetSecretValue(_ context.Context, in *secretsmanager.GetSecretValueInput, _ ...func(*secretsmanager.Options)) (*secretsmanager.GetSecretValueOutput, error) {
	for id, st := range f.stages {
		if (in.VersionId == nil || *in.VersionId == id) && slices.Contains(st, aws.ToString(in.VersionStage)) {
			return &secretsmanager.GetSecretValueOutput{SecretString: aws.String(f.versions[id])}, nil
		}
	}
	return nil, errors.New("ResourceNotFoundException")
}

func (f *fakeAWS) PutSecretValue(_ context.Context, in *secretsmanager.PutSecretValueInput, _ ...func(*secretsmanager.Options)) (*secretsmanager.PutSecretValueOutput, error) {
	id := aws.ToString(in.ClientRequestToken)
	f.versions[id] = aws.ToString(in.SecretString)
	f.stages[id] = in.VersionStages
	return &secretsmanager.PutSecretValueOutput{}, nil
}

func (f *fakeAWS) UpdateSecretVersionStage(_ context.Context, in *secretsmanager.UpdateSecretVersionStageInput, _ ...func(*secretsmanager.Options)) (*secretsmanager.UpdateSecretVersionStageOutput, error) {
	from, to := aws.ToString(in.RemoveFromVersionId), aws.ToString(in.MoveToVersionId)
	f.stages[from] = slices.DeleteFunc(f.stages[from], func(s string) bool { return s == stageCurrent })
	f.stages[from] = append(f.stages[from], "AWSPREVIOUS")
	f.stages[to] = []string{stageCurrent}
	return &secretsmanager.UpdateSecretVersionStageOutput{}, nil
}

func (f *fakeAWS) ListAccessKeys(context.Context, *iam.ListAccessKeysInput, ...func(*iam.Options)) (*iam.ListAccessKeysOutput, error) {
	var md []iamtypes.AccessKeyMetadata
	for _, k := range f.keys {
		md = append(md, iamtypes.AccessKeyMetadata{AccessKeyId: aws.String(k)})
	}
	return &iam.ListAccessKeysOutput{AccessKeyMetadata: md}, nil
}

func (f *fakeAWS) CreateAccessKey(context.Context, *iam.CreateAccessKeyInput, ...func(*iam.Options)) (*iam.CreateAccessKeyOutput, error) {
	if len(f.keys) == 2 {
		return nil, errors.New("LimitExceeded: Cannot exceed quota for AccessKeysPerUser: 2")
	}
	f.next++
	id := fmt.Sprintf("AKIAKEY%d", f.next)
	f.keys = append(f.keys, id)
	return &iam.CreateAccessKeyOutput{AccessKey: &iamtypes.AccessKey{AccessKeyId: aws.String(id), SecretAccessKey: aws.String("secret-" + id)}}, nil
}

func (f *fakeAWS) DeleteAccessKey(_ context.Context, in *iam.DeleteAccessKeyInput, _ ...func(*iam.Options)) (*iam.DeleteAccessKeyOutput, error) {
	f.keys = slices.DeleteFunc(f.keys, func(k string) bool { return k == aws.ToString(in.AccessKeyId) })
	return &iam.DeleteAccessKeyOutput{}, nil
}

func (f *fakeAWS) current(t *testing.T) string {
	t.Helper()
	for id, st := range f.stages {
		if slices.Contains(st, stageCurrent) {
			var s awsstack.SignerSecret
			json.Unmarshal([]byte(f.versions[id]), &s)
			return s.AccessKeyID
		}
	}
	t.Fatal("no current version")
	return ""
}

// Two rotations in a row: each adds a key and makes it current, and the
// key that was current when a rotation began (which signed links of the
// last 24 hours) survives it; only the one before it goes. Each step may
// run twice.
func TestRotationKeepsTheKeyThatSigns(t *testing.T) {
	f := &fakeAWS{versions: map[string]string{"v0": `{"accessKeyId":"AKIAKEY0","secretAccessKey":"s0"}`},
		stages: map[string][]string{"v0": {stageCurrent}}, keys: []string{"AKIAKEY0"}}
	r := &Rotator{Secrets: f, Keys: f, User: "gen-signer", Logger: slog.New(slog.DiscardHandler)}
	ctx := context.Background()
	for i, token := range []string{"v1", "v2", "v3"} {
		signing := f.current(t)
		// Secrets Manager stages the new version's id before createSecret.
		f.stages[token] = nil
		for _, step := range []string{"createSecret", "createSecret", "setSecret", "testSecret", "finishSecret", "finishSecret"} {
			if err := r.Rotate(ctx, Event{Step: step, SecretID: "arn:secret", ClientRequestToken: token}); err != nil {
				t.Fatalf("rotation %d, %s: %v", i+1, step, err)
			}
		}
		now := f.current(t)
		if now == signing || !slices.Contains(f.keys, signing) || !slices.Contains(f.keys, now) || len(f.keys) != 2 {
			t.Errorf("rotation %d: keys %v, current %s; want the new key current and the one that signed (%s) kept", i+1, f.keys, now, signing)
		}
	}
	if err := r.Rotate(ctx, Event{Step: "createSecret", SecretID: "arn:secret", ClientRequestToken: "unknown"}); err == nil {
		t.Errorf("a step for a version that is not part of the rotation: no error")
	}
}
