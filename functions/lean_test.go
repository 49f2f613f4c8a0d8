package functions_test

import (
	"bufio"
	"context"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// endpointFunctions are the functions behind API Gateway: a client waits
// for their cold starts.
var endpointFunctions = []string{
	"text-to-video", "image-to-video", "first-last-frame", "status", "download", "history", "models", "docs",
	"playground", "authorizer",
	// Extensions of a task's video (issue 37).
	"extend",
	// Cancel, delete, credits and direct uploads.
	"cancel", "delete-task", "credits", "uploads",
	// Quotes and the live event stream.
	"quote", "status-events",
	// The webhook endpoints.
	"webhooks", "webhook-secret", "webhook-delete", "webhook-deliveries", "webhook-replay",
	// The OpenAI-compatible videos API.
	"openai-videos", "openai-video", "openai-content", "openai-extensions",
	// MCP over Streamable HTTP.
	"mcp",
}

// maxEndpointBytes bounds the stripped linux/arm64 bootstrap of an
// endpoint function: those that start a workflow link Step Functions'
// client and the image checks, and are just under 10.5 MB. The others
// are bounded lower (noObjects, storage).
const maxEndpointBytes = 11_000_000

// The functions that keep no object link no S3 client (status and
// download sign their links with shared/blob/s3links): they are 8.3 to
// 8.6 MB. Those that keep objects (delete-task, uploads) link S3's
// client, and are under 9.9 MB (routed capability tables and the
// OpenAI-shaped API's routes took uploads past a 64 KiB step at 9.7;
// the models' availability, event-stream leases and the store's
// resolution of a lost commit past the next, at 9.8).
var (
	noObjects = []string{"status", "download", "models", "history", "credits",
		"webhooks", "webhook-secret", "webhook-delete", "webhook-deliveries", "webhook-replay", "openai-content"}
	maxNoObjectsBytes int64 = 9_000_000
	storage                 = []string{"delete-task", "uploads", "openai-video"}
	maxStorageBytes   int64 = 9_900_000
)

// The MCP function serves the tools over the routes they call, the three
// starts among them, in-process (shared/awsstack/mcplambda): it links
// what image-to-video does, the other routes' handlers, and the MCP SDK
// (its JSON-RPC, JSON Schema and JSON libraries, 2.2 MB): 12.9 MB.
const maxMCPBytes = 13_500_000

// What starts or steps the workflow: the functions that may link it;
// what takes images in a request: the functions that check them.
var (
	// text-to-video takes reference images (issue 37).
	imageStarts = []string{"text-to-video", "image-to-video", "first-last-frame", "openai-videos", "quote", "mcp"}
	starters    = []string{"text-to-video", "image-to-video", "first-last-frame", "cancel", "sweeper", "openai-videos", "mcp", "extend", "openai-extensions"}
	steps       = []string{"mark-processing", "generate", "poll", "complete", "fail"}
)

// providerFunctions build the providers' clients: the generate and poll
// steps, and the hourly model check (which asks each route which models
// it serves).
var providerFunctions = []string{"generate", "poll", "model-check"}

// providerTables are the capability and price tables beside each
// adapter, which link no client: every function that checks a start
// reads them.
var providerTables = []string{
	"github.com/genvideo/gen/shared/provider/veo/veomodels",
	"github.com/genvideo/gen/shared/provider/openai/openaimodels",
}

// notLinked are the packages (with those under them) that no function
// may link, but for those named in only: the renderer runs only in the
// generate and poll steps, the providers there and in the model check; Step Functions' executions
// (sfnstart, and the sweeper's execution names in it) only where a
// workflow is started or stopped; the workflow's steps and input only
// there and in the steps; the image intake and checks only in the
// starts that take images; the ASL interpreter, the state machine's
// definition and the fault injection only in the local stack, as SQLite;
// test support and fakes (shared/testing) in no function;
// kin-openapi and the YAML libraries only in tests and go generate; the
// HTTP layer, the use cases behind it and the OpenAPI document only in
// the functions behind API Gateway (the webhook worker sends the
// contract's shapes from shared/wire, issue 35).
var notLinked = []struct {
	path, what string
	only       []string
}{
	{"github.com/genvideo/gen/shared/provider/render", "the ffmpeg renderer", []string{"generate", "poll"}},
	{"github.com/genvideo/gen/shared/provider/veo", "the Veo providers", providerFunctions},
	{"github.com/genvideo/gen/shared/provider/openai", "the OpenAI-shaped provider", providerFunctions},
	{"github.com/genvideo/gen/shared/provider/factory", "the providers' factory", providerFunctions},
	// The MCP SDK's auth package links it too (mcp imports it for its
	// bearer-token types); gen's MCP endpoint takes its own keys.
	{"golang.org/x/oauth2", "Google's OAuth2 library", slices.Concat(providerFunctions, []string{"mcp"})},
	{"github.com/genvideo/gen/shared/sfnstart", "Step Functions' executions", starters},
	{"github.com/aws/aws-sdk-go-v2/service/sfn", "the Step Functions client", starters},
	{"github.com/genvideo/gen/shared/sweeper", "the sweeper", starters},
	{"github.com/genvideo/gen/shared/workflow", "the workflow's steps", append(starters, steps...)},
	{"github.com/genvideo/gen/shared/intake", "the image intake", imageStarts},
	{"github.com/genvideo/gen/shared/imagecheck", "the image checks", imageStarts},
	{"github.com/genvideo/gen/shared/asl", "the ASL interpreter", nil},
	{"github.com/genvideo/gen/statemachine", "the state machine's definition", nil},
	{"github.com/genvideo/gen/shared/devstack", "the local stack", nil},
	{"github.com/genvideo/gen/shared/faults", "the fault injection", nil},
	{"github.com/genvideo/gen/shared/testing", "test support and fakes", nil},
	{"github.com/genvideo/gen/shared/store/sqlitestore", "the SQLite store", nil},
	{"modernc.org/sqlite", "SQLite", nil},
	{"github.com/getkin/kin-openapi", "kin-openapi", nil},
	{"github.com/oasdiff/yaml", "a YAML library", nil},
	{"github.com/oasdiff/yaml3", "a YAML library", nil},
	{"github.com/aws/aws-sdk-go-v2/config", "the SDK's configuration loader (SSO, STS, IMDS, shared files)", nil},
	{"github.com/genvideo/gen/shared/httpapi", "the HTTP layer", endpointFunctions},
	{"github.com/genvideo/gen/shared/service", "the API's use cases", endpointFunctions},
	{"github.com/genvideo/gen/shared/openapi", "the OpenAPI document", endpointFunctions},
}

// TestFunctionsLinkOnlyWhatTheyRun lists each function's dependencies as
// its Lambda build sees them (go list -deps with make build's target and
// flags): none is a notLinked package or imports testing.
func TestFunctionsLinkOnlyWhatTheyRun(t *testing.T) {
	flags := lambdaGoFlags(t)
	for _, name := range functionNames {
		t.Run(name, func(t *testing.T) {
			args := append([]string{"list", "-deps", "-f", "{{.ImportPath}}{{range .Imports}} {{.}}{{end}}"}, flags...)
			out := goCommand(t, append(args, "./"+name)...)
			for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
				pkg, imports, _ := strings.Cut(line, " ")
				for _, n := range notLinked {
					if slices.Contains(providerTables, pkg) {
						break
					}
					if (pkg == n.path || strings.HasPrefix(pkg, n.path+"/")) && !slices.Contains(n.only, name) {
						t.Errorf("functions/%s links %s (%s)", name, pkg, n.what)
					}
				}
				if slices.Contains(strings.Fields(imports), "testing") {
					t.Errorf("functions/%s links %s, which imports testing", name, pkg)
				}
			}
		})
	}
}

