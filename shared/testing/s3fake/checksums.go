package s3fake

import (
	"bufio"
	"bytes"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"encoding/xml"
	"errors"
	"hash"
	"hash/crc32"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// checksumAlgorithms are the part checksums S3 knows, by the suffix of
// their x-amz-checksum-<alg> header. (CRC64NVME is left out: the SDK does
// not choose it for parts.)
var checksumAlgorithms = map[string]func() hash.Hash{
	"CRC32":  func() hash.Hash { return crc32.NewIEEE() },
	"CRC32C": func() hash.Hash { return crc32.New(crc32.MakeTable(crc32.Castagnoli)) },
	"SHA1":   sha1.New,
	"SHA256": sha256.New,
}

// partChecksum is the checksum a part was uploaded with.
type partChecksum struct{ alg, value string }

// multipart is what the fake remembers of an open multipart upload.
type multipart struct {
	alg   string                // x-amz-checksum-algorithm of its creation, "" if none
	parts map[int]*partChecksum // part number -> checksum, nil if none
}

// checkChecksums makes multipart uploads as strict about checksums as real
// S3 (aws-sdk-go-v2 issue 3005): a part sent with an x-amz-checksum-<alg>
// header must match its bytes (400 BadDigest) and, when the upload was
// created with a checksum algorithm, use it (400 InvalidRequest); and a
// part uploaded with a checksum must be completed with the same checksum,
// or S3 answers 400 InvalidPart. gofakes3 checks none of it.
func (s *Server) checkChecksums(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		_, uploads := q["uploads"]
		uploadID := q.Get("uploadId")
		if r.Method == http.MethodPut && strings.Contains(r.Header.Get("Content-Encoding"), "aws-chunked") {
			if err := decodeChunked(r); err != nil {
				writeError(w, http.StatusBadRequest, "IncompleteBody", err.Error())
				return
			}
		}
		switch {
		case r.Method == http.MethodPost && uploads:
			rec := &recorder{ResponseWriter: w}
			next.ServeHTTP(rec, r)
			var out struct{ UploadId string }
			if rec.status < 300 && xml.Unmarshal(rec.body.Bytes(), &out) == nil && out.UploadId != "" {
				s.mu.Lock()
				s.uploads[out.UploadId] = &multipart{
					alg:   strings.ToUpper(r.Header.Get("X-Amz-Checksum-Algorithm")),
					parts: map[int]*partChecksum{},
				}
				s.mu.Unlock()
			}
			return
		case r.Method == http.MethodPut && uploadID != "" && q.Get("partNumber") != "":
			s.uploadPart(next, w, r, uploadID)
			return
		case r.Method == http.MethodPost && uploadID != "":
			if code, msg := s.checkComplete(r, uploadID); code != "" {
				writeError(w, http.StatusBadRequest, code, msg)
				return
			}
			rec := &recorder{ResponseWriter: w, pass: true}
			next.ServeHTTP(rec, r)
			s.mu.Lock()
			if up := s.uploads[uploadID]; up != nil && rec.status < 300 {
				s.completed[strings.TrimPrefix(r.URL.Path, "/")] = up.summary()
				delete(s.uploads, uploadID)
			}
			s.mu.Unlock()
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (s *Server) uploadPart(next http.Handler, w http.ResponseWriter, r *http.Request, uploadID string) {
	var sum *partChecksum
	for alg := range checksumAlgorithms {
		if v := r.Header.Get("X-Amz-Checksum-" + alg); v != "" {
			sum = &partChecksum{alg, v}
		}
	}
	s.mu.Lock()
	up := s.uploads[uploadID]
	s.mu.Unlock()
	if up != nil && up.alg != "" && (sum == nil || sum.alg != up.alg) {
		writeError(w, http.StatusBadRequest, "InvalidRequest",
			"Checksum Type mismatch occurred, expected checksum Type: "+strings.ToLower(up.alg))
		return
	}
	if sum != nil {
		// A PutObject's checksum is checked by S3 too; gofakes3 ignores it.
		body, err := io.ReadAll(r.Body)
		if err != nil {
			writeError(w, http.StatusBadRequest, "IncompleteBody", err.Error())
			return
		}
		h := checksumAlgorithms[sum.alg]()
		h.Write(body)
		if got := base64.StdEncoding.EncodeToString(h.Sum(nil)); got != sum.value {
			writeError(w, http.StatusBadRequest, "BadDigest",
				"The "+strings.ToLower(sum.alg)+" you specified did not match the calculated checksum.")
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		// S3 answers the part's checksum, for CompleteMultipartUpload.
		w.Header().Set("X-Amz-Checksum-"+sum.alg, sum.value)
	}
	rec := &recorder{ResponseWriter: w, pass: true}
	next.ServeHTTP(rec, r)
	if up != nil && rec.status < 300 {
		var n int
		for _, c := range r.URL.Query().Get("partNumber") {
			n = n*10 + int(c-'0')
		}
		s.mu.Lock()
		up.parts[n] = sum
		s.mu.Unlock()
	}
}

// summary describes the upload's checksums: its algorithm and, per part
// in order, the algorithm the part carried ("none" for none).
func (m *multipart) summary() string {
	nums := make([]int, 0, len(m.parts))
	for n := range m.parts {
		nums = append(nums, n)
	}
	slices.Sort(nums)
	alg := m.alg
	if alg == "" {
		alg = "none"
	}
	out := alg + ":"
	for _, n := range nums {
		if p := m.parts[n]; p != nil {
			out += " " + p.alg
		} else {
			out += " none"
		}
	}
	return out
}

// MultipartChecksums describes the checksums of the last multipart upload
// completed under bucket/key: "CRC32: CRC32 CRC32" is an upload created
// with CRC32 whose two parts carried it; "" means no multipart upload.
func (s *Server) MultipartChecksums(bucket, key string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.completed[bucket+"/"+key]
}

// checkComplete checks the parts a CompleteMultipartUpload lists against
// the checksums they were uploaded with.
func (s *Server) checkComplete(r *http.Request, uploadID string) (code, msg string) {
	s.mu.Lock()
	up := s.uploads[uploadID]
	s.mu.Unlock()
	if up == nil {
		return "", ""
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return "IncompleteBody", err.Error()
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	var req struct {
		Parts []struct {
			PartNumber     int
			ChecksumCRC32  string
			ChecksumCRC32C string
			ChecksumSHA1   string
			ChecksumSHA256 string
		} `xml:"Part"`
	}
	if err := xml.Unmarshal(body, &req); err != nil {
		return "MalformedXML", err.Error()
	}
	for _, p := range req.Parts {
		given := map[string]string{"CRC32": p.ChecksumCRC32, "CRC32C": p.ChecksumCRC32C, "SHA1": p.ChecksumSHA1, "SHA256": p.ChecksumSHA256}
		s.mu.Lock()
		sum := up.parts[p.PartNumber]
		s.mu.Unlock()
		if sum != nil && given[sum.alg] != sum.value {
			return "InvalidPart", "One or more of the specified parts could not be found. The part may not have been uploaded, " +
				"or the specified entity tag may not match the part's entity tag."
		}
	}
	return "", ""
}

// recorder passes a response on, remembering its status and, unless
// pass, holding its body back until the handler returns.
type recorder struct {
	http.ResponseWriter
	pass   bool
	status int
	body   bytes.Buffer
}

func (r *recorder) WriteHeader(code int) {
	r.status = code
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	r.body.Write(b)
	return r.ResponseWriter.Write(b)
}

// decodeChunked turns an aws-chunked body (what the SDK sends over TLS:
// "<hex size>[;chunk-signature=...]\r\n<bytes>\r\n" chunks, a zero
// chunk, then trailing headers such as x-amz-checksum-crc32) into the
// plain body S3 stores, moving the trailers into the headers, as S3 does.
func decodeChunked(r *http.Request) error {
	br := bufio.NewReader(r.Body)
	var body bytes.Buffer
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return errors.New("aws-chunked body: truncated chunk header")
		}
		sizeHex, _, _ := strings.Cut(strings.TrimRight(line, "\r\n"), ";")
		size, err := strconv.ParseInt(sizeHex, 16, 64)
		if err != nil || size < 0 {
			return errors.New("aws-chunked body: bad chunk size " + strconv.Quote(sizeHex))
		}
		if size == 0 {
			break
		}
		if _, err := io.CopyN(&body, br, size); err != nil {
			return errors.New("aws-chunked body: truncated chunk")
		}
		if crlf, err := br.ReadString('\n'); err != nil || strings.TrimRight(crlf, "\r\n") != "" {
			return errors.New("aws-chunked body: chunk not followed by CRLF")
		}
	}
	for {
		line, err := br.ReadString('\n')
		line = strings.TrimRight(line, "\r\n")
		if line == "" {
			break
		}
		if k, v, ok := strings.Cut(line, ":"); ok && !strings.EqualFold(k, "x-amz-trailer-signature") {
			r.Header.Set(k, strings.TrimSpace(v))
		}
		if err != nil {
			break
		}
	}
	if want := r.Header.Get("X-Amz-Decoded-Content-Length"); want != "" && want != strconv.Itoa(body.Len()) {
		return errors.New("aws-chunked body: " + strconv.Itoa(body.Len()) + " bytes, X-Amz-Decoded-Content-Length says " + want)
	}
	r.Body = io.NopCloser(bytes.NewReader(body.Bytes()))
	r.ContentLength = int64(body.Len())
	r.Header.Set("Content-Length", strconv.Itoa(body.Len()))
	r.Header.Del("Content-Encoding")
	r.Header.Del("X-Amz-Trailer")
	r.Header.Set("X-Amz-Content-Sha256", "UNSIGNED-PAYLOAD")
	return nil
}
