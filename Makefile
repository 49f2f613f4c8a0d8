# gen: a video-generation API. `make run` starts the whole service locally;
# `make test` runs the whole suite. Both install what they need first.

GO       ?= go
GOFLAGS  ?=
export GEN_ADDR     ?= 127.0.0.1:8080
export GEN_DATA_DIR ?= .gen

.PHONY: run run-aws-local run-tools test tools fmt vet race test-aws-local check genctl help

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-10s %s\n", $$1, $$2}'

tools: ## install what the suite needs if missing (or say how)
	@bash infra/scripts/need-tools.sh

run-tools:
	@bash infra/scripts/need-tools.sh --run

run: run-tools ## start the service on http://$(GEN_ADDR), data in $(GEN_DATA_DIR)
	$(GO) run ./infra/gen-local

# The AWS assembly on one machine: template.yaml's functions built for this
# host behind an API Gateway emulator, Step Functions, S3 and DynamoDB Local,
# no AWS account, no Docker. Needs java and npm (DynamoDB Local). See
# infra/docs/deploy.md, "The AWS assembly on one machine".
run-aws-local: tools ## the AWS assembly on one machine on http://$(GEN_ADDR)/v1, data in $(GEN_DATA_DIR)
	$(GO) run ./infra/aws-local

test: tools fmt vet race test-aws-local ## the whole suite: gofmt, go vet, go test -race, then the e2e suites on the AWS assembly

fmt: ## fail on files gofmt would change
	@out=$$(find . -name '*.go' -not -path './.gen/*' -not -path '*/node_modules/*' -print0 | xargs -0 gofmt -l); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

vet: ## go vet every package
	$(GO) vet ./...

race: ## go test with the race detector
	$(GO) test -race -count=1 -timeout 15m ./...

# The end-to-end suites of devstack and the client again, against the AWS
# assembly of run-aws-local (GEN_E2E_STACK=aws-local; one assembly per
# package). Without -race: the race pass above already ran these tests on
# the embedded stack, and the functions run as separate processes. About a
# minute; skipped with GEN_SKIP_DYNAMODB=1 (no java).
E2E_PACKAGES := ./shared/devstack ./shared/client
test-aws-local: ## the e2e suites against the AWS assembly (GEN_E2E_STACK=aws-local)
	@if [ "$$GEN_SKIP_DYNAMODB" = 1 ]; then echo "test-aws-local: skipped (GEN_SKIP_DYNAMODB=1)"; else \
	GEN_E2E_STACK=aws-local $(GO) test -count=1 -timeout 15m $(E2E_PACKAGES); fi

genctl: ## operator CLI, e.g. make genctl ARGS="keys list"
	$(GO) run ./infra/genctl $(ARGS)

# Not part of `make test`: it runs for minutes. See infra/docs/reliability.md.
.PHONY: soak
soak: tools ## 200 clients for 60 s against the local stack with faults on, then the ledger check (ARGS="-clients 300 -duration 2m")
	$(GO) run ./infra/soak $(ARGS)

# Not part of `make test`: it runs for minutes, and its figures are read,
# not asserted. See infra/docs/performance.md.
.PHONY: bench
bench: ## the service next to a bare net/http server: wrk from outside (issue 38), then polling, starts, history, models, Lambda size and init (ARGS="-duration 20s")
	@bash infra/scripts/need-tools.sh --bench
	$(GO) run ./infra/bench $(ARGS)

# ---- AWS Lambda (functions/<name>/main.go, one function each) ----

FUNCTIONS      := $(notdir $(patsubst %/main.go,%,$(wildcard functions/*/main.go)))
LAMBDA_GOFLAGS := -tags lambda.norpc -trimpath -ldflags="-s -w"

.PHONY: build FORCE
# go test ./functions/ builds the endpoints with LAMBDA_GOFLAGS too and
# fails on one over 12 MB; build prints the sizes.
build: $(FUNCTIONS:%=bin/%/bootstrap) ## cross-compile every Lambda to bin/<name>/bootstrap (linux/arm64, provided.al2023)
	@for f in $(FUNCTIONS); do printf '%10d bytes  bin/%s/bootstrap\n' $$(wc -c < bin/$$f/bootstrap) $$f; done

bin/%/bootstrap: FORCE
	GOOS=linux GOARCH=arm64 CGO_ENABLED=0 $(GO) build $(LAMBDA_GOFLAGS) -o $@ ./functions/$*

FORCE:

# make invoke-<name> runs functions/<name> once as `sam local invoke
# <Name>Function -e <event> --env-vars env.json` would, against the running
# `make run-aws-local` (same GEN_DATA_DIR): make invoke-env first writes
# $(GEN_DATA_DIR)/invoke/env.json and events/<name>.json (a key it creates,
# tasks of its account). Without SAM and Docker (as here) genctl runs the
# function's binary behind a Lambda Runtime API with exactly the environment
# SAM would give it; SAM=1 runs the real sam local invoke on the same files.
# See infra/docs/lambdas.md, "sam local invoke".
INVOKE_DIR := $(GEN_DATA_DIR)/invoke
.PHONY: invoke-env
invoke-env: ## write env.json and signed events for make invoke-<name> from the running run-aws-local
	$(GO) run ./infra/genctl invoke-env

invoke-%:
	@if [ "$(SAM)" = 1 ]; then \
	id=$$(echo '$*' | awk -F- '{for (i = 1; i <= NF; i++) printf "%s", toupper(substr($$i, 1, 1)) substr($$i, 2)}')Function; \
	set -x; sam build $$id && AWS_ACCESS_KEY_ID=local AWS_SECRET_ACCESS_KEY=local AWS_REGION=us-east-1 \
	sam local invoke $$id -e $(INVOKE_DIR)/events/$*.json --env-vars $(INVOKE_DIR)/env.json --docker-network host $(SAM_ARGS); \
	else $(GO) run ./infra/genctl invoke $*; fi
