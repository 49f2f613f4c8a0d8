package taskexpirylambda_test

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/genvideo/gen/shared/awsstack/taskexpirylambda"
	"github.com/genvideo/gen/shared/catalog"
	"github.com/genvideo/gen/shared/domain"
	"github.com/genvideo/gen/shared/params"
	"github.com/genvideo/gen/shared/store"
	"github.com/genvideo/gen/shared/store/dynamostore"
	"github.com/genvideo/gen/shared/store/dynamostore/dynamolocal"
	"github.com/genvideo/gen/shared/task"
)

func TestMain(m *testing.M) { dynamolocal.Main(m) }

// record is a stream record of the tasks table as DynamoDB reports the
// deletion of item it: by TTL, userIdentity names the DynamoDB service;
// by anyone else there is none
// (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/time-to-live-ttl-streams.html).
func record(t *testing.T, tk task.Task, byTTL bool) taskexpirylambda.Record {
	t.Helper()
	identity := ""
	if byTTL {
		identity = `"userIdentity": {"type": "Service", "principalId": "dynamodb.amazonaws.com"},`
	}
	raw := fmt.Sprintf(`{"eventID": "1", "eventName": "REMOVE", "eventVersion": "1.1", "eventSource": "aws:dynamodb",
		"awsRegion": "us-east-1", %s
		"dynamodb": {"ApproximateCreationDateTime": 1767225600, "Keys": {"id": {"S": %q}},
			"OldImage": {"id": {"S": %q}, "acct": {"S": %q}, "status": {"S": %q}, "ttl": {"N": "1767225600"}},
			"SequenceNumber": "100", "SizeBytes": 120, "StreamViewType": "OLD_IMAGE"}}`,
		identity, tk.ID, tk.ID, tk.AccountID, tk.Status)
	var r taskexpirylambda.Record
	if err := json.Unmarshal([]byte(raw), &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// Issue 24, defect 6: history's total and skip read the account's
// counters, which a task deleted by TTL left counting: total claimed
// tasks that the pages no longer held. DynamoDB Local never runs TTL, so
// the test deletes the item as TTL would and hands the handler the record
// the stream reports for it, twice (streams deliver at least once); a
// user's delete (DeleteTask counts it itself) is left alone.
func TestTTLDeletionLeavesTheTotals(t *testing.T) {
	ctx := t.Context()
	client := dynamolocal.Shared(t).Client()
	s := dynamostore.New(client, dynamostore.Config{TablePrefix: "expiry-"})
	if err := s.CreateTables(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	now := time.Now()
	if err := s.CreateAccount(ctx, domain.Account{ID: "acct-ttl", Credits: 10_000, CreatedAt: now}); err != nil {
		t.Fatal(err)
	}
	m, _ := catalog.Lookup("gen-3.1-fast-generate-001")
	var tasks []task.Task
	for i := range 3 {
		at := now.Add(time.Duration(i) * time.Second)
		tk := task.Task{ID: task.NewID(at), AccountID: "acct-ttl", KeyName: "test", Type: catalog.TextToVideo, Model: m.ID,
			Prompt: "a boat", Params: params.Parameters{SampleCount: 1, DurationSeconds: 8, AspectRatio: "16:9", Resolution: "720p",
				GenerateAudio: true, EnhancePrompt: true, PersonGeneration: "allow_adult"},
			CreditsCost: m.Price(true), CreatedAt: at, Deadline: at.Add(10 * time.Minute)}
		if _, err := s.CreateTask(ctx, tk, domain.StartGuard{}); err != nil {
			t.Fatal(err)
		}
		done, err := s.Complete(ctx, tk.ID, domain.Completion{Videos: []task.Video{{Key: "videos/" + tk.ID + "/0.mp4", MimeType: "video/mp4"}}}, at)
		if err != nil {
			t.Fatal(err)
		}
		tasks = append(tasks, done)
	}
	expired := tasks[0]
	// What TTL does: the item goes, nothing else is written.
	if _, err := client.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String(s.Tables().Tasks),
		Key: map[string]types.AttributeValue{"id": &types.AttributeValueMemberS{Value: expired.ID}}}); err != nil {
		t.Fatal(err)
	}
	h := &taskexpirylambda.Handler{Store: s, Logger: slog.New(slog.DiscardHandler)}
	ev := taskexpirylambda.Event{Records: []taskexpirylambda.Record{record(t, expired, true), record(t, tasks[1], false)}}
	for range 2 {
		rep, err := h.Handle(ctx, ev)
		if err != nil || rep.Records != 2 || rep.Expired != 1 {
			t.Fatalf("Handle = %+v, %v; want 2 records, 1 expired", rep, err)
		}
	}
	page, total, err := s.Tasks(ctx, "acct-ttl", store.TaskQuery{Limit: 10})
	if err != nil || total != 2 || len(page) != 2 {
		t.Errorf("history after a TTL deletion: %d tasks, total %d (%v); want 2 and 2", len(page), total, err)
	}
	if _, n, err := s.Tasks(ctx, "acct-ttl", store.TaskQuery{Status: task.Completed, Limit: 10}); err != nil || n != 2 {
		t.Errorf("completed total %d (%v), want 2", n, err)
	}
	// skip past what the total says is there finds an empty page, and
	// no page before it is empty.
	if page, _, err := s.Tasks(ctx, "acct-ttl", store.TaskQuery{Limit: 1, Skip: 1}); err != nil || len(page) != 1 {
		t.Errorf("the second of 2 tasks: %d (%v), want 1", len(page), err)
	}
}
