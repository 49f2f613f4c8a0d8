package faults_test

import (
	"context"
	"errors"
	"io"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/genvideo/gen/shared/blob/fsblob"
	"github.com/genvideo/gen/shared/domain"
	"github.com/genvideo/gen/shared/faults"
	"github.com/genvideo/gen/shared/provider"
	"github.com/genvideo/gen/shared/store"
	"github.com/genvideo/gen/shared/store/sqlitestore"
	"github.com/genvideo/gen/shared/task"
)

var t0 = time.Date(2025, 11, 13, 10, 0, 0, 0, time.UTC)

// newStore is a SQLite store with account acct-a holding 100 credits,
// wrapped with a fresh injector.
func newStore(t *testing.T) (*sqlitestore.Store, *faults.Store, *faults.Injector) {
	t.Helper()
	s, err := sqlitestore.Open(filepath.Join(t.TempDir(), "gen.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.CreateAccount(context.Background(), domain.Account{ID: "acct-a", Credits: 100, CreatedAt: t0}); err != nil {
		t.Fatal(err)
	}
	in := faults.NewInjector()
	return s, faults.WrapStore(s, in), in
}

func balance(t *testing.T, s store.Store) int64 {
	t.Helper()
	a, err := s.Account(context.Background(), "acct-a")
	if err != nil {
		t.Fatal(err)
	}
	return a.Credits
}

func TestRules(t *testing.T) {
	_, fs, in := newStore(t)
	ctx := context.Background()
	errTask := errors.New("task rule")
	errStore := errors.New("store rule")
	errAll := errors.New("every call")
	in.Set("*", faults.Always(faults.Fault{Err: errAll}))
	in.Set("Store.*", faults.Always(faults.Fault{Err: errStore}))
	in.Set("Store.Task", faults.Nth(2, faults.Fault{Err: errTask}))

	tests := []struct {
		call func() error
		want error
	}{
		{func() error { _, err := fs.Task(ctx, "gen_1_a"); return err }, domain.ErrNotFound}, // Task #1 goes through
		{func() error { _, err := fs.Task(ctx, "gen_1_a"); return err }, errTask},            // the exact rule wins
		{func() error { _, err := fs.Task(ctx, "gen_1_a"); return err }, domain.ErrNotFound},
		{func() error { _, err := fs.Account(ctx, "acct-a"); return err }, errStore}, // the longer prefix wins
	}
	for i, tt := range tests {
		if err := tt.call(); !errors.Is(err, tt.want) {
			t.Errorf("call %d: %v, want %v", i, err, tt.want)
		}
	}
	if got, want := in.Trace(), []string{"Store.Task", "Store.Task", "Store.Task", "Store.Account"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Trace = %v, want %v", got, want)
	}
	if got := in.Calls("Store.Task"); got != 3 {
		t.Errorf("Calls(Store.Task) = %d, want 3", got)
	}
	if got := in.Injected(); got != 2 {
		t.Errorf("Injected = %d, want 2", got)
	}

	in.Set("Store.*", nil) // removed: the "*" rule applies
	if _, err := fs.Account(ctx, "acct-a"); !errors.Is(err, errAll) {
		t.Errorf("Account after removing Store.*: %v, want %v", err, errAll)
	}
	in.Reset()
	if _, err := fs.Account(ctx, "acct-a"); err != nil {
		t.Errorf("Account after Reset: %v, want no fault", err)
	}
	if got := in.Trace(); !reflect.DeepEqual(got, []string{"Store.Account"}) || in.Injected() != 0 {
		t.Errorf("after Reset: trace %v, %d injected; want one call, none injected", got, in.Injected())
	}
}

func TestStoreFaults(t *testing.T) {
	grant := func(fs *faults.Store, ctx context.Context) error {
		_, err := fs.Grant(ctx, "acct-a", 10, "test", t0)
		return err
	}
	tests := []struct {
		name        string
		fault       faults.Fault
		ctx         func() (context.Context, context.CancelFunc)
		wantErr     []error // each must be in the error chain; none means success
		wantBalance int64
	}{
		{name: "no fault", wantBalance: 110},
		{name: "outage", fault: faults.Fault{Err: faults.Unavailable()},
			wantErr: []error{store.ErrUnavailable, faults.ErrInjected}, wantBalance: 100},
		{name: "lost reply", fault: faults.Fault{Err: faults.Unavailable(), After: true},
			wantErr: []error{store.ErrUnavailable}, wantBalance: 110},
		{name: "broken", fault: faults.Fault{Err: faults.Broken()},
			wantErr: []error{faults.ErrInjected}, wantBalance: 100},
		{name: "delay, then the call", fault: faults.Fault{Delay: time.Millisecond}, wantBalance: 110},
		{name: "delay past the deadline", fault: faults.Fault{Delay: time.Hour},
			ctx: func() (context.Context, context.CancelFunc) {
				return context.WithTimeout(context.Background(), time.Millisecond)
			},
			wantErr: []error{store.ErrUnavailable, context.DeadlineExceeded}, wantBalance: 100},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, fs, in := newStore(t)
			in.Set("Store.Grant", faults.Always(tt.fault))
			ctx, cancel := context.Background(), context.CancelFunc(func() {})
			if tt.ctx != nil {
				ctx, cancel = tt.ctx()
			}
			defer cancel()
			err := grant(fs, ctx)
			if len(tt.wantErr) == 0 && err != nil {
				t.Errorf("Grant: %v, want success", err)
			}
			for _, want := range tt.wantErr {
				if !errors.Is(err, want) {
					t.Errorf("Grant: %v, want it to wrap %v", err, want)
				}
			}
			if got := balance(t, s); got != tt.wantBalance {
				t.Errorf("balance %d, want %d", got, tt.wantBalance)
			}
		})
	}
}

