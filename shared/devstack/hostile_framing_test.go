package devstack

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// Issue 10, item 1: requests whose framing two readers could read two
// ways, over raw TCP against Serve.

// textStart is the head and body of a cheap valid start, whose generation
// waits long enough never to render during a test.
func textStart(host, key string) string {
	body := `{"prompt":"[slow:600] smuggled","model":"gen-3.1-lite-generate-001","durationSeconds":4,"generateAudio":false}`
	return fmt.Sprintf("POST /api/gen/text-to-video HTTP/1.1\r\nHost: %s\r\nX-API-Key: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
		host, key, len(body), body)
}

// TestSmuggledRequestIsRefused (item 1): a request carrying both
// Content-Length and Transfer-Encoding: chunked. Read by
// Transfer-Encoding, its body ends at once and the bytes that
// Content-Length counts as body run as a second request: a charged start.
// It must be refused with 400 and the connection closed (RFC 9112,
// section 6.1), so that nothing after it runs.
func TestSmuggledRequestIsRefused(t *testing.T) {
	s := serve(t, "", nil)
	k := s.key(10000)
	before := s.books(k.AccountID)
	body := "0\r\n\r\n" + textStart(s.addr, k.APIKey)
	raw := fmt.Sprintf("POST /api/gen/text-to-video HTTP/1.1\r\nHost: %s\r\nX-API-Key: %s\r\nContent-Type: application/json\r\n"+
		"Content-Length: %d\r\nTransfer-Encoding: chunked\r\n\r\n%s", s.addr, k.APIKey, len(body), body)
	x := s.exchange(raw, false, nil)
	if len(x.responses) != 1 {
		for _, r := range x.responses {
			t.Logf("answered %d %s", r.status, r.body)
		}
		t.Fatalf("%d responses on the connection, want 1: the hidden request ran", len(x.responses))
	}
	body0 := contractError(t, x.responses[0], http.StatusBadRequest, "VALIDATION_ERROR")
	if body0["field"] != "Transfer-Encoding" {
		t.Errorf("field = %v, want Transfer-Encoding", body0["field"])
	}
	if !x.closed {
		t.Errorf("the connection stayed open (%v), want it closed after the 400", x.err)
	}
	if after := s.books(k.AccountID); after != before {
		t.Errorf("books %+v after the request, want %+v", after, before)
	}
}

