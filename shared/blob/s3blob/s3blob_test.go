package s3blob_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"maps"
	"mime/multipart"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"

	"github.com/genvideo/gen/shared/blob"
	"github.com/genvideo/gen/shared/blob/s3blob"
	"github.com/genvideo/gen/shared/testing/s3blobtest"
)

var (
	_ blob.Store = (*s3blob.Store)(nil)
)

const (
	bucket       = "gen-test"
	roleKeyID    = "ASIAROLEROLEROLE"
	roleSecret   = "role-secret"
	signerKeyID  = "AKIASIGNERSIGNER"
	signerSecret = "signer-secret"
	partSize     = 5 << 20
)

// countingSigner hands out the signing user's keys and counts how often.
type countingSigner struct{ calls atomic.Int32 }

func (c *countingSigner) Retrieve(ctx context.Context) (aws.Credentials, error) {
	c.calls.Add(1)
	return aws.Credentials{AccessKeyID: signerKeyID, SecretAccessKey: signerSecret, Source: "test"}, nil
}

type fixture struct {
	srv    *s3blobtest.Server
	store  *s3blob.Store
	client *s3.Client
	signer *countingSigner
	now    time.Time
}

// newFixture serves a fake S3 that knows only the signer's key: a URL
// presigned with the role's credentials would be refused.
func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{srv: s3blobtest.NewServer(t, bucket), signer: &countingSigner{}}
	f.srv.AddSigner(signerKeyID, signerSecret)
	f.client = f.srv.Client(roleKeyID, roleSecret)
	f.now = time.Date(2026, 3, 1, 12, 0, 0, 250e6, time.UTC)
	st, err := s3blob.New(s3blob.Config{Client: f.client, Bucket: bucket, Signer: f.signer, PartSize: partSize,
		Now: func() time.Time { return f.now }})
	if err != nil {
		t.Fatal(err)
	}
	f.store = st
	return f
}

// onlyReader hides everything but Read (no Seek, no Len), as a request
// body is.
type onlyReader struct{ r io.Reader }

func (o onlyReader) Read(p []byte) (int, error) { return o.r.Read(p) }

func pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + i/251)
	}
	return b
}

func TestPutGetRoundTrip(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	for _, n := range []int{0, 1, 300 << 10, partSize - 1, partSize, partSize + 1, 2*partSize + 12345} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			key := fmt.Sprintf("videos/t/%d.mp4", n)
			data := pattern(n)
			size, err := f.store.Put(ctx, key, onlyReader{bytes.NewReader(data)}, "video/mp4")
			if err != nil {
				t.Fatalf("Put: %v", err)
			}
			if size != int64(n) {
				t.Errorf("Put = %d bytes, want %d", size, n)
			}
			stored, ct, ok := f.srv.Object(t, bucket, key)
			if !ok {
				t.Fatalf("no object %s after Put", key)
			}
			if !bytes.Equal(stored, data) {
				t.Errorf("stored %d bytes, not the %d put", len(stored), n)
			}
			if ct != "video/mp4" {
				t.Errorf("content type %q, want video/mp4", ct)
			}
			rc, err := f.store.Get(ctx, key)
			if err != nil {
				t.Fatalf("Get: %v", err)
			}
			got, err := io.ReadAll(rc)
			rc.Close()
			if err != nil || !bytes.Equal(got, data) {
				t.Errorf("Get read %d bytes (err %v), want the %d put", len(got), err, n)
			}
		})
	}
	if n := f.signer.calls.Load(); n != 0 {
		t.Errorf("Put and Get fetched the signer's credentials %d times, want 0", n)
	}
}

// failingReader yields n bytes, then fails.
type failingReader struct {
	r   io.Reader
	err error
}

func (f *failingReader) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if err == io.EOF {
		return n, f.err
	}
	return n, err
}

func TestPutReaderFailsStoresNothing(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	boom := errors.New("client went away")
	for _, n := range []int{10, partSize + 10, 2*partSize + 10} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			key := fmt.Sprintf("inputs/t/%d.png", n)
			_, err := f.store.Put(ctx, key, &failingReader{bytes.NewReader(pattern(n)), boom}, "image/png")
			if !errors.Is(err, boom) {
				t.Fatalf("Put = %v, want the reader's error", err)
			}
			if _, _, ok := f.srv.Object(t, bucket, key); ok {
				t.Errorf("object %s exists after a failed Put", key)
			}
			ups, err := f.client.ListMultipartUploads(ctx, &s3.ListMultipartUploadsInput{Bucket: aws.String(bucket)})
			var ae smithy.APIError
			if errors.As(err, &ae) && ae.ErrorCode() == "NoSuchUpload" {
				return // gofakes3's answer when the bucket has no upload open
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, u := range ups.Uploads {
				if aws.ToString(u.Key) == key {
					t.Errorf("multipart upload of %s left open", key)
				}
			}
		})
	}
}