func TestPanic(t *testing.T) {
	s, fs, in := newStore(t)
	in.Set("Store.Grant", faults.Always(faults.Fault{Panic: faults.Detail}))
	var got any
	func() {
		defer func() { got = recover() }()
		fs.Grant(context.Background(), "acct-a", 10, "test", t0)
	}()
	if got != faults.Detail {
		t.Errorf("recovered %v, want the fault's panic value", got)
	}
	if b := balance(t, s); b != 100 {
		t.Errorf("balance %d, want 100: the call panicked before it ran", b)
	}
}

// TestHangAndCrash: a hung call returns when the process crashes, and no
// call made after the crash reaches the store.
func TestHangAndCrash(t *testing.T) {
	for _, after := range []bool{false, true} {
		s, fs, in := newStore(t)
		in.Set("Store.Grant", faults.Nth(1, faults.Fault{Hang: true, After: after}))
		done := make(chan error, 1)
		go func() {
			_, err := fs.Grant(context.Background(), "acct-a", 10, "test", t0)
			done <- err
		}()
		if m := <-in.Hung(); m != "Store.Grant" {
			t.Fatalf("hung in %s, want Store.Grant", m)
		}
		in.Crash()
		if err := <-done; !errors.Is(err, faults.ErrCrashed) || !errors.Is(err, store.ErrUnavailable) {
			t.Errorf("hung Grant after the crash: %v, want ErrCrashed and store.ErrUnavailable", err)
		}
		want := int64(100)
		if after {
			want = 110
		}
		if b := balance(t, s); b != want {
			t.Errorf("after=%v: balance %d, want %d", after, b, want)
		}
		if _, err := fs.Grant(context.Background(), "acct-a", 10, "test", t0); !errors.Is(err, faults.ErrCrashed) {
			t.Errorf("Grant after the crash: %v, want ErrCrashed", err)
		}
		if b := balance(t, s); b != want {
			t.Errorf("a call after the crash changed the balance to %d, want %d", b, want)
		}
	}
}

func TestHangUntilCancel(t *testing.T) {
	_, fs, in := newStore(t)
	in.Set("Store.Account", faults.Always(faults.Fault{Hang: true}))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := fs.Account(ctx, "acct-a")
		done <- err
	}()
	<-in.Hung()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) || !errors.Is(err, store.ErrUnavailable) {
		t.Errorf("hung Account after cancel: %v, want context.Canceled and store.ErrUnavailable", err)
	}
}

func TestBlobs(t *testing.T) {
	fb, err := fsblob.New(t.TempDir(), "http://127.0.0.1:1", []byte("0123456789abcdef0123456789abcdef"))
	if err != nil {
		t.Fatal(err)
	}
	in := faults.NewInjector()
	b := faults.WrapBlobs(fb, in)
	ctx := context.Background()
	exists := func(key string) bool {
		rc, err := fb.Get(ctx, key)
		if err == nil {
			rc.Close()
		}
		return err == nil
	}

	in.Set("Blobs.Put", faults.Nth(1, faults.Fault{Err: faults.Broken()}))
	if _, err := b.Put(ctx, "a/1", strings.NewReader("one"), "text/plain"); !errors.Is(err, faults.ErrInjected) || exists("a/1") {
		t.Errorf("Put with a fault before: %v, stored %v; want the fault, nothing stored", err, exists("a/1"))
	}
	in.Set("Blobs.Put", faults.Nth(2, faults.Fault{Err: faults.Broken(), After: true}))
	if _, err := b.Put(ctx, "a/2", strings.NewReader("two"), "text/plain"); !errors.Is(err, faults.ErrInjected) || !exists("a/2") {
		t.Errorf("Put with a fault after: %v, stored %v; want the fault, the object stored", err, exists("a/2"))
	}
	in.Set("Blobs.Get", faults.Nth(1, faults.Fault{Err: faults.Unavailable(), After: true}))
	if rc, err := b.Get(ctx, "a/2"); err == nil || rc != nil {
		t.Errorf("Get with a fault after = %v, %v; want no reader and the fault", rc, err)
	}
	rc, err := b.Get(ctx, "a/2")
	if err != nil {
		t.Fatalf("Get without a fault: %v", err)
	}
	data, _ := io.ReadAll(rc)
	rc.Close()
	if string(data) != "two" {
		t.Errorf("Get = %q, want %q", data, "two")
	}
	in.Set("Blobs.SignURL", faults.Always(faults.Fault{Err: faults.Unavailable()}))
	if _, err := b.SignURL(ctx, "a/2", t0); !errors.Is(err, store.ErrUnavailable) {
		t.Errorf("SignURL: %v, want the outage", err)
	}
	in.Set("Blobs.Delete", faults.Always(faults.Fault{Err: faults.Broken()}))
	if err := b.Delete(ctx, "a/2"); err == nil || !exists("a/2") {
		t.Errorf("Delete with a fault: %v, object kept %v; want the fault, the object kept", err, exists("a/2"))
	}
	if got := in.Trace(); !reflect.DeepEqual(got, []string{"Blobs.Put", "Blobs.Put", "Blobs.Get", "Blobs.Get", "Blobs.SignURL", "Blobs.Delete"}) {
		t.Errorf("Trace = %v", got)
	}
}

