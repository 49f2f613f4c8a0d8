// Package s3fake is an S3 on loopback for the tests and for the AWS
// assembly on one machine (infra/aws-local): gofakes3 (an S3 that speaks
// the real protocol, multipart uploads included, in memory or on disk)
// behind S3's own checks of multipart checksums (checkChecksums), of POST
// uploads and their policies (checkPost) and of presigned URLs that S3
// itself makes: the SigV4 query signature must verify with a known
// signer's secret, and the URL must not have expired by the server's
// clock. Requests signed in headers (the SDK's own calls) are not checked.
package s3fake

import (
	"context"
	"crypto/hmac"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

// Region is the region the fake answers for.
const Region = "us-east-1"

// Server is a fake S3 with the buckets it was made with. It is an
// http.Handler; the caller listens.
type Server struct {
	backend   gofakes3.Backend
	handler   http.Handler
	mu        sync.Mutex
	signers   map[string]string // access key id -> secret
	now       func() time.Time
	served    []string              // presigned requests that passed, as "METHOD path"
	uploads   map[string]*multipart // open multipart uploads by id
	completed map[string]string     // bucket/key -> checksums of its last multipart upload
	// uploadSigners verify POST uploads besides signers.
	uploadSigners map[string]string
	// requireList and lists: see RequireList.
	requireList bool
	lists       map[string][]string // access key id -> prefixes it may list
}

// NewMemory returns a fake holding the empty buckets named, in memory.
func NewMemory(buckets ...string) (*Server, error) {
	return New(s3mem.New(), buckets...)
}

// New returns a fake storing its objects in backend (s3mem in memory,
// s3bolt on disk), with the buckets named created if missing.
func New(backend gofakes3.Backend, buckets ...string) (*Server, error) {
	s := &Server{backend: backend, signers: map[string]string{}, uploads: map[string]*multipart{}, uploadSigners: map[string]string{},
		completed: map[string]string{}, now: time.Now}
	for _, b := range buckets {
		ok, err := backend.BucketExists(b)
		if err != nil {
			return nil, fmt.Errorf("fake S3: bucket %s: %w", b, err)
		}
		if ok {
			continue
		}
		if err := backend.CreateBucket(b); err != nil {
			return nil, fmt.Errorf("fake S3: create bucket %s: %w", b, err)
		}
	}
	fake := gofakes3.New(backend, gofakes3.WithoutVersioning())
	s.handler = s.checkList(s.checkPost(s.checkPresigned(s.checkChecksums(fake.Server()))))
	return s, nil
}

// ServeHTTP serves the S3 API, path-style.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// AddSigner makes presigned URLs of this access key verifiable.
func (s *Server) AddSigner(accessKeyID, secret string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.signers[accessKeyID] = secret
}

// AddUploadSigner makes POST uploads (PresignPostObject) signed with this
// access key verifiable, and only those: a Lambda role signs uploads, but
// its presigned GET URLs would die with its session.
func (s *Server) AddUploadSigner(accessKeyID, secret string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.uploadSigners[accessKeyID] = secret
}

// RequireList makes the fake answer a GET or HEAD of a missing key as S3
// answers a principal (the access key a request is signed with in its
// headers, the SDK's calls): 404 NoSuchKey if it may s3:ListBucket the key
// (GrantList), 403 AccessDenied otherwise. "If you have the s3:ListBucket
// permission on the bucket, Amazon S3 returns an HTTP status code 404 (Not
// Found) error. If you don't have the s3:ListBucket permission, Amazon S3
// returns an HTTP status code 403 (Access Denied) error."
// (https://docs.aws.amazon.com/AmazonS3/latest/API/API_GetObject.html,
// Permissions, read 2026-11-26.) Without it, every principal may list.
func (s *Server) RequireList() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requireList = true
}

// GrantList lets the principal of accessKeyID s3:ListBucket the keys under
// each prefix ("" for every key), as an s3:prefix condition does.
func (s *Server) GrantList(accessKeyID string, prefixes ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lists == nil {
		s.lists = map[string][]string{}
	}
	s.lists[accessKeyID] = append(s.lists[accessKeyID], prefixes...)
}

