package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// endpoints are the functions behind API Gateway, whose cold starts a
// client waits for.
var endpoints = []string{
	"text-to-video", "image-to-video", "first-last-frame", "status", "download", "history", "models", "docs", "authorizer",
}

// lambdas prints the size of each endpoint's bootstrap as make build makes
// it (linux/arm64, stripped), and its init as the functions harness
// measures it (TestEndpointInit: process start to the first Runtime API
// next call, on this machine).
func lambdas(ctx context.Context, out io.Writer) error {
	dir, err := os.MkdirTemp("", "gen-bench-lambdas-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	args := []string{"build", "-tags", "lambda.norpc", "-trimpath", "-ldflags=-s -w", "-o", dir + string(os.PathSeparator)}
	for _, e := range endpoints {
		args = append(args, "./functions/"+e)
	}
	build := exec.CommandContext(ctx, "go", args...)
	build.Env = append(os.Environ(), "GOOS=linux", "GOARCH=arm64", "CGO_ENABLED=0")
	if b, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("go build: %v\n%s", err, b)
	}
	init := map[string]string{}
	test := exec.CommandContext(ctx, "go", "test", "-count=1", "-run", "^TestEndpointInit$", "-v", "./functions/")
	b, err := test.CombinedOutput()
	if err != nil {
		return fmt.Errorf("go test -run TestEndpointInit ./functions/: %v\n%s", err, b)
	}
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	for sc.Scan() {
		// The test logs "init <function>: <median> (of n: ...)".
		line := strings.TrimSpace(sc.Text())
		if i := strings.Index(line, "init "); i >= 0 {
			if name, rest, ok := strings.Cut(line[i+len("init "):], ": "); ok {
				init[name] = rest
			}
		}
	}
	fmt.Fprintf(out, "\nEndpoint Lambdas: bootstrap size (linux/arm64, make build flags); init, process start to the first Runtime API next (this machine, median of the harness's cold starts)\n")
	for _, e := range endpoints {
		fi, err := os.Stat(filepath.Join(dir, e))
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "  %-17s %6.2f MB  init %s\n", e, float64(fi.Size())/1e6, init[e])
	}
	return nil
}
