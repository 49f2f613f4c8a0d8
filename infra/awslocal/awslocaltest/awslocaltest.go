// Package awslocaltest runs the end-to-end suites against the AWS assembly
// on one machine (`make run-aws-local`, package assembly) instead of the
// embedded stack of `make run`, when GEN_E2E_STACK=aws-local: one
// assembly per test binary, started on first use (it builds every
// function and starts DynamoDB Local), and the operator's side of it
// (keys wired to usage plans as genctl wires them, balances, the ledger
// audit).
package awslocaltest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/genvideo/gen/infra/awslocal/assembly"
	"github.com/genvideo/gen/shared/admin"
	"github.com/genvideo/gen/shared/store"
	"github.com/genvideo/gen/shared/store/audit"
)

// StackEnv selects the stack of the end-to-end suites: "local" (the
// default, `make run`) or "aws-local" (`make run-aws-local`).
const StackEnv = "GEN_E2E_STACK"

// Selected reports whether the suites run against the AWS assembly. A
// value other than local or aws-local stops the test binary, so that a
// typo does not quietly run the other stack.
func Selected() bool {
	switch v := os.Getenv(StackEnv); v {
	case "", "local":
		return false
	case "aws-local":
		return true
	default:
		fmt.Fprintf(os.Stderr, "%s=%q: want local or aws-local\n", StackEnv, v)
		os.Exit(2)
		return false
	}
}

// Roomy are the Enterprise limits Key gives when none are asked: its own
// usage plan then stays out of the way of tests not about limits.
var Roomy = store.KeyLimits{RequestsPerMinute: 100000, RequestsPerDay: 1000000, StartsPerMinute: 10000, MaxInFlight: 100}

// Env is a running assembly.
type Env struct {
	// URL is the API's base URL, ending with the stage: http://127.0.0.1:N/v1.
	URL string
	// DevKey is the dev account's key, as make run-aws-local prints it.
	DevKey   string
	Assembly *assembly.Assembly

	dir string
	log *os.File
}

var shared struct {
	once sync.Once
	env  *Env
	err  error
}

// Shared returns the assembly the test binary's tests share, starting it
// on first use. Call Main from TestMain to stop it.
func Shared(tb testing.TB) *Env {
	tb.Helper()
	shared.once.Do(func() { shared.env, shared.err = start() })
	if shared.err != nil {
		tb.Fatalf("start the AWS assembly: %v", shared.err)
	}
	return shared.env
}

// Main runs the tests and stops the shared assembly, if one was started;
// a failing run prints the end of its log. Use it as TestMain's body:
// os.Exit(awslocaltest.Main(m)).
func Main(m *testing.M) int {
	code := m.Run()
	if e := shared.env; e != nil {
		e.Assembly.Close()
		if code != 0 {
			if b, err := os.ReadFile(e.log.Name()); err == nil {
				fmt.Fprintf(os.Stderr, "the AWS assembly's log (last 64 KB of %s):\n%s\n", e.log.Name(), b[max(0, len(b)-64<<10):])
			}
		}
		e.log.Close()
		os.RemoveAll(e.dir)
	}
	return code
}

func start() (*Env, error) {
	root, err := repoRoot()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "awslocaltest-")
	if err != nil {
		return nil, err
	}
	log, err := os.Create(filepath.Join(dir, "aws-local.log"))
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	// The sweeper every few seconds rather than every five minutes, as
	// GEN_AWS_LOCAL_SCHEDULE_INTERVAL allows by hand.
	a, err := assembly.Start(context.Background(), assembly.Config{Root: root, Addr: "127.0.0.1:0",
		DataDir: filepath.Join(dir, "data"), Log: log, ScheduleInterval: 3 * time.Second})
	if err != nil {
		b, _ := os.ReadFile(log.Name())
		log.Close()
		os.RemoveAll(dir)
		return nil, fmt.Errorf("%w; its log:\n%s", err, bytes.TrimSpace(b))
	}
	return &Env{URL: a.BaseURL, DevKey: a.DevKey, Assembly: a, dir: dir, log: log}, nil
}

// repoRoot is the directory holding template.yaml, above the test's.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "template.yaml")); err == nil {
			return dir, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", fmt.Errorf("no template.yaml above the test's directory")
		}
		dir = up
	}
}

// Store is the DynamoDB store the functions use, for the checks a test
// makes behind the API (balances, ledgers, tasks).
func (e *Env) Store() store.Store { return e.Assembly.Store }

// NewKey creates an account holding credits and a key of the tier, wired
// to its usage plan as `genctl keys create` wires it on AWS.
func (e *Env) NewKey(credits int64, tier string, limits store.KeyLimits) (admin.CreatedKey, error) {
	k, err := e.Assembly.CreateKey(context.Background(), admin.KeyRequest{Name: "test", Credits: credits, Tier: tier, Limits: limits})
	if err != nil {
		return admin.CreatedKey{}, fmt.Errorf("create key: %w", err)
	}
	return k, nil
}

// Key is NewKey of an Enterprise key for a test (the zero Limits: Roomy):
// a failure ends it.
func (e *Env) Key(tb testing.TB, credits int64, limits store.KeyLimits) admin.CreatedKey {
	tb.Helper()
	if limits == (store.KeyLimits{}) {
		limits = Roomy
	}
	k, err := e.NewKey(credits, "enterprise", limits)
	if err != nil {
		tb.Fatal(err)
	}
	return k
}

// Balance returns an account's credits.
func (e *Env) Balance(tb testing.TB, accountID string) int64 {
	tb.Helper()
	a, err := e.Assembly.Store.Account(context.Background(), accountID)
	if err != nil {
		tb.Fatalf("account %s: %v", accountID, err)
	}
	return a.Credits
}

// Audit fails the test on any problem of the account's ledger.
func (e *Env) Audit(tb testing.TB, accountID string) {
	tb.Helper()
	problems, err := audit.Account(context.Background(), e.Assembly.Store, accountID)
	if err != nil {
		tb.Fatalf("audit %s: %v", accountID, err)
	}
	for _, p := range problems {
		tb.Errorf("ledger of %s: %s", accountID, p)
	}
}
