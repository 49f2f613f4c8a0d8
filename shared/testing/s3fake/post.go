package s3fake

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"time"
)

// maxPostBytes bounds the body of a POST upload the fake reads.
const maxPostBytes = 64 << 20

// checkPost serves browser-style POST uploads (PresignPostObject) as S3
// does: the policy's signature must verify with a known signer's secret,
// the policy must not have expired, and every condition must hold for the
// form's fields and the file (exact values, starts-with,
// content-length-range); a form field the policy does not mention is
// refused too. gofakes3 knows no POST uploads, so the fake stores the
// object itself.
func (s *Server) checkPost(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mt, ps, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
		bucket := strings.Trim(r.URL.Path, "/")
		if r.Method != http.MethodPost || mt != "multipart/form-data" || bucket == "" || strings.Contains(bucket, "/") {
			next.ServeHTTP(w, r)
			return
		}
		status, code, msg := s.post(r, bucket, ps["boundary"])
		if code != "" {
			writeError(w, status, code, msg)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
}

func (s *Server) post(r *http.Request, bucket, boundary string) (status int, code, msg string) {
	if boundary == "" {
		return http.StatusBadRequest, "MalformedPOSTRequest", "The body of your POST request is not well-formed multipart/form-data."
	}
	if err := r.ParseMultipartForm(maxPostBytes); err != nil {
		return http.StatusBadRequest, "MalformedPOSTRequest", "The body of your POST request is not well-formed multipart/form-data."
	}
	fields := map[string]string{} // lower-cased names
	for name, vals := range r.MultipartForm.Value {
		fields[strings.ToLower(name)] = vals[0]
	}
	files := r.MultipartForm.File["file"]
	if len(files) != 1 {
		return http.StatusBadRequest, "InvalidArgument", "POST requires exactly one file upload per request."
	}
	f, err := files[0].Open()
	if err != nil {
		return http.StatusBadRequest, "IncompleteBody", err.Error()
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		return http.StatusBadRequest, "IncompleteBody", err.Error()
	}

	// The signature: HMAC of the base64 policy with the derived key.
	scope := strings.Split(fields["x-amz-credential"], "/")
	if len(scope) != 5 || fields["x-amz-algorithm"] != "AWS4-HMAC-SHA256" || fields["policy"] == "" {
		return http.StatusBadRequest, "InvalidArgument", "POST form lacks the policy, X-Amz-Algorithm or X-Amz-Credential."
	}
	s.mu.Lock()
	secret, ok := s.signers[scope[0]]
	if !ok {
		secret, ok = s.uploadSigners[scope[0]]
	}
	now := s.now()
	s.mu.Unlock()
	if !ok {
		return http.StatusForbidden, "InvalidAccessKeyId", "The AWS Access Key Id you provided does not exist in our records."
	}
	key := []byte("AWS4" + secret)
	for _, part := range scope[1:] {
		key = hmacSHA256(key, part)
	}
	want := hex.EncodeToString(hmacSHA256(key, fields["policy"]))
	if !hmac.Equal([]byte(want), []byte(fields["x-amz-signature"])) {
		return http.StatusForbidden, "SignatureDoesNotMatch", "The request signature we calculated does not match the signature you provided."
	}
	raw, err := base64.StdEncoding.DecodeString(fields["policy"])
	var policy struct {
		Expiration time.Time
		Conditions []json.RawMessage
	}
	if err != nil || json.Unmarshal(raw, &policy) != nil {
		return http.StatusBadRequest, "InvalidPolicyDocument", "Invalid Policy: Invalid JSON."
	}
	if !now.Before(policy.Expiration) {
		return http.StatusForbidden, "AccessDenied", "Invalid according to Policy: Policy expired."
	}
	fields["bucket"] = bucket
	covered := map[string]bool{"policy": true, "x-amz-signature": true, "file": true, "bucket": true}
	for _, c := range policy.Conditions {
		name, ok, why := checkCondition(c, fields, int64(len(data)))
		covered[name] = true
		if !ok {
			if name == "content-length-range" && strings.Contains(why, "exceeds") {
				return http.StatusBadRequest, "EntityTooLarge", "Your proposed upload exceeds the maximum allowed size"
			}
			return http.StatusForbidden, "AccessDenied", "Invalid according to Policy: Policy Condition failed: " + why
		}
	}
	for name := range fields {
		if !covered[name] && !strings.HasPrefix(name, "x-ignore-") {
			return http.StatusForbidden, "AccessDenied", fmt.Sprintf("Invalid according to Policy: Extra input fields: %s", name)
		}
	}
	meta := map[string]string{}
	if ct := fields["content-type"]; ct != "" {
		meta["Content-Type"] = ct
	}
	if _, err := s.backend.PutObject(bucket, fields["key"], meta, bytes.NewReader(data), int64(len(data)), nil); err != nil {
		return http.StatusInternalServerError, "InternalError", err.Error()
	}
	s.mu.Lock()
	s.served = append(s.served, "POST /"+bucket+"/"+fields["key"])
	s.mu.Unlock()
	return 0, "", ""
}

// checkCondition checks one policy condition: {"field": "value"},
// ["eq"|"starts-with", "$field", "value"] or ["content-length-range", min,
// max]. It returns the (lower-cased) field it covers.
func checkCondition(c json.RawMessage, fields map[string]string, size int64) (name string, ok bool, why string) {
	var exact map[string]string
	if json.Unmarshal(c, &exact) == nil {
		for k, v := range exact {
			name = strings.ToLower(k)
			if fields[name] != v {
				return name, false, fmt.Sprintf(`["eq", "$%s", %q]`, k, v)
			}
		}
		return name, true, ""
	}
	var list []any
	if json.Unmarshal(c, &list) != nil || len(list) != 3 {
		return "", false, "malformed condition " + string(c)
	}
	op, _ := list[0].(string)
	switch strings.ToLower(op) {
	case "content-length-range":
		lo, _ := list[1].(float64)
		hi, _ := list[2].(float64)
		if size > int64(hi) {
			return "content-length-range", false, "content-length exceeds the maximum of the policy"
		}
		if size < int64(lo) {
			return "content-length-range", false, "content-length below the minimum of the policy"
		}
		return "content-length-range", true, ""
	case "eq", "starts-with":
		field, _ := list[1].(string)
		value, _ := list[2].(string)
		name = strings.ToLower(strings.TrimPrefix(field, "$"))
		got := fields[name]
		if (op == "eq" && got != value) || (op == "starts-with" && !strings.HasPrefix(got, value)) {
			return name, false, fmt.Sprintf(`[%q, %q, %q]`, op, field, value)
		}
		return name, true, ""
	}
	return "", false, "unknown condition " + op
}

func hmacSHA256(key []byte, data string) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(data))
	return h.Sum(nil)
}