// checkList answers 403 AccessDenied to a header-signed GET or HEAD of a
// missing key by a principal that may not list it (RequireList).
func (s *Server) checkList(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		require, prefixes := s.requireList, s.lists[headerAccessKey(r)]
		s.mu.Unlock()
		bucket, key, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
		if !require || key == "" || (r.Method != http.MethodGet && r.Method != http.MethodHead) ||
			r.URL.Query().Get("X-Amz-Signature") != "" || r.Header.Get("Authorization") == "" {
			next.ServeHTTP(w, r)
			return
		}
		for _, p := range prefixes {
			if strings.HasPrefix(key, p) {
				next.ServeHTTP(w, r)
				return
			}
		}
		obj, err := s.backend.HeadObject(bucket, key)
		if gofakes3.HasErrorCode(err, gofakes3.ErrNoSuchKey) {
			writeError(w, http.StatusForbidden, "AccessDenied", "Access Denied")
			return
		}
		if err == nil {
			obj.Contents.Close()
		}
		next.ServeHTTP(w, r)
	})
}

// headerAccessKey is the access key id of a request signed in its
// Authorization header (SigV4: Credential=<key id>/<scope>, ...).
func headerAccessKey(r *http.Request) string {
	_, cred, ok := strings.Cut(r.Header.Get("Authorization"), "Credential=")
	if !ok {
		return ""
	}
	id, _, _ := strings.Cut(cred, "/")
	return id
}

// SetNow sets the clock presigned URLs expire by.
func (s *Server) SetNow(now func() time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.now = now
}

// Presigned lists the presigned requests the server let through.
func (s *Server) Presigned() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.served...)
}

// Object returns the bytes and content type stored under key, and whether
// there is such an object.
func (s *Server) Object(bucket, key string) (data []byte, contentType string, ok bool, err error) {
	obj, err := s.backend.GetObject(bucket, key, nil)
	if gofakes3.HasErrorCode(err, gofakes3.ErrNoSuchKey) {
		return nil, "", false, nil
	}
	if err != nil {
		return nil, "", false, fmt.Errorf("fake S3: get %s/%s: %w", bucket, key, err)
	}
	defer obj.Contents.Close()
	buf := make([]byte, obj.Size)
	if _, err := io.ReadFull(obj.Contents, buf); err != nil {
		return nil, "", false, fmt.Errorf("fake S3: read %s/%s: %w", bucket, key, err)
	}
	return buf, obj.Metadata["Content-Type"], true, nil
}

// Keys lists the keys in bucket under prefix.
func (s *Server) Keys(bucket, prefix string) ([]string, error) {
	list, err := s.backend.ListBucket(bucket, &gofakes3.Prefix{HasPrefix: true, Prefix: prefix}, gofakes3.ListBucketPage{})
	if err != nil {
		return nil, fmt.Errorf("fake S3: list %s/%s: %w", bucket, prefix, err)
	}
	var keys []string
	for _, c := range list.Contents {
		keys = append(keys, c.Key)
	}
	return keys, nil
}

// Client returns an S3 client of the fake at endpoint with the given
// static credentials.
func Client(endpoint, accessKeyID, secret string) *s3.Client {
	return s3.New(s3.Options{
		Region:       Region,
		BaseEndpoint: aws.String(endpoint),
		Credentials:  credentials.NewStaticCredentialsProvider(accessKeyID, secret, ""),
	})
}

// ClientOverTLS is Client, but the client believes it speaks HTTPS (its
// transport sends plain HTTP to the fake). The SDK sends the automatic
// checksums of uploads, as aws-chunked trailers, only over TLS: with this
// client the fake sees what real S3 sees. (URLs it presigns are https.)
func ClientOverTLS(endpoint, accessKeyID, secret string) *s3.Client {
	return s3.New(s3.Options{
		Region:       Region,
		BaseEndpoint: aws.String(strings.Replace(endpoint, "http://", "https://", 1)),
		Credentials:  credentials.NewStaticCredentialsProvider(accessKeyID, secret, ""),
		HTTPClient:   &http.Client{Transport: plainHTTP{}},
	})
}

