// Package veo generates videos with Google's Veo models, served by Vertex
// AI (NewVertex) or the Gemini API (NewGemini). Each is a
// provider.Provider: a start is submitted with predictLongRunning and its
// operation polled until done.
//
// It speaks REST by hand rather than through google.golang.org/genai:
// that library's GenerateVideosConfig.Seed is an *int32, and the contract's
// seeds run to 4294967295. Credentials for Vertex AI come from Google's
// own golang.org/x/oauth2/google (Application Default Credentials: a
// service-account file, or a workload identity federation config that
// trades the Lambda role's AWS credentials for a Google token).
package veo

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/genvideo/gen/shared/params"
	"github.com/genvideo/gen/shared/provider"
	"github.com/genvideo/gen/shared/provider/capability"
	"github.com/genvideo/gen/shared/provider/providerhttp"
	"github.com/genvideo/gen/shared/provider/veo/veomodels"
	"github.com/genvideo/gen/shared/settings"
	"github.com/genvideo/gen/shared/task"
)

// DefaultPollAfter is the poll interval when an operation is not done
// (neither API gives a hint).
const DefaultPollAfter = settings.DefaultProviderPollInterval

func pollAfter(d time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return DefaultPollAfter
}

// requestTimeout bounds one request to a provider, a download included,
// when the caller gives no client of its own.
const requestTimeout = 2 * time.Minute

func httpClient(c *http.Client) *http.Client {
	if c != nil {
		return c
	}
	return &http.Client{Timeout: requestTimeout}
}

// maxVideoBytes bounds one downloaded video (an 8 s 1080p Veo video is
// a few MB).
const maxVideoBytes = 512 << 20

// request is the body of predictLongRunning.
type request struct {
	Instances  []instance `json:"instances"`
	Parameters parameters `json:"parameters"`
}

type instance struct {
	Prompt    string `json:"prompt"`
	Image     *image `json:"image,omitempty"`
	LastFrame *image `json:"lastFrame,omitempty"`
	// ReferenceImages and Video are Veo 3.1's asset images and the video
	// an extension continues, as google.golang.org/genai sends them on
	// each API (veomodels [genai-video]).
	ReferenceImages []referenceImage `json:"referenceImages,omitempty"`
	Video           *video           `json:"video,omitempty"`
}

type image struct {
	BytesBase64Encoded string `json:"bytesBase64Encoded"`
	MimeType           string `json:"mimeType"`
}

// referenceImage is one VideoGenerationReferenceImage: Veo 3.1 takes
// "asset" images only (veomodels [vertex-card], [gemini-params]).
type referenceImage struct {
	Image         *image `json:"image"`
	ReferenceType string `json:"referenceType"`
}

// referenceAsset is the one referenceType Veo 3.1 takes.
const referenceAsset = "asset"

// video is a Video as each API takes it (veomodels [genai-video]): on the
// Gemini API the file's uri, or the bytes as encodedVideo and encoding;
// on Vertex AI its gcsUri, or the bytes as bytesBase64Encoded and
// mimeType.
type video struct {
	URI                string `json:"uri,omitempty"`
	EncodedVideo       string `json:"encodedVideo,omitempty"`
	Encoding           string `json:"encoding,omitempty"`
	GCSURI             string `json:"gcsUri,omitempty"`
	BytesBase64Encoded string `json:"bytesBase64Encoded,omitempty"`
	MimeType           string `json:"mimeType,omitempty"`
}

// videoMimeType is the type of every Veo video.
const videoMimeType = "video/mp4"

type parameters struct {
	SampleCount     int    `json:"sampleCount"`
	DurationSeconds int    `json:"durationSeconds"`
	AspectRatio     string `json:"aspectRatio"`
	Resolution      string `json:"resolution"`
	// GenerateAudio is nil on the Gemini API, which takes none (its Veo
	// 3.1 models always make audio); Seed is nil where the model takes
	// none; EnhancePrompt is nil where only its default (true) is taken
	// (veomodels).
	GenerateAudio    *bool   `json:"generateAudio,omitempty"`
	EnhancePrompt    *bool   `json:"enhancePrompt,omitempty"`
	NegativePrompt   string  `json:"negativePrompt,omitempty"`
	Seed             *uint32 `json:"seed,omitempty"`
	PersonGeneration string  `json:"personGeneration"`
	StorageURI       string  `json:"storageUri,omitempty"`
}

