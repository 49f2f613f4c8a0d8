// Package omni generates videos with Gemini Omni Flash on the
// Interactions API, served by the Gemini API (New, route kind omni) or
// by Vertex AI (NewVertex, kind omni-vertex). It is a
// provider.Provider: a start is a POST {base}/interactions with
// background true (the interaction runs on after the answer, which
// carries its id), polled with GET {base}/interactions/{id} until it is
// completed; the video is in a model_output step, inline (base64) or at
// a URI on the API's origin, downloaded once with the credentials.
//
// The two APIs differ only in where and how a request goes
// (omnimodels [vertex-sdk]): the Gemini API is {endpoint}/v1beta/ with
// the key in x-goog-api-key; Vertex AI is
// {endpoint}/v1beta1/projects/{project}/locations/{location}/ with a
// Google OAuth bearer token (shared/provider/vertexauth, as Veo on
// Vertex AI finds it). On Vertex AI the video is asked inline: by URI,
// Vertex would write it to a Cloud Storage bucket of the operator's
// (gcs_uri), and an 8-second 1080p video, the largest ours asks, rides
// an answer well.
//
// Every answer is classified here, once for both APIs, into the
// outcomes the workflow knows (shared/design/providers.md): an accepted
// interaction's id is the operation; a refusal before acceptance is
// either waited out (429 and 5xx, after Google's RetryInfo or
// Retry-After; no connection) or final; a submit that went out with no
// readable answer is an *OutcomeUnknownError, never submitted again (an
// interaction takes no idempotency key); an interaction that ends with
// errors is a safety refusal when they say so, else a failure. Its
// limits and prices are omnimodels'.
package omni

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/oauth2"

	"github.com/genvideo/gen/shared/provider"
	"github.com/genvideo/gen/shared/provider/omni/omnimodels"
	"github.com/genvideo/gen/shared/provider/providerhttp"
	"github.com/genvideo/gen/shared/provider/vertexauth"
	"github.com/genvideo/gen/shared/settings"
)

// DefaultEndpoint is the Gemini API.
const DefaultEndpoint = "https://generativelanguage.googleapis.com"

// keyHeader carries the Gemini API's key, never a URL's query.
const keyHeader = "x-goog-api-key"

// requestTimeout bounds one request, a download included, when the
// caller gives no client of its own.
const requestTimeout = 2 * time.Minute

// maxVideoBytes bounds one video, downloaded or inline.
const maxVideoBytes = 512 << 20

// Config configures New: Omni on the Gemini API.
type Config struct {
	// APIKey is the Gemini API's key (settings.GeminiAPIKey).
	APIKey string
	// Endpoint replaces DefaultEndpoint.
	Endpoint string
	// Models maps the contract's model ids to Omni's; nil means
	// omnimodels.DefaultModels.
	Models map[string]string
	// PollAfter is the wait between polls; 0 means
	// settings.DefaultProviderPollInterval.
	PollAfter time.Duration
	// HTTP is the client; nil means one whose requests time out after
	// two minutes.
	HTTP *http.Client
}

// VertexConfig configures NewVertex: Omni on Vertex AI.
type VertexConfig struct {
	Project string
	// Location defaults to omnimodels.DefaultVertexLocation.
	Location string
	// Endpoint replaces the location's host (vertexauth.Endpoint): a
	// private endpoint, or a fake.
	Endpoint string
	// Credentials are the token's source; neither field means
	// Application Default Credentials.
	Credentials vertexauth.Credentials
	// Models, PollAfter and HTTP are as Config's.
	Models    map[string]string
	PollAfter time.Duration
	HTTP      *http.Client
}

// api is what differs between the two APIs: where a request goes, how
// it is authenticated, and how messages name the route.
type api struct {
	kind   string // settings.GeneratorOmni or settings.GeneratorOmniVertex
	base   string // interactions are under it
	models string // a model's metadata is under it (Check)
	origin string
	// auth is the credentials' header, added on the API's origin only.
	auth func() (http.Header, error)
	// delivery is response_format.delivery; "" lets the API choose.
	delivery string
	// refused names the setting to fix when Check's credentials are
	// refused.
	refused string
}

