package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/genvideo/gen/infra/awslocal/apikeys"
	"github.com/genvideo/gen/shared/apikey"
	"github.com/genvideo/gen/shared/authorizer"
	"github.com/genvideo/gen/shared/store"
	"github.com/genvideo/gen/shared/store/dynamostore"
	"github.com/genvideo/gen/shared/store/dynamostore/dynamolocal"
	"github.com/genvideo/gen/shared/usageplans"
)

func TestMain(m *testing.M) { dynamolocal.Main(m) }

var tableSets atomic.Int64

// awsEnv is a stand-in deployment: fresh tables in DynamoDB Local and a
// fake API Gateway with the stack's two usage plans. genctl reaches both
// through the SDK's endpoint variables, as it would reach AWS.
type awsEnv struct {
	t       *testing.T
	prefix  string
	store   *dynamostore.Store
	gateway *apikeys.Gateway
}

func newAWSEnv(t *testing.T) *awsEnv {
	t.Helper()
	db := dynamolocal.Shared(t)
	prefix := fmt.Sprintf("genctl%03d-", tableSets.Add(1))
	st := dynamostore.New(db.Client(), dynamostore.Config{TablePrefix: prefix})
	if err := st.CreateTables(t.Context()); err != nil {
		t.Fatalf("CreateTables: %v", err)
	}
	gw := apikeys.New()
	gw.AddPlan("std", "gen-standard")
	gw.AddPlan("pro", "gen-pro")
	srv := httptest.NewServer(gw.Handler())
	t.Cleanup(srv.Close)

	// No shared config or credentials of the machine leak in.
	dir := t.TempDir()
	for k, v := range map[string]string{
		"AWS_ENDPOINT_URL_DYNAMODB":    db.Endpoint,
		"AWS_ENDPOINT_URL_API_GATEWAY": srv.URL,
		"AWS_ACCESS_KEY_ID":            "test",
		"AWS_SECRET_ACCESS_KEY":        "test",
		"AWS_SESSION_TOKEN":            "",
		"AWS_PROFILE":                  "",
		"AWS_REGION":                   "us-east-1",
		"AWS_CONFIG_FILE":              filepath.Join(dir, "config"),
		"AWS_SHARED_CREDENTIALS_FILE":  filepath.Join(dir, "credentials"),
		"AWS_EC2_METADATA_DISABLED":    "true",
		envBackend:                     "",
		"GEN_TABLE_PREFIX":             "",
		usageplans.EnvStandard:         "",
		usageplans.EnvPro:              "",
		"GEN_DATA_DIR":                 filepath.Join(dir, "local"),
	} {
		t.Setenv(k, v)
	}
	return &awsEnv{t: t, prefix: prefix, store: st, gateway: gw}
}

// genctl runs the command with the deployment's flags and returns its
// output and error.
func (e *awsEnv) genctl(args ...string) (string, error) {
	e.t.Helper()
	all := append([]string{"--aws", "--table-prefix", e.prefix, "--usage-plan-standard", "std", "--usage-plan-pro", "pro"}, args...)
	return run(e.t, all...)
}

func run(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := newRoot()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(context.Background())
	return out.String(), err
}

type createdJSON struct {
	APIKey    string
	KeyID     string
	AccountID string
	Tier      string
	Credits   int64
	UsagePlan *usageplans.Wired
}

func (e *awsEnv) createKey(args ...string) createdJSON {
	e.t.Helper()
	out, err := e.genctl(append([]string{"keys", "create", "--json"}, args...)...)
	if err != nil {
		e.t.Fatalf("keys create %v: %v\n%s", args, err, out)
	}
	var c createdJSON
	if err := json.Unmarshal([]byte(out), &c); err != nil {
		e.t.Fatalf("keys create output: %v\n%s", err, out)
	}
	return c
}

// storedKey finds a key in DynamoDB by its secret, as the authorizer does.
func (e *awsEnv) storedKey(secret string) store.Key {
	e.t.Helper()
	k, err := e.store.KeyByHash(e.t.Context(), apikey.Hash(secret))
	if err != nil {
		e.t.Fatalf("KeyByHash: %v", err)
	}
	return k
}

