package veo

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/genvideo/gen/shared/provider/providerhttp"
)

// inlineKeys are the fields whose string value is a whole video, base64:
// Vertex AI's response.videos[].bytesBase64Encoded (without a storageUri)
// and the Gemini API's generatedSamples[].video.encodedVideo. Up to four
// of them ride in one answer; decoded whole, with the answer around them,
// four 6 MiB videos took about 152 MiB of heap, and the Poll Lambda has
// 256 MB (issue 34, defect 5).
var inlineKeys = []string{"bytesBase64Encoded", "encodedVideo"}

// spoolRef begins what an inline video's string becomes in the answer
// decoded into an operation: the index of its file in the spool. ':' is
// not in base64's alphabet, so a video the spool did not take (see save)
// is never mistaken for one.
const spoolRef = "spool:"

// spool is the inline videos of one poll's answer, each decoded into a
// file of dir as the answer streamed in.
type spool struct {
	dir   string
	files []string
}

// readOperation decodes the operation answered in r (at most max bytes)
// into op, neither the answer nor any video ever whole in memory: each
// string under one of inlineKeys is streamed through a base64 decoder
// into a file of s.dir (made then), and the string replaced by its
// spoolRef; the rest of the answer, small, is decoded as it was. An
// answer that cannot be read whole is a *providerhttp.BusyError (the
// next poll reads it again); a video that is not base64 is an error.
func (s *spool) readOperation(r io.Reader, max int64, what string, op *operation) error {
	in := bufio.NewReaderSize(io.LimitReader(r, max), 64<<10)
	var rest bytes.Buffer
	busy := func(err error) error {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return &providerhttp.BusyError{Err: fmt.Errorf("decode answer of %s: %w", what, err), Sent: true}
	}
	for {
		c, err := in.ReadByte()
		if err == io.EOF {
			break
		}
		if err != nil {
			return busy(err)
		}
		rest.WriteByte(c)
		if c != '"' {
			continue
		}
		key, err := copyString(in, &rest)
		if err != nil {
			return busy(err)
		}
		if !isInlineKey(key) {
			continue
		}
		// A string followed by a colon is a key; its value is a video
		// when it is a string.
		if ok, err := expect(in, &rest, ':'); err != nil || !ok {
			if err != nil {
				return busy(err)
			}
			continue
		}
		if ok, err := expect(in, &rest, '"'); err != nil || !ok {
			if err != nil {
				return busy(err)
			}
			continue
		}
		ref, err := s.save(in)
		if err != nil {
			var b *providerhttp.BusyError
			if errors.As(err, &b) {
				b.Err = fmt.Errorf("decode answer of %s: %w", what, b.Err)
			}
			return err
		}
		rest.WriteString(ref)
		rest.WriteByte('"')
	}
	if err := json.NewDecoder(&rest).Decode(op); err != nil {
		return busy(err)
	}
	return nil
}

// maxKeyLen is the longest string copyString keeps: longer than any
// field name, far shorter than a video.
const maxKeyLen = 64

// copyString copies the rest of a JSON string, its closing quote
// included, from in to out, and returns its text when it is short
// (maxKeyLen), unescaped.
func copyString(in *bufio.Reader, out *bytes.Buffer) (string, error) {
	start := out.Len()
	for {
		b, err := in.ReadSlice('"')
		if err != nil && err != bufio.ErrBufferFull {
			return "", err
		}
		out.Write(b)
		if err == nil && !escaped(out.Bytes()[start:out.Len()-1]) {
			break
		}
	}
	raw := out.Bytes()[start-1:]
	if len(raw) > maxKeyLen {
		return "", nil
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", nil // not JSON: the decode of the rest says so
	}
	return s, nil
}

// escaped reports whether a string's text so far ends in an odd run of
// backslashes: the quote after it is part of the text.
func escaped(text []byte) bool {
	n := 0
	for i := len(text) - 1; i >= 0 && text[i] == '\\'; i-- {
		n++
	}
	return n%2 == 1
}

// isInlineKey matches a field name as encoding/json does, ignoring case.
func isInlineKey(key string) bool {
	for _, k := range inlineKeys {
		if strings.EqualFold(key, k) {
			return true
		}
	}
	return false
}