// TestEndpointBootstrapSize builds the endpoint functions as make build
// does and bounds their size: what a function links is what Lambda
// downloads and loads at each cold start.
func TestEndpointBootstrapSize(t *testing.T) {
	dir := t.TempDir()
	args := append([]string{"build"}, lambdaGoFlags(t)...)
	args = append(args, "-o", dir+string(os.PathSeparator))
	for _, name := range endpointFunctions {
		args = append(args, "./"+name)
	}
	goCommand(t, args...)
	linkedBy := map[uint64]string{}
	for _, name := range endpointFunctions {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Errorf("functions/%s: %v", name, err)
			continue
		}
		linked := loadedBytes(t, filepath.Join(dir, name))
		t.Logf("functions/%s: %d bytes, %d of them loaded", name, fi.Size(), linked)
		// Each endpoint links its own route's handlers and no other's, so
		// no two load the same code. Their files may still be of one size:
		// the linker aligns a linux/arm64 binary's segments to 64 KiB.
		if other, ok := linkedBy[linked]; ok {
			t.Errorf("functions/%s and functions/%s load the same %d bytes: does one link the other's route?", name, other, linked)
		}
		linkedBy[linked] = name
		limit := int64(maxEndpointBytes)
		switch {
		case slices.Contains(noObjects, name):
			limit = maxNoObjectsBytes
		case slices.Contains(storage, name):
			limit = maxStorageBytes
		case name == "mcp":
			limit = maxMCPBytes
		}
		if fi.Size() > limit {
			t.Errorf("functions/%s: the bootstrap is %d bytes, more than %d; go list -deps -f '{{.ImportPath}}' ./functions/%s "+
				"says what it links (a package that calls reflect's MethodByName, such as text/template, keeps every exported method)",
				name, fi.Size(), limit, name)
		}
	}
}

