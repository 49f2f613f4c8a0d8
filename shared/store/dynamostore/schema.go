package dynamostore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Attribute and index names that are part of the tables' schema (the SAM
// template declares the same; infra/docs/dynamodb-tables.md lists them).
const (
	// accounts: partition acct, sort sk ("A" or "L#<seq>").
	attrAccount = "acct"
	attrSort    = "sk"
	// keys: partition pk ("H#<hash>" or "I#<id>"); index by-account on
	// account and order. counters: partition key, TTL on ttl.
	attrKeyPK     = "pk"
	attrKeyOwner  = "account"
	attrKeyOrder  = "order"
	indexKeys     = "by-account"
	attrCounterPK = "key"
	attrTTL       = "ttl"
	// tasks: partition id; indexes on acct, acctStatus and unfinished,
	// each sorted by hist.
	attrTaskPK      = "id"
	attrHist        = "hist"
	attrAcctStatus  = "acctStatus"
	attrUnfinished  = "unfinished"
	indexHistory    = "history"
	indexStatus     = "status"
	indexUnfinished = "unfinished"
)

// tableReadyTimeout bounds the wait for a new table to become active.
const tableReadyTimeout = 5 * time.Minute

// CreateTables creates those of the store's tables that do not exist yet,
// with their indexes and on-demand billing, waits until they are active
// and turns on TTL on the counters table, the accounts table (whose
// idempotency records expire) and the tasks table (Config.TaskRetention). On AWS the SAM template creates
// the tables; this is for DynamoDB Local and for bootstrapping by hand.
func (s *Store) CreateTables(ctx context.Context) error {
	if s.admin == nil {
		return errors.New("create tables: the store has no DynamoDB client")
	}
	for _, in := range s.tableDefinitions() {
		if err := s.createTable(ctx, in); err != nil {
			return err
		}
	}
	if err := s.enableStream(ctx, s.t.Webhooks, webhooksStream()); err != nil {
		return err
	}
	if err := s.enableStream(ctx, s.t.Tasks, tasksStream()); err != nil {
		return err
	}
	for _, table := range []string{s.t.Counters, s.t.Accounts, s.t.Tasks, s.t.Webhooks} {
		if err := s.enableTTL(ctx, table); err != nil {
			return err
		}
	}
	return nil
}

func (s *Store) createTable(ctx context.Context, in *dynamodb.CreateTableInput) error {
	name := *in.TableName
	_, err := s.admin.CreateTable(ctx, in)
	var inUse *types.ResourceInUseException
	if err != nil && !errors.As(err, &inUse) {
		return dbErr("create table "+name, err)
	}
	w := dynamodb.NewTableExistsWaiter(s.admin, func(o *dynamodb.TableExistsWaiterOptions) {
		o.MinDelay, o.MaxDelay = time.Second, 10*time.Second
	})
	if err := w.Wait(ctx, &dynamodb.DescribeTableInput{TableName: &name}, tableReadyTimeout); err != nil {
		return dbErr("wait for table "+name, err)
	}
	return nil
}

// enableStream turns on the stream of a table made before CreateTables
// asked for one (a data directory of an older run-aws-local), as
// template.yaml has it.
func (s *Store) enableStream(ctx context.Context, table string, spec *types.StreamSpecification) error {
	op := "enable the stream of " + table
	d, err := s.admin.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: &table})
	if err != nil {
		return dbErr(op, err)
	}
	if sp := d.Table.StreamSpecification; sp != nil && sp.StreamEnabled != nil && *sp.StreamEnabled {
		return nil
	}
	_, err = s.admin.UpdateTable(ctx, &dynamodb.UpdateTableInput{TableName: &table, StreamSpecification: spec})
	if err != nil {
		return dbErr(op, err)
	}
	return nil
}

// webhooksStream is the webhooks table's stream, which wakes the deliver
// function on AWS (template.yaml, WebhooksTable) and in the assembly on
// one machine: new images, for the outbox inserts.
func webhooksStream() *types.StreamSpecification {
	return &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: types.StreamViewTypeNewImage}
}

// tasksStream is the tasks table's stream, which tells the task-expiry
// function of the tasks TTL deletes (template.yaml, TasksTable): old
// images, for the deleted task's account and status (ForgetExpiredTask).
func tasksStream() *types.StreamSpecification {
	return &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: types.StreamViewTypeOldImage}
}

