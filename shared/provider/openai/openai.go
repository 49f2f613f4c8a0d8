// Package openai generates videos on a host of OpenAI's videos
// shape: OpenAI itself, or a self-hosted vLLM-Omni (and the others that
// serve the shape: SGLang Diffusion, NVIDIA Dynamo, LiteLLM). It is a
// provider.Provider: a start is a POST /v1/videos (multipart), polled
// with GET /v1/videos/{id} until completed, its content downloaded once
// with GET /v1/videos/{id}/content.
//
// Every answer is classified here into the outcomes the workflow knows
// (shared/design/providers.md): an accepted job's id is the operation; a
// refusal before acceptance is either waited out (429 after its
// Retry-After, 5xx, no connection: RetryAfter) or final (FailureCode); a
// submit that went out with no readable answer is an
// *OutcomeUnknownError, never submitted again; a failed job is a
// content-policy refusal when its code names moderation, else a failure.
// Its limits are openaimodels'.
package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/genvideo/gen/shared/provider"
	"github.com/genvideo/gen/shared/provider/capability"
	"github.com/genvideo/gen/shared/provider/openai/openaimodels"
	"github.com/genvideo/gen/shared/provider/providerhttp"
	"github.com/genvideo/gen/shared/settings"
	"github.com/genvideo/gen/shared/task"
)

// DefaultEndpoint is OpenAI's API. (OpenAI's SDK marks the Sora API as
// shut down on September 24, 2026: its models then answer 404, which
// the start-up check reports; the shape lives on in the other hosts.)
const DefaultEndpoint = "https://api.openai.com"

// requestTimeout bounds one request, a download included, when the
// caller gives no client of its own.
const requestTimeout = 2 * time.Minute

// maxVideoBytes bounds one downloaded video.
const maxVideoBytes = 512 << 20

// Config configures New.
type Config struct {
	// APIKey is sent as Authorization: Bearer; empty sends none (a
	// self-hosted host without a key).
	APIKey string
	// Endpoint replaces DefaultEndpoint.
	Endpoint string
	// Profile is settings.ProfileOpenAI (or "") or ProfileVLLMOmni.
	Profile string
	// Models maps the contract's model ids to the host's; nil means
	// openaimodels.DefaultModels. An empty id sends no model (the
	// server's own).
	Models map[string]string
	// USDPerSecond is what a second of a self-hosted host's video costs
	// the operator (settings.OpenAIUSDPerSecond); OpenAI's own prices
	// are openaimodels'.
	USDPerSecond float64
	// PollAfter is the wait between polls; 0 means
	// settings.DefaultProviderPollInterval.
	PollAfter time.Duration
	// HTTP is the client; nil means one whose requests time out after
	// two minutes.
	HTTP *http.Client
}

// Provider is a host of OpenAI's videos shape, a provider.Provider.
type Provider struct {
	cfg    Config
	base   string // {endpoint}/v1/
	origin string
	http   *http.Client
}

var _ provider.Provider = (*Provider)(nil)

// New returns the provider of cfg.
func New(cfg Config) (*Provider, error) {
	if cfg.Profile == "" {
		cfg.Profile = settings.ProfileOpenAI
	}
	if cfg.Models == nil {
		cfg.Models = openaimodels.DefaultModels(cfg.Profile)
	}
	if cfg.PollAfter <= 0 {
		cfg.PollAfter = settings.DefaultProviderPollInterval
	}
	endpoint, origin, err := providerhttp.Endpoint("openai", cfg.Endpoint, DefaultEndpoint)
	if err != nil {
		return nil, err
	}
	if cfg.APIKey == "" && cfg.Profile == settings.ProfileOpenAI && endpoint == DefaultEndpoint {
		return nil, fmt.Errorf("openai: no API key (%s)", settings.OpenAIAPIKey)
	}
	p := &Provider{cfg: cfg, base: endpoint + "/v1/", origin: origin}
	c := &http.Client{Timeout: requestTimeout}
	if cfg.HTTP != nil {
		cc := *cfg.HTTP
		c = &cc
	}
	// A content download may redirect to where the video is stored:
	// the key stays on the host's origin.
	c.CheckRedirect = providerhttp.KeepOnOrigin(p.origin, "Authorization")
	p.http = c
	return p, nil
}

// FromSettings is the openai generator of p (settings.GeneratorOpenAI).
func FromSettings(p settings.ProviderConfig) (*Provider, error) {
	profile := openaimodels.Profile(p)
	return New(Config{APIKey: p.OpenAIAPIKey, Endpoint: p.OpenAIEndpoint, Profile: profile,
		Models: openaimodels.WithDefaults(profile, p.ModelMap()), USDPerSecond: p.OpenAIUSDPerSecond, PollAfter: p.PollInterval})
}

