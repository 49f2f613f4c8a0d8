package veo

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/genvideo/gen/shared/provider"
	"github.com/genvideo/gen/shared/provider/providerhttp"
	"github.com/genvideo/gen/shared/provider/veo/veomodels"
	"github.com/genvideo/gen/shared/provider/vertexauth"
	"github.com/genvideo/gen/shared/settings"
)

// DefaultVertexLocation is the region of Vertex AI when none is set.
const DefaultVertexLocation = "us-central1"

// VertexConfig configures NewVertex.
type VertexConfig struct {
	Project  string
	Location string // default DefaultVertexLocation
	// StorageURI, when set (gs://bucket/prefix), makes Vertex AI write
	// the videos there; they are then copied from Cloud Storage.
	StorageURI string
	// Endpoint replaces https://{location}-aiplatform.googleapis.com
	// (https://aiplatform.googleapis.com for the location "global"): a
	// private endpoint, or a fake; Cloud Storage is then read from the
	// same endpoint.
	Endpoint string
	// AccessToken, when set, is the bearer token of every request
	// (gcloud auth print-access-token), instead of Application Default
	// Credentials.
	AccessToken string
	// WIFConfig, when set, is the JSON credential configuration of a
	// workload identity federation pool ("type": "external_account"),
	// used instead of Application Default Credentials: on AWS it trades
	// the Lambda role's credentials for a Google token. No other type of
	// credential is taken from it, so no long-lived key can slip in.
	WIFConfig []byte
	// Models maps the contract's model ids to Vertex AI's; nil means
	// veomodels.VertexModels.
	Models map[string]string
	// PollAfter is the wait between polls; 0 means DefaultPollAfter.
	PollAfter time.Duration
	// HTTP is the client; nil means one whose requests time out after
	// two minutes (the credentials are added to either).
	HTTP *http.Client
}

// Vertex is Veo on Vertex AI, a provider.Provider.
type Vertex struct {
	cfg      VertexConfig
	base     string // {endpoint}/v1/projects/{p}/locations/{l}/publishers/google/models/
	endpoint string
	storage  string // base of the Cloud Storage JSON API
	http     *http.Client
}

var _ provider.Provider = (*Vertex)(nil)

// NewVertex returns the Vertex AI provider. Without cfg.AccessToken it
// finds Application Default Credentials now (GOOGLE_APPLICATION_CREDENTIALS:
// a service-account key locally, a workload identity federation config on
// AWS), so that a missing credential fails the start-up, not every task.
func NewVertex(ctx context.Context, cfg VertexConfig) (*Vertex, error) {
	if cfg.Project == "" {
		return nil, fmt.Errorf("vertex: no project")
	}
	if cfg.Location == "" {
		cfg.Location = DefaultVertexLocation
	}
	if cfg.Models == nil {
		cfg.Models = veomodels.DefaultModels(settings.GeneratorVertex)
	}
	endpoint := strings.TrimRight(cfg.Endpoint, "/")
	storage := "https://storage.googleapis.com"
	if endpoint == "" {
		endpoint = vertexauth.Endpoint(cfg.Location)
	} else {
		storage = endpoint
	}
	client, err := vertexauth.Client(ctx, vertexauth.Credentials{AccessToken: cfg.AccessToken, WIFConfig: cfg.WIFConfig}, httpClient(cfg.HTTP))
	if err != nil {
		return nil, fmt.Errorf("vertex: %w", err)
	}
	return &Vertex{cfg: cfg, http: client, storage: storage, endpoint: endpoint,
		base: fmt.Sprintf("%s/v1/projects/%s/locations/%s/publishers/google/models/",
			endpoint, url.PathEscape(cfg.Project), url.PathEscape(cfg.Location))}, nil
}

// Check reads the metadata of every publisher model the provider maps to
// (GET /v1/publishers/google/models/{model}, Vertex AI's
// publishers.models.get, read 2026-11-26): credentials Google refuses
// fail here, at start-up, rather than every task. It checks the
// credentials and the models, not the project's permissions.
func (v *Vertex) Check(ctx context.Context) error {
	return check("vertex", v.cfg.Models, func(m string) error {
		var meta struct {
			Name string `json:"name"`
		}
		return send(ctx, v.http, http.MethodGet, v.endpoint+"/v1/publishers/google/models/"+url.PathEscape(m), nil, nil, &meta)
	})
}

