package awsstack

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/genvideo/gen/shared/settings"
	"github.com/genvideo/gen/shared/strictjson"
)

// The environment variables the Lambdas read. The template (template.yaml)
// sets them. Those the local service reads too are defined by package
// settings, with their defaults, and named here again for the Lambdas.
const (
	// EnvTablePrefix prefixes the four DynamoDB table names (accounts,
	// keys, counters, tasks), as dynamostore.Config.TablePrefix: with
	// "gen-prod-" the tasks table is "gen-prod-tasks". Every function
	// that touches the store needs it.
	EnvTablePrefix = "GEN_TABLE_PREFIX"
	// EnvBucket is the S3 bucket holding uploaded images (inputs/) and
	// generated videos (videos/). The endpoints and the generate step
	// need it.
	EnvBucket = "GEN_BUCKET"
	// EnvStateMachineARN is the ARN of the generation state machine. The
	// endpoints (the start endpoints call StartExecution) and the sweeper
	// need it; the step functions must not get it, since the state
	// machine refers to them.
	EnvStateMachineARN = "GEN_STATE_MACHINE_ARN"
	// EnvSignerSecretARN names the Secrets Manager secret holding the
	// access key of the IAM user that signs download URLs, as the JSON
	// object SignerSecret describes. The endpoints need it; only status
	// and download ever read the secret (on their first signature).
	EnvSignerSecretARN = "GEN_SIGNER_SECRET_ARN"
	// EnvGenerationTimeout is a task's deadline after its creation, a Go
	// duration (default settings.DefaultGenerationTimeout). The endpoints
	// need it.
	EnvGenerationTimeout = settings.GenerationTimeout
	// EnvMaxEventStreams is how many live event streams one key may hold
	// open at once (default settings.DefaultMaxEventStreams); the events
	// function reads it.
	EnvMaxEventStreams = settings.MaxEventStreams
	// EnvMaxImageBytes bounds the images of one request together, in
	// bytes (default DefaultMaxImageBytes): image-to-video's image, or
	// first-last-frame's two frames at half of it each. A request through
	// API Gateway and Lambda cannot carry much more; see
	// DefaultMaxImageBytes.
	EnvMaxImageBytes = "GEN_MAX_IMAGE_BYTES"
	// EnvPlaygroundMediaOrigins lists the origins, separated by commas,
	// that the playground page's Content-Security-Policy allows videos to
	// play from and images to upload to: the media bucket's https origin
	// (https://<bucket>.s3.<region>.amazonaws.com, where presigned URLs
	// point), which the template sets. Only the playground function reads
	// it.
	EnvPlaygroundMediaOrigins = "GEN_PLAYGROUND_MEDIA_ORIGINS"
	// EnvSignerUser is the IAM user whose access key the signer secret
	// holds. Only the rotation function needs it.
	EnvSignerUser = "GEN_SIGNER_USER"
	// EnvTaskRetentionDays is how many days a task is kept after its
	// creation (DynamoDB's TTL deletes it then), the videos' retention.
	// Unset keeps tasks for ever. The start endpoints need it.
	EnvTaskRetentionDays = "GEN_TASK_RETENTION_DAYS"
	// EnvFFmpegPath is the ffmpeg binary of the generate step (default
	// "ffmpeg" on PATH; on Lambda a layer puts it in /opt/bin).
	EnvFFmpegPath = settings.FFmpegPath
	// EnvFontFile is the TrueType font of the captions the generate step
	// draws (default render.DefaultFontFile, which a Lambda image does not
	// have: the ffmpeg layer should bring one, e.g. /opt/fonts/DejaVuSans.ttf).
	EnvFontFile = settings.FontFile
	// EnvLogLevel is the level of the JSON logs: DEBUG, INFO, WARN or
	// ERROR (default INFO).
	EnvLogLevel = settings.LogLevel
	// The generator's variables, read by settings.Reader.ProviderConfig; the
	// generate step needs them, and every function reads the generator,
	// its model mapping and the credit price, which say what a start may
	// ask (veo.Capabilities; their meaning is in package settings).
	// Neither a Vertex access token nor a Gemini key is set in a
	// function's configuration: see EnvVertexWIFConfig and
	// EnvGeminiKeySecretARN.
	EnvGenerator            = settings.Generator
	EnvVertexProject        = settings.VertexProject
	EnvVertexLocation       = settings.VertexLocation
	EnvVertexStorageURI     = settings.VertexStorageURI
	EnvVertexEndpoint       = settings.VertexEndpoint
	EnvGeminiEndpoint       = settings.GeminiEndpoint
	EnvProviderModels       = settings.ProviderModels
	EnvCreditUSD            = settings.CreditUSD
	EnvProviderPollInterval = settings.ProviderPollInterval
	// EnvRoutes is the models' provider routes (template parameter
	// Routes): the functions that check starts or list models read it,
	// for what a start may ask; the generate and poll functions build
	// the routes, reading the keys of gemini and openai routes from the
	// secrets they name (apiKeySecretArn).
	EnvRoutes = settings.Routes
	// EnvModels is the operator's models (template parameter Models):
	// the functions that price, check or list models install them as
	// their catalog at cold start.
	EnvModels = settings.DeclaredModels
	// EnvProviderConfigSecretARN names a Secrets Manager secret holding
	// what EnvRoutes and EnvModels would (ProviderConfig; template
	// parameter ProviderConfigSecretArn), for routes and models too large
	// for Lambda's 4 KB environment. The functions given it read it once
	// at cold start (awsstack/providerconfig) and check it as they would
	// the variables; it is refused beside either of them.
	EnvProviderConfigSecretARN = "GEN_PROVIDER_CONFIG_SECRET_ARN"
	// EnvGeminiKeySecretARN names the Secrets Manager secret whose
	// string is the Gemini API's key, for GEN_GENERATOR=gemini: the
	// generate step reads it at cold start (GEN_GEMINI_API_KEY, which
	// would put the key in the function's configuration, is for the
	// local service).
	EnvGeminiKeySecretARN = "GEN_GEMINI_API_KEY_SECRET_ARN"
	// EnvVertexWIFConfig is the credential configuration of a workload
	// identity federation pool (the JSON that gcloud iam
	// workload-identity-pools create-cred-config --aws writes: no secret
	// in it), for GEN_GENERATOR=vertex: the generate step trades its
	// role's AWS credentials for a Google token with it, so that no
	// long-lived Google key is kept in AWS.
	EnvVertexWIFConfig = "GEN_VERTEX_WIF_CONFIG"
	// EnvEndpointURL is the SDK's AWS_ENDPOINT_URL (lambdaConfig), one
	// endpoint for every service. The template declares it empty, which
	// the SDK ignores: `sam local invoke --env-vars env.json` can only
	// set a variable the template declares, and env.json
	// (genctl invoke-env) sets it to the AWS assembly on one machine,
	// which answers every service on one port.
	EnvEndpointURL = "AWS_ENDPOINT_URL"
)

