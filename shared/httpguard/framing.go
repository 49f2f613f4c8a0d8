package httpguard

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
)

// listener hands the server connections that frame what they read.
type listener struct {
	net.Listener
	maxHead int
}

func (l *listener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &conn{Conn: c, maxHead: l.maxHead, buf: make([]byte, 32<<10)}, nil
}

// What a connection is reading.
const (
	inHead      = iota // a request's head, held back until whole
	inBody             // a body of known length: remaining bytes
	inChunkSize        // a chunk-size line
	inChunkData        // a chunk's data: remaining bytes
	inChunkEnd         // the CRLF after a chunk's data
	inTrailer          // the trailer section after the last chunk
	inNothing          // after a refusal or a broken body: nothing more
)

// refusedHeader marks the request a refused one is replaced by. A client
// that sends it itself changes nothing: the mark counts only on a
// connection that refused a request.
const refusedHeader = "Httpguard-Refused"

// refusedRequest stands in, for the server, for a request refused for
// its framing: it reaches the guard's handler, which answers with the
// refusal and closes the connection.
var refusedRequest = []byte("GET / HTTP/1.1\r\nHost: refused.invalid\r\n" + refusedHeader + ": 1\r\n\r\n")

// maxChunkLine is net/http's bound on a chunk-size line.
const maxChunkLine = 4096

// conn reads the request stream ahead of the server and frames it as RFC
// 9112 does: each head is held back until it is whole and checked; a
// head whose framing is ambiguous, and everything after it, is replaced
// by refusedRequest. Bodies pass through as they arrive, framed by their
// length or their chunks, so that the next head is known to be a head. A
// chunked body that breaks the rules passes up to the break (the server
// refuses it too) and nothing after it does.
type conn struct {
	net.Conn
	maxHead int

	buf []byte // what is read from the network
	out []byte // framed bytes; the server has read out[:read]
	// read is how much of out the server has read.
	read int
	head []byte // the head being read
	// lineLen and lastByte describe the head's current line, to find the
	// empty line that ends the head.
	lineLen   int
	lastByte  byte
	line      []byte // the chunk-size line or trailer line being read
	state     int
	remaining int64 // bytes left in the body or the chunk
	refusal   atomic.Pointer[Refusal]
}

// refused returns why the connection refused a request, or nil.
func (c *conn) refused() *Refusal { return c.refusal.Load() }

func (c *conn) Read(p []byte) (int, error) {
	for c.read == len(c.out) {
		c.out, c.read = c.out[:0], 0
		if c.state == inNothing {
			// The server answers the refusal and closes the connection;
			// until then, what the client sends is dropped.
			for {
				if _, err := c.Conn.Read(c.buf); err != nil {
					return 0, err
				}
			}
		}
		n, err := c.Conn.Read(c.buf)
		c.frame(c.buf[:n])
		if err != nil {
			if len(c.out) > 0 {
				break // the error comes again on the next read
			}
			return 0, err
		}
	}
	n := copy(p, c.out[c.read:])
	c.read += n
	return n, nil
}