// newRequest maps a job to the body of predictLongRunning on api
// (settings.GeneratorVertex or GeneratorGemini): the parameters the
// provider model takes (lim; the service refused the others at start),
// the input images by role, reference images in their order, and an
// extension's video. The Gemini API takes no generateAudio.
func newRequest(job provider.Job, lim capability.Limits, api, storageURI string) (request, error) {
	p := job.Params
	audio := api == settings.GeneratorVertex
	in := instance{Prompt: job.Prompt}
	for i := range params.MaxReferenceImages {
		path, ok := job.Images[task.ReferenceRole(i)]
		if !ok {
			continue
		}
		img, err := readImage(path)
		if err != nil {
			return request{}, err
		}
		in.ReferenceImages = append(in.ReferenceImages, referenceImage{Image: img, ReferenceType: referenceAsset})
	}
	for role, path := range job.Images {
		if task.IsReference(role) {
			continue
		}
		img, err := readImage(path)
		if err != nil {
			return request{}, err
		}
		switch role {
		case task.RoleImage, task.RoleFirstFrame:
			in.Image = img
		case task.RoleLastFrame:
			in.LastFrame = img
		default:
			return request{}, fmt.Errorf("input image of unknown role %q", role)
		}
	}
	if job.Video != nil {
		v, err := sourceVideo(api, *job.Video)
		if err != nil {
			return request{}, err
		}
		in.Video = v
	}
	par := parameters{SampleCount: p.SampleCount, DurationSeconds: p.DurationSeconds,
		AspectRatio: p.AspectRatio, Resolution: p.Resolution,
		NegativePrompt: p.NegativePrompt, PersonGeneration: p.PersonGeneration, StorageURI: storageURI}
	if audio {
		par.GenerateAudio = &p.GenerateAudio
	}
	if lim.EnhancePromptOff {
		par.EnhancePrompt = &p.EnhancePrompt
	}
	if lim.Seed && p.Seed != nil {
		if *p.Seed < 0 || *p.Seed > params.MaxSeed {
			return request{}, fmt.Errorf("seed %d out of 0..%d", *p.Seed, int64(params.MaxSeed))
		}
		seed := uint32(*p.Seed)
		par.Seed = &seed
	}
	return request{Instances: []instance{in}, Parameters: par}, nil
}

// sourceVideo is the video an extension continues as api takes it: by
// the provider's own address of it where the job has one (the file URI
// the Gemini API answered, the gs:// object Vertex AI wrote), as the SDK
// passes generated_videos[0].video; else its bytes.
func sourceVideo(api string, src provider.SourceVideo) (*video, error) {
	switch {
	case api == settings.GeneratorGemini && src.URI != "":
		return &video{URI: src.URI}, nil
	case api == settings.GeneratorVertex && strings.HasPrefix(src.URI, "gs://"):
		return &video{GCSURI: src.URI, MimeType: videoMimeType}, nil
	}
	b, err := os.ReadFile(src.Path)
	if err != nil {
		return nil, fmt.Errorf("read the video to extend: %w", err)
	}
	enc := base64.StdEncoding.EncodeToString(b)
	if api == settings.GeneratorGemini {
		return &video{EncodedVideo: enc, Encoding: videoMimeType}, nil
	}
	return &video{BytesBase64Encoded: enc, MimeType: videoMimeType}, nil
}

func readImage(path string) (*image, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read input image: %w", err)
	}
	mime := http.DetectContentType(b)
	if mime != "image/png" && mime != "image/jpeg" {
		return nil, fmt.Errorf("input image is %s, want image/png or image/jpeg", mime)
	}
	return &image{BytesBase64Encoded: base64.StdEncoding.EncodeToString(b), MimeType: mime}, nil
}