func (p *Provider) header() http.Header {
	if p.cfg.APIKey == "" {
		return http.Header{}
	}
	return http.Header{"Authorization": {"Bearer " + p.cfg.APIKey}}
}

// video is the host's Video object [openai-ref of openaimodels].
type video struct {
	ID       string   `json:"id"`
	Status   string   `json:"status"`
	Progress *float64 `json:"progress"`
	Error    *struct {
		Code    errorCode `json:"code"`
		Message string    `json:"message"`
	} `json:"error"`
}

// Statuses of a video job.
const (
	StatusQueued     = "queued"
	StatusInProgress = "in_progress"
	StatusCompleted  = "completed"
	StatusFailed     = "failed"
)

// progress is the job's percentage, 0 when the host gave none.
func (v video) progress() int {
	if v.Progress == nil {
		return 0
	}
	return min(100, max(0, int(*v.Progress)))
}

// form is the multipart body of a submit: the job's fields as the host
// names them, the ones its limits take.
func form(job provider.Job, model string, lim capability.Limits) (body []byte, contentType string, err error) {
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	par := job.Params
	size, ok := openaimodels.Size(par.AspectRatio, par.Resolution)
	if !ok {
		return nil, "", fmt.Errorf("no size for %s at %s", par.AspectRatio, par.Resolution)
	}
	fields := [][2]string{{"prompt", job.Prompt}, {"seconds", openaimodels.Seconds(par.DurationSeconds)}, {"size", size}}
	if model != "" {
		fields = append(fields, [2]string{"model", model})
	}
	if lim.NegativePrompt && par.NegativePrompt != "" {
		fields = append(fields, [2]string{"negative_prompt", par.NegativePrompt})
	}
	if lim.Seed && par.Seed != nil {
		fields = append(fields, [2]string{"seed", strconv.FormatInt(*par.Seed, 10)})
	}
	for _, f := range fields {
		if err := w.WriteField(f[0], f[1]); err != nil {
			return nil, "", err
		}
	}
	for role, path := range job.Images {
		if role != task.RoleImage && role != task.RoleFirstFrame {
			return nil, "", fmt.Errorf("input image of role %q: the host takes one reference image", role)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, "", fmt.Errorf("read input image: %w", err)
		}
		mime := http.DetectContentType(b)
		if mime != "image/png" && mime != "image/jpeg" {
			return nil, "", fmt.Errorf("input image is %s, want image/png or image/jpeg", mime)
		}
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="input_reference"; filename="reference%s"`, ext(mime)))
		h.Set("Content-Type", mime)
		part, err := w.CreatePart(h)
		if err != nil {
			return nil, "", err
		}
		part.Write(b)
	}
	if err := w.Close(); err != nil {
		return nil, "", err
	}
	return buf.Bytes(), w.FormDataContentType(), nil
}

func ext(mime string) string {
	if mime == "image/png" {
		return ".png"
	}
	return ".jpg"
}

// Submit starts the job with POST /v1/videos.
func (p *Provider) Submit(ctx context.Context, job provider.Job) (provider.Operation, error) {
	model, ok := p.cfg.Models[job.Model]
	if !ok && p.cfg.Profile != settings.ProfileVLLMOmni {
		return provider.Operation{}, fmt.Errorf("no provider model configured for %s", job.Model)
	}
	lim, _ := openaimodels.Lookup(p.cfg.Profile, model)
	body, ctype, err := form(job, model, lim)
	if err != nil {
		return provider.Operation{}, err
	}
	h := p.header()
	h.Set("Content-Type", ctype)
	var v video
	if err := p.send(ctx, http.MethodPost, p.base+"videos", h, body, &v); err != nil {
		return provider.Operation{}, submitError(err)
	}
	if !validID(v.ID) {
		// Accepted, maybe: an answer without a usable id says nothing
		// of the job.
		return provider.Operation{}, &OutcomeUnknownError{Err: fmt.Errorf("the host answered a video without a usable id %q", v.ID)}
	}
	return provider.Operation{Name: v.ID, PollAfter: p.cfg.PollAfter, Progress: v.progress()}, nil
}

// validID: an id is one path segment.
func validID(id string) bool {
	return id != "" && id != "." && id != ".." && !strings.ContainsAny(id, "/?#\\%")
}

// Poll GETs the video job, and downloads its content once completed.
func (p *Provider) Poll(ctx context.Context, id string, job provider.Job) (provider.Operation, error) {
	if !validID(id) {
		return provider.Operation{}, fmt.Errorf("openai: video id %q is not one path segment", id)
	}
	var v video
	if err := p.send(ctx, http.MethodGet, p.base+"videos/"+id, p.header(), nil, &v); err != nil {
		return provider.Operation{}, providerhttp.RefusedWhileRunning(err)
	}
	switch v.Status {
	case StatusQueued, StatusInProgress:
		return provider.Operation{Name: id, PollAfter: p.cfg.PollAfter, Progress: v.progress()}, nil
	case StatusFailed:
		e := &Error{}
		if v.Error != nil {
			e.Code, e.Message = string(v.Error.Code), v.Error.Message
		}
		e.policy = refusal(e.Code)
		return provider.Operation{}, e
	case StatusCompleted:
	default:
		return provider.Operation{}, &providerhttp.BusyError{Err: fmt.Errorf("video %s has status %q", id, v.Status), Sent: true}
	}
	if err := os.MkdirAll(job.OutDir, 0o700); err != nil {
		return provider.Operation{}, fmt.Errorf("create %s: %w", job.OutDir, err)
	}
	path := filepath.Join(job.OutDir, "video-0.mp4")
	if err := p.download(ctx, p.base+"videos/"+id+"/content", path); err != nil {
		return provider.Operation{}, providerhttp.RefusedWhileRunning(err)
	}
	return provider.Operation{Name: id, Done: true, Result: provider.Result{Paths: []string{path}},
		Billing: p.billing(job)}, nil
}

// billing is what a completed job cost: the host's price of a second
// of its model's video (openaimodels: OpenAI's list price, or a
// self-hosted host's USDPerSecond) × the seconds asked, for the one
// video a job makes. A failed job records no cost (OpenAI's pricing
// bills the seconds of a video it makes).
func (p *Provider) billing(job provider.Job) provider.Billing {
	model := p.cfg.Models[job.Model]
	m, _ := openaimodels.Priced(settings.ProviderConfig{OpenAIProfile: p.cfg.Profile, OpenAIUSDPerSecond: p.cfg.USDPerSecond}, model)
	cost, _ := m.Cost(job.Params.Resolution, job.Params.DurationSeconds, job.Params.GenerateAudio)
	// A self-hosted host without a model id serves its own: no id to name.
	return provider.Billing{Route: settings.GeneratorOpenAI, ProviderModel: model, CostUSD: cost}
}

// Check asks the host for each model it is mapped to (GET
// /v1/models/{model}; a vLLM-Omni host, whose model is its own, for
// GET /v1/models): a key refused or a host that does not answer stops
// the start-up here, rather than fail every task; models the host does
// not serve are a *provider.UnavailableModelsError.
func (p *Provider) Check(ctx context.Context) error {
	var models []string
	for _, m := range p.cfg.Models {
		if m != "" && !slices.Contains(models, m) {
			models = append(models, m)
		}
	}
	slices.Sort(models)
	if p.cfg.Profile == settings.ProfileVLLMOmni || len(models) == 0 {
		var list struct{}
		if err := p.send(ctx, http.MethodGet, p.base+"models", p.header(), nil, &list); err != nil {
			return checkError(err)
		}
		return nil
	}
	var missing []string
	for _, m := range models {
		var meta struct{}
		err := p.send(ctx, http.MethodGet, p.base+"models/"+url.PathEscape(m), p.header(), nil, &meta)
		var e *Error
		if errors.As(err, &e) && e.HTTPStatus == http.StatusNotFound {
			missing = append(missing, m)
			continue
		}
		if err != nil {
			return checkError(err)
		}
	}
	if len(missing) > 0 {
		return &provider.UnavailableModelsError{API: "openai", Models: missing}
	}
	return nil
}

func checkError(err error) error {
	var e *Error
	if errors.As(err, &e) && (e.HTTPStatus == http.StatusUnauthorized || e.HTTPStatus == http.StatusForbidden) {
		return fmt.Errorf("openai: the API key was refused (%s, on AWS its secret): %w", settings.OpenAIAPIKey, err)
	}
	return fmt.Errorf("openai: the host does not answer (%s): %w", settings.OpenAIEndpoint, err)
}

// send does one request and decodes a 2xx answer into out. Network
// failures and 429/5xx answers are *providerhttp.BusyError, sent when the request
// had gone out whole.
func (p *Provider) send(ctx context.Context, method, url string, header http.Header, body []byte, out any) error {
	resp, err := p.do(ctx, method, url, header, body)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return answerError(resp)
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(out); err != nil {
		return &providerhttp.BusyError{Err: fmt.Errorf("decode answer of %s %s: %w", method, url, err), Sent: true}
	}
	return nil
}

func (p *Provider) do(ctx context.Context, method, url string, header http.Header, body []byte) (*http.Response, error) {
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, r)
	if err != nil {
		return nil, fmt.Errorf("request: %w", err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	return providerhttp.Do(p.http, req, method+" "+url)
}

// download writes the content at url to path.
func (p *Provider) download(ctx context.Context, url, path string) error {
	resp, err := p.do(ctx, http.MethodGet, url, p.header(), nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return answerError(resp)
	}
	return providerhttp.Save(resp.Body, path, maxVideoBytes, url)
}
