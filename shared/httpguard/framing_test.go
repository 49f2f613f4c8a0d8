package httpguard

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// pipeConn is a connection whose client side is a byte string read in
// pieces of at most step bytes.
type pipeConn struct {
	net.Conn
	r    io.Reader
	step int
}

func (p *pipeConn) Read(b []byte) (int, error) {
	if p.step > 0 && len(b) > p.step {
		b = b[:p.step]
	}
	return p.r.Read(b)
}

func (p *pipeConn) SetReadDeadline(time.Time) error { return nil }

// framed returns what the server reads of in through a guarded
// connection, which gets the client's bytes step at a time (all at once
// for 0), and why the connection refused a request, if it did.
func framed(in []byte, step int) ([]byte, *Refusal) {
	c := &conn{Conn: &pipeConn{r: bytes.NewReader(in), step: step}, maxHead: DefaultMaxHeaderBytes, buf: make([]byte, 512)}
	var out bytes.Buffer
	p := make([]byte, 100)
	for {
		n, err := c.Read(p)
		out.Write(p[:n])
		if err != nil {
			return out.Bytes(), c.refused()
		}
	}
}

// wellFormed are request streams as clients write them: each must reach
// the server exactly as it was sent, however the network cuts it.
func wellFormed() map[string][]byte {
	write := func(reqs ...*http.Request) []byte {
		var b bytes.Buffer
		for _, r := range reqs {
			if err := r.Write(&b); err != nil {
				panic(err) // into memory, from memory
			}
		}
		return b.Bytes()
	}
	get, _ := http.NewRequest(http.MethodGet, "http://h/api/gen/models", nil)
	post := func(body string) *http.Request {
		r, _ := http.NewRequest(http.MethodPost, "http://h/api/gen/text-to-video", strings.NewReader(body))
		return r
	}
	chunked := func(body string, trailer http.Header) *http.Request {
		r := post(body)
		r.ContentLength = -1 // Write sends it chunked
		r.Body = io.NopCloser(io.MultiReader(strings.NewReader(body[:len(body)/2]), strings.NewReader(body[len(body)/2:])))
		r.Trailer = trailer
		return r
	}
	big := strings.Repeat("0123456789abcdef", 5000)
	return map[string][]byte{
		"a GET":                         write(get),
		"a POST with a length":          write(post(`{"prompt":"x"}`)),
		"a chunked POST":                write(chunked(big, nil)),
		"a chunked POST with a trailer": write(chunked(big, http.Header{"X-Sum": {"1"}})),
		"requests back to back":         write(get, post(big), chunked(`{"prompt":"y"}`, nil), get),
		"chunk extensions and capitals": []byte("POST / HTTP/1.1\r\nHost: h\r\ntransfer-encoding: Chunked\r\n\r\n" +
			"5;a=b\r\nhello\r\nA;ext\r\n0123456789\r\n0\r\n\r\nGET / HTTP/1.1\r\nHost: h\r\n\r\n"),
		"HTTP/1.0 with a length":      []byte("POST / HTTP/1.0\r\nContent-Length: 3\r\n\r\nabcGET / HTTP/1.0\r\n\r\n"),
		"white space around a length": []byte("POST / HTTP/1.1\r\nHost: h\r\nContent-Length:\t 3 \r\n\r\nabc"),
	}
}

func TestWellFormedStreamsPassUnchanged(t *testing.T) {
	for name, in := range wellFormed() {
		for _, step := range []int{0, 1, 7, 4096} {
			out, why := framed(in, step)
			if why != nil || !bytes.Equal(out, in) {
				t.Errorf("%s, %d bytes at a time: refused %+v, passed %d of %d bytes unchanged",
					name, step, why, commonPrefix(out, in), len(in))
			}
		}
	}
}

