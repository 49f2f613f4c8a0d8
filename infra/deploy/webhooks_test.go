package deploy

import (
	"strings"
	"testing"

	"github.com/genvideo/gen/shared/settings"
)

// TestWebhookFunctions: no function of the template may deliver to
// private addresses (GEN_WEBHOOK_ALLOW_PRIVATE is for the local stack and
// tests); the delivery function is woken by the outbox inserts of the
// webhooks table's stream and by a schedule every minute, outside any
// VPC; the delete of an endpoint deletes only in the accounts' partitions.
func TestWebhookFunctions(t *testing.T) {
	tp := loadTemplate(t)
	for _, id := range tp.ofType("AWS::Serverless::Function") {
		if _, ok := functionEnv(t, tp, id)[settings.WebhookAllowPrivate]; ok {
			t.Errorf("%s sets %s: on AWS webhooks never go to private addresses", id, settings.WebhookAllowPrivate)
		}
	}

	d := tp.Resources["WebhooksDeliverFunction"]
	if d.Type != "AWS::Serverless::Function" {
		t.Fatalf("no WebhooksDeliverFunction")
	}
	if _, ok := d.Properties["VpcConfig"]; ok {
		t.Errorf("WebhooksDeliverFunction is in a VPC: it posts to the Internet")
	}
	if to, _ := d.Properties["Timeout"].(int); to < 60 || to > 900 {
		t.Errorf("WebhooksDeliverFunction.Timeout = %v, want room for batches of 10-second attempts (60..900)", d.Properties["Timeout"])
	}
	var stream, schedule bool
	for name, ev := range mapAt(d.Properties, "Events") {
		p := mapAt(ev.(map[string]any), "Properties")
		switch dig(ev, "Type") {
		case "DynamoDB":
			stream = true
			if got := mustJSON(t, p["Stream"]); got != `{"Fn::GetAtt":["WebhooksTable","StreamArn"]}` {
				t.Errorf("%s reads stream %s, want the webhooks table's", name, got)
			}
			if p["StartingPosition"] != "LATEST" {
				t.Errorf("%s: StartingPosition %v, want LATEST", name, p["StartingPosition"])
			}
			if n, _ := p["BatchSize"].(int); n < 1 || n > 100 {
				t.Errorf("%s: BatchSize %v", name, p["BatchSize"])
			}
			pat := mustJSON(t, dig(p, "FilterCriteria", "Filters"))
			if !strings.Contains(pat, "INSERT") || !strings.Contains(pat, `\"D\"`) {
				t.Errorf("%s: filter %s, want the outbox inserts (eventName INSERT, sort key D)", name, pat)
			}
			// A replay is sent now (issue 20): its MODIFY, which sets
			// replayAt, wakes the function too.
			if !strings.Contains(pat, "MODIFY") || !strings.Contains(pat, `\"replayAt\"`) {
				t.Errorf("%s: filter %s, want the replays too (eventName MODIFY with replayAt)", name, pat)
			}
		case "Schedule":
			schedule = true
			if p["Schedule"] != "rate(1 minute)" {
				t.Errorf("%s: %v, want rate(1 minute) for due retries", name, p["Schedule"])
			}
		default:
			t.Errorf("WebhooksDeliverFunction has event %s of type %v", name, dig(ev, "Type"))
		}
	}
	if !stream || !schedule {
		t.Errorf("WebhooksDeliverFunction: stream event %v, schedule %v; want both", stream, schedule)
	}
	if spec := dig(tp.Resources["WebhooksTable"].Properties, "StreamSpecification", "StreamViewType"); spec != "NEW_IMAGE" {
		t.Errorf("WebhooksTable stream %v, want NEW_IMAGE", spec)
	}

	// The one public DeleteItem on the webhooks table is conditioned on
	// the accounts' partitions.
	found := false
	for _, p := range tp.Resources["WebhookDeleteFunction"].Properties["Policies"].([]any) {
		stmts, _ := dig(p, "Statement").([]any)
		for _, s := range stmts {
			if a, _ := dig(s, "Action").(string); a == "dynamodb:DeleteItem" {
				found = true
				if got := mustJSON(t, dig(s, "Condition", "ForAllValues:StringLike", "dynamodb:LeadingKeys")); got != `["W#*"]` {
					t.Errorf("WebhookDeleteFunction may delete leading keys %s, want [\"W#*\"] (endpoints)", got)
				}
			}
		}
	}
	if !found {
		t.Errorf("WebhookDeleteFunction may not delete endpoints")
	}
	for _, id := range tp.ofType("AWS::Serverless::Function") {
		for _, line := range policySummary(t, tp, id, tp.Resources[id].Properties["Policies"]) {
			if strings.HasPrefix(line, "dynamodb:DeleteItem WebhooksTable") && id != "WebhookDeleteFunction" {
				t.Errorf("%s may %s", id, line)
			}
		}
	}
}
