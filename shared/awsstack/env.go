package awsstack

import (
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"
)

// The environment variables the Lambdas read. The template (template.yaml)
// sets them; this is their one definition.
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
	// duration (default 10m).
	EnvGenerationTimeout = "GEN_GENERATION_TIMEOUT"
	// EnvMaxImageBytes bounds the images of one request together, in
	// bytes (default DefaultMaxImageBytes): image-to-video's image, or
	// first-last-frame's two frames at half of it each. A request through
	// API Gateway and Lambda cannot carry much more; see
	// DefaultMaxImageBytes.
	EnvMaxImageBytes = "GEN_MAX_IMAGE_BYTES"
	// EnvFFmpegPath is the ffmpeg binary of the generate step (default
	// "ffmpeg" on PATH; on Lambda a layer puts it in /opt/bin).
	EnvFFmpegPath = "GEN_FFMPEG_PATH"
	// EnvFontFile is the TrueType font of the captions the generate step
	// draws (default render.DefaultFontFile, which a Lambda image does not
	// have: the ffmpeg layer should bring one, e.g. /opt/fonts/DejaVuSans.ttf).
	EnvFontFile = "GEN_FONT_FILE"
	// EnvLogLevel is the level of the JSON logs: DEBUG, INFO, WARN or
	// ERROR (default INFO).
	EnvLogLevel = "LOG_LEVEL"
)

// Defaults of the optional variables.
const (
	DefaultGenerationTimeout = 10 * time.Minute
	// DefaultMaxImageBytes is 4 MiB. API Gateway REST caps a request at
	// 10 MB and Lambda an invocation payload at 6 MB; a binary body
	// reaches Lambda base64-encoded (4/3 larger) inside a JSON event, so
	// about 4.4 MiB of multipart body is the most that passes. 4 MiB of
	// images leaves room for the form's other fields and its framing.
	DefaultMaxImageBytes = 4 << 20
	DefaultFFmpegPath    = "ffmpeg"
	DefaultLogLevel      = slog.LevelInfo
)

// maxGenerationTimeout is the longest deadline a Step Functions task
// timeout and a Lambda (15 minutes per attempt, retried) sensibly allow.
const maxGenerationTimeout = 24 * time.Hour

// Env is the parsed environment of a Lambda. ParseEnv fills it; the parts
// of Stack that need a variable check that it was set.
type Env struct {
	TablePrefix       string
	Bucket            string
	StateMachineARN   string
	SignerSecretARN   string
	GenerationTimeout time.Duration
	MaxImageBytes     int64
	FFmpegPath        string
	FontFile          string // "" means render's default
	LogLevel          slog.Level
}

// ParseEnv reads the variables through lookup (os.LookupEnv in a Lambda).
// Every value that is set but malformed is an error naming its variable;
// all of them are reported at once. Variables that are not set keep their
// defaults ("" for the names and ARNs: Stack checks those it needs).
func ParseEnv(lookup func(string) (string, bool)) (Env, error) {
	e := Env{
		GenerationTimeout: DefaultGenerationTimeout,
		MaxImageBytes:     DefaultMaxImageBytes,
		FFmpegPath:        DefaultFFmpegPath,
		LogLevel:          DefaultLogLevel,
	}
	get := func(name string) string {
		v, _ := lookup(name)
		return strings.TrimSpace(v)
	}
	var errs []error
	bad := func(name, value, want string) {
		errs = append(errs, fmt.Errorf("%s=%q: %s", name, value, want))
	}

	e.TablePrefix = get(EnvTablePrefix)
	if strings.ContainsAny(e.TablePrefix, " /:") {
		bad(EnvTablePrefix, e.TablePrefix, "want a DynamoDB table-name prefix ([A-Za-z0-9_.-])")
	}
	e.Bucket = get(EnvBucket)
	if strings.ContainsAny(e.Bucket, " /:") {
		bad(EnvBucket, e.Bucket, "want a bucket name, not a URL or ARN")
	}
	e.StateMachineARN = get(EnvStateMachineARN)
	if v := e.StateMachineARN; v != "" && !isStateMachineARN(v) {
		bad(EnvStateMachineARN, v, "want arn:<partition>:states:<region>:<account>:stateMachine:<name>")
	}
	e.SignerSecretARN = get(EnvSignerSecretARN)
	if v := e.SignerSecretARN; v != "" && !strings.HasPrefix(v, "arn:") {
		bad(EnvSignerSecretARN, v, "want the ARN of a Secrets Manager secret")
	}
	if v := get(EnvGenerationTimeout); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 || d > maxGenerationTimeout {
			bad(EnvGenerationTimeout, v, "want a positive Go duration up to 24h, such as 10m")
		} else {
			e.GenerationTimeout = d
		}
	}
	if v := get(EnvMaxImageBytes); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 {
			bad(EnvMaxImageBytes, v, "want a positive number of bytes, such as 4194304")
		} else {
			e.MaxImageBytes = n
		}
	}
	if v := get(EnvFFmpegPath); v != "" {
		e.FFmpegPath = v
	}
	e.FontFile = get(EnvFontFile)
	if v := get(EnvLogLevel); v != "" {
		if err := e.LogLevel.UnmarshalText([]byte(v)); err != nil {
			bad(EnvLogLevel, v, "want DEBUG, INFO, WARN or ERROR")
		}
	}
	if err := errors.Join(errs...); err != nil {
		return Env{}, fmt.Errorf("environment: %w", err)
	}
	return e, nil
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
