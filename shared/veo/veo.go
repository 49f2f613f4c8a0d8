// Package veo generates videos with Google's Veo models, served by Vertex
// AI (NewVertex) or the Gemini API (NewGemini). Each is a
// workflow.Provider: a start is submitted with predictLongRunning and its
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
	"bytes"
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
	"strconv"
	"strings"
	"time"

	"github.com/genvideo/gen/shared/capability"
	"github.com/genvideo/gen/shared/params"
	"github.com/genvideo/gen/shared/settings"
	"github.com/genvideo/gen/shared/task"
	"github.com/genvideo/gen/shared/veomodels"
	"github.com/genvideo/gen/shared/workflow"
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
}

type image struct {
	BytesBase64Encoded string `json:"bytesBase64Encoded"`
	MimeType           string `json:"mimeType"`
}

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

// newRequest maps a job to the body of predictLongRunning: the
// parameters the provider model takes (lim; the service refused the
// others at start), the input images by role. audio is false on the
// Gemini API, which takes no generateAudio.
func newRequest(job workflow.Job, lim capability.Limits, audio bool, storageURI string) (request, error) {
	p := job.Params
	in := instance{Prompt: job.Prompt}
	for role, path := range job.Images {
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
		// Vertex AI
		Videos []struct {
			BytesBase64Encoded string `json:"bytesBase64Encoded"`
			GCSURI             string `json:"gcsUri"`
		} `json:"videos"`
		RAIMediaFilteredCount   int      `json:"raiMediaFilteredCount"`
		RAIMediaFilteredReasons []string `json:"raiMediaFilteredReasons"`
		// Gemini API
		GenerateVideoResponse *struct {
			GeneratedSamples []struct {
				Video struct {
					URI string `json:"uri"`
				} `json:"video"`
			} `json:"generatedSamples"`
			RAIMediaFilteredCount   int      `json:"raiMediaFilteredCount"`
			RAIMediaFilteredReasons []string `json:"raiMediaFilteredReasons"`
		} `json:"generateVideoResponse"`
	} `json:"response"`
}

// rpcStatus is a google.rpc.Status.
type rpcStatus struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Status  string `json:"status"`
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
}

func (e *Error) Error() string {
	if e.HTTPStatus != 0 {
		return fmt.Sprintf("provider answered %d %s: %s", e.HTTPStatus, e.Status.Status, e.Status.Message)
	}
	return fmt.Sprintf("operation failed with code %d %s: %s", e.Status.Code, e.Status.Status, e.Status.Message)
}

// FailureCode classifies the other failures.
func (e *Error) FailureCode() string {
	if e.category != "" {
		return task.FailContentPolicy
	}
	return task.FailGeneration
}

// PolicyCategory is the client-safe category of a content-policy refusal.
func (e *Error) PolicyCategory() string { return e.category }

// busyError is an error to wait out: a throttled (429
// RESOURCE_EXHAUSTED) or unavailable (5xx) answer, or no answer at all.
// Its RetryAfter makes the workflow wait and call again. Only answers to
// requests are: an operation done with an error is a job that failed,
// and is never submitted again.
type busyError struct {
	err   error
	after time.Duration
}

func (e *busyError) Error() string             { return e.err.Error() }
func (e *busyError) Unwrap() error             { return e.err }
func (e *busyError) RetryAfter() time.Duration { return e.after }

// answerError reads a non-2xx answer's google.rpc.Status.
func answerError(resp *http.Response) error {
	var body struct {
		Error rpcStatus `json:"error"`
	}
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if json.Unmarshal(raw, &body) != nil || body.Error.Message == "" {
		body.Error.Message = strings.TrimSpace(string(raw))
	}
	e := &Error{HTTPStatus: resp.StatusCode, Status: body.Error}
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500 {
		after, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
		return &busyError{err: e, after: time.Duration(after) * time.Second}
	}
	return e
}