// loadedBytes is the code and data a binary loads: the size of its
// allocated ELF sections that the file holds (code, read-only data,
// data, the runtime's tables; not the zeroed .bss), without the padding
// between its segments.
func loadedBytes(t *testing.T, path string) uint64 {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	defer f.Close()
	var n uint64
	for _, s := range f.Sections {
		if s.Flags&elf.SHF_ALLOC != 0 && s.Type != elf.SHT_NOBITS {
			n += s.Size
		}
	}
	return n
}

// lambdaGoFlags returns the Makefile's LAMBDA_GOFLAGS, the flags make
// build compiles the functions with, split as the shell splits them.
func lambdaGoFlags(t *testing.T) []string {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), ":=")
		if ok && strings.TrimSpace(name) == "LAMBDA_GOFLAGS" {
			flags, err := shellFields(value)
			if err != nil || len(flags) == 0 {
				t.Fatalf("Makefile: LAMBDA_GOFLAGS %q: %v", value, err)
			}
			return flags
		}
	}
	t.Fatal("Makefile: no LAMBDA_GOFLAGS := line")
	return nil
}

// shellFields splits s at spaces outside double quotes, dropping the
// quotes: -ldflags="-s -w" is one field, -ldflags=-s -w.
func shellFields(s string) ([]string, error) {
	var fields []string
	var field strings.Builder
	inField, quoted := false, false
	for _, r := range s {
		switch {
		case r == '"':
			quoted, inField = !quoted, true
		case (r == ' ' || r == '\t') && !quoted:
			if inField {
				fields = append(fields, field.String())
				field.Reset()
				inField = false
			}
		default:
			field.WriteRune(r)
			inField = true
		}
	}
	if quoted {
		return nil, fmt.Errorf("unbalanced quote")
	}
	if inField {
		fields = append(fields, field.String())
	}
	return fields, nil
}

// goCommand runs the go command for the Lambdas' platform (make build's
// GOOS, GOARCH and CGO_ENABLED) and returns its output.
func goCommand(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH=arm64", "CGO_ENABLED=0")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return string(out)
}
