// Command aws-local runs the AWS assembly of gen on this machine, with no
// AWS account and no Docker: `make run-aws-local` starts it. It listens
// on GEN_ADDR, keeps its state under GEN_DATA_DIR, prints the base URL
// and a dev key like `make run`, and writes one structured log stream
// (JSON lines) to stderr. See package infra/awslocal/assembly, and
// infra/docs/deploy.md for what differs from `make run` by design.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/genvideo/gen/infra/awslocal/assembly"
	"github.com/genvideo/gen/shared/devkey"
	"github.com/genvideo/gen/shared/devstack"
	"github.com/genvideo/gen/shared/settings"
)

// envScheduleInterval shortens every Schedule event's rate, e.g. 10s.
const envScheduleInterval = "GEN_AWS_LOCAL_SCHEDULE_INTERVAL"

// envProviderConfig names a file holding a provider configuration
// secret's string (awsstack.ConfigSecret): the assembly keeps it in its
// Secrets Manager under providerConfigARN and sets the template's
// ProviderConfigSecretArn to it, as an operator with many routes deploys.
const envProviderConfig = "GEN_AWS_LOCAL_PROVIDER_CONFIG"

// providerConfigARN is the made-up ARN of that secret.
const providerConfigARN = "arn:aws:secretsmanager:us-east-1:123456789012:secret:gen-local-provider-config-AbCdEf"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, stdout, stderr io.Writer) int {
	addr := os.Getenv(devstack.EnvAddr)
	if addr == "" {
		addr = "127.0.0.1:8080"
	}
	cfg := assembly.Config{Root: ".", Addr: addr, DataDir: devstack.DataDirFromEnv(), Log: stderr}
	if v := os.Getenv(envScheduleInterval); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			fmt.Fprintf(stderr, "aws-local: %s=%q: want a positive duration such as 30s\n", envScheduleInterval, v)
			return 2
		}
		cfg.ScheduleInterval = d
	}
	if file := os.Getenv(envProviderConfig); file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			fmt.Fprintf(stderr, "aws-local: %s: %v\n", envProviderConfig, err)
			return 2
		}
		// The functions check it at their cold start, as on AWS.
		cfg.Secrets = map[string]string{providerConfigARN: string(b)}
		cfg.Parameters = map[string]string{"ProviderConfigSecretArn": providerConfigARN}
	}
	// GEN_WEBHOOK_ALLOW_PRIVATE is the operator's, for this assembly only:
	// passed to the functions so that a receiver on this machine works.
	r := settings.NewReader(os.LookupEnv)
	cfg.WebhookAllowPrivate = r.Switch(settings.WebhookAllowPrivate, false)
	if err := r.Err(); err != nil {
		fmt.Fprintln(stderr, "aws-local:", err)
		return 2
	}
	if _, err := os.Stat("template.yaml"); err != nil {
		fmt.Fprintln(stderr, "aws-local: run it from the repository's root (make run-aws-local): template.yaml not found")
		return 2
	}
	a, err := assembly.Start(ctx, cfg)
	if err != nil {
		fmt.Fprintln(stderr, "aws-local:", err)
		return 1
	}
	defer a.Close()
	fmt.Fprintf(stdout, "\ngen (the AWS assembly on one machine) is running on %s\n", a.BaseURL)
	fmt.Fprintf(stdout, "  data:        %s\n", cfg.DataDir)
	fmt.Fprintf(stdout, "  dev API key: %s  [also in %s]\n\n", a.DevKey, devkey.Path(cfg.DataDir))
	fmt.Fprintf(stdout, "Try:\n  curl -s %s/api/gen/models -H 'X-API-Key: %s'\n\n", a.BaseURL, a.DevKey)
	<-ctx.Done()
	return 0
}
