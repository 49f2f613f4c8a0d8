// Package omni generates videos with Gemini Omni Flash on the Gemini
// API's Interactions API. It is a provider.Provider: a start is a POST
// /v1beta/interactions with background true (the interaction runs on
// after the answer, which carries its id), polled with GET
// /v1beta/interactions/{id} until it is completed; the video is in a
// model_output step, inline (base64) or at a URI on the API's origin,
// downloaded once with the key.
//
// Every answer is classified here into the outcomes the workflow knows
// (shared/design/providers.md): an accepted interaction's id is the
// operation; a refusal before acceptance is either waited out (429 and
// 5xx, after Google's RetryInfo or Retry-After; no connection) or final;
// a submit that went out with no readable answer is an
// *OutcomeUnknownError, never submitted again (an interaction takes no
// idempotency key); an interaction that ends with errors is a safety
// refusal when they say so, else a failure. Its limits and prices are
// omnimodels'.
//
// Vertex AI serves Omni on the same Interactions API under
// /v1beta1/projects/{project}/locations/{location}/interactions, with a
// video written to Cloud Storage (gcs_uri) when delivered by URI;
// infra/docs/providers.md says why that route is not built yet.
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

	"github.com/genvideo/gen/shared/provider"
	"github.com/genvideo/gen/shared/provider/omni/omnimodels"
	"github.com/genvideo/gen/shared/provider/providerhttp"
	"github.com/genvideo/gen/shared/settings"
)

// DefaultEndpoint is the Gemini API.
const DefaultEndpoint = "https://generativelanguage.googleapis.com"

// keyHeader carries the key, never a URL's query.
const keyHeader = "x-goog-api-key"

// requestTimeout bounds one request, a download included, when the
// caller gives no client of its own.
const requestTimeout = 2 * time.Minute

// maxVideoBytes bounds one video, downloaded or inline.
const maxVideoBytes = 512 << 20

// Config configures New.
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

// Provider is Gemini Omni on the Gemini API, a provider.Provider.
type Provider struct {
	cfg    Config
	base   string // {endpoint}/v1beta/
	origin string
	http   *http.Client
}

var (
	_ provider.Provider = (*Provider)(nil)
	_ provider.Checker  = (*Provider)(nil)
)

// New returns the provider of cfg.
func New(cfg Config) (*Provider, error) {
	if cfg.APIKey == "" {
		return nil, fmt.Errorf("omni: no API key (%s)", settings.GeminiAPIKey)
	}
	if cfg.Models == nil {
		cfg.Models = omnimodels.DefaultModels()
	}
	if cfg.PollAfter <= 0 {
		cfg.PollAfter = settings.DefaultProviderPollInterval
	}
	endpoint, origin, err := providerhttp.Endpoint("omni", cfg.Endpoint, DefaultEndpoint)
	if err != nil {
		return nil, err
	}
	p := &Provider{cfg: cfg, base: endpoint + "/v1beta/", origin: origin}
	c := &http.Client{Timeout: requestTimeout}
	if cfg.HTTP != nil {
		cc := *cfg.HTTP
		c = &cc
	}
	// A video's URI may redirect to where it is stored: the key stays on
	// the API's origin.
	c.CheckRedirect = providerhttp.KeepOnOrigin(origin, keyHeader)
	p.http = c
	return p, nil
}

// FromSettings is the omni generator of p (settings.GeneratorOmni): the
// Gemini API's key and endpoint, and p's model map.
func FromSettings(p settings.Provider) (*Provider, error) {
	return New(Config{APIKey: p.GeminiAPIKey, Endpoint: p.GeminiEndpoint,
		Models: omnimodels.WithDefaults(p.ModelMap()), PollAfter: p.PollInterval})
}

func (p *Provider) header() http.Header { return http.Header{keyHeader: {p.cfg.APIKey}} }

// Submit starts the interaction with POST /v1beta/interactions.
func (p *Provider) Submit(ctx context.Context, job provider.Job) (provider.Operation, error) {
	model, ok := p.cfg.Models[job.Model]
	if !ok || model == "" {
		return provider.Operation{}, fmt.Errorf("no provider model configured for %s", job.Model)
	}
	req, err := NewRequest(job, model)
	if err != nil {
		return provider.Operation{}, err
	}
	var in Interaction
	if err := p.send(ctx, http.MethodPost, p.base+"interactions", req, &in); err != nil {
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
	return provider.Operation{Name: in.ID, PollAfter: p.cfg.PollAfter}, nil
}

// validID: an id is one path segment.
func validID(id string) bool {
	return id != "" && id != "." && id != ".." && !strings.ContainsAny(id, "/?#\\%")
}

// Poll GETs the interaction, and writes its video once completed.
func (p *Provider) Poll(ctx context.Context, id string, job provider.Job) (provider.Operation, error) {
	if !validID(id) {
		return provider.Operation{}, fmt.Errorf("omni: interaction id %q is not one path segment", id)
	}
	var in Interaction
	if err := p.send(ctx, http.MethodGet, p.base+"interactions/"+id, nil, &in); err != nil {
		return provider.Operation{}, pollError(err)
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
		return provider.Operation{Name: in.ID, PollAfter: p.cfg.PollAfter}, nil
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
			return provider.Operation{}, pollError(err)
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
	model := p.cfg.Models[job.Model]
	m, _ := omnimodels.Priced(model)
	cost, _ := m.Cost(job.Params.Resolution, job.Params.DurationSeconds, true)
	return provider.Billing{Route: settings.GeneratorOmni, ProviderModel: model, CostUSD: cost}
}

// Check asks the Gemini API for each model Omni is mapped to (GET
// /v1beta/models/{model}, https://ai.google.dev/api/models, read
// 2026-11-26): a key refused or an API that does not answer stops the
// start-up here, rather than fail every task; models the API does not
// serve are a *provider.UnavailableModelsError.
func (p *Provider) Check(ctx context.Context) error {
	return providerhttp.CheckModels("omni", p.cfg.Models, func(m string) error {
		var meta struct{}
		return p.send(ctx, http.MethodGet, p.base+"models/"+url.PathEscape(m), nil, &meta)
	}, func(err error) bool {
		var e *Error
		return errors.As(err, &e) && e.HTTPStatus == http.StatusNotFound
	}, func(m string, err error) error {
		var e *Error
		if errors.As(err, &e) && e.HTTPStatus/100 == 4 {
			return fmt.Errorf("omni: the API key was refused (%s, on AWS its secret): %w", settings.GeminiAPIKey, err)
		}
		return fmt.Errorf("omni: model %s: the API does not answer: %w", m, err)
	})
}

// send does one request of the API (providerhttp.SendJSON); an inline
// video rides in the answer, base64: room for the largest.
func (p *Provider) send(ctx context.Context, method, url string, body, out any) error {
	return providerhttp.SendJSON(ctx, p.http, method, url, method+" "+url, p.header(), body, out, 2*maxVideoBytes, answerError)
}

// download writes the video at uri to path, with the key while on the
// API's origin only.
func (p *Provider) download(ctx context.Context, uri, path string) error {
	u, err := url.Parse(uri)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") {
		return fmt.Errorf("omni: the video's URI %q is not an http(s) URL", uri)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, uri, nil)
	if err != nil {
		return fmt.Errorf("request: %w", err)
	}
	if u.Scheme+"://"+u.Host == p.origin {
		req.Header = p.header()
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
