package authorizer_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/genvideo/gen/shared/apikey"
	"github.com/genvideo/gen/shared/authorizer"
	"github.com/genvideo/gen/shared/domain"
	"github.com/genvideo/gen/shared/mcpserver"
	"github.com/genvideo/gen/shared/openaiapi"
	"github.com/genvideo/gen/shared/store"
)

// keys is an in-memory Keys.
type keys struct {
	byHash map[string]store.Key
	err    error
	calls  int
}

func (k *keys) KeyByHash(ctx context.Context, hash string) (store.Key, error) {
	k.calls++
	if k.err != nil {
		return store.Key{}, k.err
	}
	key, ok := k.byHash[hash]
	if !ok {
		return store.Key{}, domain.ErrNotFound
	}
	return key, nil
}

const methodARN = "arn:aws:execute-api:eu-west-1:123456789012:a1b2c3d4e5/prod/GET/api/gen/status/gen_1772366400000_abcdefghij"

func request(headers map[string][]string) events.APIGatewayCustomAuthorizerRequestTypeRequest {
	single := map[string]string{}
	for k, v := range headers {
		single[k] = v[len(v)-1]
	}
	return events.APIGatewayCustomAuthorizerRequestTypeRequest{
		Type: "REQUEST", MethodArn: methodARN, HTTPMethod: "GET",
		Headers: single, MultiValueHeaders: headers,
	}
}

func TestAuthorize(t *testing.T) {
	live, revoked, unknown := apikey.New(), apikey.New(), apikey.New()
	ks := &keys{byHash: map[string]store.Key{
		apikey.Hash(live):    {ID: "key_live", AccountID: "acct_1", Tier: "pro"},
		apikey.Hash(revoked): {ID: "key_gone", AccountID: "acct_1", Tier: "pro", RevokedAt: time.Now()},
	}}
	a := authorizer.New(ks, nil)
	ctx := context.Background()

	// A missing key is the gateway's UNAUTHORIZED ("API key missing or
	// invalid"); a key sent but not live is a Deny, its ACCESS_DENIED
	// ("Invalid API key").
	for _, tc := range []struct {
		name    string
		headers map[string][]string
		deny    bool
	}{
		{"no key", map[string][]string{"Accept": {"*/*"}}, false},
		{"empty key", map[string][]string{"X-API-Key": {""}}, false},
		{"two keys", map[string][]string{"X-API-Key": {live, live}}, false},
		{"malformed key", map[string][]string{"X-API-Key": {"gen_short"}}, true},
		{"unknown key", map[string][]string{"X-API-Key": {unknown}}, true},
		{"revoked key", map[string][]string{"X-API-Key": {revoked}}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := a.Authorize(ctx, request(tc.headers))
			if !tc.deny {
				if err != authorizer.ErrUnauthorized {
					t.Errorf("Authorize = %+v, %v; want ErrUnauthorized", resp, err)
				}
				if err != nil && err.Error() != "Unauthorized" {
					t.Errorf("error message %q, want exactly Unauthorized (API Gateway matches it)", err.Error())
				}
				return
			}
			st := resp.PolicyDocument.Statement
			if err != nil || len(st) != 1 || st[0].Effect != "Deny" || resp.UsageIdentifierKey != "" || resp.Context != nil {
				t.Errorf("Authorize = %+v, %v; want a Deny policy with no usage key or context", resp, err)
			}
		})
	}

	for _, name := range []string{"X-API-Key", "x-api-key", "X-Api-Key"} {
		t.Run("live key as "+name, func(t *testing.T) {
			resp, err := a.Authorize(ctx, request(map[string][]string{name: {live}}))
			if err != nil {
				t.Fatalf("Authorize: %v", err)
			}
			if resp.UsageIdentifierKey != "gen-usage-key_live" {
				t.Errorf("usageIdentifierKey %q, want gen-usage-key_live", resp.UsageIdentifierKey)
			}
			if resp.PrincipalID != "key_live" {
				t.Errorf("principalId %q, want key_live", resp.PrincipalID)
			}
			if resp.Context["accountId"] != "acct_1" || resp.Context["keyId"] != "key_live" || resp.Context["tier"] != "pro" {
				t.Errorf("context %v, want accountId acct_1, keyId key_live, tier pro", resp.Context)
			}
			st := resp.PolicyDocument.Statement
			want := "arn:aws:execute-api:eu-west-1:123456789012:a1b2c3d4e5/prod/*"
			if len(st) != 1 || st[0].Effect != "Allow" || len(st[0].Resource) != 1 || st[0].Resource[0] != want ||
				len(st[0].Action) != 1 || st[0].Action[0] != "execute-api:Invoke" {
				t.Errorf("policy %+v, want one Allow of execute-api:Invoke on %s", resp.PolicyDocument, want)
			}
		})
	}
}