func commonPrefix(a, b []byte) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// FuzzFraming: whatever a client sends, the server reads a prefix of it,
// followed by the stand-in request if one was refused: it never reads
// bytes the client did not send, nor the client's bytes out of place, so
// it reads no request the client did not send. The stream sent in pieces
// reads as it does whole.
func FuzzFraming(f *testing.F) {
	for _, in := range wellFormed() {
		f.Add(in, uint8(3))
	}
	f.Add([]byte("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\nGET / HTTP/1.1\r\n\r\n"), uint8(0))
	f.Add([]byte("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n5\nhello\r\n0\r\n\r\n"), uint8(1))
	f.Add([]byte("GET / HTTP/1.1\r\nHost: h\r\nX: a\r\n b\r\n\r\n"), uint8(2))
	f.Fuzz(func(t *testing.T, in []byte, step uint8) {
		out, why := framed(in, int(step))
		whole, wholeWhy := framed(in, 0)
		if !bytes.Equal(out, whole) || (why == nil) != (wholeWhy == nil) {
			t.Fatalf("read %d at a time: %q (refused %v); whole: %q (refused %v)", step, out, why, whole, wholeWhy)
		}
		passed := out
		if why != nil {
			var ok bool
			if passed, ok = bytes.CutSuffix(out, refusedRequest); !ok {
				t.Fatalf("refused %+v without the stand-in: %q", why, out)
			}
		}
		if !bytes.HasPrefix(in, passed) {
			t.Fatalf("the server read %q, not a prefix of what was sent, %q", passed, in)
		}
	})
}

func TestParseHead(t *testing.T) {
	const h = "POST / HTTP/1.1\r\nHost: h\r\n"
	tests := []struct {
		name, head string
		body       int64
		field      string // of a refusal; "-" for none
	}{
		{"no body", h + "\r\n", 0, "-"},
		{"a length", h + "Content-Length: 12\r\n\r\n", 12, "-"},
		{"a zero length", h + "Content-Length: 0\r\n\r\n", 0, "-"},
		{"a length with leading zeros", h + "Content-Length: 007\r\n\r\n", 7, "-"},
		{"chunked", h + "Transfer-Encoding: chunked\r\n\r\n", -1, "-"},
		{"chunked in any case", h + "transfer-encoding: cHuNkEd\r\n\r\n", -1, "-"},
		{"HTTP/1.0 without a Host", "GET / HTTP/1.0\r\n\r\n", 0, "-"},
		{"an absolute target", "GET http://h/x?y HTTP/1.1\r\nHost: h\r\n\r\n", 0, "-"},
		{"OPTIONS *", "OPTIONS * HTTP/1.1\r\nHost: h\r\n\r\n", 0, "-"},
		{"CONNECT to an authority", "CONNECT h:443 HTTP/1.1\r\nHost: h\r\n\r\n", 0, "-"},
		{"an empty value", h + "X-Empty:\r\n\r\n", 0, "-"},
		{"obs-text in a value", h + "X-Name: Zo\xe9\r\n\r\n", 0, "-"},

		{"a length and chunked", h + "Content-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n", 0, "Transfer-Encoding"},
		{"two lengths", h + "Content-Length: 3\r\nContent-Length: 3\r\n\r\n", 0, "Content-Length"},
		{"a length too large for int64", h + "Content-Length: 99999999999999999999\r\n\r\n", 0, "Content-Length"},
		{"a length in words", h + "Content-Length: three\r\n\r\n", 0, "Content-Length"},
		{"chunked twice in one header", h + "Transfer-Encoding: chunked, chunked\r\n\r\n", 0, "Transfer-Encoding"},
		{"an empty coding", h + "Transfer-Encoding: \r\n\r\n", 0, "Transfer-Encoding"},
		{"a coding after chunked", h + "Transfer-Encoding: chunked, gzip\r\n\r\n", 0, "Transfer-Encoding"},
		{"chunked in HTTP/1.0", "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", 0, "Transfer-Encoding"},
		{"no Host in HTTP/1.1", "GET / HTTP/1.1\r\n\r\n", 0, "Host"},
		{"a folded first header", "GET / HTTP/1.1\r\n Host: h\r\n\r\n", 0, ""},
		{"a folded Host", "GET / HTTP/1.1\r\nHost: h\r\n\tx\r\n\r\n", 0, "Host"},
		{"a tab before the colon", h + "X-A\t: b\r\n\r\n", 0, ""},
		{"no colon", h + "X-A b\r\n\r\n", 0, ""},
		{"an empty name", h + ": b\r\n\r\n", 0, ""},
		{"a DEL in a value", h + "X-A: b\x7f\r\n\r\n", 0, "X-A"},
		{"a CR alone in a value", h + "X-A: b\rc\r\n\r\n", 0, ""},
		{"lines ended by LF", "GET / HTTP/1.1\nHost: h\n\n", 0, ""},
		{"an empty request line", "\r\n", 0, ""},
		{"a tab in the request line", "GET\t/ HTTP/1.1\r\nHost: h\r\n\r\n", 0, ""},
		{"a space in the target", "GET /a b HTTP/1.1\r\nHost: h\r\n\r\n", 0, ""},
		{"a control character in the target", "GET /a\x01 HTTP/1.1\r\nHost: h\r\n\r\n", 0, ""},
		{"a bad escape in the target", "GET /%zz HTTP/1.1\r\nHost: h\r\n\r\n", 0, ""},
		{"a relative target", "GET api/gen/models HTTP/1.1\r\nHost: h\r\n\r\n", 0, ""},
		{"HTTP/1.2", "GET / HTTP/1.2\r\nHost: h\r\n\r\n", 0, ""},
		{"HTTP/0.9", "GET /\r\n\r\n", 0, ""},
		{"a method with a slash", "GE/T / HTTP/1.1\r\nHost: h\r\n\r\n", 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body, why := parseHead([]byte(tt.head))
			switch {
			case tt.field == "-" && why != nil:
				t.Errorf("refused (%+v), want it accepted", why)
			case tt.field == "-" && body != tt.body:
				t.Errorf("body length %d, want %d", body, tt.body)
			case tt.field != "-" && why == nil:
				t.Errorf("accepted with body %d, want it refused", body)
			case tt.field != "-" && why.Header != tt.field:
				t.Errorf("refused on %q (%s), want %q", why.Header, why.Message, tt.field)
			}
		})
	}
}

