// Package taskexpirylambda builds the handler of the task-expiry Lambda,
// fed by the tasks table's stream: when DynamoDB's TTL deletes a task (with
// its videos' retention), the account's history counters, which history's
// total and skip read, must forget it as a DELETE of the task does.
//
// DynamoDB reports a TTL deletion on the stream as a REMOVE record whose
// userIdentity is {"type": "Service", "principalId":
// "dynamodb.amazonaws.com"}; a delete by anyone else has no userIdentity
// (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/time-to-live-ttl-streams.html,
// read 2026-11-26). The template's filter passes only those records; the
// handler checks again, so that a record of a user's delete (which already
// took the task out of the counters) never counts twice.
package taskexpirylambda

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/genvideo/gen/shared/awsstack"
	"github.com/genvideo/gen/shared/task"
)

// Forgetter takes an expired task out of its account's counts, once per
// task however often it is asked (dynamostore.Store).
type Forgetter interface {
	ForgetExpiredTask(ctx context.Context, accountID, taskID string, status task.Status) error
}

// Handler is the Lambda's handler.
type Handler struct {
	Store  Forgetter
	Logger *slog.Logger
}

// New returns the handler on the stack's store.
func New(s *awsstack.Deployment) *Handler { return &Handler{Store: s.Store, Logger: s.Logger} }

// Event is a DynamoDB stream batch, as much of it as the handler reads.
type Event struct {
	Records []Record `json:"Records"`
}

// Record is one stream record.
type Record struct {
	EventName    string `json:"eventName"`
	UserIdentity *struct {
		Type        string `json:"type"`
		PrincipalID string `json:"principalId"`
	} `json:"userIdentity"`
	DynamoDB struct {
		OldImage map[string]struct {
			S string `json:"S"`
		} `json:"OldImage"`
	} `json:"dynamodb"`
}

// ByTTL reports whether the record is a deletion by DynamoDB's TTL.
func (r Record) ByTTL() bool {
	return r.EventName == "REMOVE" && r.UserIdentity != nil &&
		r.UserIdentity.Type == "Service" && r.UserIdentity.PrincipalID == "dynamodb.amazonaws.com"
}

// Report is what one invocation did; it is logged, and a test reads it.
type Report struct {
	Records int `json:"records"`
	Expired int `json:"expired"`
}

// Handle forgets the tasks TTL deleted. An error fails the invocation, and
// the batch is delivered again (the store forgets each task once).
func (h *Handler) Handle(ctx context.Context, ev Event) (Report, error) {
	r := Report{Records: len(ev.Records)}
	for _, rec := range ev.Records {
		if !rec.ByTTL() {
			continue
		}
		img := rec.DynamoDB.OldImage
		id, acct, status := img["id"].S, img["acct"].S, task.Status(img["status"].S)
		if id == "" || acct == "" || status == "" {
			return r, fmt.Errorf("task expiry: a TTL deletion without id, acct and status in its old image (the stream must carry OLD_IMAGE)")
		}
		if err := h.Store.ForgetExpiredTask(ctx, acct, id, status); err != nil {
			return r, fmt.Errorf("task expiry: %w", err)
		}
		r.Expired++
	}
	h.Logger.InfoContext(ctx, "task expiry", "records", r.Records, "expired", r.Expired)
	return r, nil
}