// The answer has the JSON shape API Gateway reads.
func TestAuthorizeJSON(t *testing.T) {
	key := apikey.New()
	a := authorizer.New(&keys{byHash: map[string]store.Key{apikey.Hash(key): {ID: "key_a", AccountID: "acct_a", Tier: "standard"}}}, nil)
	resp, err := a.Authorize(context.Background(), request(map[string][]string{"X-API-Key": {key}}))
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(resp)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		PrincipalID    string `json:"principalId"`
		PolicyDocument struct {
			Version   string
			Statement []struct{ Action, Resource []string }
		} `json:"policyDocument"`
		Context            map[string]string `json:"context"`
		UsageIdentifierKey string            `json:"usageIdentifierKey"`
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if got.PrincipalID != "key_a" || got.PolicyDocument.Version != "2012-10-17" || len(got.PolicyDocument.Statement) != 1 ||
		got.UsageIdentifierKey != "gen-usage-key_a" || got.Context["accountId"] != "acct_a" {
		t.Errorf("JSON %s lacks the fields API Gateway reads", b)
	}
}

func TestAuthorizeStoreFailure(t *testing.T) {
	down := errors.New("dynamodb: throttled")
	a := authorizer.New(&keys{err: down}, nil)
	_, err := a.Authorize(context.Background(), request(map[string][]string{"X-API-Key": {apikey.New()}}))
	if err == nil || err == authorizer.ErrUnauthorized || !errors.Is(err, down) {
		t.Errorf("Authorize with the store down = %v, want the store's error (a 500, not a 401)", err)
	}
}

func TestAuthorizeMalformedKeyCostsNoLookup(t *testing.T) {
	ks := &keys{}
	a := authorizer.New(ks, nil)
	a.Authorize(context.Background(), request(map[string][]string{"X-API-Key": {"not a key"}}))
	if ks.calls != 0 {
		t.Errorf("%d store look-ups for a malformed key, want 0", ks.calls)
	}
}

func TestAuthorizeBadMethodARN(t *testing.T) {
	key := apikey.New()
	a := authorizer.New(&keys{byHash: map[string]store.Key{apikey.Hash(key): {ID: "key_a"}}}, nil)
	req := request(map[string][]string{"X-API-Key": {key}})
	req.MethodArn = "arn:aws:lambda:eu-west-1:123456789012:function:x"
	if _, err := a.Authorize(context.Background(), req); err == nil || err == authorizer.ErrUnauthorized {
		t.Errorf("Authorize with a non-execute-api ARN = %v, want an error other than Unauthorized", err)
	}
}

// On the OpenAI-compatible paths and MCP's the key is the bearer token,
// and only there; elsewhere Authorization is no key.
func TestAuthorizeBearer(t *testing.T) {
	live := apikey.New()
	ks := &keys{byHash: map[string]store.Key{apikey.Hash(live): {ID: "key_live", AccountID: "acct_1", Tier: "pro"}}}
	a := authorizer.New(ks, nil)
	if authorizer.OpenAIPrefix != openaiapi.Base+"/" {
		t.Fatalf("OpenAIPrefix = %q, want openaiapi.Base + / (%q)", authorizer.OpenAIPrefix, openaiapi.Base+"/")
	}
	if authorizer.MCPPath != mcpserver.Path {
		t.Fatalf("MCPPath = %q, want mcpserver.Path (%q)", authorizer.MCPPath, mcpserver.Path)
	}
	for _, tc := range []struct {
		name     string
		resource string
		headers  map[string][]string
		want     string // allow, deny or unauthorized
	}{
		{"bearer on openai", "/openai/v1/videos", map[string][]string{"Authorization": {"Bearer " + live}}, "allow"},
		{"lower-case scheme", "/openai/v1/videos/{taskId}", map[string][]string{"authorization": {"bearer " + live}}, "allow"},
		{"x-api-key on openai", "/openai/v1/videos", map[string][]string{"X-API-Key": {live}}, "unauthorized"},
		{"basic on openai", "/openai/v1/videos", map[string][]string{"Authorization": {"Basic " + live}}, "deny"},
		{"unknown bearer", "/openai/v1/videos", map[string][]string{"Authorization": {"Bearer " + apikey.New()}}, "deny"},
		{"bearer on the contract", "/api/gen/history", map[string][]string{"Authorization": {"Bearer " + live}}, "unauthorized"},
		{"bearer on mcp", "/mcp", map[string][]string{"Authorization": {"Bearer " + live}}, "allow"},
		{"x-api-key on mcp", "/mcp", map[string][]string{"X-API-Key": {live}}, "unauthorized"},
		{"unknown bearer on mcp", "/mcp", map[string][]string{"Authorization": {"Bearer " + apikey.New()}}, "deny"},
		{"bearer under mcp", "/mcp/x", map[string][]string{"Authorization": {"Bearer " + live}}, "unauthorized"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := request(tc.headers)
			req.Resource = tc.resource
			resp, err := a.Authorize(context.Background(), req)
			got := "allow"
			switch {
			case err == authorizer.ErrUnauthorized:
				got = "unauthorized"
			case err != nil:
				t.Fatalf("Authorize: %v", err)
			case resp.PolicyDocument.Statement[0].Effect == "Deny":
				got = "deny"
			}
			if got != tc.want {
				t.Errorf("Authorize = %s, want %s", got, tc.want)
			}
		})
	}
}