func TestAWSKeysCreateWiresUsagePlans(t *testing.T) {
	e := newAWSEnv(t)
	for _, c := range []struct {
		tier string
		plan string
	}{
		{"standard", "std"},
		{"pro", "pro"},
	} {
		t.Run(c.tier, func(t *testing.T) {
			k := e.createKey("--name", "ci "+c.tier, "--tier", c.tier, "--credits", "500")
			stored := e.storedKey(k.APIKey)
			if stored.ID != k.KeyID || stored.Tier != c.tier || stored.AccountID != k.AccountID {
				t.Errorf("stored key %+v, want id %s tier %s account %s", stored, k.KeyID, c.tier, k.AccountID)
			}
			acct, err := e.store.Account(t.Context(), k.AccountID)
			if err != nil || acct.Credits != 500 {
				t.Errorf("account %+v (%v), want 500 credits", acct, err)
			}
			// The gateway key holds the usage identifier, never the secret.
			value := authorizer.UsageIdentifierKey(k.KeyID)
			gk, ok := e.gateway.KeyByValue(value)
			if !ok {
				t.Fatalf("no gateway key with value %s", value)
			}
			if !gk.Enabled || gk.CustomerID != k.AccountID || strings.Contains(gk.Description+gk.Name, k.APIKey) {
				t.Errorf("gateway key %+v", gk)
			}
			if got := e.gateway.PlansOf(gk.ID); !slices.Equal(got, []string{c.plan}) {
				t.Errorf("gateway key in plans %v, want [%s]", got, c.plan)
			}
			if k.UsagePlan == nil || k.UsagePlan.UsagePlanID != c.plan || k.UsagePlan.GatewayKeyID != gk.ID {
				t.Errorf("output usagePlan %+v, want plan %s and gateway key %s", k.UsagePlan, c.plan, gk.ID)
			}

			// Wiring again changes nothing.
			out, err := e.genctl("keys", "wire", k.KeyID)
			if err != nil {
				t.Fatalf("keys wire: %v\n%s", err, out)
			}
			if n := e.gateway.CountKeys(value); n != 1 {
				t.Errorf("%d gateway keys after a second wiring, want 1", n)
			}
			if got := e.gateway.PlansOf(gk.ID); !slices.Equal(got, []string{c.plan}) {
				t.Errorf("after a second wiring the key is in plans %v, want [%s]", got, c.plan)
			}
		})
	}
}

// Issue 24, defect 10: Enterprise keys with the same figures share one
// usage plan, so that a region's 300 plans bound the distinct figures,
// not the Enterprise keys; other figures get a plan of their own.
func TestAWSEnterpriseKeysShareAPlanPerFigures(t *testing.T) {
	e := newAWSEnv(t)
	k := e.createKey("--name", "big customer", "--tier", "enterprise", "--rpm", "600", "--rpd", "50000")
	gk, ok := e.gateway.KeyByValue(authorizer.UsageIdentifierKey(k.KeyID))
	if !ok {
		t.Fatal("no gateway key")
	}
	plans := e.gateway.PlansOf(gk.ID)
	if len(plans) != 1 || plans[0] == "std" || plans[0] == "pro" {
		t.Fatalf("enterprise key in plans %v, want one of its figures", plans)
	}
	p, _ := e.gateway.UsagePlan(plans[0])
	if p.Name != "gen-enterprise-std-600rpm-50000rpd" || p.Throttle == nil || p.Throttle.RateLimit != 10 ||
		p.Throttle.BurstLimit != 100 || p.Quota == nil || p.Quota.Limit != 50000 || p.Quota.Period != "DAY" {
		t.Errorf("plan %+v throttle %+v quota %+v, want gen-enterprise-std-600rpm-50000rpd at 10/s, burst 100, 50000 a day", p, p.Throttle, p.Quota)
	}
	std, _ := e.gateway.UsagePlan("std")
	if !slices.Equal(p.APIStages, std.APIStages) {
		t.Errorf("plan stages %v, want the Standard plan's %v", p.APIStages, std.APIStages)
	}
	// Wiring again finds the plan rather than making another.
	if out, err := e.genctl("keys", "wire", k.KeyID); err != nil {
		t.Fatalf("keys wire: %v\n%s", err, out)
	}
	if got := e.gateway.PlansOf(gk.ID); !slices.Equal(got, plans) {
		t.Errorf("after a second wiring the key is in plans %v, want %v", got, plans)
	}
	same := e.createKey("--name", "another big customer", "--tier", "enterprise", "--rpm", "600", "--rpd", "50000")
	sameGK, _ := e.gateway.KeyByValue(authorizer.UsageIdentifierKey(same.KeyID))
	if got := e.gateway.PlansOf(sameGK.ID); !slices.Equal(got, plans) {
		t.Errorf("a second key of the same figures is in plans %v, want the first's %v", got, plans)
	}
	other := e.createKey("--name", "bigger customer", "--tier", "enterprise", "--rpm", "1200", "--rpd", "50000")
	otherGK, _ := e.gateway.KeyByValue(authorizer.UsageIdentifierKey(other.KeyID))
	if got := e.gateway.PlansOf(otherGK.ID); len(got) != 1 || got[0] == plans[0] {
		t.Errorf("a key of other figures is in plans %v, want one other than %v", got, plans)
	}
}