// operation is a google.longrunning.Operation as both APIs answer it.
type operation struct {
	Name     string     `json:"name"`
	Done     bool       `json:"done"`
	Error    *rpcStatus `json:"error"`
	Response *struct {
		// Vertex AI. A poll's answer is read with a spool: an inline
		// video's bytesBase64Encoded (and the Gemini API's
		// encodedVideo) is then the spoolRef of its file.
		Videos []struct {
			BytesBase64Encoded string `json:"bytesBase64Encoded"`
			GCSURI             string `json:"gcsUri"`
		} `json:"videos"`
		RAIMediaFilteredCount   int      `json:"raiMediaFilteredCount"`
		RAIMediaFilteredReasons []string `json:"raiMediaFilteredReasons"`
		// Gemini API
		GenerateVideoResponse *struct {
			GeneratedSamples []struct {
				// Video is a file to download, or the video itself
				// (go-genai, models.go videoFromMldev: uri,
				// encodedVideo, encoding; commit 6fd3e65, read
				// 2026-11-26).
				Video struct {
					URI          string `json:"uri"`
					EncodedVideo string `json:"encodedVideo"`
				} `json:"video"`
			} `json:"generatedSamples"`
			RAIMediaFilteredCount   int      `json:"raiMediaFilteredCount"`
			RAIMediaFilteredReasons []string `json:"raiMediaFilteredReasons"`
		} `json:"generateVideoResponse"`
	} `json:"response"`
}

// rpcStatus is a google.rpc.Status, as both APIs answer an error (HTTP
// answers in {"error": ...}, done operations in "error"):
// https://cloud.google.com/apis/design/errors, read 2026-11-26.
type rpcStatus struct {
	Code    int            `json:"code"`
	Message string         `json:"message"`
	Status  string         `json:"status"`
	Details []statusDetail `json:"details,omitempty"`
}

// statusDetail is one of a google.rpc.Status's details; only
// google.rpc.RetryInfo is read.
type statusDetail struct {
	Type string `json:"@type"`
	// RetryDelay is a google.protobuf.Duration in its JSON form: seconds
	// with an "s", fractions allowed ("37s", "1.5s").
	RetryDelay string `json:"retryDelay,omitempty"`
}

const retryInfoType = "type.googleapis.com/google.rpc.RetryInfo"

// retryDelay is the wait the status's RetryInfo asks for, 0 without one.
func (s rpcStatus) retryDelay() time.Duration {
	for _, d := range s.Details {
		if d.Type != retryInfoType {
			continue
		}
		if wait, err := time.ParseDuration(d.RetryDelay); err == nil && wait > 0 {
			return wait
		}
	}
	return 0
}

// Error is a failure the provider reported: an HTTP error answer, or an
// operation done with an error. Its message is for the operator's logs;
// the client only ever sees the failure code it maps to.
type Error struct {
	// HTTPStatus is the answer's status, 0 for an operation's error.
	HTTPStatus int
	Status     rpcStatus
	// category is the client-safe category of a content-policy refusal.
	category string
	// code, when set, is the failure code of a refusal that is neither a
	// content-policy one nor GENERATION_FAILED (a retired model).
	code string
}

func (e *Error) Error() string {
	if e.HTTPStatus != 0 {
		return fmt.Sprintf("provider answered %d %s: %s", e.HTTPStatus, e.Status.Status, e.Status.Message)
	}
	return fmt.Sprintf("operation failed with code %d %s: %s", e.Status.Code, e.Status.Status, e.Status.Message)
}

// Classify is what the answer means to gen: a content-policy refusal,
// a model the provider no longer serves, credentials refused (401, 403,
// or the Gemini API's 400 for a key it does not take: "API key not
// valid"), a request refused as malformed, or any other failure. A poll
// never answers credentials refused: providerhttp.RefusedWhileRunning
// makes that a wait.
func (e *Error) Classify() provider.Answer {
	switch {
	case e.category != "":
		return provider.Answer{Class: provider.Refused, Category: e.category}
	case e.code == task.FailModelUnavailable:
		return provider.Answer{Class: provider.ModelRetired}
	case e.HTTPStatus == http.StatusUnauthorized || e.HTTPStatus == http.StatusForbidden ||
		e.HTTPStatus == http.StatusBadRequest && strings.Contains(e.Status.Message, "API key not valid"):
		return provider.Answer{Class: provider.CredentialsRefused}
	case e.HTTPStatus == http.StatusBadRequest:
		return provider.Answer{Class: provider.Invalid}
	}
	return provider.Answer{Class: provider.Failed}
}

