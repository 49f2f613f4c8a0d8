// Package s3blobtest runs the fake S3 of s3fake on loopback for tests,
// in memory, stopped when the test ends.
package s3blobtest

import (
	"net/http/httptest"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/genvideo/gen/shared/testing/s3fake"
)

// Region is the region the fake answers for.
const Region = s3fake.Region

// Server is a fake S3 listening on loopback.
type Server struct {
	*s3fake.Server
	// URL is the endpoint, http://127.0.0.1:<port>; a client addresses
	// buckets path-style on it (the SDK does so for an IP endpoint).
	URL string
}

// NewServer starts a fake S3 holding the empty buckets named; it stops
// when the test ends.
func NewServer(t testing.TB, buckets ...string) *Server {
	t.Helper()
	fake, err := s3fake.NewMemory(buckets...)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	return &Server{Server: fake, URL: srv.URL}
}

// Object returns the bytes and content type stored under key, and whether
// there is such an object.
func (s *Server) Object(t testing.TB, bucket, key string) (data []byte, contentType string, ok bool) {
	t.Helper()
	data, contentType, ok, err := s.Server.Object(bucket, key)
	if err != nil {
		t.Fatal(err)
	}
	return data, contentType, ok
}

// Keys lists the keys in bucket under prefix.
func (s *Server) Keys(t testing.TB, bucket, prefix string) []string {
	t.Helper()
	keys, err := s.Server.Keys(bucket, prefix)
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

// Client returns an S3 client of the fake with the given static
// credentials.
func (s *Server) Client(accessKeyID, secret string) *s3.Client {
	return s3fake.Client(s.URL, accessKeyID, secret)
}

// ClientOverTLS is Client, but the client believes it speaks HTTPS; see
// s3fake.ClientOverTLS.
func (s *Server) ClientOverTLS(accessKeyID, secret string) *s3.Client {
	return s3fake.ClientOverTLS(s.URL, accessKeyID, secret)
}