// Provider is Gemini Omni on one API, a provider.Provider.
type Provider struct {
	api       api
	models    map[string]string
	pollAfter time.Duration
	http      *http.Client
}

var (
	_ provider.Provider = (*Provider)(nil)
	_ provider.Checker  = (*Provider)(nil)
)

// New returns Omni on the Gemini API.
func New(cfg Config) (*Provider, error) {
	if cfg.APIKey == "" {
		return nil, fmt.Errorf("omni: no API key (%s)", settings.GeminiAPIKey)
	}
	endpoint, origin, err := providerhttp.Endpoint("omni", cfg.Endpoint, DefaultEndpoint)
	if err != nil {
		return nil, err
	}
	key := cfg.APIKey
	return newProvider(api{kind: settings.GeneratorOmni, base: endpoint + "/v1beta/", models: endpoint + "/v1beta/models/",
		origin: origin, auth: func() (http.Header, error) { return http.Header{keyHeader: {key}}, nil },
		refused: "the API key was refused (" + settings.GeminiAPIKey + ", on AWS its secret)"},
		cfg.Models, cfg.PollAfter, cfg.HTTP), nil
}

// NewVertex returns Omni on Vertex AI. It finds the credentials now
// (vertexauth.TokenSource), so that a missing one fails the start-up,
// not every task.
func NewVertex(ctx context.Context, cfg VertexConfig) (*Provider, error) {
	if cfg.Project == "" {
		return nil, fmt.Errorf("omni-vertex: no project (%s)", settings.VertexProject)
	}
	if cfg.Location == "" {
		cfg.Location = omnimodels.DefaultVertexLocation
	}
	endpoint, origin, err := providerhttp.Endpoint("omni-vertex", cfg.Endpoint, vertexauth.Endpoint(cfg.Location))
	if err != nil {
		return nil, err
	}
	ts, err := vertexauth.TokenSource(ctx, cfg.Credentials)
	if err != nil {
		return nil, fmt.Errorf("omni-vertex: %w", err)
	}
	return newProvider(api{kind: settings.GeneratorOmniVertex,
		base: fmt.Sprintf("%s/v1beta1/projects/%s/locations/%s/", endpoint, url.PathEscape(cfg.Project), url.PathEscape(cfg.Location)),
		// publishers.models.get, as Veo on Vertex AI checks its models.
		models: endpoint + "/v1/publishers/google/models/", origin: origin, auth: bearer(ts), delivery: "inline",
		refused: "the credentials were refused (" + settings.VertexAccessToken + ", application default credentials or, on AWS, the workload identity federation config)"},
		cfg.Models, cfg.PollAfter, cfg.HTTP), nil
}

// bearer is the Authorization header of ts's token. A token not had is
// a wait, as no answer is (Veo on Vertex AI meets the same in its
// transport): the request never went out.
func bearer(ts oauth2.TokenSource) func() (http.Header, error) {
	return func() (http.Header, error) {
		tok, err := ts.Token()
		if err != nil {
			return nil, &providerhttp.BusyError{Err: fmt.Errorf("omni-vertex: no token: %w", err)}
		}
		return http.Header{"Authorization": {"Bearer " + tok.AccessToken}}, nil
	}
}

func newProvider(a api, models map[string]string, pollAfter time.Duration, hc *http.Client) *Provider {
	if models == nil {
		models = omnimodels.DefaultModels()
	}
	if pollAfter <= 0 {
		pollAfter = settings.DefaultProviderPollInterval
	}
	c := &http.Client{Timeout: requestTimeout}
	if hc != nil {
		cc := *hc
		c = &cc
	}
	// A video's URI may redirect to where it is stored: the credentials
	// stay on the API's origin.
	c.CheckRedirect = providerhttp.KeepOnOrigin(a.origin, keyHeader, "Authorization")
	return &Provider{api: a, models: models, pollAfter: pollAfter, http: c}
}