// TestAmbiguousFramingIsRefused: the other shapes of a request whose
// length two readers could read two ways, or that is not HTTP/1.1 as RFC
// 9112 writes it. Each hides a request after what its first reading takes
// as the body; each must be one 400 in the contract's body, naming the
// header at fault, and a closed connection.
func TestAmbiguousFramingIsRefused(t *testing.T) {
	s := serve(t, "", nil)
	k := s.key(10000)
	hidden := fmt.Sprintf("GET /api/gen/models HTTP/1.1\r\nHost: %s\r\nX-API-Key: %s\r\n\r\n", s.addr, k.APIKey)
	body := "0\r\n\r\n" + hidden
	// %[1]d in a head is the length of the whole body, %[2]d that of the
	// empty chunked body alone.
	tests := []struct {
		name, line, head string // line empty: HTTP/1.1
		field            string
	}{
		{"Transfer-Encoding before Content-Length", "", "Transfer-Encoding: chunked\r\nContent-Length: %[1]d", "Transfer-Encoding"},
		{"chunked in capitals beside a length", "", "Content-Length: %[1]d\r\ntransfer-encoding: CHUNKED", "Transfer-Encoding"},
		{"chunked, identity", "", "Transfer-Encoding: chunked, identity", "Transfer-Encoding"},
		{"identity", "", "Transfer-Encoding: identity", "Transfer-Encoding"},
		{"gzip, chunked", "", "Transfer-Encoding: gzip, chunked", "Transfer-Encoding"},
		{"chunked in quotes", "", "Transfer-Encoding: \"chunked\"", "Transfer-Encoding"},
		{"chunked with a parameter", "", "Transfer-Encoding: chunked;q=1", "Transfer-Encoding"},
		{"Transfer-Encoding twice", "", "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked", "Transfer-Encoding"},
		{"Transfer-Encoding folded onto a second line", "", "Transfer-Encoding:\r\n chunked", "Transfer-Encoding"},
		{"a folded line elsewhere", "", "X-Note: a\r\n\tTransfer-Encoding: chunked", "X-Note"},
		{"a space before the colon", "", "Transfer-Encoding : chunked\r\nContent-Length: %[1]d", ""},
		{"a vertical tab before the value", "", "Transfer-Encoding:\vchunked", "Transfer-Encoding"},
		{"two different lengths", "", "Content-Length: %[2]d\r\nContent-Length: %[1]d", "Content-Length"},
		{"the same length twice", "", "Content-Length: %[2]d\r\nContent-Length: %[2]d", "Content-Length"},
		{"a list of lengths", "", "Content-Length: %[2]d, %[2]d", "Content-Length"},
		{"a signed length", "", "Content-Length: +%[2]d", "Content-Length"},
		{"a hexadecimal length", "", "Content-Length: 0x%[2]x", "Content-Length"},
		{"a negative length", "", "Content-Length: -1", "Content-Length"},
		{"an empty length", "", "Content-Length: ", "Content-Length"},
		{"HTTP/1.0 with Transfer-Encoding", "POST /api/gen/text-to-video HTTP/1.0", "Connection: keep-alive\r\nTransfer-Encoding: chunked\r\nContent-Length: %[2]d", "Transfer-Encoding"},
		{"a bare LF ending a header line", "", "X-Note: a\nTransfer-Encoding: chunked", ""},
		{"a bare CR inside a header line", "", "X-Note: a\rTransfer-Encoding: chunked", ""},
		{"a NUL in a value", "", "X-Note: a\x00b\r\nContent-Length: %[2]d", "X-Note"},
		{"a header name that is not a token", "", "X/Note: a\r\nContent-Length: %[2]d", ""},
		{"two Host headers", "", "Host: elsewhere\r\nContent-Length: %[2]d", "Host"},
		{"a request line with three spaces", "POST  /api/gen/text-to-video HTTP/1.1", "Content-Length: %[2]d", ""},
		{"HTTP/2 on an HTTP/1.1 connection", "POST /api/gen/text-to-video HTTP/2.0", "Content-Length: %[2]d", ""},
		{"a lower-case protocol", "POST /api/gen/text-to-video http/1.1", "Content-Length: %[2]d", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := s.books(k.AccountID)
			line := tt.line
			if line == "" {
				line = "POST /api/gen/text-to-video HTTP/1.1"
			}
			head := fmt.Sprintf(tt.head, len(body), len("0\r\n\r\n"))
			raw := fmt.Sprintf("%s\r\nHost: %s\r\nX-API-Key: %s\r\nContent-Type: application/json\r\n%s\r\n\r\n%s",
				line, s.addr, k.APIKey, head, body)
			x := s.exchange(raw, false, nil)
			if len(x.responses) != 1 {
				for _, r := range x.responses {
					t.Logf("answered %d %s", r.status, r.body)
				}
				t.Fatalf("%d responses, want 1 (%v)", len(x.responses), x.err)
			}
			b := contractError(t, x.responses[0], http.StatusBadRequest, "VALIDATION_ERROR")
			if got, _ := b["field"].(string); got != tt.field {
				t.Errorf("field = %q, want %q (%s)", got, tt.field, b["message"])
			}
			if !x.closed {
				t.Errorf("the connection stayed open (%v), want it closed", x.err)
			}
			if after := s.books(k.AccountID); after != before {
				t.Errorf("books %+v, want %+v", after, before)
			}
		})
	}

	t.Run("a head larger than 64 KiB", func(t *testing.T) {
		raw := fmt.Sprintf("GET /api/gen/models HTTP/1.1\r\nHost: %s\r\nX-API-Key: %s\r\nX-Pad: %s\r\n\r\n%s",
			s.addr, k.APIKey, strings.Repeat("a", 64<<10), hidden)
		x := s.exchange(raw, false, nil)
		if len(x.responses) != 1 {
			t.Fatalf("%d responses, want 1 (%v)", len(x.responses), x.err)
		}
		contractError(t, x.responses[0], http.StatusBadRequest, "VALIDATION_ERROR")
		if !x.closed {
			t.Errorf("the connection stayed open (%v), want it closed", x.err)
		}
	})
}

// TestWellFramedRequestsShareAConnection: what the refusals above must
// not catch. Requests sent back to back on one connection, one with a
// chunked body in several chunks with extensions and a trailer, one with
// white space around its length, are each answered in turn.
func TestWellFramedRequestsShareAConnection(t *testing.T) {
	s := serve(t, "", nil)
	k := s.key(10000)
	json := `{"prompt":"[slow:600] chunked","model":"gen-3.1-lite-generate-001","durationSeconds":4,"generateAudio":false}`
	chunked := fmt.Sprintf("%x;name=value\r\n%s\r\n%X\r\n%s\r\n0\r\nX-Checksum: none\r\n\r\n", 10, json[:10], len(json)-10, json[10:])
	raw := fmt.Sprintf("GET /api/gen/models HTTP/1.1\r\nHost: %[1]s\r\nX-API-Key: %[2]s\r\n\r\n"+
		"POST /api/gen/text-to-video HTTP/1.1\r\nHost: %[1]s\r\nX-API-Key: %[2]s\r\nContent-Type: application/json\r\nTransfer-Encoding: Chunked\r\n\r\n%[3]s"+
		"%[4]s"+
		"GET /api/gen/history HTTP/1.1\r\nHost: %[1]s\r\nX-API-Key: %[2]s\r\nContent-Length: \t0 \r\nConnection: close\r\n\r\n",
		s.addr, k.APIKey, chunked, textStart(s.addr, k.APIKey))
	x := s.exchange(raw, false, nil)
	want := []int{200, 202, 202, 200}
	if len(x.responses) != len(want) {
		for _, r := range x.responses {
			t.Logf("answered %d %s", r.status, r.body)
		}
		t.Fatalf("%d responses, want %d (%v)", len(x.responses), len(want), x.err)
	}
	for i, r := range x.responses {
		if r.status != want[i] {
			t.Errorf("response %d = %d %s, want %d", i, r.status, r.body, want[i])
		}
	}
	if got := s.books(k.AccountID).Tasks; got != 2 {
		t.Errorf("%d tasks, want the 2 started", got)
	}
}