// FailureCode is the failure code of the task the answer ends.
func (e *Error) FailureCode() string { return e.Classify().Class.FailureCode() }

// PolicyCategory is the client-safe category of a content-policy refusal.
func (e *Error) PolicyCategory() string { return e.category }

// OutcomeUnknownError is a submit that went out whole with no readable
// answer: predictLongRunning takes no idempotency key, so the workflow
// never submits such a job again.
type OutcomeUnknownError = providerhttp.OutcomeUnknownError

// answerError reads a non-2xx answer's google.rpc.Status. 429 and 5xx
// are waited out, after the answer's RetryInfo (Google's own hint, in
// error.details), else its Retry-After header.
func answerError(resp *http.Response) error {
	var body struct {
		Error rpcStatus `json:"error"`
	}
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if json.Unmarshal(raw, &body) != nil || body.Error.Message == "" {
		body.Error.Message = strings.TrimSpace(string(raw))
	}
	e := &Error{HTTPStatus: resp.StatusCode, Status: body.Error}
	if cat, ok := refusal(e.Status.Message); ok {
		e.category = cat
		return e
	}
	if busy := providerhttp.Busy(resp, e, e.Status.retryDelay()); busy != nil {
		return busy
	}
	return e
}

// submitError classifies what a submit's send returned: an answer that
// says nothing of the job is an *OutcomeUnknownError; a model the API
// does not serve (404 NOT_FOUND, or Google's "no longer available") is
// refused with MODEL_UNAVAILABLE; the rest as send says.
func submitError(err error) error {
	if unknown := providerhttp.SubmitOutcome(err); unknown != err {
		return unknown
	}
	var e *Error
	if errors.As(err, &e) && e.category == "" &&
		(e.HTTPStatus == http.StatusNotFound || strings.Contains(strings.ToLower(e.Status.Message), "no longer available")) {
		e.code = task.FailModelUnavailable
	}
	return err
}

// StatusCode is the HTTP status the API answered, which
// providerhttp.RefusedWhileRunning reads of a poll's error.
func (e *Error) StatusCode() int { return e.HTTPStatus }

// maxAnswerBytes bounds one answer of the API: an operation's carries
// up to four videos inline, base64.
const maxAnswerBytes = 2 * maxVideoBytes

// send does one request of the API (providerhttp.SendJSON).
func send(ctx context.Context, c *http.Client, method, url string, header http.Header, body any, out any) error {
	return providerhttp.SendJSON(ctx, c, method, url, method+" "+redact(url), header, body, out, maxAnswerBytes, answerError)
}

// poll does one request of an operation's state into op, its inline
// videos streamed into files of sp (spool.readOperation).
func poll(ctx context.Context, c *http.Client, method, url string, header http.Header, body any, sp *spool, op *operation) error {
	what := method + " " + redact(url)
	return providerhttp.Send(ctx, c, method, url, what, header, body, answerError, func(r io.Reader) error {
		return sp.readOperation(r, maxAnswerBytes, what, op)
	})
}

// redact drops a URL's query, where a key could be.
func redact(url string) string {
	u, _, _ := strings.Cut(url, "?")
	return u
}

// fetch is where an operation's videos are: bytes, or a URL to download.
type fetch func(ctx context.Context, i int, path string) error