// FromSettings is the omni generator of p (settings.GeneratorOmni: the
// Gemini API's key and endpoint) or its omni-vertex one
// (settings.GeneratorOmniVertex: Vertex AI's project, location,
// endpoint and access token, and wif, AWS's workload identity
// federation config), with p's model map.
func FromSettings(ctx context.Context, p settings.ProviderConfig, wif []byte) (*Provider, error) {
	models := omnimodels.WithDefaults(p.ModelMap())
	if p.Generator == settings.GeneratorOmniVertex {
		creds := vertexauth.Credentials{AccessToken: p.VertexAccessToken, WIFConfig: wif}
		return NewVertex(ctx, VertexConfig{Project: p.VertexProject, Location: p.VertexLocation, Endpoint: p.VertexEndpoint,
			Credentials: creds, Models: models, PollAfter: p.PollInterval})
	}
	return New(Config{APIKey: p.GeminiAPIKey, Endpoint: p.GeminiEndpoint, Models: models, PollAfter: p.PollInterval})
}

// Submit starts the interaction with POST {base}/interactions.
func (p *Provider) Submit(ctx context.Context, job provider.Job) (provider.Operation, error) {
	model, ok := p.models[job.Model]
	if !ok || model == "" {
		return provider.Operation{}, fmt.Errorf("no provider model configured for %s", job.Model)
	}
	req, err := NewRequest(job, model)
	if err != nil {
		return provider.Operation{}, err
	}
	req.ResponseFormat.Delivery = p.api.delivery
	var in Interaction
	if err := p.send(ctx, http.MethodPost, p.api.base+"interactions", req, &in); err != nil {
		return provider.Operation{}, submitError(err)
	}
	if !validID(in.ID) {
		// Accepted, maybe: an answer without a usable id says nothing of
		// the interaction.
		return provider.Operation{}, &OutcomeUnknownError{Err: fmt.Errorf("the API answered an interaction without a usable id %q", in.ID)}
	}
	if in.Status == StatusCompleted || in.Status == StatusFailed {
		// Done at once: read it as a poll would.
		return p.done(ctx, in, job)
	}
	return provider.Operation{Name: in.ID, PollAfter: p.pollAfter}, nil
}

// validID: an id is one path segment.
func validID(id string) bool {
	return id != "" && id != "." && id != ".." && !strings.ContainsAny(id, "/?#\\%")
}

// Poll GETs the interaction, and writes its video once completed.
func (p *Provider) Poll(ctx context.Context, id string, job provider.Job) (provider.Operation, error) {
	if !validID(id) {
		return provider.Operation{}, fmt.Errorf("%s: interaction id %q is not one path segment", p.api.kind, id)
	}
	var in Interaction
	if err := p.send(ctx, http.MethodGet, p.api.base+"interactions/"+id, nil, &in); err != nil {
		return provider.Operation{}, providerhttp.RefusedWhileRunning(err)
	}
	if in.ID == "" {
		in.ID = id
	}
	return p.done(ctx, in, job)
}

// done reads where an interaction is: running, or ended.
func (p *Provider) done(ctx context.Context, in Interaction, job provider.Job) (provider.Operation, error) {
	switch in.Status {
	case StatusQueued, StatusInProgress, "":
		return provider.Operation{Name: in.ID, PollAfter: p.pollAfter}, nil
	case StatusCompleted:
	default:
		// failed, cancelled, incomplete, budget_exceeded, requires_action
		// (no tool was given): the interaction ended without a video.
		return provider.Operation{}, jobError(in)
	}
	v, ok := in.Video()
	if !ok {
		// Completed with no video: Google says nothing of why; a safety
		// block would name itself in errors.
		e := jobError(in)
		e.Message = strings.TrimSpace("completed without a video. " + e.Message)
		return provider.Operation{}, e
	}
	if err := os.MkdirAll(job.OutDir, 0o700); err != nil {
		return provider.Operation{}, fmt.Errorf("create %s: %w", job.OutDir, err)
	}
	path := filepath.Join(job.OutDir, "video-0.mp4")
	switch {
	case v.Data != "":
		if err := writeBase64(v.Data, path); err != nil {
			return provider.Operation{}, err
		}
	case v.URI != "":
		if err := p.download(ctx, v.URI, path); err != nil {
			return provider.Operation{}, providerhttp.RefusedWhileRunning(err)
		}
	}
	return provider.Operation{Name: in.ID, Done: true, Result: provider.Result{Paths: []string{path}},
		Billing: p.billing(job)}, nil
}