func TestGetMissingDelete(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	if _, err := f.store.Get(ctx, "videos/none/0.mp4"); !errors.Is(err, s3blob.ErrNotFound) || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Get of a missing key = %v, want ErrNotFound and fs.ErrNotExist", err)
	}
	if _, err := f.store.Put(ctx, "inputs/x/image.png", strings.NewReader("png"), "image/png"); err != nil {
		t.Fatal(err)
	}
	if err := f.store.Delete(ctx, "inputs/x/image.png"); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if _, _, ok := f.srv.Object(t, bucket, "inputs/x/image.png"); ok {
		t.Error("object still there after Delete")
	}
	if err := f.store.Delete(ctx, "inputs/x/image.png"); err != nil {
		t.Errorf("Delete of a missing key = %v, want nil", err)
	}
}

// Issue 24, defect 3: S3 answers a GET of a missing key 403 AccessDenied
// to a principal that may not s3:ListBucket it (the start functions may
// only GetObject uploads), 404 to one that may. The fake answers so
// (RequireList), and Get tells the two apart from other failures.
func TestGetMissingWithoutListIsDenied(t *testing.T) {
	f := newFixture(t)
	f.srv.RequireList()
	f.srv.GrantList(roleKeyID, "inputs/")
	ctx := context.Background()
	if _, err := f.store.Put(ctx, "videos/there/0.mp4", strings.NewReader("mp4"), "video/mp4"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.store.Get(ctx, "inputs/uploads/none"); !errors.Is(err, s3blob.ErrNotFound) {
		t.Errorf("Get of a missing key it may list = %v, want ErrNotFound", err)
	}
	if _, err := f.store.Get(ctx, "videos/none/0.mp4"); !errors.Is(err, s3blob.ErrDenied) || !errors.Is(err, fs.ErrPermission) ||
		errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Get of a missing key it may not list = %v, want ErrDenied (403), not ErrNotFound", err)
	}
	rc, err := f.store.Get(ctx, "videos/there/0.mp4")
	if err != nil {
		t.Fatalf("Get of an object it may not list: %v, want it read (a GetObject needs no ListBucket)", err)
	}
	rc.Close()
}

// presigned is what a presigned URL says about itself.
type presigned struct {
	u         *url.URL
	keyID     string
	date      time.Time
	expiresIn time.Duration
}

func (p presigned) end() time.Time { return p.date.Add(p.expiresIn) }

func parsePresigned(t *testing.T, raw string) presigned {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatalf("presigned URL %q: %v", raw, err)
	}
	q := u.Query()
	date, err := time.Parse("20060102T150405Z", q.Get("X-Amz-Date"))
	if err != nil {
		t.Fatalf("X-Amz-Date of %s: %v", raw, err)
	}
	secs, err := strconv.Atoi(q.Get("X-Amz-Expires"))
	if err != nil {
		t.Fatalf("X-Amz-Expires of %s: %v", raw, err)
	}
	keyID, _, _ := strings.Cut(q.Get("X-Amz-Credential"), "/")
	return presigned{u: u, keyID: keyID, date: date, expiresIn: time.Duration(secs) * time.Second}
}