// CloseWrite lets the server close its side first and wait a moment for
// the client to read its answer, as it does on a TCP connection.
func (c *conn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// ReadFrom keeps the network connection's sendfile for downloads.
func (c *conn) ReadFrom(r io.Reader) (int64, error) {
	if rf, ok := c.Conn.(io.ReaderFrom); ok {
		return rf.ReadFrom(r)
	}
	return io.Copy(struct{ io.Writer }{c.Conn}, r)
}

// frame takes p, read from the network, and adds to c.out what the
// server may read.
func (c *conn) frame(p []byte) {
	for len(p) > 0 {
		switch c.state {
		case inNothing:
			return
		case inHead:
			p = c.frameHead(p)
		case inBody, inChunkData:
			n := int(min(int64(len(p)), c.remaining))
			c.out = append(c.out, p[:n]...)
			p = p[n:]
			c.remaining -= int64(n)
			switch {
			case c.remaining > 0:
			case c.state == inBody:
				c.state = inHead
			default:
				c.state = inChunkEnd
			}
		default:
			p = c.frameChunkLine(p)
		}
	}
}

// frameHead adds p to the head until the empty line that ends it, then
// lets the head through or refuses it. It returns what follows the head.
func (c *conn) frameHead(p []byte) []byte {
	// Line by line (IndexByte), not byte by byte: every request's head
	// passes here.
	for start := 0; ; {
		j := bytes.IndexByte(p[start:], '\n')
		if j < 0 {
			if rest := p[start:]; len(rest) > 0 {
				c.lineLen += len(rest)
				c.lastByte = rest[len(rest)-1]
			}
			break
		}
		i := start + j
		n, last := c.lineLen+j, c.lastByte // the line before its LF, and its last byte
		if j > 0 {
			last = p[i-1]
		}
		c.lineLen = 0
		if n == 0 || n == 1 && last == '\r' {
			c.head = append(c.head, p[:i+1]...)
			c.takeHead()
			return p[i+1:]
		}
		start = i + 1
	}
	c.head = append(c.head, p...)
	if len(c.head) > c.maxHead {
		c.refuse(Refusal{Message: fmt.Sprintf("The request head is larger than %d bytes.", c.maxHead)})
	}
	return nil
}

// takeHead checks the whole head in c.head and lets it through, setting
// up the framing of its body, or refuses it.
func (c *conn) takeHead() {
	head := c.head
	c.head = c.head[:0]
	if len(head) > c.maxHead {
		c.refuse(Refusal{Message: fmt.Sprintf("The request head is larger than %d bytes.", c.maxHead)})
		return
	}
	body, why := parseHead(head)
	if why != nil {
		c.refuse(*why)
		return
	}
	c.out = append(c.out, head...)
	switch {
	case body < 0:
		c.state = inChunkSize
	case body > 0:
		c.state, c.remaining = inBody, body
	}
}

// refuse replaces the rest of the stream by refusedRequest.
func (c *conn) refuse(why Refusal) {
	c.refusal.Store(&why)
	c.out = append(c.out, refusedRequest...)
	c.head, c.line = nil, nil
	c.state = inNothing
}

// frameChunkLine reads the line of a chunk size, the CRLF after a chunk,
// or a trailer line, passing its bytes on as they come. It returns what
// follows the line.
func (c *conn) frameChunkLine(p []byte) []byte {
	i := bytes.IndexByte(p, '\n')
	end := len(p)
	if i >= 0 {
		end = i + 1
	}
	c.out = append(c.out, p[:end]...)
	c.line = append(c.line, p[:end]...)
	if i < 0 {
		if len(c.line) > maxChunkLine {
			c.state = inNothing
		}
		return nil
	}
	line := c.line
	c.line = c.line[:0]
	// Every line of a chunked body ends in CRLF, with no CR before
	// (RFC 9112, section 7.1; net/http refuses a bare LF there too). A
	// line of a lone LF has no CR at -1, its length less two: the fuzzer
	// found that it panicked the connection.
	if len(line) < 2 || bytes.IndexByte(line, '\r') != len(line)-2 {
		c.state = inNothing
		return p[end:]
	}
	line = line[:len(line)-2]
	switch c.state {
	case inChunkSize:
		n, ok := chunkSize(line)
		switch {
		case !ok:
			c.state = inNothing
		case n == 0:
			c.state = inTrailer
		default:
			c.state, c.remaining = inChunkData, n
		}
	case inChunkEnd:
		c.state = inChunkSize
		if len(line) != 0 {
			c.state = inNothing // the chunk was longer than its size said
		}
	case inTrailer:
		if len(line) == 0 {
			c.state = inHead
		}
	}
	return p[end:]
}

// chunkSize parses a chunk-size line as net/http does: hexadecimal digits
// (at most 16), then an optional extension after ';'.
func chunkSize(line []byte) (int64, bool) {
	line = bytes.TrimRight(line, " \t")
	if i := bytes.IndexByte(line, ';'); i >= 0 {
		line = line[:i]
	}
	if len(line) == 0 || len(line) > 16 {
		return 0, false
	}
	// ParseInt with base 16 takes no sign, prefix or underscore; sizes
	// beyond int64 are not worth framing.
	n, err := strconv.ParseInt(string(line), 16, 64)
	if err != nil || line[0] == '+' || line[0] == '-' {
		return 0, false
	}
	return n, true
}

// The line ends parseHead counts.
var crlfBytes, crBytes, lfBytes = []byte("\r\n"), []byte("\r"), []byte("\n")

// parseHead checks a whole head (its final empty line included) and
// returns the length of its body: 0 for none, -1 for a chunked one. Its
// rules are RFC 9112's, stricter than net/http's where net/http would
// read a head two ways or guess: a head it refuses is refused here, with
// the reason in words, rather than answered in plain text.
func parseHead(head []byte) (int64, *Refusal) {
	// One string of the head, its lines sliced from it as they come: a
	// head is read on every request, and slices of lines cost a poll
	// allocations of its own.
	// Each line ends in CRLF, and holds no other CR (sections 2.2 and
	// 5): a bare CR or LF is read as a line end by some readers and not
	// by others. Checked first, over the whole head, by counting: there
	// are as many CRs and as many LFs as CRLFs exactly when every CR is
	// followed by an LF and every LF follows a CR (bytes.Count is
	// vectorized; a loop over every byte was a fortieth of a poll).
	if crlf := bytes.Count(head, crlfBytes); bytes.Count(head, crBytes) != crlf || bytes.Count(head, lfBytes) != crlf {
		return 0, &Refusal{Message: "Every line of the request head must end in CRLF, with no CR or LF elsewhere."}
	}
	rest := string(head)
	nextLine := func() (string, bool) {
		i := strings.IndexByte(rest, '\n')
		if i < 0 {
			return "", false
		}
		l := rest[:i]
		rest = rest[i+1:]
		return l, true
	}
	var (
		method, target, version string
		length, coding          string
		lengths, codings, hosts int
		prev                    string
	)
	for n := 0; ; n++ {
		l, ok := nextLine()
		if !ok {
			break // after the last LF
		}
		l = l[:len(l)-1] // its CR
		if rest == "" {
			break // the empty line
		}
		if n == 0 {
			if method, target, version, ok = requestLine(l); !ok {
				return 0, &Refusal{Message: "The request line must be a method, a target and HTTP/1.1 (or HTTP/1.0), separated by single spaces."}
			}
			if method == "CONNECT" && !strings.HasPrefix(target, "/") {
				target = "http://" + target
			}
			if !plainPath(target) {
				if _, err := url.ParseRequestURI(target); err != nil {
					return 0, &Refusal{Message: "The request target is not a valid URL."}
				}
			}
			continue
		}
		if l != "" && (l[0] == ' ' || l[0] == '\t') {
			// obs-fold: a reader that does not unfold it reads another
			// header (section 5.2).
			return 0, &Refusal{Header: prev, Message: "A header line may not be folded onto the next line."}
		}
		name, value, ok := strings.Cut(l, ":")
		if !ok || !token(name) {
			return 0, &Refusal{Message: "Every header line must be a name (a token, with no space before the colon), a colon and a value."}
		}
		prev = name
		value = strings.Trim(value, " \t")
		if !fieldValue(value) {
			return 0, &Refusal{Header: name, Message: "A header value may not hold control characters."}
		}
		switch {
		case strings.EqualFold(name, "Content-Length"):
			length, lengths = value, lengths+1
		case strings.EqualFold(name, "Transfer-Encoding"):
			coding, codings = value, codings+1
		case strings.EqualFold(name, "Host"):
			hosts++
		}
	}
	switch {
	case method == "":
		return 0, &Refusal{Message: "The request has no request line."}
	case hosts > 1:
		return 0, &Refusal{Header: "Host", Message: "Host is given more than once."}
	case hosts == 0 && version == "HTTP/1.1":
		return 0, &Refusal{Header: "Host", Message: "An HTTP/1.1 request needs a Host header."}
	}
	if codings > 0 {
		switch {
		case version == "HTTP/1.0":
			return 0, &Refusal{Header: "Transfer-Encoding", Message: "Transfer-Encoding is not allowed in an HTTP/1.0 request (RFC 9112, section 6.1)."}
		case lengths > 0:
			return 0, &Refusal{Header: "Transfer-Encoding", Message: "A request may not carry both Content-Length and Transfer-Encoding (RFC 9112, section 6.1)."}
		case codings > 1:
			return 0, &Refusal{Header: "Transfer-Encoding", Message: "Transfer-Encoding is given more than once."}
		case !strings.EqualFold(coding, "chunked"):
			return 0, &Refusal{Header: "Transfer-Encoding", Message: `The only transfer coding served is "chunked", alone.`}
		}
		return -1, nil
	}
	switch {
	case lengths > 1:
		return 0, &Refusal{Header: "Content-Length", Message: "Content-Length is given more than once."}
	case lengths == 1:
		n, err := strconv.ParseInt(length, 10, 64)
		if err != nil || n < 0 || strings.TrimLeft(length, "0123456789") != "" {
			return 0, &Refusal{Header: "Content-Length", Message: "Content-Length must be a decimal number of bytes."}
		}
		return n, nil
	}
	return 0, nil
}

// plainPath reports whether target is an absolute path (and query) of
// the characters a client's request target usually holds, which
// url.ParseRequestURI always takes: no escapes, fragments, colons or
// spaces. Any other target is parsed.
func plainPath(target string) bool {
	if target == "" || target[0] != '/' {
		return false
	}
	for i := 1; i < len(target); i++ {
		c := target[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("-._~/?=&,+", c) >= 0) {
			return false
		}
	}
	return true
}

// requestLine splits method SP target SP version.
func requestLine(l string) (method, target, version string, ok bool) {
	method, rest, ok1 := strings.Cut(l, " ")
	target, version, ok2 := strings.Cut(rest, " ")
	if !ok1 || !ok2 || strings.IndexByte(version, ' ') >= 0 || !token(method) || target == "" || !fieldValue(target) || strings.ContainsRune(target, '\t') {
		return "", "", "", false
	}
	if version != "HTTP/1.1" && version != "HTTP/1.0" {
		return "", "", "", false
	}
	return method, target, version, true
}

// token reports whether s is an RFC 9110 token: a header name or method.
func token(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}

// fieldValue reports whether s holds no control character but tab.
func fieldValue(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < ' ' && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}