// Submit starts the job with predictLongRunning.
func (v *Vertex) Submit(ctx context.Context, job provider.Job) (provider.Operation, error) {
	m, err := model(v.cfg.Models, job.Model)
	if err != nil {
		return provider.Operation{}, err
	}
	pm, _, _ := veomodels.Lookup(settings.GeneratorVertex, m)
	req, err := newRequest(job, pm.Limits, settings.GeneratorVertex, v.storageURI(job))
	if err != nil {
		return provider.Operation{}, err
	}
	var op operation
	if err := send(ctx, v.http, http.MethodPost, v.base+url.PathEscape(m)+":predictLongRunning", nil, req, &op); err != nil {
		return provider.Operation{}, submitError(err)
	}
	return provider.Operation{Name: op.Name, PollAfter: pollAfter(v.cfg.PollAfter)}, nil
}

// storageURI is where the job's videos go, under the configured prefix:
// a folder per task.
func (v *Vertex) storageURI(job provider.Job) string {
	if v.cfg.StorageURI == "" {
		return ""
	}
	return strings.TrimRight(v.cfg.StorageURI, "/") + "/" + job.TaskID + "/"
}

// Poll asks fetchPredictOperation of the operation's model.
func (v *Vertex) Poll(ctx context.Context, name string, job provider.Job) (provider.Operation, error) {
	modelPath, _, ok := strings.Cut(name, "/operations/")
	i := strings.LastIndex(modelPath, "/models/")
	if !ok || i < 0 {
		return provider.Operation{}, fmt.Errorf("vertex: operation name %q names no model", name)
	}
	m := modelPath[i+len("/models/"):]
	var op operation
	body := map[string]string{"operationName": name}
	sp := &spool{dir: job.OutDir}
	defer sp.clean()
	if err := poll(ctx, v.http, http.MethodPost, v.base+url.PathEscape(m)+":fetchPredictOperation", nil, body, sp, &op); err != nil {
		// A static GEN_VERTEX_ACCESS_TOKEN expires after an hour,
		// while the job runs on.
		return provider.Operation{}, providerhttp.RefusedWhileRunning(err)
	}
	if !op.Done {
		return provider.Operation{Name: name, PollAfter: pollAfter(v.cfg.PollAfter)}, nil
	}
	if op.Response == nil {
		return result(ctx, job, op, 0, 0, nil, nil)
	}
	r := op.Response
	done, err := result(ctx, job, op, len(r.Videos), r.RAIMediaFilteredCount, r.RAIMediaFilteredReasons,
		func(ctx context.Context, i int, path string) error {
			if uri := r.Videos[i].GCSURI; uri != "" {
				return v.copyObject(ctx, uri, path)
			}
			return sp.take(r.Videos[i].BytesBase64Encoded, path)
		})
	if err != nil {
		return provider.Operation{}, err
	}
	// An extension may name a video by its gs:// object.
	done.Result.URIs = make([]string, len(r.Videos))
	for i, rv := range r.Videos {
		done.Result.URIs[i] = rv.GCSURI
	}
	done.Billing = billing(settings.GeneratorVertex, m, job, len(r.Videos)+r.RAIMediaFilteredCount)
	return done, nil
}

// copyObject downloads gs://bucket/object with the Cloud Storage JSON
// API.
func (v *Vertex) copyObject(ctx context.Context, uri, path string) error {
	bucket, object, ok := strings.Cut(strings.TrimPrefix(uri, "gs://"), "/")
	if !ok || !strings.HasPrefix(uri, "gs://") {
		return fmt.Errorf("vertex: video at %q, want gs://bucket/object", uri)
	}
	u := fmt.Sprintf("%s/storage/v1/b/%s/o/%s?alt=media", v.storage, url.PathEscape(bucket), url.PathEscape(object))
	return download(ctx, v.http, u, nil, path)
}
