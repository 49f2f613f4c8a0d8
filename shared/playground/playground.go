// Package playground serves the service's web page for people: a static
// page (HTML, CSS and vanilla JavaScript modules, embedded, nothing to
// build) that calls the very API every other client calls, with the key a
// person pastes. It is served at / by the local server and by its own
// Lambda on AWS, behind the same API's domain, without a key: the page
// holds no secret, and every request it makes carries the person's key.
//
// Everything it loads comes from the service itself, which a strict
// Content-Security-Policy states: no CDN, no font from elsewhere, no
// inline script or style. The one exception is the media storage's origin
// (S3 presigned links on AWS), configured by MediaOrigins, from which
// videos play and to which large images are uploaded.
package playground

import (
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"path"
	"strings"

	"github.com/genvideo/gen/shared/catalog"
	"github.com/genvideo/gen/shared/client"
	"github.com/genvideo/gen/shared/httpapi"
	"github.com/genvideo/gen/shared/params"
	"github.com/genvideo/gen/shared/service"
)

// AssetPrefix is the path under which the page's files are served; the
// page itself is at /.
const AssetPrefix = "/playground/"

//go:embed static
var static embed.FS

// Config of the handler.
type Config struct {
	// MediaOrigins are origins other than the page's own that videos and
	// their posters load from and images upload to (the page's CSP
	// media-src, img-src and connect-src): on AWS the bucket's https origin. Each is
	// scheme://host[:port], nothing more.
	MediaOrigins []string
	// Logger receives one line per request; nil means slog.Default().
	Logger *slog.Logger
}

// Handler serves the page at / and its files under AssetPrefix, GET and
// HEAD only (another method is 405 METHOD_NOT_ALLOWED); any other path is
// the API's 404 NOT_FOUND, in its JSON body. An origin of MediaOrigins
// that is not a bare http(s) origin is an error.
func Handler(cfg Config) (http.Handler, error) {
	for _, o := range cfg.MediaOrigins {
		if err := CheckOrigin(o); err != nil {
			return nil, err
		}
	}
	assets := map[string]httpapi.PageAsset{}
	err := fs.WalkDir(static, "static", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := static.ReadFile(p)
		if err != nil {
			return err
		}
		name := strings.TrimPrefix(p, "static/")
		route := AssetPrefix + name
		if name == "index.html" {
			route = "/"
		}
		assets[route] = httpapi.NewPageAsset(b, mime.TypeByExtension(path.Ext(name)))
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("playground: read the embedded page: %w", err)
	}
	lim, err := json.Marshal(Limits())
	if err != nil {
		return nil, fmt.Errorf("playground: limits: %w", err)
	}
	assets[AssetPrefix+"limits.json"] = httpapi.NewPageAsset(lim, "application/json")

	csp := ContentSecurityPolicy(cfg.MediaOrigins)
	return httpapi.PublicRoute(cfg.Logger, func(w http.ResponseWriter, r *http.Request) {
		httpapi.ServePage(w, r, assets, csp)
	}), nil
}

// ContentSecurityPolicy is the page's policy: everything from the page's
// own origin ('self'), images also from blob: and data: (the previews of
// picked images) and mediaOrigins (the videos' poster frames), videos also from blob: and mediaOrigins, requests also
// to mediaOrigins (direct uploads); no inline script or style, no frame,
// no form submission, no <base>.
func ContentSecurityPolicy(mediaOrigins []string) string {
	extra := ""
	for _, o := range mediaOrigins {
		extra += " " + o
	}
	return "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' blob: data:" + extra + "; " +
		"media-src 'self' blob:" + extra + "; connect-src 'self'" + extra + "; " +
		"frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
}

// CheckOrigin reports whether o is a bare origin, scheme://host[:port]
// with scheme http or https, fit for a CSP source list.
func CheckOrigin(o string) error {
	u, err := url.Parse(o)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil ||
		(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" ||
		strings.ContainsAny(o, " ;,'\"") {
		return fmt.Errorf("playground: media origin %q: want an origin such as https://bucket.s3.us-east-1.amazonaws.com", o)
	}
	return nil
}

// Origin is the origin of an absolute URL (scheme://host[:port]), for a
// caller that has a base URL rather than an origin.
func Origin(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return "", fmt.Errorf("playground: %q is not an absolute URL", raw)
	}
	return u.Scheme + "://" + u.Host, nil
}

// LimitsDoc is what the page needs to know beyond GET /api/gen/models,
// from the one definition of each figure: which resolutions each model
// renders (its first is its default), the parameters' allowed values and
// bounds (shared/params), and the image limits the server enforces. It is
// served as AssetPrefix + "limits.json".
type LimitsDoc struct {
	Models                 []ModelLimits `json:"models"`
	DefaultModel           string        `json:"defaultModel"`
	Durations              []int         `json:"durations"`
	DefaultDuration        int           `json:"defaultDuration"`
	AspectRatios           []string      `json:"aspectRatios"`
	PersonGeneration       []string      `json:"personGeneration"`
	MaxPromptChars         int           `json:"maxPromptChars"`
	MaxNegativePromptChars int           `json:"maxNegativePromptChars"`
	MaxSampleCount         int           `json:"maxSampleCount"`
	MaxSeed                int64         `json:"maxSeed"`
	ImageTypes             []string      `json:"imageTypes"`
	MaxImageBytes          int64         `json:"maxImageBytes"`
	MaxImageSide           int           `json:"maxImageSide"`
	// DirectUploadAbove is the size above which an image goes through
	// POST /api/gen/uploads, as the Go client does.
	DirectUploadAbove int64 `json:"directUploadAbove"`
}

// ModelLimits is one model's capabilities and resolutions.
type ModelLimits struct {
	ModelID      string   `json:"modelId"`
	Capabilities []string `json:"capabilities"`
	Resolutions  []string `json:"resolutions"`
}

// Limits returns the page's limits.
func Limits() LimitsDoc {
	d := LimitsDoc{
		DefaultModel:           catalog.Default(),
		Durations:              params.Durations(),
		DefaultDuration:        params.DefaultDuration,
		AspectRatios:           params.AspectRatios(),
		PersonGeneration:       params.PersonGenerations(),
		MaxPromptChars:         params.MaxPromptChars,
		MaxNegativePromptChars: params.MaxNegativePromptChars,
		MaxSampleCount:         params.MaxSampleCount,
		MaxSeed:                params.MaxSeed,
		ImageTypes:             []string{"image/jpeg", "image/png"},
		MaxImageBytes:          httpapi.DefaultMaxImageBytes,
		MaxImageSide:           service.DefaultMaxImageSide,
		DirectUploadAbove:      client.DefaultDirectUploadAbove,
	}
	for _, m := range catalog.All() {
		d.Models = append(d.Models, ModelLimits{ModelID: m.ID, Capabilities: m.Capabilities, Resolutions: m.Resolutions})
	}
	return d
}
