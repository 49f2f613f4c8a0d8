package fsblob

import (
	"bytes"
	"context"
	"io"
	"maps"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/genvideo/gen/shared/blob"
)

// The local upload form stores one file of the signed key, type and size
// until its expiry, and refuses anything else without storing it.
func TestSignUploadAndUploadHandler(t *testing.T) {
	now := time.Date(2025, 11, 13, 12, 0, 0, 0, time.UTC)
	var h http.Handler
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(w, r) }))
	t.Cleanup(srv.Close)
	st, err := New(t.TempDir(), srv.URL, testSecret)
	if err != nil {
		t.Fatal(err)
	}
	st.Now = func() time.Time { return now }
	h = st.UploadHandler()
	const key, max = "inputs/uploads/acct/upl_1", 1000
	up, err := st.SignUpload(context.Background(), key, blob.UploadPolicy{ContentType: "image/png", MaxBytes: max, Expires: now.Add(15 * time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	if up.URL != srv.URL+UploadPath {
		t.Errorf("upload URL %q, want %q", up.URL, srv.URL+UploadPath)
	}
	post := func(override map[string]string, file []byte) (int, string) {
		var body bytes.Buffer
		mw := multipart.NewWriter(&body)
		fields := maps.Clone(up.Fields)
		maps.Copy(fields, override)
		for k, v := range fields {
			mw.WriteField(k, v)
		}
		fw, _ := mw.CreateFormFile("file", "x.png")
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
	image := bytes.Repeat([]byte{7}, max)
	for _, c := range []struct {
		name     string
		override map[string]string
		file     []byte
		want     int
	}{
		{"other key", map[string]string{"key": "videos/x/0.mp4"}, image, http.StatusForbidden},
		{"other type", map[string]string{"Content-Type": "text/html"}, image, http.StatusForbidden},
		{"larger limit", map[string]string{"maxBytes": "100000"}, image, http.StatusForbidden},
		{"too large", nil, append(image, 7), http.StatusBadRequest},
		{"empty", nil, nil, http.StatusBadRequest},
	} {
		if status, body := post(c.override, c.file); status != c.want {
			t.Errorf("%s: %d %s, want %d", c.name, status, body, c.want)
		}
		if _, err := st.Get(context.Background(), key); err == nil {
			t.Fatalf("%s: the object was stored", c.name)
		}
	}
	if status, body := post(nil, image); status != http.StatusNoContent {
		t.Fatalf("upload within the policy: %d %s", status, body)
	}
	rc, err := st.Get(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(rc)
	rc.Close()
	if !bytes.Equal(got, image) {
		t.Errorf("stored %d bytes, want the image", len(got))
	}
	now = now.Add(16 * time.Minute)
	if status, body := post(nil, image); status != http.StatusForbidden || !strings.Contains(body, "expired") {
		t.Errorf("after the expiry: %d %s, want 403 expired", status, body)
	}
}
