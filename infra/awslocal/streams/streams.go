// Package streams emulates, on one machine, Lambda's event source mapping
// of a DynamoDB stream: it reads the stream of a table of DynamoDB Local
// through the Streams API (DescribeTable's LatestStreamArn, DescribeStream's
// shards, GetShardIterator at the template's StartingPosition, GetRecords
// in a loop), passes the records that match the mapping's FilterCriteria,
// and invokes the function with events.DynamoDBEvent batches of at most
// BatchSize records, retrying a failed batch MaximumRetryAttempts times
// before it is dropped, as Lambda does without an on-failure destination.
package streams

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	stypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"

	"github.com/genvideo/gen/infra/awslocal/samtemplate"
	"github.com/genvideo/gen/shared/awsstack/lambdaruntime"
)

// Invoker runs the function (a lambdaruntime.Pool).
type Invoker interface {
	Invoke(ctx context.Context, requestID string, event []byte) (lambdaruntime.Result, *lambdaruntime.Process, bool, error)
}

// Tables is what the poller needs of DynamoDB: the table's stream.
type Tables interface {
	DescribeTable(ctx context.Context, in *dynamodb.DescribeTableInput, opts ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error)
}

// Config is one event source mapping.
type Config struct {
	Source samtemplate.Stream
	// Function names the function in logs.
	Function string
	Invoker  Invoker
	Tables   Tables
	Streams  *dynamodbstreams.Client
	Region   string
	Logger   *slog.Logger
	// Poll is the pause between reads that found nothing (default
	// 250 ms; Lambda polls a shard about four times a second).
	Poll time.Duration
}

// Poller reads one stream and invokes one function.
type Poller struct {
	cfg     Config
	filters []Filter
	arn     string
	// iters are the open shards' iterators (nil: from the shard's
	// start, TRIM_HORIZON); done the shards read to their end.
	iters map[string]*string
	done  map[string]bool
}

// New checks the mapping (its filter patterns) and finds the table's
// stream; the shards open now are read from StartingPosition.
func New(ctx context.Context, cfg Config) (*Poller, error) {
	if cfg.Poll <= 0 {
		cfg.Poll = 250 * time.Millisecond
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	p := &Poller{cfg: cfg, iters: map[string]*string{}, done: map[string]bool{}}
	for _, pat := range cfg.Source.Filters {
		f, err := ParseFilter(pat)
		if err != nil {
			return nil, fmt.Errorf("event %s of %s: %w", cfg.Source.Name, cfg.Function, err)
		}
		p.filters = append(p.filters, f)
	}
	d, err := cfg.Tables.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: &cfg.Source.Table})
	if err != nil {
		return nil, fmt.Errorf("stream of %s: %w", cfg.Source.Table, err)
	}
	p.arn = aws.ToString(d.Table.LatestStreamArn)
	if p.arn == "" {
		return nil, fmt.Errorf("table %s has no stream (CreateTables should have enabled it)", cfg.Source.Table)
	}
	// The shards are read from their start; for LATEST what is there now
	// is read and dropped first. (DynamoDB Local answers a LATEST
	// iterator of a shard without records with TrimmedDataAccess.)
	if err := p.shards(ctx); err != nil {
		return nil, err
	}
	if cfg.Source.StartingPosition != "TRIM_HORIZON" {
		for id := range p.iters {
			for {
				n, err := p.read(ctx, id, func([]stypes.Record) {})
				if err != nil {
					return nil, err
				}
				if n == 0 {
					break
				}
			}
		}
	}
	return p, nil
}

// shards takes the stream's shards not yet known, to be read from their
// start.
func (p *Poller) shards(ctx context.Context) error {
	var start *string
	for {
		d, err := p.cfg.Streams.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: &p.arn, ExclusiveStartShardId: start})
		if err != nil {
			return fmt.Errorf("describe stream %s: %w", p.arn, err)
		}
		for _, sh := range d.StreamDescription.Shards {
			id := aws.ToString(sh.ShardId)
			if _, open := p.iters[id]; open || p.done[id] {
				continue
			}
			p.iters[id] = nil
		}
		start = d.StreamDescription.LastEvaluatedShardId
		if start == nil {
			return nil
		}
	}
}

// Run reads the stream until ctx ends.
func (p *Poller) Run(ctx context.Context) {
	log := p.cfg.Logger
	for ctx.Err() == nil {
		got, err := p.once(ctx)
		if err != nil && ctx.Err() == nil {
			log.Warn("stream read failed", "component", "streams", "function", p.cfg.Function, "err", err.Error())
		}
		if got == 0 {
			select {
			case <-ctx.Done():
			case <-time.After(p.cfg.Poll):
			}
		}
	}
}

