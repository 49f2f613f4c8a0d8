package devstack

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/genvideo/gen/shared/admin"
	"github.com/genvideo/gen/shared/store"
	"github.com/genvideo/gen/shared/store/sqlitestore"
	"github.com/genvideo/gen/shared/testing/logtest"
)

// The tests of issue 10 ("Hostile clients") drive the service exactly as
// `make run` runs it: Serve, with its own http.Server and outer router,
// on a loopback port, spoken to over real TCP connections.

// served is one running Serve.
type served struct {
	t    *testing.T
	addr string // host:port
	url  string // http://host:port
	dir  string
	// devKey is the key Serve made and printed.
	devKey string
	// store is a second handle on the data directory's database, to look
	// at the books and make keys, as genctl does beside a running server.
	store *sqlitestore.Store
}

var runningOn = regexp.MustCompile(`gen is running on http://(\S+)`)

// serve runs Serve on dir (a fresh directory when empty) and a free
// loopback port until the test ends; edit, when not nil, adjusts the
// configuration as GEN_* variables would.
func serve(t *testing.T, dir string, edit func(*Config)) *served {
	t.Helper()
	localOnly(t, "the test drives devstack.Serve's own listener (its HTTP framing, timeouts, log and files); on the assembly API Gateway's emulator fronts the functions")
	if dir == "" {
		dir = t.TempDir()
	}
	cfg := Config{
		Addr:          "127.0.0.1:0",
		DataDir:       dir,
		SweepInterval: time.Hour,
		Logger:        slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	if edit != nil {
		edit(&cfg)
	}
	ctx, stop := context.WithCancel(context.Background())
	out := &logtest.Buffer{}
	ready := out.Seen("Try:") // Serve prints how to use it once it listens
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, cfg, out) }()
	select {
	case <-ready:
	case err := <-done:
		stop()
		t.Fatalf("Serve ended before it served: %v\n%s", err, out)
	case <-time.After(2 * time.Minute):
		stop()
		t.Fatalf("Serve printed no address in 2 minutes:\n%s", out)
	}
	t.Cleanup(func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	m := runningOn.FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("Serve's output names no address:\n%s", out)
	}
	key, err := os.ReadFile(DevKeyPath(dir))
	if err != nil {
		t.Fatalf("dev key: %v", err)
	}
	st, err := OpenStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() }) // before Serve stops: cleanups run last first
	return &served{t: t, addr: m[1], url: "http://" + m[1], dir: dir, devKey: strings.TrimSpace(string(key)), store: st}
}

// key makes an account with credits and an Enterprise key whose limits
// stay out of the way.
func (s *served) key(credits int64) admin.CreatedKey {
	s.t.Helper()
	k, err := admin.New(s.store).CreateKey(context.Background(), admin.KeyRequest{Name: "hostile", Credits: credits,
		Tier: "enterprise", Limits: store.KeyLimits{RequestsPerMinute: 100000, RequestsPerDay: 1000000, StartsPerMinute: 10000, MaxInFlight: 100}})
	if err != nil {
		s.t.Fatalf("CreateKey: %v", err)
	}
	return k
}

// ledger is what a refused request must leave as it was.
type ledger struct {
	Credits int64
	Tasks   int
	Entries int
}

func (s *served) books(accountID string) ledger {
	s.t.Helper()
	ctx := context.Background()
	a, err := s.store.Account(ctx, accountID)
	if err != nil {
		s.t.Fatalf("account %s: %v", accountID, err)
	}
	tasks, _, err := s.store.Tasks(ctx, accountID, store.TaskQuery{Limit: 1000})
	if err != nil {
		s.t.Fatal(err)
	}
	entries, err := s.store.Ledger(ctx, accountID)
	if err != nil {
		s.t.Fatal(err)
	}
	return ledger{Credits: a.Credits, Tasks: len(tasks), Entries: len(entries)}
}

// exchange is what the server did with bytes written on one connection.
type exchange struct {
	responses []*rawResponse
	// closed: the server closed the connection after its last response.
	closed bool
	// err is why reading stopped if the server neither answered nor
	// closed (a timeout: it held the connection).
	err error
}

type rawResponse struct {
	status int
	header http.Header
	body   []byte
}

// quiet is how long exchange waits for the server to say or do anything
// more: a bound on a test that would otherwise hang, not a measurement.
const quiet = 20 * time.Second

// exchange opens a connection, writes raw and reads every response until
// the server closes the connection or stays quiet for the quiet period.
// A request to HEAD is read without a body. keepOpen, when not nil, is
// called with the connection once the first response was read.
func (s *served) exchange(raw string, head bool, keepOpen func(net.Conn)) exchange {
	s.t.Helper()
	conn, err := net.Dial("tcp", s.addr)
	if err != nil {
		s.t.Fatalf("dial: %v", err)
	}
	defer conn.Close()
	go io.Copy(conn, strings.NewReader(raw)) // the server may stop reading early
	return readExchange(conn, head, keepOpen)
}

func readExchange(conn net.Conn, head bool, keepOpen func(net.Conn)) exchange {
	var x exchange
	br := bufio.NewReader(conn)
	for {
		conn.SetReadDeadline(time.Now().Add(quiet))
		if _, err := br.Peek(1); err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) || isReset(err) {
				x.closed = true
			} else {
				x.err = err
			}
			return x
		}
		method := http.MethodGet
		if head {
			method = http.MethodHead
		}
		res, err := http.ReadResponse(br, &http.Request{Method: method})
		if err != nil {
			x.err = fmt.Errorf("read response: %w", err)
			return x
		}
		body, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil {
			x.err = fmt.Errorf("read body: %w", err)
			return x
		}
		x.responses = append(x.responses, &rawResponse{status: res.StatusCode, header: res.Header, body: body})
		if keepOpen != nil && len(x.responses) == 1 {
			keepOpen(conn)
		}
	}
}

func isReset(err error) bool {
	return strings.Contains(err.Error(), "connection reset")
}

// contractError checks that r is an error of the contract's flat form
// with the given status and code, and returns its body.
func contractError(t *testing.T, r *rawResponse, status int, code string) map[string]any {
	t.Helper()
	if r.status != status {
		t.Errorf("status = %d, want %d; body %s", r.status, status, r.body)
	}
	if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("Content-Type = %q, want JSON; body %q", ct, r.body)
	}
	var body map[string]any
	if err := json.Unmarshal(r.body, &body); err != nil {
		t.Errorf("body %q is not JSON: %v", r.body, err)
		return nil
	}
	if body["success"] != false || body["error"] != code {
		t.Errorf("body = %s, want success false and error %s", r.body, code)
	}
	if m, _ := body["message"].(string); m == "" {
		t.Errorf("body %s has no message", r.body)
	}
	return body
}