// result turns a done operation into the workflow's: the videos written
// to job.OutDir (by fetch, sample by sample), fewer when the provider
// filtered some out; none at all with filtered samples is a
// content-policy failure with the category of the first reason.
func result(ctx context.Context, job provider.Job, op operation, n, filtered int, reasons []string, get fetch) (provider.Operation, error) {
	if op.Error != nil {
		e := &Error{Status: *op.Error}
		e.category, _ = refusal(e.Status.Message)
		return provider.Operation{}, e
	}
	if n == 0 {
		if filtered > 0 {
			cat := Category(reasons)
			return provider.Operation{}, &Error{Status: rpcStatus{Status: "FILTERED",
				Message: fmt.Sprintf("%d samples filtered: %s", filtered, strings.Join(reasons, "; "))}, category: cat}
		}
		return provider.Operation{}, &Error{Status: rpcStatus{Status: "EMPTY", Message: "the operation is done with no video"}}
	}
	if err := os.MkdirAll(job.OutDir, 0o700); err != nil {
		return provider.Operation{}, fmt.Errorf("create %s: %w", job.OutDir, err)
	}
	paths := make([]string, n)
	for i := range n {
		paths[i] = filepath.Join(job.OutDir, fmt.Sprintf("sample-%d.mp4", i))
		if err := get(ctx, i, paths[i]); err != nil {
			return provider.Operation{}, err
		}
	}
	return provider.Operation{Name: op.Name, Done: true, Result: provider.Result{Paths: paths}}, nil
}

// billing is what a done job of model on api cost: the model's price
// per second (veomodels) × the job's seconds × the samples Google
// generated, the ones its safety filters withheld included. Google bills
// Veo per second of video generated ([vertex-price], [gemini-price] in
// veomodels) and documents no exception for filtered outputs (a question
// on Google's forum asking exactly that went unanswered:
// https://discuss.google.dev/t/veo-3-1-fast-billing-and-http-response-codes-when-safety-filters-trigger/300275,
// read 2026-11-26), so the operator's cost errs towards the bill, as the
// price table does. The Gemini API bills audio always (its two prices
// are the same). A model without a price costs 0: Capabilities stops a
// stack whose mapping has none at start-up.
func billing(api, model string, job provider.Job, generated int) provider.Billing {
	m, _, _ := veomodels.Lookup(api, model)
	p := job.Params
	// The price once, times every second generated.
	cost, _ := m.Cost(p.Resolution, p.DurationSeconds*generated, p.GenerateAudio)
	return provider.Billing{Route: api, ProviderModel: model, CostUSD: cost}
}

// download writes what a GET of url answers to path.
func download(ctx context.Context, c *http.Client, url string, header http.Header, path string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("request: %w", err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := providerhttp.Do(c, req, "download "+redact(url))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return answerError(resp)
	}
	return providerhttp.Save(resp.Body, path, maxVideoBytes, redact(url))
}

func writeBase64(s, path string) error {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return errors.New("the provider answered a video that is not base64")
	}
	return os.WriteFile(path, b, 0o600)
}

// supportCodes are the categories of the support codes Veo's safety
// filters give with a refusal, as Google documents them ("Responsible AI
// and usage guidelines for Veo",
// https://docs.cloud.google.com/gemini-enterprise-agent-platform/models/video/responsible-ai-and-usage-guidelines,
// read 2026-11-26: "Support codes: 15236754" in the message of a refused
// request, or of an operation; fewer videos than asked when some
// outputs were filtered). Only the category is ever shown.
var supportCodes = map[string]string{
	"58061214": "child safety", "17301594": "child safety",
	"29310472": "celebrity", "15236754": "celebrity",
	"64151117": "video safety", "42237218": "video safety",
	"62263041": "dangerous content",
	"57734940": "hate", "22137204": "hate",
	"74803281": "other", "29578790": "other", "42876398": "other",
	"89371032": "prohibited content", "49114662": "prohibited content",
	"63429089": "prohibited content", "72817394": "prohibited content",
	"60599140": "prohibited content",
	"35561574": "third-party content", "35561575": "third-party content",
	"90789179": "sexual", "43188360": "sexual",
	"78610348": "toxic",
	"61493863": "violence", "56562880": "violence",
	"32635315": "vulgar",
}

var digits = regexp.MustCompile(`\b\d{8}\b`)

// supportCodesText is how a safety refusal's message names its codes.
var supportCodesText = regexp.MustCompile(`(?i)support codes?:\s*\d{8}`)

