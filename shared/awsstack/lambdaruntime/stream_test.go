package lambdaruntime

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// streamer builds testdata/streamer and returns a pool of it.
func streamer(t *testing.T) *Pool {
	t.Helper()
	bins, err := Build(t.Context(), ".", "./testdata/streamer", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	pl := NewPool(Config{Name: "streamer", Binary: bins["streamer"]}, nil, nil)
	t.Cleanup(pl.Close)
	return pl
}

func streamEvent(t *testing.T, gate string, fail bool) []byte {
	b, err := json.Marshal(map[string]any{"gate": gate, "fail": fail})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A streamed invocation hands the body on as the function writes it: the
// first part is read before the function may write the second; an error
// after the stream began ends the stream with it; a reader that closes
// early leaves the process busy until the function is done, then it is
// reused.
func TestInvokeStream(t *testing.T) {
	pl := streamer(t)
	dir := t.TempDir()

	t.Run("as written", func(t *testing.T) {
		gate := filepath.Join(dir, "gate1")
		res, p, _, err := pl.InvokeStream(t.Context(), "", streamEvent(t, gate, false))
		if err != nil || res.Stream == nil {
			t.Fatalf("InvokeStream = %+v, %v; want a stream", res, err)
		}
		defer res.Stream.Close()
		br := bufio.NewReader(res.Stream)
		prelude, err := br.ReadString(0)
		if err != nil || !strings.Contains(prelude, `"statusCode":200`) {
			t.Fatalf("prelude %q (%v)", prelude, err)
		}
		for range 7 {
			if b, err := br.ReadByte(); b != 0 || err != nil {
				t.Fatalf("delimiter byte %q (%v), want NUL", b, err)
			}
		}
		if line, err := br.ReadString('\n'); line != "first\n" {
			t.Fatalf("first part %q (%v)", line, err)
		}
		if !p.Busy() {
			t.Errorf("the process is idle while its function still writes")
		}
		if err := os.WriteFile(gate, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		if line, err := br.ReadString('\n'); line != "second\n" {
			t.Fatalf("second part %q (%v)", line, err)
		}
		if _, err := br.ReadByte(); err == nil {
			t.Errorf("the stream goes on after the function's end")
		}
	})

	t.Run("failed after it began", func(t *testing.T) {
		res, _, _, err := pl.InvokeStream(t.Context(), "", streamEvent(t, "", true))
		if err != nil || res.Stream == nil {
			t.Fatalf("InvokeStream = %+v, %v; want a stream", res, err)
		}
		defer res.Stream.Close()
		b, err := io.ReadAll(res.Stream)
		if err == nil || !strings.HasSuffix(string(b), "first\n") {
			t.Errorf("stream %q ended with %v; want the first part, then an error", b, err)
		}
	})

	t.Run("closed early", func(t *testing.T) {
		gate := filepath.Join(dir, "gate3")
		res, p, _, err := pl.InvokeStream(t.Context(), "", streamEvent(t, gate, false))
		if err != nil || res.Stream == nil {
			t.Fatalf("InvokeStream = %+v, %v; want a stream", res, err)
		}
		res.Stream.Close()
		// The function still waits for its gate: the reader went away,
		// the function goes on, as on Lambda.
		if !p.Busy() {
			t.Errorf("the process is idle while its function still runs")
		}
		if err := os.WriteFile(gate, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		// It finishes, its rest discarded, and nothing is broken: the
		// next invocation is answered whole.
		next, _, _, err := pl.InvokeStream(t.Context(), "", streamEvent(t, gate, false))
		if err != nil {
			t.Fatal(err)
		}
		defer next.Stream.Close()
		b, err := io.ReadAll(next.Stream)
		if err != nil || !strings.HasSuffix(string(b), "first\nsecond\n") {
			t.Errorf("next stream %q (%v)", b, err)
		}
	})
}