// plainHTTP sends an https request to the fake as http.
type plainHTTP struct{}

func (plainHTTP) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.URL.Scheme = "http"
	return http.DefaultTransport.RoundTrip(r)
}

// checkPresigned refuses a presigned request the way S3 does: 403
// AccessDenied once expired, 403 SignatureDoesNotMatch for a bad
// signature, 403 InvalidAccessKeyId for an unknown signer.
func (s *Server) checkPresigned(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if q.Get("X-Amz-Signature") == "" {
			next.ServeHTTP(w, r)
			return
		}
		s.mu.Lock()
		now, signers := s.now(), s.signers
		s.mu.Unlock()
		if code, msg := verify(r, q, now, signers); code != "" {
			writeError(w, presignedStatus(code), code, msg)
			return
		}
		s.mu.Lock()
		s.served = append(s.served, r.Method+" "+r.URL.Path)
		s.mu.Unlock()
		next.ServeHTTP(w, r)
	})
}

// verify checks a presigned request at now; it returns an S3 error code
// and message, or "" if the request may pass.
func verify(r *http.Request, q url.Values, now time.Time, signers map[string]string) (code, msg string) {
	if q.Get("X-Amz-Algorithm") != "AWS4-HMAC-SHA256" {
		return "AuthorizationQueryParametersError", "X-Amz-Algorithm must be AWS4-HMAC-SHA256"
	}
	// <key id>/<yyyymmdd>/<region>/<service>/aws4_request
	scope := strings.Split(q.Get("X-Amz-Credential"), "/")
	if len(scope) != 5 || scope[4] != "aws4_request" {
		return "AuthorizationQueryParametersError", "malformed X-Amz-Credential"
	}
	secret, ok := signers[scope[0]]
	if !ok {
		return "InvalidAccessKeyId", "The AWS Access Key Id you provided does not exist in our records."
	}
	date, err := time.Parse("20060102T150405Z", q.Get("X-Amz-Date"))
	if err != nil {
		return "AuthorizationQueryParametersError", "malformed X-Amz-Date"
	}
	expires, err := strconv.Atoi(q.Get("X-Amz-Expires"))
	if err != nil || expires < 1 || expires > 604800 {
		return "AuthorizationQueryParametersError", "X-Amz-Expires must be from 1 to 604800 seconds"
	}
	if !now.Before(date.Add(time.Duration(expires) * time.Second)) {
		return "AccessDenied", "Request has expired"
	}

	// Sign the same request again, at the same time with the same
	// secret, and compare.
	unsigned := *r.URL
	uq := r.URL.Query()
	got := uq.Get("X-Amz-Signature")
	uq.Del("X-Amz-Signature")
	unsigned.RawQuery = uq.Encode()
	unsigned.Scheme, unsigned.Host = "http", r.Host
	req, err := http.NewRequestWithContext(context.Background(), r.Method, unsigned.String(), nil)
	if err != nil {
		return "AuthorizationQueryParametersError", err.Error()
	}
	signed, _, err := v4.NewSigner().PresignHTTP(context.Background(),
		aws.Credentials{AccessKeyID: scope[0], SecretAccessKey: secret},
		req, "UNSIGNED-PAYLOAD", scope[3], scope[2], date)
	if err != nil {
		return "AuthorizationQueryParametersError", err.Error()
	}
	want, err := url.Parse(signed)
	if err != nil {
		return "AuthorizationQueryParametersError", err.Error()
	}
	if !hmac.Equal([]byte(got), []byte(want.Query().Get("X-Amz-Signature"))) {
		return "SignatureDoesNotMatch", "The request signature we calculated does not match the signature you provided."
	}
	return "", ""
}

// presignedStatus is the status of a refused presigned request.
func presignedStatus(code string) int {
	if code == "AuthorizationQueryParametersError" {
		return http.StatusBadRequest
	}
	return http.StatusForbidden
}

func writeError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(status)
	xml.NewEncoder(w).Encode(struct {
		XMLName xml.Name `xml:"Error"`
		Code    string
		Message string
	}{Code: code, Message: msg})
}
