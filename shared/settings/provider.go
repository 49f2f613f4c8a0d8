package settings

import (
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/genvideo/gen/shared/catalog"
)

// The variables of the generator, which both stacks read.
const (
	// Generator selects the backend: builtin (ffmpeg test cards, the
	// default), vertex (Veo on Vertex AI), gemini (Veo on the Gemini
	// API), openai (a host of OpenAI's videos shape: OpenAI itself, or
	// a self-hosted vLLM-Omni), omni (Gemini Omni Flash on the Gemini
	// API's Interactions API, with the Gemini API's key and endpoint) or
	// omni-vertex (Gemini Omni Flash on Vertex AI's Interactions API,
	// with Vertex AI's project, location and credentials).
	Generator = "GEN_GENERATOR"
	// VertexProject and VertexLocation are the Google Cloud project and
	// region of Vertex AI (default us-central1).
	VertexProject  = "GEN_VERTEX_PROJECT"
	VertexLocation = "GEN_VERTEX_LOCATION"
	// VertexStorageURI, optional, is a gs://bucket/prefix where Vertex AI
	// writes the videos, which are then copied from there.
	VertexStorageURI = "GEN_VERTEX_STORAGE_URI"
	// VertexEndpoint replaces https://{location}-aiplatform.googleapis.com:
	// requests go to {endpoint}/v1/projects/... (private endpoints,
	// fakes).
	VertexEndpoint = "GEN_VERTEX_ENDPOINT"
	// VertexAccessToken, when set, is a static bearer token (gcloud auth
	// print-access-token) used instead of Application Default Credentials.
	VertexAccessToken = "GEN_VERTEX_ACCESS_TOKEN"
	// GeminiAPIKey is the Gemini API's key (on AWS it comes from Secrets
	// Manager instead), of the gemini and omni generators alike.
	GeminiAPIKey = "GEN_GEMINI_API_KEY"
	// GeminiEndpoint replaces https://generativelanguage.googleapis.com:
	// requests go to {endpoint}/v1beta/models/...
	GeminiEndpoint = "GEN_GEMINI_ENDPOINT"
	// OpenAIEndpoint replaces https://api.openai.com: requests go to
	// {endpoint}/v1/videos (a self-hosted vLLM-Omni, a fake).
	OpenAIEndpoint = "GEN_OPENAI_ENDPOINT"
	// OpenAIAPIKey is the bearer key of the openai generator; a
	// self-hosted host may take none.
	OpenAIAPIKey = "GEN_OPENAI_API_KEY"
	// OpenAIProfile names whose limits the host has: "openai" (OpenAI's
	// Sora models, whose API OpenAI shut down on 2026-09-24) or
	// "vllm-omni" (a self-hosted vLLM-Omni serving one model). There is
	// no default: the old one pointed at a shut-down API (issue 33).
	OpenAIProfile = "GEN_OPENAI_PROFILE"
	// OpenAIUSDPerSecond is what a second of video costs the operator on
	// a self-hosted host (the vllm-omni profile): GPU time, power. It
	// prices that host's videos for the start-up check (CreditUSD);
	// unset, 0. OpenAI's own prices are built in (openaimodels).
	OpenAIUSDPerSecond = "GEN_OPENAI_USD_PER_SECOND"
	// ProviderModels maps the contract's model ids to the provider's, as
	// id=providerId pairs separated by commas; the ids not listed keep
	// their default (veo.DefaultModels).
	ProviderModels = "GEN_PROVIDER_MODELS"
	// CreditUSD is what a credit sells for, in US dollars. The Veo
	// backends refuse to start when a model would sell a video below its
	// cost at its provider at this price (capability.CheckPrices).
	CreditUSD = "GEN_CREDIT_USD"
	// ProviderPollInterval is how long the workflow waits between polls
	// of a provider's operation (neither API gives a hint), a Go duration
	// from a second to a minute (template.yaml allows 5 s to 1 min).
	ProviderPollInterval = "GEN_PROVIDER_POLL_INTERVAL"
)

// DefaultProviderPollInterval: Veo takes a minute or more; polling every
// 10 s adds little to that and costs a few requests of the quota.
const DefaultProviderPollInterval = 10 * time.Second

// DefaultCreditUSD is $0.015 a credit: the lowest round price at which
// every model sells every video it can be asked for above its list price
// at Google on both APIs (the closest: an 8-second Quality video without
// audio on the Gemini API, which bills audio always, $3.20 for 250
// credits = $3.75). infra/docs/providers.md, "Real videos with Veo", has
// the margins.
const DefaultCreditUSD = 0.015