// billing is what a completed interaction cost: the price of a second
// of the model's video at the resolution asked × the seconds asked, for
// its one video (omnimodels: the price errs towards Google's bill). A
// failed interaction records no cost.
func (p *Provider) billing(job provider.Job) provider.Billing {
	model := p.models[job.Model]
	m, _ := omnimodels.Priced(model)
	cost, _ := m.Cost(job.Params.Resolution, job.Params.DurationSeconds, true)
	return provider.Billing{Route: p.api.kind, ProviderModel: model, CostUSD: cost}
}

// Check asks the API for each model Omni is mapped to: on the Gemini
// API GET /v1beta/models/{model} (https://ai.google.dev/api/models, read
// 2026-11-26), on Vertex AI GET /v1/publishers/google/models/{model}
// (publishers.models.get, read 2026-11-26; that it lists Omni is not
// known first-hand). Credentials refused or an API that does not answer
// stop the start-up here, rather than fail every task; models the API
// does not serve are a *provider.UnavailableModelsError.
func (p *Provider) Check(ctx context.Context) error {
	return providerhttp.CheckModels(p.api.kind, p.models, func(m string) error {
		var meta struct{}
		return p.send(ctx, http.MethodGet, p.api.models+url.PathEscape(m), nil, &meta)
	}, func(err error) bool {
		var e *Error
		return errors.As(err, &e) && e.HTTPStatus == http.StatusNotFound
	}, func(m string, err error) error {
		var e *Error
		if errors.As(err, &e) && e.HTTPStatus/100 == 4 {
			return fmt.Errorf("%s: %s: %w", p.api.kind, p.api.refused, err)
		}
		return fmt.Errorf("%s: model %s: the API does not answer: %w", p.api.kind, m, err)
	})
}

// send does one request of the API (providerhttp.SendJSON); an inline
// video rides in the answer, base64: room for the largest.
func (p *Provider) send(ctx context.Context, method, url string, body, out any) error {
	h, err := p.api.auth()
	if err != nil {
		return err
	}
	return providerhttp.SendJSON(ctx, p.http, method, url, method+" "+url, h, body, out, 2*maxVideoBytes, answerError)
}

// download writes the video at uri to path, with the credentials while
// on the API's origin only. A gs:// URI is refused: this adapter asks
// Vertex AI for its video inline.
func (p *Provider) download(ctx context.Context, uri, path string) error {
	u, err := url.Parse(uri)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") {
		return fmt.Errorf("%s: the video's URI %q is not an http(s) URL", p.api.kind, uri)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, uri, nil)
	if err != nil {
		return fmt.Errorf("request: %w", err)
	}
	if u.Scheme+"://"+u.Host == p.api.origin {
		if req.Header, err = p.api.auth(); err != nil {
			return err
		}
	}
	name := "download " + u.Scheme + "://" + u.Host + u.Path
	resp, err := providerhttp.Do(p.http, req, name)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return answerError(resp)
	}
	return providerhttp.Save(resp.Body, path, maxVideoBytes, name)
}

func writeBase64(s, path string) error {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return &Error{Message: "the API answered a video that is not base64"}
	}
	return os.WriteFile(path, b, 0o600)
}

// Statuses of an interaction that this adapter reads.
const (
	StatusQueued     = "queued"
	StatusInProgress = "in_progress"
	StatusCompleted  = "completed"
	StatusFailed     = "failed"
)

// OutcomeUnknownError is a submit that went out whole with no readable
// answer: an interaction takes no idempotency key, so the workflow never
// submits such a job again.
type OutcomeUnknownError = providerhttp.OutcomeUnknownError
