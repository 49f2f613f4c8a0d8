package s3links_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/genvideo/gen/shared/blob/s3links"
)

var now = time.Date(2030, 1, 2, 3, 4, 5, 600, time.UTC)

// signedAt is S3's client's own presigner (its newDefaultV4Signer: the
// path signed as it is sent, not escaped again), at a given time rather
// than the SDK's clock.
type signedAt struct{ at time.Time }

func (p signedAt) PresignHTTP(ctx context.Context, creds aws.Credentials, r *http.Request, payloadHash, service, region string,
	_ time.Time, optFns ...func(*v4.SignerOptions)) (string, http.Header, error) {
	s3Signer := v4.NewSigner(func(o *v4.SignerOptions) { o.DisableURIPathEscaping = true })
	return s3Signer.PresignHTTP(ctx, creds, r, payloadHash, service, region, p.at, optFns...)
}

// The links are the URLs S3's own presigner makes, to the byte: on AWS's
// endpoints and on an emulator's, virtual-hosted or path style, for keys
// that need escaping, with session credentials or a user's keys.
func TestSignURLIsS3sPresignedURL(t *testing.T) {
	expires := now.Add(24 * time.Hour)
	for _, tt := range []struct {
		name, region, endpoint, bucket string
		pathStyle                      bool
		token                          string
	}{
		{"AWS, us-east-1", "us-east-1", "", "gen-media", false, ""},
		{"AWS, another region, session credentials", "eu-west-1", "", "gen-media-123", false, "session-token"},
		{"AWS, a bucket with dots", "us-west-2", "", "gen.media", false, ""},
		{"an emulator on an IP address", "us-east-1", "http://127.0.0.1:9000", "gen-media", false, ""},
		{"an emulator by name", "us-east-1", "http://s3.localhost.test:9000", "gen-media", false, ""},
		{"path style", "us-east-1", "http://s3.localhost.test:9000/base", "gen-media", true, ""},
	} {
		creds := credentials.NewStaticCredentialsProvider("AKIASIGNERSIGNER", "signer-secret", tt.token)
		client := s3.New(s3.Options{Region: tt.region, Credentials: creds, UsePathStyle: tt.pathStyle,
			BaseEndpoint: endpointOrNil(tt.endpoint)})
		links, err := s3links.New(s3links.Config{Bucket: tt.bucket, Region: tt.region, Endpoint: tt.endpoint,
			PathStyle: tt.pathStyle, Signer: creds, Now: func() time.Time { return now }})
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		for _, key := range []string{"videos/gen_1767225600000_abc/0.mp4", "inputs/a b+c/ü=&?#%.png", "videos/x~y_z-1.mp4"} {
			got, err := links.SignURL(context.Background(), key, expires)
			if err != nil {
				t.Fatalf("%s: SignURL(%q): %v", tt.name, key, err)
			}
			want, err := s3.NewPresignClient(client).PresignGetObject(context.Background(),
				&s3.GetObjectInput{Bucket: aws.String(tt.bucket), Key: aws.String(key)},
				s3.WithPresignExpires(24*time.Hour),
				func(o *s3.PresignOptions) { o.Presigner = signedAt{now.Truncate(time.Second)} })
			if err != nil {
				t.Fatalf("%s: PresignGetObject(%q): %v", tt.name, key, err)
			}
			if got != want.URL {
				t.Errorf("%s: key %q:\n got %s\nwant %s", tt.name, key, got, want.URL)
			}
		}
	}
}

func endpointOrNil(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