// The bounds of ProviderPollInterval. Each poll costs a provider request
// of the quota and, on AWS, a Lambda run and three state transitions
// (infra/docs/deploy.md, "What it costs per 1,000 generations"): "0s" or
// a few milliseconds would poll as fast as the workflow can loop (the
// workflow waits at least a second, workflow.MinPollWait), and past a
// minute a finished video waits too long.
const (
	MinProviderPollInterval = time.Second
	MaxProviderPollInterval = time.Minute
)

// The generators GEN_GENERATOR selects.
const (
	GeneratorBuiltin = "builtin"
	GeneratorVertex  = "vertex"
	GeneratorGemini  = "gemini"
	GeneratorOpenAI  = "openai"
	GeneratorOmni    = "omni"
	// GeneratorOmniVertex is Omni on Vertex AI: a kind of its own, as
	// Veo's two APIs are, so that the kind alone says which API and
	// credentials a route has (infra/docs/providers.md).
	GeneratorOmniVertex = "omni-vertex"
)

// generatorChoices are the generators, for messages.
const generatorChoices = "builtin, vertex, gemini, openai, omni or omni-vertex"

// The profiles GEN_OPENAI_PROFILE selects.
const (
	ProfileOpenAI   = "openai"
	ProfileVLLMOmni = "vllm-omni"
)

// SoraShutDown is when OpenAI shut its Sora video API down, as openai-node
// and openai-go mark it (issue 33's reading of both SDKs, 2026-11; the
// copy of openai-node this project can read predates the mark, so it is
// not known here first-hand). The openai profile says so at start-up.
const SoraShutDown = "2026-09-24"

// ProfileChoices is what an openai host without a profile is told: there
// is no default, since the old one, OpenAI itself, was shut down.
const ProfileChoices = "the openai generator needs its profile: vllm-omni (a self-hosted vLLM-Omni host) " +
	"or openai (OpenAI's Sora API, shut down on " + SoraShutDown + "; a host of the same shape and limits)"

// ProviderConfig is the provider configuration: what the generator
// variables say, with the routes and the declared models. Its zero value
// is the built-in generator.
type ProviderConfig struct {
	// Generator is one of the Generator* kinds ("" is
	// GeneratorBuiltin).
	Generator string

	VertexProject, VertexLocation, VertexStorageURI, VertexEndpoint string
	VertexAccessToken                                               string

	GeminiAPIKey, GeminiEndpoint string

	// OpenAIEndpoint, OpenAIAPIKey and OpenAIProfile are the openai
	// generator's. GEN_OPENAI_PROFILE must be set; a Provider built in
	// code with an empty profile has ProfileOpenAI's limits.
	OpenAIEndpoint, OpenAIAPIKey, OpenAIProfile string
	// OpenAIUSDPerSecond is GEN_OPENAI_USD_PER_SECOND.
	OpenAIUSDPerSecond float64

	// PollInterval is the wait between polls; 0 means
	// DefaultProviderPollInterval.
	PollInterval time.Duration
	// CreditUSD is GEN_CREDIT_USD; 0 means DefaultCreditUSD (Credit).
	CreditUSD float64
	// Models is GEN_PROVIDER_MODELS, checked: ModelMap reads it. (A
	// string keeps Provider comparable, as the stacks' configurations
	// are.)
	Models string
	// Routes is GEN_ROUTES, checked: ModelRoutes reads it.
	Routes string
	// Declared is GEN_MODELS, checked: Catalog reads it.
	Declared string
}

// Credit is what a credit sells for, in US dollars.
func (p ProviderConfig) Credit() float64 {
	if p.CreditUSD > 0 {
		return p.CreditUSD
	}
	return DefaultCreditUSD
}

// ModelMap is the mappings Models overrides, nil when it is empty.
func (p ProviderConfig) ModelMap() map[string]string {
	m, _ := parseModels(p.Models, catalog.Current())
	return m
}

