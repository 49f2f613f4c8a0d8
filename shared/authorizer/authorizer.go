// Package authorizer is the API Gateway Lambda authorizer (REQUEST type,
// identity source the X-API-Key header, or Authorization: Bearer on the
// OpenAI-compatible paths and MCP's) of the service on AWS. It lets a
// request through when its key is a live key of the store, and ties it to
// the key's usage plan: API Gateway enforces the plan's rate, burst and
// daily quota on the API key whose value is the usageIdentifierKey the
// authorizer returns (apiKeySource AUTHORIZER). Customer keys stay
// hash-only: the gateway's API key for a customer key holds
// UsageIdentifierKey(key ID), never the secret.
//
// The gateway caches the answer per key value, so the policy allows the
// whole API, not just the method called, and the handlers still
// authenticate the key themselves (a key revoked within the cache's TTL).
package authorizer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/aws/aws-lambda-go/events"

	"github.com/genvideo/gen/shared/apikey"
	"github.com/genvideo/gen/shared/domain"
	"github.com/genvideo/gen/shared/store"
)

// ErrUnauthorized is the error API Gateway turns into a 401 (its
// UNAUTHORIZED gateway response): the Lambda error message must be exactly
// "Unauthorized".
var ErrUnauthorized = errors.New("Unauthorized")

// UsagePrefix starts the value of every gateway API key made for a
// customer key.
const UsagePrefix = "gen-usage-"

// UsageIdentifierKey is the value of the gateway API key, attached to the
// tier's usage plan, that stands for the customer key keyID.
func UsageIdentifierKey(keyID string) string { return UsagePrefix + keyID }

// Context keys of the authorizer's answer, which the gateway passes on to
// the integration as requestContext.authorizer.
const (
	ContextAccountID = "accountId"
	ContextKeyID     = "keyId"
	ContextTier      = "tier"
)

// Keys finds keys by hash: store.Store.KeyByHash.
type Keys interface {
	KeyByHash(ctx context.Context, hash string) (store.Key, error)
}

// Authorizer answers the gateway's authorization requests.
type Authorizer struct {
	keys Keys
	log  *slog.Logger
}

// New returns an authorizer looking keys up in keys. A nil logger means
// slog.Default().
func New(keys Keys, logger *slog.Logger) *Authorizer {
	if logger == nil {
		logger = slog.Default()
	}
	return &Authorizer{keys: keys, log: logger}
}

// Authorize allows a request with a live key: the policy allows every
// method of the API's stage, the usage identifier is the key's, and the
// context names the key and its account.
//
// The two refusals reach the client as the contract's two 401 messages: a
// missing key is ErrUnauthorized (the gateway's UNAUTHORIZED response, "API
// key missing or invalid"), while a key that is present but malformed,
// unknown or revoked gets a Deny policy (its ACCESS_DENIED response,
// "Invalid API key"). A store failure is another error, which the gateway
// reports as AUTHORIZER_CONFIGURATION_ERROR; the template answers it as
// the contract's 503 SERVICE_UNAVAILABLE with Retry-After.
//
// Answers are cached per key value, so on AWS a revoked key may pass the
// gateway until the cache expires; the handlers authenticate every request
// themselves, which is what rejects it at once.
func (a *Authorizer) Authorize(ctx context.Context, req events.APIGatewayCustomAuthorizerRequestTypeRequest) (events.APIGatewayCustomAuthorizerResponse, error) {
	value, ok := key(req)
	if !ok {
		return events.APIGatewayCustomAuthorizerResponse{}, ErrUnauthorized
	}
	resource, err := apiResource(req.MethodArn)
	if err != nil {
		return events.APIGatewayCustomAuthorizerResponse{}, err
	}
	if !apikey.WellFormed(value) {
		return deny(resource), nil
	}
	k, err := a.keys.KeyByHash(ctx, apikey.Hash(value))
	if errors.Is(err, domain.ErrNotFound) {
		return deny(resource), nil
	}
	if err != nil {
		a.log.ErrorContext(ctx, "authorizer: look up key", "error", err.Error())
		return events.APIGatewayCustomAuthorizerResponse{}, fmt.Errorf("look up key: %w", err)
	}
	if k.Revoked() {
		a.log.InfoContext(ctx, "authorizer: revoked key", "key", k.ID)
		return deny(resource), nil
	}
	return events.APIGatewayCustomAuthorizerResponse{
		PrincipalID: k.ID,
		PolicyDocument: events.APIGatewayCustomAuthorizerPolicy{
			Version: "2012-10-17",
			Statement: []events.IAMPolicyStatement{{
				Action:   []string{"execute-api:Invoke"},
				Effect:   "Allow",
				Resource: []string{resource},
			}},
		},
		Context: map[string]any{
			ContextAccountID: k.AccountID,
			ContextKeyID:     k.ID,
			ContextTier:      k.Tier,
		},
		UsageIdentifierKey: UsageIdentifierKey(k.ID),
	}, nil
}

