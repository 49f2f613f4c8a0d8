# gen: a video-generation API. `make run` starts the whole service locally;
# `make test` runs the whole suite. Both install what they need first.

GO       ?= go
GOFLAGS  ?=
export GEN_ADDR     ?= 127.0.0.1:8080
export GEN_DATA_DIR ?= .gen

.PHONY: run run-tools test tools fmt vet race check genctl help

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-10s %s\n", $$1, $$2}'

tools: ## install what the suite needs if missing (or say how)
	@bash infra/scripts/need-tools.sh

run-tools:
	@bash infra/scripts/need-tools.sh --run

run: run-tools ## start the service on http://$(GEN_ADDR), data in $(GEN_DATA_DIR)
	$(GO) run ./infra/gen-local

test: tools fmt vet race ## the whole suite: gofmt, go vet, go test -race

fmt: ## fail on files gofmt would change
	@out=$$(find . -name '*.go' -not -path './.gen/*' -not -path '*/node_modules/*' -print0 | xargs -0 gofmt -l); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

vet: ## go vet every package
	$(GO) vet ./...

race: ## go test with the race detector
	$(GO) test -race -count=1 -timeout 15m ./...

genctl: ## operator CLI, e.g. make genctl ARGS="keys list"
	$(GO) run ./infra/genctl $(ARGS)
