// Package settings reads the service's configuration from environment
// variables in the one way both stacks share, the local server
// (devstack) and the Lambdas (awsstack): a variable that is unset or
// empty keeps its default; a value that is set but malformed is an error
// naming the variable, the value and what it should be; and every such
// error is reported at once, so that an operator fixes them in one go.
//
// It also lists the variables both stacks read, each with its one
// default; the variables only one stack reads are defined by that stack.
package settings

import (
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"
)

// The variables both stacks read.
const (
	// GenerationTimeout is a task's deadline after its creation, a Go
	// duration such as 10m: a task still unfinished then fails with
	// TIMEOUT and is refunded.
	GenerationTimeout = "GEN_GENERATION_TIMEOUT"
	// LogLevel is the level of the logs: DEBUG, INFO, WARN or ERROR, in
	// any case.
	LogLevel = "GEN_LOG_LEVEL"
	// FFmpegPath is the ffmpeg binary of the generator (on Lambda a layer
	// puts it in /opt/bin).
	FFmpegPath = "GEN_FFMPEG_PATH"
	// FontFile is the TrueType font of the captions the generator draws
	// (default render.DefaultFontFile, which a Lambda image does not
	// have: the ffmpeg layer brings one).
	FontFile = "GEN_FONT_FILE"
	// WebhookAllowPrivate lets webhook URLs use plain http and private,
	// loopback or link-local addresses: on or off, default off. For
	// local development only; template.yaml never sets it on a function
	// (the AWS functions honour it only in tests and on one machine).
	WebhookAllowPrivate = "GEN_WEBHOOK_ALLOW_PRIVATE"
	// MaxEventStreams is how many live event streams (GET
	// /api/gen/status/{taskId}/events) one API key may hold open at once,
	// a whole number, default DefaultMaxEventStreams; one more is 429.
	MaxEventStreams = "GEN_MAX_EVENT_STREAMS"
)

// Their defaults and bounds.
const (
	DefaultGenerationTimeout = 10 * time.Minute
	// DefaultMaxEventStreams lets a client watch a few tasks at once
	// while no one key can hold every execution of the events function.
	DefaultMaxEventStreams = 5
	// MaxGenerationTimeout is the longest deadline a Step Functions task
	// timeout and a Lambda (15 minutes per attempt, retried) sensibly
	// allow; the local server keeps to it too.
	MaxGenerationTimeout = 24 * time.Hour
	DefaultLogLevel      = slog.LevelInfo
	DefaultFFmpegPath    = "ffmpeg"
	// DefaultFontFile is empty: the generator's own default.
	DefaultFontFile = ""
)

// Shared is what the variables both stacks read say.
type Shared struct {
	GenerationTimeout time.Duration
	LogLevel          slog.Level
	FFmpegPath        string
	FontFile          string // "" means the generator's default
	MaxEventStreams   int
}

// Reader reads variables and collects what is wrong with their values.
// Each reader returns the value to use, or the default when the variable
// is unset, empty or malformed; Err then says whether any was malformed.
type Reader struct {
	lookup func(string) (string, bool)
	// from holds the variables read from a document rather than through
	// lookup (From); source names the document in errors.
	from   Vars
	source string
	errs   []error
}

// NewReader reads variables through lookup (os.LookupEnv, or a map in a
// test).
func NewReader(lookup func(string) (string, bool)) *Reader {
	return &Reader{lookup: lookup}
}

// Vars is an environment held in a map; its Lookup serves NewReader where
// the variables do not come from the process (a test, a template).
type Vars map[string]string

// Lookup is the value of the variable name, and whether it is set.
func (v Vars) Lookup(name string) (string, bool) {
	value, ok := v[name]
	return value, ok
}

// From makes the reader take the variables of vars from them, not from
// the environment: a stack that keeps some settings in a document of
// their own (on AWS the provider configuration's secret, since Lambda
// bounds a function's environment at 4 KB) reads them through the same
// readers and checks as the variables, and their errors name source as
// well as the variable. Call it before reading.
func (r *Reader) From(source string, vars Vars) {
	r.from, r.source = vars, source
}