// refusal reports whether a message (of an error answer, or of an
// operation's error) is a safety refusal, and its category.
func refusal(message string) (string, bool) {
	if !supportCodesText.MatchString(message) {
		return "", false
	}
	return Category([]string{message}), true
}

// Category is the client-safe category of the first documented support
// code in the filter reasons, or "other".
func Category(reasons []string) string {
	for _, r := range reasons {
		for _, code := range digits.FindAllString(r, -1) {
			if c, ok := supportCodes[code]; ok {
				return c
			}
		}
	}
	return "other"
}

// check reads each provider model's metadata with get; credentials
// refused or an API that does not answer end it with an error naming
// what to fix; models not found are a *provider.UnavailableModelsError once all
// were read.
func check(api string, models map[string]string, get func(model string) error) error {
	return providerhttp.CheckModels(api, models, get, func(err error) bool {
		var e *Error
		return errors.As(err, &e) && e.HTTPStatus == http.StatusNotFound
	}, func(m string, err error) error { return checkError(api, m, err) })
}

// checkError says what a start-up check found, naming what to fix.
func checkError(api, model string, err error) error {
	var e *Error
	if errors.As(err, &e) {
		switch {
		case api == "gemini" && e.HTTPStatus/100 == 4:
			return fmt.Errorf("%s: the API key was refused (%s, on AWS its secret): %w", api, settings.GeminiAPIKey, err)
		case e.HTTPStatus == http.StatusUnauthorized || e.HTTPStatus == http.StatusForbidden:
			return fmt.Errorf("%s: the credentials were refused (%s, or application default credentials): %w",
				api, settings.VertexAccessToken, err)
		}
	}
	return fmt.Errorf("%s: model %s: the API does not answer: %w", api, model, err)
}

// model is the provider's model for one of ours.
func model(models map[string]string, ours string) (string, error) {
	if m, ok := models[ours]; ok && m != "" {
		return m, nil
	}
	return "", fmt.Errorf("no provider model configured for %s", ours)
}

// FromSettings is the Veo provider the generator settings select
// (GEN_GENERATOR vertex or gemini). It finds the credentials now, so
// that a stack without them fails at start-up. ffmpeg is the stack's
// ffmpeg, which removes the audio the Gemini API cannot leave out. A
// mapping the capability tables do not know, or one that loses money,
// fails too (veomodels.Capabilities).
func FromSettings(ctx context.Context, p settings.ProviderConfig, ffmpeg string) (provider.Provider, error) {
	if _, err := veomodels.Capabilities(p); err != nil {
		return nil, err
	}
	return Build(ctx, p, Options{FFmpegPath: ffmpeg})
}

// Options are what a stack adds to the generator settings.
type Options struct {
	// FFmpegPath is the stack's ffmpeg (the Gemini API's audio removal).
	FFmpegPath string
	// VertexWIFConfig is AWS's workload identity federation config
	// (VertexConfig.WIFConfig).
	VertexWIFConfig []byte
}

// Build is the Veo provider of p, one backend with its credentials; it
// checks no capability table (shared/provider/factory checks each
// route's).
func Build(ctx context.Context, p settings.ProviderConfig, o Options) (provider.Provider, error) {
	switch p.Generator {
	case settings.GeneratorVertex:
		return NewVertex(ctx, VertexConfig{Project: p.VertexProject, Location: p.VertexLocation,
			StorageURI: p.VertexStorageURI, Endpoint: p.VertexEndpoint, AccessToken: p.VertexAccessToken,
			WIFConfig: o.VertexWIFConfig, Models: veomodels.WithDefaults(p.Generator, p.ModelMap()), PollAfter: p.PollInterval})
	case settings.GeneratorGemini:
		return NewGemini(GeminiConfig{APIKey: p.GeminiAPIKey, Endpoint: p.GeminiEndpoint,
			Models: veomodels.WithDefaults(p.Generator, p.ModelMap()), PollAfter: p.PollInterval, FFmpegPath: o.FFmpegPath})
	}
	return nil, fmt.Errorf("veo: generator %q is not Veo's", p.Generator)
}