func TestAWSRevokeDisablesGatewayKey(t *testing.T) {
	e := newAWSEnv(t)
	k := e.createKey("--name", "to revoke")
	out, err := e.genctl("keys", "revoke", k.KeyID)
	if err != nil {
		t.Fatalf("keys revoke: %v\n%s", err, out)
	}
	if !e.storedKey(k.APIKey).Revoked() {
		t.Errorf("the stored key is not revoked")
	}
	gk, _ := e.gateway.KeyByValue(authorizer.UsageIdentifierKey(k.KeyID))
	if gk.Enabled {
		t.Errorf("the gateway key is still enabled")
	}
	// A revoked key is not wired again.
	if out, err := e.genctl("keys", "wire", k.KeyID); err == nil || !strings.Contains(err.Error(), "revoked") {
		t.Errorf("keys wire of a revoked key: %v\n%s", err, out)
	}
	if gk, _ := e.gateway.KeyByValue(authorizer.UsageIdentifierKey(k.KeyID)); gk.Enabled {
		t.Errorf("the gateway key was enabled again")
	}
}

func TestAWSWiringFailureKeepsTheKey(t *testing.T) {
	e := newAWSEnv(t)
	e.gateway.FailNext("CreateUsagePlanKey", 1)
	out, err := e.genctl("keys", "create", "--name", "unlucky", "--tier", "pro")
	if err == nil {
		t.Fatalf("keys create succeeded although the usage plan refused the key:\n%s", out)
	}
	// The secret is printed all the same (it exists nowhere else), with
	// the way to finish.
	secret := ""
	for _, line := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(line, "API key:  "); ok {
			secret = v
		}
	}
	if !apikey.WellFormed(secret) {
		t.Fatalf("no API key in the output:\n%s", out)
	}
	k := e.storedKey(secret)
	if !strings.Contains(err.Error(), "genctl --aws keys wire "+k.ID) {
		t.Errorf("error %q does not say how to finish", err)
	}
	if out, err := e.genctl("keys", "wire", k.ID); err != nil {
		t.Fatalf("keys wire: %v\n%s", err, out)
	}
	gk, _ := e.gateway.KeyByValue(authorizer.UsageIdentifierKey(k.ID))
	if got := e.gateway.PlansOf(gk.ID); !slices.Equal(got, []string{"pro"}) {
		t.Errorf("after keys wire the key is in plans %v, want [pro]", got)
	}
}

func TestAWSKeyInAnotherPlanIsReported(t *testing.T) {
	e := newAWSEnv(t)
	k := e.createKey("--name", "mixed up")
	// The operator passes the plans the wrong way round.
	out, err := run(t, "--aws", "--table-prefix", e.prefix, "--usage-plan-standard", "pro", "--usage-plan-pro", "std",
		"keys", "wire", k.KeyID)
	if err == nil || !strings.Contains(err.Error(), "another usage plan") {
		t.Errorf("wiring into a second plan: %v\n%s", err, out)
	}
}

func TestAWSCreditsAndList(t *testing.T) {
	e := newAWSEnv(t)
	k := e.createKey("--name", "credits", "--credits", "100")
	if out, err := e.genctl("credits", "grant", "--account", k.AccountID, "--amount", "250", "--note", "top-up"); err != nil {
		t.Fatalf("credits grant: %v\n%s", err, out)
	}
	out, err := e.genctl("credits", "show", "--account", k.AccountID, "--json")
	if err != nil {
		t.Fatalf("credits show: %v\n%s", err, out)
	}
	var st struct {
		Credits int64
		Ledger  []struct {
			Kind   string
			Amount int64
		}
	}
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatal(err)
	}
	if st.Credits != 350 || len(st.Ledger) != 2 || st.Ledger[1].Amount != 250 {
		t.Errorf("credits show: %s, want 350 credits from grants of 100 and 250", out)
	}
	out, err = e.genctl("keys", "list", "--json")
	if err != nil {
		t.Fatalf("keys list: %v\n%s", err, out)
	}
	if !strings.Contains(out, k.KeyID) || strings.Contains(out, k.APIKey) {
		t.Errorf("keys list shows %s, want the key id and never the secret", out)
	}
}

