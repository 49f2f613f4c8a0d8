package deploy

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/genvideo/gen/shared/store/dynamostore"
	"github.com/genvideo/gen/shared/store/dynamostore/dynamolocal"
)

func TestMain(m *testing.M) { dynamolocal.Main(m) }

// TestTablesMatchDynamoStore compares the template's tables with the ones
// dynamostore creates for itself (CreateTables, on DynamoDB Local): keys,
// attribute types, indexes, billing and TTL. The store's queries and
// conditions are tested on its own tables, so the deployed ones must be
// the same.
func TestTablesMatchDynamoStore(t *testing.T) {
	// Slow (a subprocess or a JVM): let them overlap.
	t.Parallel()
	tp := loadTemplate(t)
	client := dynamolocal.Shared(t).Client()
	st := dynamostore.New(client, dynamostore.Config{TablePrefix: "deploytest-"})
	if err := st.CreateTables(t.Context()); err != nil {
		t.Fatalf("CreateTables: %v", err)
	}
	names := st.Tables()
	for id, name := range map[string]string{
		"AccountsTable": names.Accounts, "KeysTable": names.Keys,
		"CountersTable": names.Counters, "TasksTable": names.Tasks, "WebhooksTable": names.Webhooks,
	} {
		r, ok := tp.Resources[id]
		if !ok {
			t.Errorf("no table %s", id)
			continue
		}
		d, err := client.DescribeTable(t.Context(), &dynamodb.DescribeTableInput{TableName: &name})
		if err != nil {
			t.Fatalf("DescribeTable %s: %v", name, err)
		}
		ttl, err := client.DescribeTimeToLive(t.Context(), &dynamodb.DescribeTimeToLiveInput{TableName: &name})
		if err != nil {
			t.Fatalf("DescribeTimeToLive %s: %v", name, err)
		}
		got, want := templateTable(r.Properties), storeTable(d.Table, ttl.TimeToLiveDescription)
		if got != want {
			t.Errorf("%s differs from dynamostore's table:\ntemplate:\n%s\ndynamostore:\n%s", id, got, want)
		}
	}
}

// templateTable renders a table of the template in the form storeTable
// renders one of DynamoDB, for comparison.
func templateTable(p map[string]any) string {
	var b strings.Builder
	var attrs []string
	for _, a := range p["AttributeDefinitions"].([]any) {
		attrs = append(attrs, fmt.Sprintf("%v:%v", dig(a, "AttributeName"), dig(a, "AttributeType")))
	}
	sort.Strings(attrs)
	fmt.Fprintf(&b, "attributes %v\nkey %s\nbilling %v\n", attrs, templateKeys(p["KeySchema"]), p["BillingMode"])
	var idx []string
	gsis, _ := p["GlobalSecondaryIndexes"].([]any)
	for _, g := range gsis {
		idx = append(idx, fmt.Sprintf("index %v %s %v", dig(g, "IndexName"), templateKeys(dig(g, "KeySchema")), dig(g, "Projection", "ProjectionType")))
	}
	sort.Strings(idx)
	for _, s := range idx {
		b.WriteString(s + "\n")
	}
	if dig(p, "TimeToLiveSpecification", "Enabled") == true {
		fmt.Fprintf(&b, "ttl %v\n", dig(p, "TimeToLiveSpecification", "AttributeName"))
	}
	return b.String()
}

func templateKeys(ks any) string {
	var parts []string
	list, _ := ks.([]any)
	for _, k := range list {
		parts = append(parts, fmt.Sprintf("%v:%v", dig(k, "AttributeName"), dig(k, "KeyType")))
	}
	return strings.Join(parts, ",")
}

func storeTable(d *types.TableDescription, ttl *types.TimeToLiveDescription) string {
	var b strings.Builder
	var attrs []string
	for _, a := range d.AttributeDefinitions {
		attrs = append(attrs, fmt.Sprintf("%s:%s", *a.AttributeName, a.AttributeType))
	}
	sort.Strings(attrs)
	billing := ""
	if d.BillingModeSummary != nil {
		billing = string(d.BillingModeSummary.BillingMode)
	}
	fmt.Fprintf(&b, "attributes %v\nkey %s\nbilling %s\n", attrs, storeKeys(d.KeySchema), billing)
	var idx []string
	for _, g := range d.GlobalSecondaryIndexes {
		idx = append(idx, fmt.Sprintf("index %s %s %s", *g.IndexName, storeKeys(g.KeySchema), g.Projection.ProjectionType))
	}
	sort.Strings(idx)
	for _, s := range idx {
		b.WriteString(s + "\n")
	}
	if ttl != nil && slices.Contains([]types.TimeToLiveStatus{types.TimeToLiveStatusEnabled, types.TimeToLiveStatusEnabling}, ttl.TimeToLiveStatus) {
		fmt.Fprintf(&b, "ttl %s\n", *ttl.AttributeName)
	}
	return b.String()
}

func storeKeys(ks []types.KeySchemaElement) string {
	var parts []string
	for _, k := range ks {
		parts = append(parts, fmt.Sprintf("%s:%s", *k.AttributeName, k.KeyType))
	}
	return strings.Join(parts, ",")
}