// DefaultMaxImageBytes is 4 MiB. API Gateway REST caps a request at 10 MB
// and Lambda an invocation payload at 6 MB; a binary body reaches Lambda
// base64-encoded (4/3 larger) inside a JSON event, so about 4.4 MiB of
// multipart body is the most that passes. 4 MiB of images leaves room for
// the form's other fields and its framing. (The defaults of the variables
// the local service reads too are in package settings.)
const DefaultMaxImageBytes = 4 << 20

// Env is the parsed environment of a Lambda. ParseEnv fills it; the parts
// of Deployment that need a variable check that it was set.
type Env struct {
	TablePrefix       string
	Bucket            string
	StateMachineARN   string
	SignerSecretARN   string
	GenerationTimeout time.Duration
	MaxImageBytes     int64
	MaxEventStreams   int           // settings.MaxEventStreams
	TaskRetention     time.Duration // 0: for ever
	SignerUser        string
	FFmpegPath        string
	FontFile          string // "" means render's default
	LogLevel          slog.Level
	// Provider is the generator and its settings (GEN_GENERATOR, ...),
	// read as the local service reads them: its Routes and Declared are
	// the provider configuration secret's when ParseEnvWith read one.
	Provider settings.ProviderConfig
	// ProviderConfigSecretARN is EnvProviderConfigSecretARN.
	ProviderConfigSecretARN string
	GeminiKeySecretARN      string
	VertexWIFConfig         string
	// WebhookAllowPrivate is GEN_WEBHOOK_ALLOW_PRIVATE (settings), which
	// lets webhooks go to plain http and private addresses. The template
	// never sets it (infra/deploy checks that no function has it): it is
	// for the tests of the functions and a one-machine assembly, whose
	// receivers are on loopback. Deliberately no Env* constant here, so
	// that the template check of awsstack's variables does not ask for it.
	WebhookAllowPrivate bool
}

// ParseEnv reads the variables through lookup (os.LookupEnv in a Lambda).
// Every value that is set but malformed is an error naming its variable;
// all of them are reported at once. Variables that are not set keep their
// defaults ("" for the names and ARNs: Deployment checks those it needs).
// It reads no secret: with EnvProviderConfigSecretARN set, the provider's
// routes and declared models are empty here; a function that needs them
// reads the secret (awsstack/providerconfig) and parses with ParseEnvWith.
func ParseEnv(lookup func(string) (string, bool)) (Env, error) {
	return parseEnv(lookup, nil)
}