func TestAWSConfiguration(t *testing.T) {
	e := newAWSEnv(t)
	// GEN_BACKEND=aws does what --aws does; the other settings come
	// from the environment too.
	t.Setenv(envBackend, "aws")
	t.Setenv("GEN_TABLE_PREFIX", e.prefix)
	t.Setenv(usageplans.EnvStandard, "std")
	out, err := run(t, "keys", "create", "--name", "from env", "--json")
	if err != nil {
		t.Fatalf("keys create with GEN_BACKEND=aws: %v\n%s", err, out)
	}
	var c createdJSON
	json.Unmarshal([]byte(out), &c)
	if c.UsagePlan == nil || c.UsagePlan.UsagePlanID != "std" {
		t.Errorf("keys create with GEN_BACKEND=aws: %s, want a key wired to std", out)
	}
	e.storedKey(c.APIKey)

	for _, c := range []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"pro plan missing", nil, []string{"keys", "create", "--name", "x", "--tier", "pro"}, usageplans.EnvPro},
		{"no table prefix", map[string]string{"GEN_TABLE_PREFIX": ""}, []string{"keys", "list"}, "GEN_TABLE_PREFIX"},
		{"bad backend", map[string]string{envBackend: "cloud"}, []string{"keys", "list"}, envBackend},
		{"wire is AWS only", map[string]string{envBackend: "local"}, []string{"keys", "wire", "key_x"}, "--aws"},
	} {
		t.Run(c.name, func(t *testing.T) {
			for k, v := range c.env {
				t.Setenv(k, v)
			}
			out, err := run(t, c.args...)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("genctl %v: error %v, want one naming %s\n%s", c.args, err, c.want, out)
			}
		})
	}
}

// A revoked key's gateway key is deleted, not just disabled (a region
// holds at most 10,000 API keys, disabled ones included), and so is an
// Enterprise plan (300 a region by default) with its last key, not
// before. Revoking again is harmless.
func TestAWSRevokeDeletesGatewayKeyAndPlan(t *testing.T) {
	e := newAWSEnv(t)
	std := e.createKey("--name", "standard")
	ent := e.createKey("--name", "big customer", "--tier", "enterprise", "--rpm", "600", "--rpd", "50000")
	ent2 := e.createKey("--name", "another big customer", "--tier", "enterprise", "--rpm", "600", "--rpd", "50000")
	gk, _ := e.gateway.KeyByValue(authorizer.UsageIdentifierKey(ent.KeyID))
	plans := e.gateway.PlansOf(gk.ID)
	if len(plans) != 1 {
		t.Fatalf("enterprise key in plans %v, want one", plans)
	}
	if out, err := e.genctl("keys", "revoke", ent2.KeyID); err != nil {
		t.Fatalf("keys revoke %s: %v\n%s", ent2.KeyID, err, out)
	}
	if _, ok := e.gateway.UsagePlan(plans[0]); !ok {
		t.Fatalf("revoking one of two keys of an enterprise plan deleted the plan")
	}
	for _, k := range []createdJSON{std, ent, std} {
		if out, err := e.genctl("keys", "revoke", k.KeyID); err != nil {
			t.Fatalf("keys revoke %s: %v\n%s", k.KeyID, err, out)
		}
		if n := e.gateway.CountKeys(authorizer.UsageIdentifierKey(k.KeyID)); n != 0 {
			t.Errorf("after revoking %s, %d gateway keys are left for it", k.KeyID, n)
		}
	}
	if _, ok := e.gateway.UsagePlan(plans[0]); ok {
		t.Errorf("the enterprise plan %s is left after the revocation of its last key", plans[0])
	}
	if _, ok := e.gateway.UsagePlan("std"); !ok {
		t.Errorf("revoking removed the Standard plan")
	}
}