// once reads every open shard once and delivers what it read; shards
// opened since (a closed shard's children) are read from their start.
func (p *Poller) once(ctx context.Context) (int, error) {
	if err := p.shards(ctx); err != nil {
		return 0, err
	}
	ids := make([]string, 0, len(p.iters))
	for id := range p.iters {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	total := 0
	for _, id := range ids {
		n, err := p.read(ctx, id, func(recs []stypes.Record) { p.deliver(ctx, recs) })
		total += n
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

// read reads shard id once and hands what it read to use. A shard whose
// iterator ran past its trimmed start (or expired) is read again from
// its start, as Lambda does.
func (p *Poller) read(ctx context.Context, id string, use func([]stypes.Record)) (int, error) {
	if p.iters[id] == nil {
		it, err := p.cfg.Streams.GetShardIterator(ctx, &dynamodbstreams.GetShardIteratorInput{
			StreamArn: &p.arn, ShardId: &id, ShardIteratorType: stypes.ShardIteratorTypeTrimHorizon})
		if err != nil {
			return 0, fmt.Errorf("shard iterator of %s: %w", id, err)
		}
		p.iters[id] = it.ShardIterator
	}
	out, err := p.cfg.Streams.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: p.iters[id]})
	if err != nil {
		var trimmed *stypes.TrimmedDataAccessException
		var expired *stypes.ExpiredIteratorException
		if errors.As(err, &trimmed) || errors.As(err, &expired) {
			// A shard without records yet (DynamoDB Local), or an old
			// iterator: taken again from its start next time.
			p.iters[id] = nil
			return 0, nil
		}
		return 0, fmt.Errorf("records of shard %s: %w", id, err)
	}
	if out.NextShardIterator == nil {
		delete(p.iters, id)
		p.done[id] = true
	} else {
		p.iters[id] = out.NextShardIterator
	}
	use(out.Records)
	return len(out.Records), nil
}

// deliver invokes the function with the records that pass the filters,
// BatchSize at a time, in order.
func (p *Poller) deliver(ctx context.Context, recs []stypes.Record) {
	var batch []events.DynamoDBEventRecord
	for _, r := range recs {
		er := p.record(r)
		if p.passes(er) {
			batch = append(batch, er)
		}
	}
	size := max(p.cfg.Source.BatchSize, 1)
	for len(batch) > 0 {
		n := min(size, len(batch))
		p.invoke(ctx, batch[:n])
		batch = batch[n:]
	}
}

// invoke runs one batch, retried as the mapping says; a batch that still
// fails is dropped (logged), and the shard goes on.
func (p *Poller) invoke(ctx context.Context, recs []events.DynamoDBEventRecord) {
	log := p.cfg.Logger.With("component", "streams", "function", p.cfg.Function, "records", len(recs))
	ev, _ := json.Marshal(events.DynamoDBEvent{Records: recs})
	for attempt := 0; ctx.Err() == nil; attempt++ {
		res, proc, cold, err := p.cfg.Invoker.Invoke(ctx, "", ev)
		pid := 0
		if proc != nil {
			pid = proc.PID()
		}
		switch {
		case err != nil:
			log.Warn("stream invocation failed", "pid", pid, "attempt", attempt+1, "err", err.Error())
		case res.IsError:
			log.Warn("stream invocation failed", "pid", pid, "attempt", attempt+1, "errorType", res.ErrorType)
		default:
			log.Info("stream invocation", "pid", pid, "cold", cold, "attempt", attempt+1)
			return
		}
		if max := p.cfg.Source.MaximumRetryAttempts; max >= 0 && attempt >= max {
			log.Warn("stream batch dropped after its retries", "retries", max)
			return
		}
		select {
		case <-ctx.Done():
		case <-time.After(p.cfg.Poll):
		}
	}
}

// passes says whether a record matches any filter (or there are none).
func (p *Poller) passes(r events.DynamoDBEventRecord) bool {
	if len(p.filters) == 0 {
		return true
	}
	raw, _ := json.Marshal(r)
	var doc map[string]any
	json.Unmarshal(raw, &doc)
	for _, f := range p.filters {
		if f.Match(doc) {
			return true
		}
	}
	return false
}

// record is r as Lambda hands it to the function.
func (p *Poller) record(r stypes.Record) events.DynamoDBEventRecord {
	er := events.DynamoDBEventRecord{
		EventID: aws.ToString(r.EventID), EventName: string(r.EventName), EventVersion: aws.ToString(r.EventVersion),
		EventSource: "aws:dynamodb", AWSRegion: p.cfg.Region, EventSourceArn: p.arn,
	}
	if er.EventVersion == "" {
		er.EventVersion = "1.1"
	}
	if d := r.Dynamodb; d != nil {
		er.Change = events.DynamoDBStreamRecord{
			Keys: image(d.Keys), NewImage: image(d.NewImage), OldImage: image(d.OldImage),
			SequenceNumber: aws.ToString(d.SequenceNumber), SizeBytes: aws.ToInt64(d.SizeBytes),
			StreamViewType: string(d.StreamViewType),
		}
		if d.ApproximateCreationDateTime != nil {
			er.Change.ApproximateCreationDateTime = events.SecondsEpochTime{Time: *d.ApproximateCreationDateTime}
		}
	}
	return er
}

func image(m map[string]stypes.AttributeValue) map[string]events.DynamoDBAttributeValue {
	if m == nil {
		return nil
	}
	out := make(map[string]events.DynamoDBAttributeValue, len(m))
	for k, v := range m {
		out[k] = attr(v)
	}
	return out
}

// attr converts one attribute value to its DynamoDB JSON.
func attr(v stypes.AttributeValue) events.DynamoDBAttributeValue {
	switch x := v.(type) {
	case *stypes.AttributeValueMemberS:
		return events.NewStringAttribute(x.Value)
	case *stypes.AttributeValueMemberN:
		return events.NewNumberAttribute(x.Value)
	case *stypes.AttributeValueMemberB:
		return events.NewBinaryAttribute(x.Value)
	case *stypes.AttributeValueMemberBOOL:
		return events.NewBooleanAttribute(x.Value)
	case *stypes.AttributeValueMemberSS:
		return events.NewStringSetAttribute(x.Value)
	case *stypes.AttributeValueMemberNS:
		return events.NewNumberSetAttribute(x.Value)
	case *stypes.AttributeValueMemberBS:
		return events.NewBinarySetAttribute(x.Value)
	case *stypes.AttributeValueMemberL:
		l := make([]events.DynamoDBAttributeValue, len(x.Value))
		for i, e := range x.Value {
			l[i] = attr(e)
		}
		return events.NewListAttribute(l)
	case *stypes.AttributeValueMemberM:
		return events.NewMapAttribute(image(x.Value))
	}
	return events.NewNullAttribute()
}
