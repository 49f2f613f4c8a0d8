package rotatesignerlambda

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

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
	if slices.Contains(in.VersionStages, stageCurrent) {
		// Secrets Manager moves AWSCURRENT to the new version.
		for v := range f.stages {
			f.stages[v] = slices.DeleteFunc(f.stages[v], func(s string) bool { return s == stageCurrent })
		}
	}
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

// Issue 24, defect 5: every key of the signing user is this function's,
// none CloudFormation's. The stack's Custom::SignerKey makes the first key
// (the secret's current version) on Create, and removes every key on
// Delete, so that CloudFormation can delete the user; then rotations
// never delete a key CloudFormation made. Each answer goes to the
// request's ResponseURL.
func TestSignerKeyLifecycle(t *testing.T) {
	var answers []map[string]string
	cfn := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var a map[string]string
		if r.Method != http.MethodPut || json.NewDecoder(r.Body).Decode(&a) != nil {
			t.Errorf("CloudFormation's answer: %s, want a PUT of JSON", r.Method)
		}
		answers = append(answers, a)
	}))
	defer cfn.Close()
	// The stack's placeholder: no key yet.
	f := &fakeAWS{versions: map[string]string{"v0": `{"accessKeyId":"","secretAccessKey":""}`},
		stages: map[string][]string{"v0": {stageCurrent}}}
	r := &Rotator{Secrets: f, Keys: f, User: "gen-signer", Logger: slog.New(slog.DiscardHandler)}
	ctx := context.Background()
	request := func(typ, id string) {
		t.Helper()
		raw := fmt.Sprintf(`{"RequestType":%q,"ResponseURL":%q,"StackId":"arn:stack","RequestId":%q,"LogicalResourceId":"SignerKey",
			"ResourceType":"Custom::SignerKey","ResourceProperties":{"ServiceToken":"arn:fn","SecretId":"arn:secret"}}`, typ, cfn.URL, id)
		if err := r.Handle(ctx, json.RawMessage(raw)); err != nil {
			t.Fatalf("%s: %v", typ, err)
		}
		if last := answers[len(answers)-1]; last["Status"] != "SUCCESS" || last["RequestId"] != id || last["PhysicalResourceId"] == "" {
			t.Fatalf("%s answered %v", typ, last)
		}
	}
	request("Create", "11111111-1111-1111-1111-111111111111")
	request("Create", "22222222-2222-2222-2222-222222222222") // retried: no second key
	first := f.current(t)
	if len(f.keys) != 1 || first != f.keys[0] {
		t.Fatalf("after Create: keys %v, current %q; want one key, current", f.keys, first)
	}
	// Two rotations: the first key, made by this function, goes in the
	// second, as rotations go; nothing CloudFormation knows changes.
	for _, token := range []string{"v1", "v2"} {
		f.stages[token] = nil
		for _, step := range []string{"createSecret", "setSecret", "testSecret", "finishSecret"} {
			if err := r.Handle(ctx, json.RawMessage(fmt.Sprintf(`{"Step":%q,"SecretId":"arn:secret","ClientRequestToken":%q}`, step, token))); err != nil {
				t.Fatalf("rotation %s, %s: %v", token, step, err)
			}
		}
	}
	if slices.Contains(f.keys, first) || len(f.keys) != 2 {
		t.Errorf("after two rotations: keys %v, want two, the first (%s) gone", f.keys, first)
	}
	request("Update", "33333333-3333-3333-3333-333333333333")
	if len(f.keys) != 2 {
		t.Errorf("Update changed the keys: %v", f.keys)
	}
	request("Delete", "44444444-4444-4444-4444-444444444444")
	if len(f.keys) != 0 {
		t.Errorf("after Delete: keys %v, want none, so that CloudFormation can delete the user", f.keys)
	}
}

// stuckKeys is IAM that never answers ListAccessKeys, or panics in it.
type stuckKeys struct {
	*fakeAWS
	panics bool
}

func (s stuckKeys) ListAccessKeys(ctx context.Context, _ *iam.ListAccessKeysInput, _ ...func(*iam.Options)) (*iam.ListAccessKeysOutput, error) {
	if s.panics {
		panic("a bug")
	}
	<-ctx.Done()
	return nil, ctx.Err()
}