// Shared reads the variables both stacks share.
func (r *Reader) Shared() Shared {
	return Shared{
		GenerationTimeout: r.Duration(GenerationTimeout, DefaultGenerationTimeout, MaxGenerationTimeout),
		LogLevel:          r.Level(LogLevel, DefaultLogLevel),
		FFmpegPath:        r.String(FFmpegPath, DefaultFFmpegPath),
		FontFile:          r.String(FontFile, DefaultFontFile),
		MaxEventStreams:   int(r.PositiveInt(MaxEventStreams, DefaultMaxEventStreams)),
	}
}

// value is the variable's value without surrounding blanks, "" if unset.
func (r *Reader) value(name string) string {
	v, ok := r.from[name]
	if !ok {
		v, _ = r.lookup(name)
	}
	return strings.TrimSpace(v)
}

// Reject reports value of the variable name as bad; want says what it
// should be ("want ..."). The readers call it; a caller calls it for a
// value that is wrong only in the light of another one.
func (r *Reader) Reject(name, value, want string) {
	if _, ok := r.from[name]; ok {
		name += " (" + r.source + ")"
	}
	r.errs = append(r.errs, fmt.Errorf("%s=%q: %s", name, value, want))
}

// Err reports every bad value at once, or is nil.
func (r *Reader) Err() error {
	if err := errors.Join(r.errs...); err != nil {
		return fmt.Errorf("environment: %w", err)
	}
	return nil
}

// String is the variable's value, or def.
func (r *Reader) String(name, def string) string {
	if v := r.value(name); v != "" {
		return v
	}
	return def
}

// Check is the variable's value, "" when unset; a value for which ok is
// false is rejected with want.
func (r *Reader) Check(name string, ok func(string) bool, want string) string {
	v := r.value(name)
	if v != "" && !ok(v) {
		r.Reject(name, v, want)
	}
	return v
}

// Duration is a positive Go duration of at most max, or def.
func (r *Reader) Duration(name string, def, max time.Duration) time.Duration {
	v := r.value(name)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 || d > max {
		r.Reject(name, v, fmt.Sprintf("want a positive Go duration up to %s, such as %s", short(max), short(def)))
		return def
	}
	return d
}

// short writes a whole number of hours or minutes as 24h or 10m rather
// than 24h0m0s or 10m0s.
func short(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// PositiveInt is a whole number of at least 1, or def.
func (r *Reader) PositiveInt(name string, def int64) int64 {
	v := r.value(name)
	if v == "" {
		return def
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 1 {
		r.Reject(name, v, "want a whole number of at least 1")
		return def
	}
	return n
}

// Float is a number from lo to hi, or def.
func (r *Reader) Float(name string, def, lo, hi float64) float64 {
	v := r.value(name)
	if v == "" {
		return def
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || !(f >= lo && f <= hi) { // also refuses NaN
		r.Reject(name, v, fmt.Sprintf("want a number from %g to %g", lo, hi))
		return def
	}
	return f
}

// Level is a log level (DEBUG, INFO, WARN or ERROR, in any case), or def.
func (r *Reader) Level(name string, def slog.Level) slog.Level {
	v := r.value(name)
	if v == "" {
		return def
	}
	var l slog.Level
	if err := l.UnmarshalText([]byte(v)); err != nil {
		r.Reject(name, v, "want DEBUG, INFO, WARN or ERROR")
		return def
	}
	return l
}

// switches are the spellings Switch accepts, in lower case.
var switches = map[string]bool{"on": true, "off": false, "true": true, "false": false, "1": true, "0": false}

// Switch is on or off (also true/false, 1/0; in any case), or def.
func (r *Reader) Switch(name string, def bool) bool {
	v := r.value(name)
	if v == "" {
		return def
	}
	on, ok := switches[strings.ToLower(v)]
	if !ok {
		r.Reject(name, v, "want on or off")
		return def
	}
	return on
}