// send does one request and decodes a 2xx answer into out. Network
// failures and 429/5xx answers are *busyError.
func send(ctx context.Context, c *http.Client, method, url string, header http.Header, body any, out any) error {
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("encode request: %w", err)
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, r)
	if err != nil {
		return fmt.Errorf("request: %w", err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return err
		}
		return &busyError{err: fmt.Errorf("%s %s: %w", method, redact(url), err)}
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return answerError(resp)
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 2*maxVideoBytes)).Decode(out); err != nil {
		return &busyError{err: fmt.Errorf("decode answer of %s: %w", redact(url), err)}
	}
	return nil
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
func result(ctx context.Context, job workflow.Job, op operation, n, filtered int, reasons []string, get fetch) (workflow.Operation, error) {
	if op.Error != nil {
		return workflow.Operation{}, &Error{Status: *op.Error}
	}
	if n == 0 {
		if filtered > 0 {
			cat := Category(reasons)
			return workflow.Operation{}, &Error{Status: rpcStatus{Status: "FILTERED",
				Message: fmt.Sprintf("%d samples filtered: %s", filtered, strings.Join(reasons, "; "))}, category: cat}
		}
		return workflow.Operation{}, &Error{Status: rpcStatus{Status: "EMPTY", Message: "the operation is done with no video"}}
	}
	if err := os.MkdirAll(job.OutDir, 0o700); err != nil {
		return workflow.Operation{}, fmt.Errorf("create %s: %w", job.OutDir, err)
	}
	paths := make([]string, n)
	for i := range n {
		paths[i] = filepath.Join(job.OutDir, fmt.Sprintf("sample-%d.mp4", i))
		if err := get(ctx, i, paths[i]); err != nil {
			return workflow.Operation{}, err
		}
	}
	return workflow.Operation{Name: op.Name, Done: true, Result: workflow.Result{Paths: paths}}, nil
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
	resp, err := c.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return err
		}
		return &busyError{err: fmt.Errorf("download %s: %w", redact(url), err)}
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return answerError(resp)
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	_, err = io.Copy(f, io.LimitReader(resp.Body, maxVideoBytes))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return &busyError{err: fmt.Errorf("download %s: %w", redact(url), err)}
	}
	return nil
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
// and usage guidelines for Veo"). Only the category is ever shown.
var supportCodes = map[string]string{
	"58061214": "child safety", "17301594": "child safety",
	"29310472": "celebrity", "15236754": "celebrity",
	"64151117": "video safety", "42237218": "video safety",
	"62263041": "dangerous content",
	"57734940": "hate", "22137204": "hate",
	"74803281": "other", "29578790": "other", "42876398": "other",
	"89371032": "prohibited content", "49114662": "prohibited content",
	"63429089": "prohibited content", "72817394": "prohibited content",
	"90789179": "sexual", "43188360": "sexual",
	"78610348": "toxic",
	"61493863": "violence", "56562880": "violence",
	"32635315": "vulgar",
}

var digits = regexp.MustCompile(`\b\d{8}\b`)

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

// model is the provider's model for one of ours.
func model(models map[string]string, ours string) (string, error) {
	if m, ok := models[ours]; ok && m != "" {
		return m, nil
	}
	return "", fmt.Errorf("no provider model configured for %s", ours)
}

// FromSettings is the provider the generator settings select, nil for
// the built-in generator. It finds the credentials now, so that a stack
// without them fails at start-up. ffmpeg is the stack's ffmpeg, which
// removes the audio the Gemini API cannot leave out.
// A mapping the capability tables do not know, or one that loses money,
// fails too (veomodels.Capabilities).
func FromSettings(ctx context.Context, p settings.Provider, ffmpeg string) (workflow.Provider, error) {
	switch p.Generator {
	case settings.GeneratorVertex, settings.GeneratorGemini:
		if _, err := veomodels.Capabilities(p); err != nil {
			return nil, err
		}
	}
	switch p.Generator {
	case settings.GeneratorVertex:
		return NewVertex(ctx, VertexConfig{Project: p.VertexProject, Location: p.VertexLocation,
			StorageURI: p.VertexStorageURI, Endpoint: p.VertexEndpoint, AccessToken: p.VertexAccessToken,
			Models: veomodels.WithDefaults(p.Generator, p.ModelMap()), PollAfter: p.PollInterval})
	case settings.GeneratorGemini:
		return NewGemini(GeminiConfig{APIKey: p.GeminiAPIKey, Endpoint: p.GeminiEndpoint,
			Models: veomodels.WithDefaults(p.Generator, p.ModelMap()), PollAfter: p.PollInterval, FFmpegPath: ffmpeg})
	case settings.GeneratorBuiltin, "":
		return nil, nil
	}
	return nil, fmt.Errorf("unknown generator %q", p.Generator)
}
