// Package s3links signs S3 presigned GET URLs, the download links of the
// videos, without S3's client: the SDK's client brings its whole endpoint
// rule set and every operation's middleware, about a megabyte of a
// Lambda's bootstrap, where a link needs the bucket's URL and SigV4.
// s3blob signs its links here too, so that there is one way to sign them;
// links_test.go holds them to the URLs S3's own presigner makes.
package s3links

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// MaxLifetime is the longest a SigV4 presigned URL can live: S3 refuses an
// X-Amz-Expires over seven days.
const MaxLifetime = 7 * 24 * time.Hour

// Config is what Links are built from.
type Config struct {
	Bucket string
	Region string
	// Endpoint replaces S3's regional endpoint (AWS_ENDPOINT_URL_S3, an
	// emulator); "" means AWS's.
	Endpoint string
	// PathStyle puts the bucket in the path rather than the host, as the
	// client's UsePathStyle does.
	PathStyle bool
	// Signer supplies the credentials links are signed with; it is only
	// called when a link is signed.
	Signer aws.CredentialsProvider
	// Now is the clock links are signed at; nil means time.Now.
	Now func() time.Time
}

// Links signs the download links of one bucket's objects.
type Links struct {
	cfg    Config
	base   *url.URL // the bucket's URL, with a trailing slash
	signer *v4.Signer
}

// New returns the links of cfg.Bucket.
func New(cfg Config) (*Links, error) {
	switch {
	case cfg.Bucket == "":
		return nil, errors.New("s3links: Config.Bucket is empty")
	case cfg.Region == "":
		return nil, errors.New("s3links: Config.Region is empty")
	case cfg.Signer == nil:
		return nil, errors.New("s3links: Config.Signer is nil")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	base, err := bucketURL(cfg)
	if err != nil {
		return nil, err
	}
	// S3 signs the path as sent, escaped once (the SDK's
	// DisableURIPathEscaping for S3).
	signer := v4.NewSigner(func(o *v4.SignerOptions) { o.DisableURIPathEscaping = true })
	return &Links{cfg: cfg, base: base, signer: signer}, nil
}

// bucketURL is where the bucket's objects are, as S3's endpoint rules
// put it: the bucket in the host (virtual-hosted style) when its name
// can be a host label and the endpoint is not an IP address, otherwise in
// the path.
func bucketURL(cfg Config) (*url.URL, error) {
	endpoint := cfg.Endpoint
	if endpoint == "" {
		endpoint = "https://s3." + cfg.Region + ".amazonaws.com"
	}
	u, err := url.Parse(endpoint)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("s3links: endpoint %q is no URL", endpoint)
	}
	path := strings.TrimSuffix(u.Path, "/")
	if cfg.PathStyle || !hostLabel(cfg.Bucket) || net.ParseIP(u.Hostname()) != nil {
		u.Path = path + "/" + cfg.Bucket + "/"
	} else {
		u.Host = cfg.Bucket + "." + u.Host
		u.Path = path + "/"
	}
	return u, nil
}

// hostLabel reports whether a bucket name can be the first label of a
// host: 3 to 63 lower-case letters, digits and hyphens, starting and
// ending with a letter or digit.
func hostLabel(b string) bool {
	if len(b) < 3 || len(b) > 63 || b[0] == '-' || b[len(b)-1] == '-' {
		return false
	}
	for _, r := range b {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
			return false
		}
	}
	return true
}

// SignURL returns a presigned GET URL of key that works until expires,
// to the second: it is signed at the clock's second, for the seconds
// left (so X-Amz-Date + X-Amz-Expires is the expiry, truncated to a
// second, never late). An expires already past gives a URL that is dead,
// with the same X-Amz-Date + X-Amz-Expires. An expires more than
// MaxLifetime away is refused.
func (l *Links) SignURL(ctx context.Context, key string, expires time.Time) (string, error) {
	at := l.cfg.Now().UTC().Truncate(time.Second)
	end := expires.UTC().Truncate(time.Second)
	life := end.Sub(at)
	if life > MaxLifetime {
		return "", fmt.Errorf("sign %s: expiry %s is %v away; SigV4 presigned URLs live at most %v",
			key, end.Format(time.RFC3339), life, MaxLifetime)
	}
	if life < time.Second {
		// Past: sign one second before the end, for one second.
		at, life = end.Add(-time.Second), time.Second
	}
	creds, err := l.cfg.Signer.Retrieve(ctx)
	if err != nil {
		return "", fmt.Errorf("sign %s: credentials: %w", key, err)
	}
	u := *l.base
	u.Path += key
	u.RawPath = l.base.EscapedPath() + escapeKey(key)
	q := url.Values{"x-id": {"GetObject"}, "X-Amz-Expires": {fmt.Sprint(int64(life / time.Second))}}
	u.RawQuery = q.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return "", fmt.Errorf("sign %s: %w", key, err)
	}
	signed, _, err := l.signer.PresignHTTP(ctx, creds, req, "UNSIGNED-PAYLOAD", "s3", l.cfg.Region, at)
	if err != nil {
		return "", fmt.Errorf("sign %s: %w", key, err)
	}
	return signed, nil
}

// escapeKey escapes a key for a URL path as S3's client does: every byte
// but the unreserved characters and the slash.
func escapeKey(key string) string {
	var b strings.Builder
	for i := 0; i < len(key); i++ {
		c := key[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("-._~/", c) >= 0 {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", c)
	}
	return b.String()
}