// TestBrokenChunkedBodyStopsTheStream: a chunked body that breaks the
// rules passes up to the break, where net/http refuses it too, and
// nothing after it passes: what follows cannot be told from the body.
func TestBrokenChunkedBodyStopsTheStream(t *testing.T) {
	const head = "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
	const next = "GET /next HTTP/1.1\r\nHost: h\r\n\r\n"
	for _, tt := range []struct{ name, body string }{
		{"a size line ended by LF", "5\nhello\r\n0\r\n\r\n"},
		{"a size line of a lone LF", "\nhello\r\n0\r\n\r\n"},
		{"a chunk's end of a lone LF", "5\r\nhello\n0\r\n\r\n"},
		{"a trailer line of a lone LF", "5\r\nhello\r\n0\r\n\n"},
		{"a size with a sign", "+5\r\nhello\r\n0\r\n\r\n"},
		{"a size with a prefix", "0x5\r\nhello\r\n0\r\n\r\n"},
		{"an empty size", "\r\nhello\r\n0\r\n\r\n"},
		{"a size of 17 digits", "00000000000000005\r\nhello\r\n0\r\n\r\n"},
		{"a chunk longer than its size", "3\r\nhello\r\n0\r\n\r\n"},
		{"a CR inside the size line", "5\r;x\r\nhello\r\n0\r\n\r\n"},
		{"white space before an extension", "5 ;x\r\nhello\r\n0\r\n\r\n"},
		{"a trailer line ended by LF", "5\r\nhello\r\n0\r\nX: y\n\r\n"},
		{"a size line longer than 4 KiB", "5;" + strings.Repeat("x", 5000) + "\r\nhello\r\n0\r\n\r\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			in := []byte(head + tt.body + next)
			out, _ := framed(in, 0)
			if bytes.Contains(out, []byte("/next")) || !bytes.HasPrefix(in, out) {
				t.Errorf("passed %q", out)
			}
			br := bufio.NewReader(bytes.NewReader(out))
			req, err := http.ReadRequest(br)
			if err != nil {
				t.Fatalf("the head did not pass: %v", err)
			}
			if _, err := io.ReadAll(req.Body); err == nil {
				t.Errorf("net/http read the body %q without an error; the guard stopped where it would not", out)
			}
		})
	}
}
