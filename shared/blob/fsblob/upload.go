package fsblob

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strconv"
	"time"

	"github.com/genvideo/gen/shared/blob"
)

// UploadPath is where UploadHandler expects to be mounted: the local
// stand-in for S3's POST uploads.
const UploadPath = "/uploads"

// maxUploadFields bounds the text fields of an upload form.
const maxUploadFields = 8

// SignUpload returns a direct upload of key to the local server, the
// counterpart of S3's presigned POST: a form POST to <baseURL>/uploads
// whose fields carry the key, the content type, the size limit, the
// expiry and their HMAC, followed by the file. UploadHandler enforces them.
func (s *Store) SignUpload(ctx context.Context, key string, p blob.UploadPolicy) (blob.SignedUpload, error) {
	if err := checkKey(key); err != nil {
		return blob.SignedUpload{}, fmt.Errorf("sign upload: %w", err)
	}
	if p.MaxBytes < 1 || p.ContentType == "" {
		return blob.SignedUpload{}, fmt.Errorf("sign upload %s: policy %+v has no size limit or content type", key, p)
	}
	exp := p.Expires.Unix()
	return blob.SignedUpload{URL: s.baseURL + UploadPath, Fields: map[string]string{
		"key":          key,
		"Content-Type": p.ContentType,
		"maxBytes":     strconv.FormatInt(p.MaxBytes, 10),
		"expires":      strconv.FormatInt(exp, 10),
		"signature":    s.signUpload(key, p.ContentType, p.MaxBytes, exp),
	}}, nil
}

func (s *Store) signUpload(key, contentType string, maxBytes, expires int64) string {
	mac := hmac.New(sha256.New, s.secret)
	fmt.Fprintf(mac, "fsblob-upload/v1\n%s\n%s\n%d\n%d", key, contentType, maxBytes, expires)
	return hex.EncodeToString(mac.Sum(nil))
}

// UploadHandler serves the uploads SignUpload signs: POST
// multipart/form-data whose fields come before the file (as browsers and
// S3 clients send them). A form not signed, signed for other values, or
// past its expiry is answered 403; a file over the limit 400
// EntityTooLarge, and nothing is kept. Success is 204, as S3 answers.
func (s *Store) UploadHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", "POST")
			writeError(w, http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED", "use POST to upload a file")
			return
		}
		status, code, msg := s.upload(r)
		if code != "" {
			writeError(w, status, code, msg)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
}

func (s *Store) upload(r *http.Request) (status int, code, msg string) {
	mt, ps, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/form-data" || ps["boundary"] == "" {
		return http.StatusBadRequest, "BAD_REQUEST", "an upload is a multipart/form-data POST"
	}
	mr := multipart.NewReader(r.Body, ps["boundary"])
	fields := map[string]string{}
	for {
		p, err := mr.NextPart()
		if err != nil {
			return http.StatusBadRequest, "BAD_REQUEST", "the upload form has no file field, or is malformed"
		}
		if p.FormName() != "file" {
			if len(fields) == maxUploadFields {
				return http.StatusBadRequest, "BAD_REQUEST", "the upload form has too many fields"
			}
			v, err := io.ReadAll(io.LimitReader(p, 1024))
			if err != nil {
				return http.StatusBadRequest, "BAD_REQUEST", "the upload form is malformed"
			}
			fields[p.FormName()] = string(v)
			continue
		}
		return s.store(r.Context(), fields, p)
	}
}

// store checks the signed fields and stores the file of an upload.
func (s *Store) store(ctx context.Context, fields map[string]string, file io.Reader) (status int, code, msg string) {
	key, ct := fields["key"], fields["Content-Type"]
	maxBytes, err1 := strconv.ParseInt(fields["maxBytes"], 10, 64)
	exp, err2 := strconv.ParseInt(fields["expires"], 10, 64)
	got, err3 := hex.DecodeString(fields["signature"])
	want, _ := hex.DecodeString(s.signUpload(key, ct, maxBytes, exp))
	if errors.Join(err1, err2, err3) != nil || !ValidKey(key) || !hmac.Equal(got, want) {
		return http.StatusForbidden, "FORBIDDEN", "this upload form is not signed, or was changed"
	}
	if !s.now().Before(time.Unix(exp, 0)) {
		return http.StatusForbidden, "FORBIDDEN", "this upload form has expired"
	}
	lr := &io.LimitedReader{R: file, N: maxBytes + 1}
	n, err := s.Put(ctx, key, lr, ct)
	switch {
	case err != nil:
		s.Delete(context.WithoutCancel(ctx), key)
		return http.StatusBadRequest, "BAD_REQUEST", "the file could not be read"
	case n > maxBytes:
		s.Delete(context.WithoutCancel(ctx), key)
		return http.StatusBadRequest, "EntityTooLarge", fmt.Sprintf("the file is larger than the %d bytes this upload allows", maxBytes)
	case n == 0:
		s.Delete(context.WithoutCancel(ctx), key)
		return http.StatusBadRequest, "BAD_REQUEST", "the file is empty"
	}
	return 0, "", ""
}