// deny refuses a key that was sent but is not a live key.
func deny(resource string) events.APIGatewayCustomAuthorizerResponse {
	return events.APIGatewayCustomAuthorizerResponse{
		PrincipalID: "invalid-key",
		PolicyDocument: events.APIGatewayCustomAuthorizerPolicy{
			Version: "2012-10-17",
			Statement: []events.IAMPolicyStatement{{
				Action:   []string{"execute-api:Invoke"},
				Effect:   "Deny",
				Resource: []string{resource},
			}},
		},
	}
}

// OpenAIPrefix begins the resource paths of the OpenAI-compatible videos
// API (shared/openaiapi.Base and a slash), whose requests carry the key as
// Authorization: Bearer <key>, the way the OpenAI SDKs send it; the
// template's BearerAuthorizer (identity source Authorization) guards
// them. Written out here so that the authorizer links none of the API's
// code; a test holds it to openaiapi.Base.
const OpenAIPrefix = "/openai/v1/"

// MCPPath is the path of the MCP endpoint (shared/mcpserver.Path), whose
// requests carry the key as a bearer token too, as MCP hosts send one;
// BearerAuthorizer guards it. A test holds it to mcpserver.Path.
const MCPPath = "/mcp"

// bearerPath reports whether the key of a request to p is its bearer
// token.
func bearerPath(p string) bool { return strings.HasPrefix(p, OpenAIPrefix) || p == MCPPath }

// key returns the request's API key: its X-API-Key, or on the paths of
// the OpenAI-compatible API (OpenAIPrefix) and MCP's (MCPPath) the token
// of its Authorization: Bearer header, and only there, as the handlers
// read it.
// A bearer header of another scheme, or without a token, is a key that
// is not a live key (a Deny), as the handlers answer it.
func key(req events.APIGatewayCustomAuthorizerRequestTypeRequest) (string, bool) {
	if !bearerPath(req.Resource) && !bearerPath(req.Path) {
		return header(req, "X-API-Key")
	}
	v, ok := header(req, "Authorization")
	if !ok {
		return "", false
	}
	scheme, token, _ := strings.Cut(v, " ")
	if !strings.EqualFold(scheme, "Bearer") {
		return v, true // not well formed as a key: a Deny
	}
	return strings.TrimSpace(token), true
}

// header returns the one value of the named header, whatever its case.
// Several values are no value: the handlers refuse them too.
func header(req events.APIGatewayCustomAuthorizerRequestTypeRequest, name string) (string, bool) {
	var vals []string
	for k, vs := range req.MultiValueHeaders {
		if strings.EqualFold(k, name) {
			vals = append(vals, vs...)
		}
	}
	if req.MultiValueHeaders == nil {
		for k, v := range req.Headers {
			if strings.EqualFold(k, name) {
				vals = append(vals, v)
			}
		}
	}
	if len(vals) != 1 || vals[0] == "" {
		return "", false
	}
	return vals[0], true
}

// apiResource turns the ARN of the method called,
// arn:aws:execute-api:<region>:<account>:<api id>/<stage>/<METHOD>/<path>,
// into the ARN of every method of the stage, since the answer is cached
// per key and reused for the other methods.
func apiResource(methodARN string) (string, error) {
	parts := strings.SplitN(methodARN, ":", 6)
	if len(parts) != 6 || parts[0] != "arn" || parts[2] != "execute-api" {
		return "", fmt.Errorf("method ARN %q is not an execute-api ARN", methodARN)
	}
	apiID, rest, ok := strings.Cut(parts[5], "/")
	stage, _, _ := strings.Cut(rest, "/")
	if !ok || apiID == "" || stage == "" {
		return "", fmt.Errorf("method ARN %q names no API and stage", methodARN)
	}
	parts[5] = apiID + "/" + stage + "/*"
	return strings.Join(parts, ":"), nil
}