// countingGenerator renders nothing and counts its calls.
type countingGenerator struct{ calls int }

func (g *countingGenerator) Generate(context.Context, provider.Job) (provider.Result, error) {
	g.calls++
	return provider.Result{Paths: []string{"/tmp/x.mp4"}}, nil
}

func TestGenerator(t *testing.T) {
	in := faults.NewInjector()
	inner := &countingGenerator{}
	g := faults.WrapGenerator(inner, in)
	ctx := context.Background()
	job := provider.Job{TaskID: "gen_1_a"}

	var transient interface{ Transient() bool }
	var coded interface{ FailureCode() string }
	in.Set("Generator.Generate", faults.Nth(1, faults.Fault{Err: faults.Transient()}))
	if _, err := g.Generate(ctx, job); !errors.As(err, &transient) || !transient.Transient() {
		t.Errorf("Transient fault: %v, want an error with Transient() true", err)
	}
	in.Set("Generator.Generate", faults.Nth(2, faults.Fault{Err: faults.Refused()}))
	if _, err := g.Generate(ctx, job); !errors.As(err, &coded) || coded.FailureCode() != task.FailContentPolicy {
		t.Errorf("Refused fault: %v, want FailureCode %s", err, task.FailContentPolicy)
	}
	in.Set("Generator.Generate", faults.Always(faults.Fault{Delay: time.Hour}))
	short, cancel := context.WithTimeout(ctx, time.Millisecond)
	defer cancel()
	if _, err := g.Generate(short, job); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a generation past its deadline: %v, want context.DeadlineExceeded", err)
	}
	if inner.calls != 0 {
		t.Errorf("the generator ran %d times, want 0: every call had a fault before it", inner.calls)
	}
	in.Reset()
	if res, err := g.Generate(ctx, job); err != nil || len(res.Paths) != 1 || inner.calls != 1 {
		t.Errorf("Generate without faults = %+v, %v (%d calls); want the inner result", res, err, inner.calls)
	}
}

func TestRandom(t *testing.T) {
	a, b := faults.Fault{Delay: 1}, faults.Fault{Delay: 2}
	draw := func(r faults.Rule) []time.Duration {
		var out []time.Duration
		for i := range 200 {
			out = append(out, r("Store.Task", i+1).Delay)
		}
		return out
	}
	count := func(ds []time.Duration) (none int) {
		for _, d := range ds {
			if d == 0 {
				none++
			}
		}
		return none
	}
	if n := count(draw(faults.Random(1, 0, a, b))); n != 200 {
		t.Errorf("rate 0: %d of 200 calls without a fault, want 200", n)
	}
	all := draw(faults.Random(1, 1, a, b))
	if n := count(all); n != 0 {
		t.Errorf("rate 1: %d of 200 calls without a fault, want 0", n)
	}
	if ones := strings.Count(fmtDurations(all), "1"); ones == 0 || ones == 200 {
		t.Errorf("rate 1: fault a chosen %d times of 200, want both faults chosen", ones)
	}
	half := draw(faults.Random(7, 0.5, a, b))
	if n := count(half); n < 50 || n > 150 {
		t.Errorf("rate 0.5: %d of 200 calls without a fault, want about 100", n)
	}
	if again := draw(faults.Random(7, 0.5, a, b)); !reflect.DeepEqual(again, half) {
		t.Errorf("the same seed drew another sequence")
	}
	if other := draw(faults.Random(8, 0.5, a, b)); reflect.DeepEqual(other, half) {
		t.Errorf("another seed drew the same sequence")
	}
}

func fmtDurations(ds []time.Duration) string {
	var sb strings.Builder
	for _, d := range ds {
		sb.WriteByte(byte('0' + d))
	}
	return sb.String()
}

// TestErrorsCarryDetail: every injected error carries the internal detail
// that the leak tests look for.
func TestErrorsCarryDetail(t *testing.T) {
	for _, err := range []error{faults.Unavailable(), faults.Broken(), faults.Transient(), faults.Refused()} {
		if !strings.Contains(err.Error(), faults.Detail) || !errors.Is(err, faults.ErrInjected) {
			t.Errorf("%v: want it to carry Detail and wrap ErrInjected", err)
		}
		for _, m := range faults.DetailMarkers {
			if !strings.Contains(err.Error(), m) {
				t.Errorf("%v: lacks the marker %q", err, m)
			}
		}
	}
}
