package rotatesignerlambda

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/iam"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/genvideo/gen/shared/awsstack"
)

// The signing user's access keys are all made and removed by this
// function, never by CloudFormation: a key CloudFormation created would be
// deleted by the second rotation (drift, and a stack update that touches
// it fails), and CloudFormation cannot delete a user that still has keys
// it does not know. So template.yaml's custom resource SignerKey
// (Custom::SignerKey) asks this function for the first key when the stack
// is created, and to delete every key of the user before the user goes.

// SignerKeyRequest is a CloudFormation custom resource request
// (https://docs.aws.amazon.com/AWSCloudFormation/latest/UserGuide/crpg-ref-requests.html,
// read 2026-11-26).
type SignerKeyRequest struct {
	RequestType        string `json:"RequestType"` // Create, Update, Delete
	ResponseURL        string `json:"ResponseURL"`
	StackID            string `json:"StackId"`
	RequestID          string `json:"RequestId"`
	LogicalResourceID  string `json:"LogicalResourceId"`
	PhysicalResourceID string `json:"PhysicalResourceId"`
	ResourceProperties struct {
		SecretID string `json:"SecretId"`
	} `json:"ResourceProperties"`
}

// Handle is the function's handler: a rotation step from Secrets Manager
// (Event), or CloudFormation's request for the signing key
// (SignerKeyRequest).
func (r *Rotator) Handle(ctx context.Context, raw json.RawMessage) error {
	var probe struct {
		RequestType string `json:"RequestType"`
	}
	json.Unmarshal(raw, &probe)
	if probe.RequestType == "" {
		var ev Event
		if err := json.Unmarshal(raw, &ev); err != nil {
			return fmt.Errorf("rotation event: %w", err)
		}
		return r.Rotate(ctx, ev)
	}
	var req SignerKeyRequest
	if err := json.Unmarshal(raw, &req); err != nil {
		return fmt.Errorf("custom resource request: %w", err)
	}
	return r.SignerKey(ctx, req)
}

// answerReserve is the time kept at the end of an invocation to answer
// CloudFormation: the work stops that much before Lambda's deadline, so
// that even a key operation that hangs is answered FAILED rather than
// left for CloudFormation to wait out.
const answerReserve = 5 * time.Second

// SignerKey serves a Custom::SignerKey request and answers CloudFormation
// at its ResponseURL: on Create, the user's first access key, stored as
// the secret's current version (none is made if the current one already
// holds a key of the user); on Delete, every access key of the user
// removed, so that the user can be; Update changes nothing. Every path
// answers, a failure FAILED with its reason (a rotator FromEnv could not
// set up, a panic, a key operation cut by the deadline included), so that
// the stack rolls back rather than waiting for the resource's
// ServiceTimeout.
func (r *Rotator) SignerKey(ctx context.Context, req SignerKeyRequest) error {
	err := r.setup
	if err == nil {
		err = r.serve(ctx, req)
	}
	status, reason := "SUCCESS", ""
	if err != nil {
		status, reason = "FAILED", err.Error()
		r.Logger.ErrorContext(ctx, "signer key: "+reason, "request", req.RequestType, "user", r.User)
	}
	physical := req.PhysicalResourceID
	if physical == "" {
		physical = "signer-key-" + r.User
	}
	body, _ := json.Marshal(map[string]string{"Status": status, "Reason": reason, "PhysicalResourceId": physical,
		"StackId": req.StackID, "RequestId": req.RequestID, "LogicalResourceId": req.LogicalResourceID})
	// The answer has the reserve of its own, whatever the work left.
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), answerReserve)
	defer cancel()
	// The presigned ResponseURL takes a PUT with no content type.
	put, perr := http.NewRequestWithContext(actx, http.MethodPut, req.ResponseURL, bytes.NewReader(body))
	if perr != nil {
		return fmt.Errorf("answer CloudFormation: %w", perr)
	}
	client := r.HTTP
	if client == nil {
		client = http.DefaultClient
	}
	resp, perr := client.Do(put)
	if perr != nil {
		return fmt.Errorf("answer CloudFormation: %w", perr)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("answer CloudFormation: %s", resp.Status)
	}
	return nil
}

// serve does what req asks, before Lambda's deadline less answerReserve;
// a panic is its error.
func (r *Rotator) serve(ctx context.Context, req SignerKeyRequest) (err error) {
	if d, ok := ctx.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, d.Add(-answerReserve))
		defer cancel()
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("signer key %s: panic: %v", req.RequestType, p)
		}
	}()
	switch req.RequestType {
	case "Create":
		return r.firstKey(ctx, req.ResourceProperties.SecretID, req.RequestID)
	case "Delete":
		return r.deleteKeys(ctx)
	}
	return nil
}

// firstKey makes the user's first key the secret's current version.
func (r *Rotator) firstKey(ctx context.Context, secretID, token string) error {
	keys, err := r.Keys.ListAccessKeys(ctx, &iam.ListAccessKeysInput{UserName: &r.User})
	if err != nil {
		return fmt.Errorf("list access keys of %s: %w", r.User, err)
	}
	if current, err := r.secret(ctx, secretID, stageCurrent); err == nil {
		for _, k := range keys.AccessKeyMetadata {
			if aws.ToString(k.AccessKeyId) == current.AccessKeyID {
				return nil // a retried Create: the key is in place
			}
		}
	}
	created, err := r.Keys.CreateAccessKey(ctx, &iam.CreateAccessKeyInput{UserName: &r.User})
	if err != nil {
		return fmt.Errorf("create the first access key of %s: %w", r.User, err)
	}
	value, _ := json.Marshal(awsstack.SignerSecret{AccessKeyID: aws.ToString(created.AccessKey.AccessKeyId),
		SecretAccessKey: aws.ToString(created.AccessKey.SecretAccessKey)})
	if _, err := r.Secrets.PutSecretValue(ctx, &secretsmanager.PutSecretValueInput{SecretId: &secretID,
		ClientRequestToken: &token, SecretString: aws.String(string(value)), VersionStages: []string{stageCurrent}}); err != nil {
		return fmt.Errorf("store the first access key of %s: %w", r.User, err)
	}
	r.Logger.InfoContext(ctx, "signer key: created the first signing key", "user", r.User, "key", aws.ToString(created.AccessKey.AccessKeyId))
	return nil
}

// deleteKeys removes every access key of the user.
func (r *Rotator) deleteKeys(ctx context.Context) error {
	keys, err := r.Keys.ListAccessKeys(ctx, &iam.ListAccessKeysInput{UserName: &r.User})
	if err != nil {
		return fmt.Errorf("list access keys of %s: %w", r.User, err)
	}
	for _, k := range keys.AccessKeyMetadata {
		if _, err := r.Keys.DeleteAccessKey(ctx, &iam.DeleteAccessKeyInput{UserName: &r.User, AccessKeyId: k.AccessKeyId}); err != nil {
			return fmt.Errorf("delete access key %s of %s: %w", aws.ToString(k.AccessKeyId), r.User, err)
		}
	}
	return nil
}
