// Package vertexauth is how gen reaches Vertex AI: the host of a
// location, and an HTTP client that carries a Google OAuth token (a
// static one, a workload identity federation config, or Application
// Default Credentials). Veo on Vertex AI (shared/provider/veo) and
// Gemini Omni on Vertex AI (shared/provider/omni) share it, so that a
// credential is found one way.
package vertexauth

import (
	"context"
	"fmt"
	"net/http"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/google"
)

// Scope is the OAuth scope of Vertex AI and Cloud Storage.
const Scope = "https://www.googleapis.com/auth/cloud-platform"

// Credentials say where the token comes from; with neither field,
// Application Default Credentials (GOOGLE_APPLICATION_CREDENTIALS: a
// service-account key locally, a workload identity federation config on
// AWS).
type Credentials struct {
	// AccessToken, when set, is the bearer token of every request
	// (gcloud auth print-access-token).
	AccessToken string
	// WIFConfig, when set, is the JSON credential configuration of a
	// workload identity federation pool ("type": "external_account"): on
	// AWS it trades the Lambda role's credentials for a Google token. No
	// other type of credential is taken from it, so no long-lived key can
	// slip in.
	WIFConfig []byte
}

// TokenSource is c's source of tokens. It finds the credentials now, so
// that a missing one fails the start-up, not every task.
func TokenSource(ctx context.Context, c Credentials) (oauth2.TokenSource, error) {
	switch {
	case c.AccessToken != "":
		return oauth2.StaticTokenSource(&oauth2.Token{AccessToken: c.AccessToken, TokenType: "Bearer"}), nil
	case len(c.WIFConfig) > 0:
		creds, err := google.CredentialsFromJSONWithType(ctx, c.WIFConfig, google.ExternalAccount, Scope)
		if err != nil {
			return nil, fmt.Errorf("workload identity federation: %w", err)
		}
		return creds.TokenSource, nil
	}
	creds, err := google.FindDefaultCredentials(ctx, Scope)
	if err != nil {
		return nil, fmt.Errorf("application default credentials: %w", err)
	}
	return creds.TokenSource, nil
}

// Client is base (its timeout and transport) with c's token on every
// request, whatever its host (TokenSource).
func Client(ctx context.Context, c Credentials, base *http.Client) (*http.Client, error) {
	ts, err := TokenSource(ctx, c)
	if err != nil {
		return nil, err
	}
	return &http.Client{Timeout: base.Timeout, Transport: &oauth2.Transport{Source: ts, Base: base.Transport}}, nil
}

// Endpoint is the Vertex AI host of a location, as Google's python-genai
// SDK picks it (google/genai/_api_client.py, commit 6680718 of
// 2026-08-21, read 2026-11-28): the global endpoint has no region prefix
// ("To use the global endpoint, exclude the location from the endpoint
// name", https://docs.cloud.google.com/vertex-ai/docs/generative-ai/learn/locations-genai,
// read 2026-11-26); the multi-regions us and eu are
// aiplatform.{location}.rep.googleapis.com; a region is
// {location}-aiplatform.googleapis.com.
func Endpoint(location string) string {
	switch location {
	case "global":
		return "https://aiplatform.googleapis.com"
	case "us", "eu":
		return "https://aiplatform." + location + ".rep.googleapis.com"
	}
	return "https://" + location + "-aiplatform.googleapis.com"
}