// Issue 34, defect 2: CloudFormation waits for Custom::SignerKey's answer
// (an hour by default, and again on the rollback's delete), so every path
// answers it: an environment the rotator cannot work with (FromEnv reads
// only GEN_SIGNER_USER and GEN_LOG_LEVEL, so a provider setting the API's
// functions refuse is not one), a panic, and IAM that does not answer
// before Lambda's deadline.
func TestSignerKeyAlwaysAnswers(t *testing.T) {
	// What the template's Globals give every function, the rotation
	// included: here a gemini generator without its key's secret, which
	// awsstack.ParseEnv refuses.
	badProvider := map[string]string{"GEN_GENERATOR": "gemini", "GEN_ROUTES": "{not json", "GEN_CREDIT_USD": "free",
		"GEN_LOG_LEVEL": "DEBUG", "AWS_REGION": "us-east-1"}
	if _, err := awsstack.ParseEnv(func(k string) (string, bool) { v, ok := badProvider[k]; return v, ok }); err == nil {
		t.Fatal("awsstack.ParseEnv takes the bad provider settings: the test tests nothing")
	}
	fromEnv := func(extra map[string]string) *Rotator {
		env := maps.Clone(badProvider)
		maps.Copy(env, extra)
		r := FromEnv(func(k string) (string, bool) { v, ok := env[k]; return v, ok }, io.Discard)
		f := &fakeAWS{versions: map[string]string{"v0": `{"accessKeyId":"","secretAccessKey":""}`},
			stages: map[string][]string{"v0": {stageCurrent}}}
		r.Secrets, r.Keys = f, f
		return r
	}
	for _, tc := range []struct {
		name     string
		rotator  func() *Rotator
		deadline time.Duration // of the invocation; 0 is none
		status   string
		reason   string // in the answer's Reason
	}{
		{name: "provider settings the API refuses", rotator: func() *Rotator { return fromEnv(map[string]string{"GEN_SIGNER_USER": "gen-signer"}) },
			status: "SUCCESS"},
		{name: "no signing user", rotator: func() *Rotator { return fromEnv(nil) }, status: "FAILED", reason: awsstack.EnvSignerUser},
		{name: "a signing user that is an ARN", rotator: func() *Rotator {
			return fromEnv(map[string]string{"GEN_SIGNER_USER": "arn:aws:iam::123456789012:user/gen-signer"})
		}, status: "FAILED", reason: awsstack.EnvSignerUser},
		{name: "IAM does not answer", rotator: func() *Rotator {
			r := fromEnv(map[string]string{"GEN_SIGNER_USER": "gen-signer"})
			r.Keys = stuckKeys{fakeAWS: r.Keys.(*fakeAWS)}
			return r
		}, deadline: answerReserve + 300*time.Millisecond, status: "FAILED", reason: "deadline exceeded"},
		{name: "a panic", rotator: func() *Rotator {
			r := fromEnv(map[string]string{"GEN_SIGNER_USER": "gen-signer"})
			r.Keys = stuckKeys{fakeAWS: r.Keys.(*fakeAWS), panics: true}
			return r
		}, status: "FAILED", reason: "panic"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			answers := make(chan map[string]string, 1)
			cfn := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				var a map[string]string
				json.NewDecoder(r.Body).Decode(&a)
				answers <- a
			}))
			defer cfn.Close()
			ctx := context.Background()
			if tc.deadline > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tc.deadline)
				defer cancel()
			}
			raw := fmt.Sprintf(`{"RequestType":"Create","ResponseURL":%q,"StackId":"arn:stack","RequestId":"r1","LogicalResourceId":"SignerKey",
				"ResourceProperties":{"ServiceToken":"arn:fn","SecretId":"arn:secret"}}`, cfn.URL)
			err := tc.rotator().Handle(ctx, json.RawMessage(raw))
			select {
			case a := <-answers:
				if a["Status"] != tc.status || !strings.Contains(a["Reason"], tc.reason) || a["RequestId"] != "r1" {
					t.Errorf("answered %v (%v), want %s with a reason naming %q", a, err, tc.status, tc.reason)
				}
			default:
				t.Errorf("CloudFormation got no answer (%v): it would wait out the ServiceTimeout", err)
			}
			if tc.deadline > 0 && ctx.Err() != nil {
				t.Errorf("answered after the invocation's deadline: Lambda would have stopped it first")
			}
		})
	}
	// A rotation step of a rotator that cannot work fails, naming why.
	if err := fromEnv(nil).Handle(context.Background(), json.RawMessage(`{"Step":"createSecret","SecretId":"s","ClientRequestToken":"v1"}`)); err == nil ||
		!strings.Contains(err.Error(), awsstack.EnvSignerUser) {
		t.Errorf("rotation without a user: %v, want an error naming %s", err, awsstack.EnvSignerUser)
	}
}