func (s *Store) enableTTL(ctx context.Context, table string) error {
	op := "enable TTL on " + table
	d, err := s.admin.DescribeTimeToLive(ctx, &dynamodb.DescribeTimeToLiveInput{TableName: &table})
	if err != nil {
		return dbErr(op, err)
	}
	if st := d.TimeToLiveDescription; st != nil &&
		(st.TimeToLiveStatus == types.TimeToLiveStatusEnabled || st.TimeToLiveStatus == types.TimeToLiveStatusEnabling) {
		return nil
	}
	on, attr := true, attrTTL
	_, err = s.admin.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{
		TableName:               &table,
		TimeToLiveSpecification: &types.TimeToLiveSpecification{Enabled: &on, AttributeName: &attr},
	})
	if err != nil {
		return dbErr(op, err)
	}
	return nil
}

// tableDefinitions are the four tables.
func (s *Store) tableDefinitions() []*dynamodb.CreateTableInput {
	strAttr := func(names ...string) []types.AttributeDefinition {
		defs := make([]types.AttributeDefinition, len(names))
		for i, n := range names {
			defs[i] = types.AttributeDefinition{AttributeName: &n, AttributeType: types.ScalarAttributeTypeS}
		}
		return defs
	}
	keySchema := func(hash, rng string) []types.KeySchemaElement {
		ks := []types.KeySchemaElement{{AttributeName: &hash, KeyType: types.KeyTypeHash}}
		if rng != "" {
			ks = append(ks, types.KeySchemaElement{AttributeName: &rng, KeyType: types.KeyTypeRange})
		}
		return ks
	}
	index := func(name, hash, rng string) types.GlobalSecondaryIndex {
		return types.GlobalSecondaryIndex{
			IndexName:  &name,
			KeySchema:  keySchema(hash, rng),
			Projection: &types.Projection{ProjectionType: types.ProjectionTypeAll},
		}
	}
	table := func(name string, attrs []types.AttributeDefinition, ks []types.KeySchemaElement,
		gsis ...types.GlobalSecondaryIndex) *dynamodb.CreateTableInput {
		return &dynamodb.CreateTableInput{
			TableName:              &name,
			AttributeDefinitions:   attrs,
			KeySchema:              ks,
			GlobalSecondaryIndexes: gsis,
			BillingMode:            types.BillingModePayPerRequest,
		}
	}
	webhooks := table(s.t.Webhooks, append(strAttr(attrWhPK, attrWhSort, attrDue),
		types.AttributeDefinition{AttributeName: strPtr(attrNextAt), AttributeType: types.ScalarAttributeTypeN}),
		keySchema(attrWhPK, attrWhSort),
		index(indexDue, attrDue, attrNextAt))
	webhooks.StreamSpecification = webhooksStream()
	tasks := table(s.t.Tasks, strAttr(attrTaskPK, attrAccount, attrHist, attrAcctStatus, attrUnfinished),
		keySchema(attrTaskPK, ""),
		index(indexHistory, attrAccount, attrHist),
		index(indexStatus, attrAcctStatus, attrHist),
		index(indexUnfinished, attrUnfinished, attrHist))
	tasks.StreamSpecification = tasksStream()
	return []*dynamodb.CreateTableInput{
		table(s.t.Accounts, strAttr(attrAccount, attrSort), keySchema(attrAccount, attrSort)),
		table(s.t.Keys, strAttr(attrKeyPK, attrKeyOwner, attrKeyOrder), keySchema(attrKeyPK, ""),
			index(indexKeys, attrKeyOwner, attrKeyOrder)),
		table(s.t.Counters, strAttr(attrCounterPK), keySchema(attrCounterPK, "")),
		tasks,
		// webhooks: partition pk, sort sk; index due on due and nextAt
		// (a number), the pending outbox items by when they are due; a
		// stream of new images.
		webhooks,
	}
}

// sortable is v as a fixed-width decimal, so that strings order as the
// numbers do; negative values (times before 1970) sort as 0.
func sortable(v int64) string { return fmt.Sprintf("%015d", max(v, 0)) }