func fetch(t *testing.T, raw string) (int, string) {
	t.Helper()
	resp, err := http.Get(raw)
	if err != nil {
		t.Fatalf("GET %s: %v", raw, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// TestSignURLExpiry tests the expiry SignURL produces: X-Amz-Date +
// X-Amz-Expires is the expiry (to the second), and S3 serves the URL up
// to then and refuses it from then on.
func TestSignURLExpiry(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	video := "videos/gen_1/0.mp4"
	if _, err := f.store.Put(ctx, video, strings.NewReader("the video"), "video/mp4"); err != nil {
		t.Fatal(err)
	}
	completed := f.now.Add(-3*time.Hour - 123*time.Millisecond)
	for _, tc := range []struct {
		name    string
		expires time.Time
	}{
		{"24h after completion", completed.Add(24 * time.Hour)},
		{"whole second", time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)},
		{"seven days exactly", f.now.Truncate(time.Second).Add(s3blob.MaxURLLifetime)},
		{"two seconds", f.now.Add(2 * time.Second)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw, err := f.store.SignURL(ctx, video, tc.expires)
			if err != nil {
				t.Fatalf("SignURL: %v", err)
			}
			p := parsePresigned(t, raw)
			want := tc.expires.Truncate(time.Second)
			if !p.end().Equal(want) {
				t.Errorf("X-Amz-Date %s + X-Amz-Expires %v = %s, want %s", p.date, p.expiresIn, p.end(), want)
			}
			if p.keyID != signerKeyID {
				t.Errorf("signed by %q, want the signing user %q", p.keyID, signerKeyID)
			}
			if p.u.Query().Get("X-Amz-Security-Token") != "" {
				t.Error("URL carries a session token; the signer's keys are long-lived")
			}
			for _, at := range []struct {
				now    time.Time
				status int
			}{
				{f.now, http.StatusOK},
				{want.Add(-time.Second), http.StatusOK},
				{want.Add(-time.Nanosecond), http.StatusOK},
				{want, http.StatusForbidden},
				{want.Add(time.Hour), http.StatusForbidden},
			} {
				f.srv.SetNow(func() time.Time { return at.now })
				status, body := fetch(t, raw)
				if status != at.status {
					t.Errorf("GET at %s = %d, want %d (%s)", at.now.Format(time.RFC3339Nano), status, at.status, body)
				}
				if status == http.StatusOK && body != "the video" {
					t.Errorf("GET at %s served %q, want the video", at.now, body)
				}
				if status == http.StatusForbidden && !strings.Contains(body, "Request has expired") {
					t.Errorf("GET at %s refused with %q, want an expiry", at.now, body)
				}
			}
		})
	}
}

func TestSignURLTamperedOrForeign(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	raw, err := f.store.SignURL(ctx, "videos/gen_1/0.mp4", f.now.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	f.srv.SetNow(func() time.Time { return f.now })
	other := strings.Replace(raw, "/0.mp4", "/1.mp4", 1)
	if status, body := fetch(t, other); status != http.StatusForbidden || !strings.Contains(body, "SignatureDoesNotMatch") {
		t.Errorf("URL with another key = %d %s, want 403 SignatureDoesNotMatch", status, body)
	}
	longer := strings.Replace(raw, "X-Amz-Expires=3600", "X-Amz-Expires=7200", 1)
	if longer == raw {
		t.Fatalf("URL %s has no X-Amz-Expires=3600", raw)
	}
	if status, body := fetch(t, longer); status != http.StatusForbidden || !strings.Contains(body, "SignatureDoesNotMatch") {
		t.Errorf("URL with a longer X-Amz-Expires = %d %s, want 403 SignatureDoesNotMatch", status, body)
	}

	// The same store signing with the role's session credentials makes
	// URLs S3 does not honour here: only the signing user's are known.
	role, err := s3blob.New(s3blob.Config{Client: f.client, Bucket: bucket,
		Signer: credentials.NewStaticCredentialsProvider(roleKeyID, roleSecret, "session-token"),
		Now:    func() time.Time { return f.now }})
	if err != nil {
		t.Fatal(err)
	}
	raw, err = role.SignURL(ctx, "videos/gen_1/0.mp4", f.now.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if status, _ := fetch(t, raw); status != http.StatusForbidden {
		t.Errorf("URL signed with the role's keys = %d, want 403", status)
	}
}

func TestSignURLPastExpiryIsDead(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	if _, err := f.store.Put(ctx, "videos/old/0.mp4", strings.NewReader("old"), "video/mp4"); err != nil {
		t.Fatal(err)
	}
	expired := f.now.Add(-2 * time.Hour)
	raw, err := f.store.SignURL(ctx, "videos/old/0.mp4", expired)
	if err != nil {
		t.Fatalf("SignURL of a past expiry: %v", err)
	}
	p := parsePresigned(t, raw)
	if want := expired.Truncate(time.Second); !p.end().Equal(want) {
		t.Errorf("X-Amz-Date + X-Amz-Expires = %s, want %s", p.end(), want)
	}
	f.srv.SetNow(func() time.Time { return f.now })
	if status, _ := fetch(t, raw); status != http.StatusForbidden {
		t.Errorf("GET of a URL past its expiry = %d, want 403", status)
	}
}

func TestSignURLRefusesBeyondSevenDays(t *testing.T) {
	f := newFixture(t)
	expires := f.now.Truncate(time.Second).Add(s3blob.MaxURLLifetime + time.Second)
	if url, err := f.store.SignURL(context.Background(), "videos/x/0.mp4", expires); err == nil {
		t.Errorf("SignURL 7 days and 1 second ahead = %s, want an error", url)
	}
}

func TestNewChecksConfig(t *testing.T) {
	f := newFixture(t)
	for _, tc := range []struct {
		name string
		cfg  s3blob.Config
	}{
		{"no client", s3blob.Config{Bucket: bucket, Signer: f.signer}},
		{"no bucket", s3blob.Config{Client: f.client, Signer: f.signer}},
		{"no signer", s3blob.Config{Client: f.client, Bucket: bucket}},
		{"small parts", s3blob.Config{Client: f.client, Bucket: bucket, Signer: f.signer, PartSize: 1 << 20}},
	} {
		if _, err := s3blob.New(tc.cfg); err == nil {
			t.Errorf("New with %s: no error", tc.name)
		}
	}
}

// TestMultipartChecksumsAsRealS3 puts bodies of one part and of several
// through a client that sends the SDK's automatic checksums as it does to
// real S3 (over TLS), to a fake that checks them as S3 does: a part
// uploaded with a CRC32 must be completed with it, or S3 answers
// InvalidPart (aws-sdk-go-v2 issue 3005), which every video of 8 MiB or
// more met.
func TestMultipartChecksumsAsRealS3(t *testing.T) {
	srv := s3blobtest.NewServer(t, bucket)
	st, err := s3blob.New(s3blob.Config{Client: srv.ClientOverTLS(roleKeyID, roleSecret), Bucket: bucket,
		Signer: &countingSigner{}, PartSize: partSize})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{10, partSize, 2*partSize + 12345} {
		key := fmt.Sprintf("videos/gen_1/%d.mp4", n)
		body := pattern(n)
		size, err := st.Put(t.Context(), key, onlyReader{bytes.NewReader(body)}, "video/mp4")
		if err != nil || size != int64(n) {
			t.Errorf("Put of %d bytes = %d, %v", n, size, err)
			continue
		}
		if got, _, ok := srv.Object(t, bucket, key); !ok || !bytes.Equal(got, body) {
			t.Errorf("Put of %d bytes stored %d bytes (present %v), not the body", n, len(got), ok)
		}
		// A multipart upload declares CRC32 and every part carries it,
		// whatever the SDK's defaults of the day.
		want := ""
		if parts := (n + partSize - 1) / partSize; n >= partSize {
			want = "CRC32:" + strings.Repeat(" CRC32", parts)
		}
		if got := srv.MultipartChecksums(bucket, key); got != want {
			t.Errorf("Put of %d bytes: multipart checksums %q, want %q", n, got, want)
		}
	}
}

// The fake refuses what real S3 refuses: a part uploaded with a checksum
// and completed without it is InvalidPart; a part without the checksum
// its upload declared is InvalidRequest.
func TestFakeS3ChecksMultipartChecksums(t *testing.T) {
	srv := s3blobtest.NewServer(t, bucket)
	ctx := t.Context()
	for _, c := range []struct {
		name        string
		declare     bool
		partSum     bool
		carry       bool
		wantFailure string
	}{
		{"part checksum dropped at completion", false, true, false, "InvalidPart"},
		{"declared algorithm, part without", true, false, false, "InvalidRequest"},
		{"carried through", true, true, true, ""},
		{"no checksums at all", false, false, false, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			client := srv.Client(roleKeyID, roleSecret)
			key := "inputs/" + strings.ReplaceAll(c.name, " ", "-")
			in := &s3.CreateMultipartUploadInput{Bucket: aws.String(bucket), Key: &key}
			if c.declare {
				in.ChecksumAlgorithm = types.ChecksumAlgorithmCrc32
			}
			up, err := client.CreateMultipartUpload(ctx, in)
			if err != nil {
				t.Fatal(err)
			}
			part := pattern(partSize)
			pin := &s3.UploadPartInput{Bucket: aws.String(bucket), Key: &key, UploadId: up.UploadId, PartNumber: aws.Int32(1),
				Body: bytes.NewReader(part), ContentLength: aws.Int64(int64(len(part)))}
			sum := crc32Base64(part)
			if c.partSum {
				pin.ChecksumCRC32 = &sum
			}
			out, err := client.UploadPart(ctx, pin, func(o *s3.Options) { o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired })
			if err != nil {
				if c.wantFailure == "" || !strings.Contains(err.Error(), c.wantFailure) {
					t.Fatalf("UploadPart: %v, want %q", err, c.wantFailure)
				}
				return
			}
			done := types.CompletedPart{ETag: out.ETag, PartNumber: aws.Int32(1)}
			if c.carry {
				done.ChecksumCRC32 = &sum
			}
			_, err = client.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: aws.String(bucket), Key: &key,
				UploadId: up.UploadId, MultipartUpload: &types.CompletedMultipartUpload{Parts: []types.CompletedPart{done}}})
			switch {
			case c.wantFailure == "" && err != nil:
				t.Errorf("CompleteMultipartUpload: %v, want success", err)
			case c.wantFailure != "" && (err == nil || !strings.Contains(err.Error(), c.wantFailure)):
				t.Errorf("CompleteMultipartUpload: %v, want %s", err, c.wantFailure)
			}
		})
	}
}