// parseEnv is ParseEnv, with the variables of the provider configuration
// secret's string (nil for none) read from it through the same readers.
func parseEnv(lookup func(string) (string, bool), providerConfig *string) (Env, error) {
	r := settings.NewReader(lookup)
	configARN := r.Check(EnvProviderConfigSecretARN, isARN, "want the ARN of a Secrets Manager secret")
	if configARN != "" {
		// One place for the routes and models: two would leave which one
		// counts to a guess.
		for _, name := range []string{EnvRoutes, EnvModels} {
			if v, _ := lookup(name); strings.TrimSpace(v) != "" {
				r.Reject(name, "(not shown)", "give the routes and models in the secret "+EnvProviderConfigSecretARN+
					" names or in "+EnvRoutes+" and "+EnvModels+", not both (template: ProviderConfigSecretArn or Routes and Models)")
			}
		}
	}
	if providerConfig != nil {
		vars, err := providerConfigVars(*providerConfig)
		if err != nil {
			r.Reject(EnvProviderConfigSecretARN, configARN, "its secret: "+err.Error())
		}
		r.From("the provider configuration secret "+configARN, vars)
	}
	shared := r.Shared()
	e := Env{
		TablePrefix: r.Check(EnvTablePrefix, isName, "want a DynamoDB table-name prefix ([A-Za-z0-9_.-])"),
		Bucket:      r.Check(EnvBucket, isName, "want a bucket name, not a URL or ARN"),
		StateMachineARN: r.Check(EnvStateMachineARN, isStateMachineARN,
			"want arn:<partition>:states:<region>:<account>:stateMachine:<name>"),
		SignerSecretARN:     r.Check(EnvSignerSecretARN, isARN, "want the ARN of a Secrets Manager secret"),
		GenerationTimeout:   shared.GenerationTimeout,
		MaxEventStreams:     shared.MaxEventStreams,
		MaxImageBytes:       r.PositiveInt(EnvMaxImageBytes, DefaultMaxImageBytes),
		TaskRetention:       time.Duration(r.PositiveInt(EnvTaskRetentionDays, 0)) * 24 * time.Hour,
		SignerUser:          r.Check(EnvSignerUser, isName, "want an IAM user name, not an ARN"),
		FFmpegPath:          shared.FFmpegPath,
		FontFile:            shared.FontFile,
		LogLevel:            shared.LogLevel,
		Provider:            r.ProviderConfig(),
		GeminiKeySecretARN:  r.Check(EnvGeminiKeySecretARN, isARN, "want the ARN of a Secrets Manager secret"),
		VertexWIFConfig:     r.String(EnvVertexWIFConfig, ""),
		WebhookAllowPrivate: r.Switch(settings.WebhookAllowPrivate, false),
	}
	e.ProviderConfigSecretARN = configARN
	if e.VertexWIFConfig != "" && !isExternalAccount(e.VertexWIFConfig) {
		// Not quoted: what was pasted by mistake may be a key file.
		r.Reject(EnvVertexWIFConfig, "(not shown)",
			`want the JSON of a workload identity federation credential configuration ("type": "external_account"), never a key file`)
	}
	if g := e.Provider.Generator; (g == settings.GeneratorGemini || g == settings.GeneratorOmni) && e.Provider.GeminiAPIKey == "" && e.GeminiKeySecretARN == "" {
		r.Reject(EnvGeminiKeySecretARN, "", "the "+g+" generator needs the secret holding the Gemini API key")
	}
	if err := r.Err(); err != nil {
		return Env{}, err
	}
	return e, nil
}

// isName reports whether s can be a table-name prefix or a bucket name
// rather than, by mistake, a URL or an ARN.
func isName(s string) bool { return !strings.ContainsAny(s, " /:") }

func isARN(s string) bool { return strings.HasPrefix(s, "arn:") }

// isExternalAccount reports whether s is a credential configuration of
// workload identity federation. Its members are Google's (x/oauth2
// reads them), so any are taken; but it is read by the strict decoder
// all the same, so that two "type"s or a second object after it cannot
// make it one thing here and another to Google's library.
func isExternalAccount(s string) bool {
	var c map[string]json.RawMessage
	var typ string
	return strictjson.Unmarshal([]byte(s), &c) == nil &&
		json.Unmarshal(c["type"], &typ) == nil && typ == "external_account"
}

// require fails naming every variable of names that is not set, and what
// needs it.
func (e Env) require(what string, names ...string) error {
	values := map[string]string{
		EnvTablePrefix:     e.TablePrefix,
		EnvBucket:          e.Bucket,
		EnvStateMachineARN: e.StateMachineARN,
		EnvSignerSecretARN: e.SignerSecretARN,
	}
	var missing []string
	for _, n := range names {
		if values[n] == "" {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%s needs the environment variable(s) %s, which are not set (template.yaml sets them)",
			what, strings.Join(missing, ", "))
	}
	return nil
}

// isStateMachineARN reports whether s has the shape
// arn:<partition>:states:<region>:<account>:stateMachine:<name>.
func isStateMachineARN(s string) bool {
	p := strings.Split(s, ":")
	return len(p) == 7 && p[0] == "arn" && p[1] != "" && p[2] == "states" && p[3] != "" &&
		p[4] != "" && p[5] == "stateMachine" && p[6] != ""
}
