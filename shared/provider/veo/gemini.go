package veo

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/genvideo/gen/shared/provider"
	"github.com/genvideo/gen/shared/provider/providerhttp"
	"github.com/genvideo/gen/shared/provider/veo/veomodels"
	"github.com/genvideo/gen/shared/settings"
)

// DefaultGeminiEndpoint is the Gemini API.
const DefaultGeminiEndpoint = "https://generativelanguage.googleapis.com"

// GeminiConfig configures NewGemini.
type GeminiConfig struct {
	// APIKey is sent as x-goog-api-key, never in a URL.
	APIKey string
	// Endpoint replaces DefaultGeminiEndpoint (a fake).
	Endpoint string
	// Models maps the contract's model ids to the Gemini API's; nil
	// means veomodels.GeminiModels.
	Models map[string]string
	// FFmpegPath, when set, is the ffmpeg that removes the audio of the
	// videos of a job asked without audio: the Gemini API takes no
	// generateAudio, and its Veo 3.1 models always make audio. Empty, such
	// videos keep their audio.
	FFmpegPath string
	// PollAfter is the wait between polls; 0 means DefaultPollAfter.
	PollAfter time.Duration
	// HTTP is the client; nil means one whose requests time out after
	// two minutes.
	HTTP *http.Client
}

// Gemini is Veo on the Gemini API, a provider.Provider. The API takes
// neither seed nor generateAudio (its Veo 3.1 models always make audio),
// so those two parameters do not reach it; a job asked without audio has
// the audio removed (GeminiConfig.FFmpegPath).
type Gemini struct {
	cfg    GeminiConfig
	base   string // {endpoint}/v1beta/
	origin string // scheme://host of the endpoint
	http   *http.Client
}

var _ provider.Provider = (*Gemini)(nil)

// NewGemini returns the Gemini API provider.
func NewGemini(cfg GeminiConfig) (*Gemini, error) {
	if cfg.APIKey == "" {
		return nil, fmt.Errorf("gemini: no API key")
	}
	if cfg.Models == nil {
		cfg.Models = veomodels.DefaultModels(settings.GeneratorGemini)
	}
	endpoint, origin, err := providerhttp.Endpoint("gemini", cfg.Endpoint, DefaultGeminiEndpoint)
	if err != nil {
		return nil, err
	}
	g := &Gemini{cfg: cfg, base: endpoint + "/v1beta/", origin: origin}
	c := *httpClient(cfg.HTTP)
	// A download URI redirects to where the video is stored: the key
	// stays on the API's origin.
	c.CheckRedirect = providerhttp.KeepOnOrigin(g.origin, "X-Goog-Api-Key")
	g.http = &c
	return g, nil
}

func (g *Gemini) header() http.Header {
	return http.Header{"X-Goog-Api-Key": {g.cfg.APIKey}}
}

// Submit starts the job with predictLongRunning.
func (g *Gemini) Submit(ctx context.Context, job provider.Job) (provider.Operation, error) {
	m, err := model(g.cfg.Models, job.Model)
	if err != nil {
		return provider.Operation{}, err
	}
	pm, _, _ := veomodels.Lookup(settings.GeneratorGemini, m)
	req, err := newRequest(job, pm.Limits, settings.GeneratorGemini, "")
	if err != nil {
		return provider.Operation{}, err
	}
	var op operation
	if err := send(ctx, g.http, http.MethodPost, g.base+"models/"+url.PathEscape(m)+":predictLongRunning", g.header(), req, &op); err != nil {
		return provider.Operation{}, submitError(err)
	}
	return provider.Operation{Name: op.Name, PollAfter: pollAfter(g.cfg.PollAfter)}, nil
}

// Check reads the metadata of every model the provider maps to (GET
// /v1beta/models/{model}, https://ai.google.dev/api/models#method:-models.get,
// read 2026-11-26): a key Google refuses fails here, at start-up,
// rather than every task.
func (g *Gemini) Check(ctx context.Context) error {
	return check("gemini", g.cfg.Models, func(m string) error {
		var meta struct {
			Name string `json:"name"`
		}
		return send(ctx, g.http, http.MethodGet, g.base+"models/"+url.PathEscape(m), g.header(), nil, &meta)
	})
}

// Poll GETs the operation, and downloads its videos once done.
func (g *Gemini) Poll(ctx context.Context, name string, job provider.Job) (provider.Operation, error) {
	if !strings.HasPrefix(name, "models/") || strings.Contains(name, "..") {
		return provider.Operation{}, fmt.Errorf("gemini: operation name %q is not models/.../operations/...", name)
	}
	var op operation
	sp := &spool{dir: job.OutDir}
	defer sp.clean()
	if err := poll(ctx, g.http, http.MethodGet, g.base+name, g.header(), nil, sp, &op); err != nil {
		return provider.Operation{}, providerhttp.RefusedWhileRunning(err)
	}
	if !op.Done {
		return provider.Operation{Name: name, PollAfter: pollAfter(g.cfg.PollAfter)}, nil
	}
	if op.Response == nil || op.Response.GenerateVideoResponse == nil {
		return result(ctx, job, op, 0, 0, nil, nil)
	}
	r := op.Response.GenerateVideoResponse
	// An extension names a video by its file (veomodels [gemini-extend]):
	// each video's URI is kept.
	uris := make([]string, len(r.GeneratedSamples))
	for i, g := range r.GeneratedSamples {
		uris[i] = g.Video.URI
	}
	done, err := result(ctx, job, op, len(r.GeneratedSamples), r.RAIMediaFilteredCount, r.RAIMediaFilteredReasons,
		func(ctx context.Context, i int, path string) error {
			v := r.GeneratedSamples[i].Video
			switch {
			case v.EncodedVideo != "":
				if err := sp.take(v.EncodedVideo, path); err != nil {
					return err
				}
			// The key goes to the API's own host only (redirects:
			// KeepOnOrigin).
			case !strings.HasPrefix(v.URI, g.origin+"/"):
				return fmt.Errorf("gemini: video at %q, outside %s", redact(v.URI), g.origin)
			default:
				if err := download(ctx, g.http, v.URI, g.header(), path); err != nil {
					return err
				}
			}
			if job.Params.GenerateAudio || g.cfg.FFmpegPath == "" {
				return nil
			}
			return stripAudio(ctx, g.cfg.FFmpegPath, path)
		})
	if err != nil {
		return provider.Operation{}, err
	}
	done.Result.URIs = uris
	// The operation's name is models/{model}/operations/{id}.
	m, _, _ := strings.Cut(strings.TrimPrefix(name, "models/"), "/")
	done.Billing = billing(settings.GeneratorGemini, m, job, len(r.GeneratedSamples)+r.RAIMediaFilteredCount)
	return done, nil
}

// stripAudio rewrites the MP4 at path without its audio streams, copying
// the video as it is.
func stripAudio(ctx context.Context, ffmpeg, path string) error {
	tmp := path + ".silent.mp4"
	out, err := exec.CommandContext(ctx, ffmpeg, "-v", "error", "-y", "-i", path,
		"-map", "0", "-map", "-0:a", "-c", "copy", "-movflags", "+faststart", tmp).CombinedOutput()
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("remove the audio of %s: %w: %s", filepath.Base(path), err, strings.TrimSpace(string(out)))
	}
	return os.Rename(tmp, path)
}