func crc32Base64(b []byte) string {
	var sum [4]byte
	binary.BigEndian.PutUint32(sum[:], crc32.ChecksumIEEE(b))
	return base64.StdEncoding.EncodeToString(sum[:])
}

// postForm sends a browser-style upload: the signed fields (with
// overrides; "" drops one), then the file.
func postForm(t *testing.T, up blob.SignedUpload, override map[string]string, file []byte) (int, string) {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fields := maps.Clone(up.Fields)
	maps.Copy(fields, override)
	for k, v := range fields {
		if v != "" {
			mw.WriteField(k, v)
		}
	}
	fw, _ := mw.CreateFormFile("file", "image.png")
	fw.Write(file)
	mw.Close()
	resp, err := http.Post(up.URL, mw.FormDataContentType(), &body)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// A presigned POST lets a client put one object of the signed key, type
// and size, before its expiry; the fake S3 enforces the policy as S3
// does.
func TestSignUpload(t *testing.T) {
	srv := s3blobtest.NewServer(t, bucket)
	srv.AddSigner(roleKeyID, roleSecret)
	st, err := s3blob.New(s3blob.Config{Client: srv.Client(roleKeyID, roleSecret), Bucket: bucket, Signer: &countingSigner{}})
	if err != nil {
		t.Fatal(err)
	}
	const key, max = "inputs/uploads/acct/upl_1", 6 << 20
	up, err := st.SignUpload(t.Context(), key, blob.UploadPolicy{ContentType: "image/png", MaxBytes: max, Expires: time.Now().Add(15 * time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	image := pattern(max)
	for _, c := range []struct {
		name     string
		override map[string]string
		file     []byte
		want     string
	}{
		{"other content type", map[string]string{"Content-Type": "text/html"}, image, "AccessDenied"},
		{"other key", map[string]string{"key": "videos/gen_1/0.mp4"}, image, "AccessDenied"},
		{"extra field", map[string]string{"acl": "public-read"}, image, "Extra input fields"},
		{"no policy", map[string]string{"policy": ""}, image, "InvalidArgument"},
		{"tampered policy", map[string]string{"policy": base64.StdEncoding.EncodeToString([]byte(`{"expiration":"2099-01-01T00:00:00Z","conditions":[]}`))}, image, "SignatureDoesNotMatch"},
		{"too large", nil, pattern(max + 1), "EntityTooLarge"},
		{"empty", nil, nil, "AccessDenied"},
	} {
		if status, body := postForm(t, up, c.override, c.file); status < 400 || !strings.Contains(body, c.want) {
			t.Errorf("%s: %d %s, want a refusal %s", c.name, status, body, c.want)
		}
		if _, _, ok := srv.Object(t, bucket, key); ok {
			t.Fatalf("%s: the object was stored", c.name)
		}
	}
	if status, body := postForm(t, up, nil, image); status != http.StatusNoContent {
		t.Fatalf("upload within the policy: %d %s", status, body)
	}
	if got, ct, ok := srv.Object(t, bucket, key); !ok || !bytes.Equal(got, image) || ct != "image/png" {
		t.Errorf("stored %d bytes of %q (present %v), want the image as image/png", len(got), ct, ok)
	}
	srv.SetNow(func() time.Time { return time.Now().Add(16 * time.Minute) })
	if status, body := postForm(t, up, nil, image); status != http.StatusForbidden || !strings.Contains(body, "expired") {
		t.Errorf("upload after the expiry: %d %s, want 403 Policy expired", status, body)
	}
}