// expect skips JSON white space, copying it to out, and reports whether
// the next byte is want: then it is consumed and copied, else left.
func expect(in *bufio.Reader, out *bytes.Buffer, want byte) (bool, error) {
	for {
		c, err := in.ReadByte()
		if err != nil {
			return false, err
		}
		switch c {
		case ' ', '\t', '\n', '\r':
			out.WriteByte(c)
			continue
		case want:
			out.WriteByte(c)
			return true, nil
		}
		return false, in.UnreadByte()
	}
}

// save streams the rest of a JSON string from in, base64-decoded, into
// the spool's next file and returns its spoolRef.
func (s *spool) save(in *bufio.Reader) (string, error) {
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return "", fmt.Errorf("create %s: %w", s.dir, err)
	}
	path := filepath.Join(s.dir, fmt.Sprintf("inline-%d", len(s.files)))
	f, err := os.Create(path)
	if err != nil {
		return "", fmt.Errorf("create %s: %w", path, err)
	}
	s.files = append(s.files, path)
	text := &stringReader{in: in}
	_, err = io.Copy(f, base64.NewDecoder(base64.StdEncoding, text))
	if cerr := f.Close(); err == nil && cerr != nil {
		return "", fmt.Errorf("write %s: %w", path, cerr)
	}
	switch {
	case text.err != nil:
		return "", &providerhttp.BusyError{Err: text.err, Sent: true}
	case err != nil && errors.As(err, new(*os.PathError)):
		return "", fmt.Errorf("write %s: %w", path, err)
	case err != nil || !text.done:
		return "", errors.New("the provider answered a video that is not base64")
	}
	return spoolRef + strconv.Itoa(len(s.files)-1), nil
}

// take moves the video ref names to path. A video the spool did not
// take (a field name spelled in a way only encoding/json's folding
// matches) is decoded from ref itself.
func (s *spool) take(ref, path string) error {
	i, err := strconv.Atoi(strings.TrimPrefix(ref, spoolRef))
	if !strings.HasPrefix(ref, spoolRef) || err != nil || i < 0 || i >= len(s.files) {
		return writeBase64(ref, path)
	}
	if err := os.Rename(s.files[i], path); err != nil {
		return fmt.Errorf("move an inline video: %w", err)
	}
	return nil
}

// clean removes the files no video was taken from.
func (s *spool) clean() {
	for _, f := range s.files {
		os.Remove(f)
	}
}

// stringReader reads the text of a JSON string, unescaped, up to its
// closing quote (consumed; done then). err is a failure to read the
// answer, not of the text.
type stringReader struct {
	in   *bufio.Reader
	done bool
	err  error
}

func (r *stringReader) Read(p []byte) (int, error) {
	if r.done {
		return 0, io.EOF
	}
	if r.err != nil {
		return 0, r.err
	}
	if len(p) == 0 {
		return 0, nil
	}
	buf, err := r.in.Peek(1)
	if err != nil {
		return 0, r.fail(err)
	}
	buf, _ = r.in.Peek(min(len(p), r.in.Buffered()))
	switch i := bytes.IndexAny(buf, `"\`); {
	case i > 0:
		buf = buf[:i]
	case i == 0 && buf[0] == '"':
		r.in.Discard(1)
		r.done = true
		return 0, io.EOF
	case i == 0:
		return r.escape(p)
	}
	n := copy(p, buf)
	r.in.Discard(n)
	return n, nil
}

// fail records a failure to read the answer: its end, within a string,
// is one too.
func (r *stringReader) fail(err error) error {
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	r.err = err
	return err
}

// escapes are JSON's one-letter escapes, and unescaped what each stands
// for.
const escapes, unescaped = "\"\\/bfnrt", "\"\\/\b\f\n\r\t"

// escape reads one escape sequence into p. Base64's alphabet is ASCII: a
// \u escape of anything else is left for the decoder to refuse.
func (r *stringReader) escape(p []byte) (int, error) {
	seq, err := r.in.Peek(2)
	if err != nil {
		return 0, r.fail(err)
	}
	if seq[1] != 'u' {
		r.in.Discard(2)
		p[0] = '!' // no JSON escape, and not base64
		if i := strings.IndexByte(escapes, seq[1]); i >= 0 {
			p[0] = unescaped[i]
		}
		return 1, nil
	}
	seq, err = r.in.Peek(6)
	if err != nil {
		return 0, r.fail(err)
	}
	c, perr := strconv.ParseUint(string(seq[2:]), 16, 16)
	r.in.Discard(6)
	if perr != nil || c >= 0x80 {
		c = '!' // not base64
	}
	p[0] = byte(c)
	return 1, nil
}
