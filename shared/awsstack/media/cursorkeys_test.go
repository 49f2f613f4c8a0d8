package media

import (
	"bytes"
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	smtypes "github.com/aws/aws-sdk-go-v2/service/secretsmanager/types"

	"github.com/genvideo/gen/shared/cursor"
)

// fakeSecrets answers GetSecretValue by version stage, as Secrets
// Manager does: a stage no version has is ResourceNotFoundException.
type fakeSecrets struct {
	stages map[string]string
	reads  int
}

func (f *fakeSecrets) GetSecretValue(_ context.Context, in *secretsmanager.GetSecretValueInput, _ ...func(*secretsmanager.Options)) (*secretsmanager.GetSecretValueOutput, error) {
	f.reads++
	v, ok := f.stages[aws.ToString(in.VersionStage)]
	if !ok {
		return nil, &smtypes.ResourceNotFoundException{Message: aws.String("Secrets Manager can't find the specified secret value for staging label")}
	}
	return &secretsmanager.GetSecretValueOutput{SecretString: &v}, nil
}

// The current version's key seals, the previous one's still opens: a
// cursor sealed before a rotation opens after it. A secret never rotated
// has no previous version, which is no error. Keys are read once per
// cursorRefresh.
func TestCursorKeysAcrossARotation(t *testing.T) {
	ctx := context.Background()
	before := &fakeSecrets{stages: map[string]string{
		"AWSCURRENT": `{"accessKeyId":"AKIAOLD","secretAccessKey":"old-secret-access-key-0123456789"}`}}
	after := &fakeSecrets{stages: map[string]string{
		"AWSCURRENT":  `{"accessKeyId":"AKIANEW","secretAccessKey":"new-secret-access-key-0123456789"}`,
		"AWSPREVIOUS": before.stages["AWSCURRENT"]}}
	old := &cursor.Sealer{Keys: &cursorKeys{client: before, arn: "arn:signer"}}
	c, err := old.Seal(ctx, "ledger", "acct", []byte("42"))
	if err != nil {
		t.Fatal(err)
	}
	keys := &cursorKeys{client: after, arn: "arn:signer"}
	got, err := (&cursor.Sealer{Keys: keys}).Open(ctx, "ledger", "acct", c)
	if err != nil || !bytes.Equal(got, []byte("42")) {
		t.Fatalf("a cursor of the previous version after the rotation: %q, %v", got, err)
	}
	ks, _ := keys.CursorKeys(ctx)
	if len(ks) != 2 || string(ks[0]) != "new-secret-access-key-0123456789" || after.reads != 2 {
		t.Errorf("keys %q after %d reads, want the current then the previous, read once", ks, after.reads)
	}
	if _, err := (&cursorKeys{client: &fakeSecrets{}, arn: "arn:signer"}).CursorKeys(ctx); err == nil {
		t.Error("no current version: no error")
	}
}