// parseModels reads id=providerModel pairs separated by commas, each id
// one of cat's.
func parseModels(v string, cat *catalog.Catalog) (map[string]string, bool) {
	if strings.TrimSpace(v) == "" {
		return nil, true
	}
	m := map[string]string{}
	for pair := range strings.SplitSeq(v, ",") {
		ours, theirs, ok := strings.Cut(strings.TrimSpace(pair), "=")
		ours, theirs = strings.TrimSpace(ours), strings.TrimSpace(theirs)
		if _, known := cat.Lookup(ours); !ok || !known || theirs == "" {
			return nil, false
		}
		m[ours] = theirs
	}
	return m, true
}

// pollInterval reads ProviderPollInterval, refusing what is outside its
// bounds ("0s", "1ms", "2m"); unset, 0 (DefaultProviderPollInterval).
func (r *Reader) pollInterval() time.Duration {
	d := r.Duration(ProviderPollInterval, 0, MaxProviderPollInterval)
	if d != 0 && d < MinProviderPollInterval {
		r.Reject(ProviderPollInterval, r.value(ProviderPollInterval),
			fmt.Sprintf("want a Go duration from %s to %s, such as 30s", short(MinProviderPollInterval), short(MaxProviderPollInterval)))
		return 0
	}
	return d
}

// ProviderConfig reads the generator variables. A Vertex generator needs its
// project; the Gemini API's key is checked by the stack, which may take
// it from elsewhere (Secrets Manager on AWS). Tokens and keys are never
// repeated in an error.
func (r *Reader) ProviderConfig() ProviderConfig {
	declared, cat := r.declared()
	p := ProviderConfig{
		Declared:           declared,
		Generator:          r.String(Generator, ""),
		VertexProject:      r.String(VertexProject, ""),
		VertexLocation:     r.Check(VertexLocation, isRegion, "want a Google Cloud region such as us-central1"),
		VertexStorageURI:   r.Check(VertexStorageURI, isGCSPrefix, "want gs://bucket or gs://bucket/prefix"),
		VertexEndpoint:     r.Check(VertexEndpoint, isBaseURL, "want an http:// or https:// URL with no path"),
		VertexAccessToken:  r.value(VertexAccessToken),
		GeminiAPIKey:       r.value(GeminiAPIKey),
		GeminiEndpoint:     r.Check(GeminiEndpoint, isBaseURL, "want an http:// or https:// URL with no path"),
		OpenAIEndpoint:     r.Check(OpenAIEndpoint, isBaseURL, "want an http:// or https:// URL with no path"),
		OpenAIAPIKey:       r.value(OpenAIAPIKey),
		OpenAIProfile:      r.Check(OpenAIProfile, isProfile, "want openai or vllm-omni"),
		OpenAIUSDPerSecond: r.Float(OpenAIUSDPerSecond, 0, 0, 100),
		Models:             r.models(cat),
		PollInterval:       r.pollInterval(),
		CreditUSD:          r.Float(CreditUSD, 0, 0.0001, 100),
	}
	p.Routes = r.routes(p.DefaultRoute(), cat)
	switch p.Generator {
	case "", GeneratorBuiltin, GeneratorGemini, GeneratorOmni:
	case GeneratorOpenAI:
		if p.OpenAIProfile == "" {
			r.Reject(OpenAIProfile, "", ProfileChoices)
		}
		if p.OpenAIProfile == ProfileVLLMOmni && p.OpenAIEndpoint == "" {
			r.Reject(OpenAIEndpoint, "", "a vllm-omni host needs its URL")
		}
	case GeneratorVertex, GeneratorOmniVertex:
		if p.VertexProject == "" {
			r.Reject(VertexProject, "", "the "+p.Generator+" generator needs the Google Cloud project")
		}
	default:
		r.Reject(Generator, p.Generator, "want "+generatorChoices)
	}
	return p
}

func (r *Reader) models(cat *catalog.Catalog) string {
	v := r.value(ProviderModels)
	if _, ok := parseModels(v, cat); !ok {
		r.Reject(ProviderModels, v, "want id=providerModel pairs separated by commas, each id one of "+
			strings.Join(cat.IDs(), ", "))
		return ""
	}
	return v
}

func isProfile(s string) bool { return s == ProfileOpenAI || s == ProfileVLLMOmni }

func isRegion(s string) bool {
	return !strings.ContainsFunc(s, func(c rune) bool { return !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') })
}

func isGCSPrefix(s string) bool {
	rest, ok := strings.CutPrefix(s, "gs://")
	return ok && rest != "" && !strings.HasPrefix(rest, "/")
}

func isBaseURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" &&
		strings.Trim(u.Path, "/") == "" && u.RawQuery == ""
}
