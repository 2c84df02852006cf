# streamwatch: `make test` is what CI runs (.ci/run) and what the README tells you to run.
GO       ?= go
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS  := -s -w -X main.version=$(VERSION)
BIN      ?= bin/streamwatch

.PHONY: build test azurite lint vet fmt-check staticcheck race fuzz bench bench-ab image-build clean

# build: the release binary (the Dockerfile runs this too): static, version stamped, and with
# -tags nodemo, so that the demo's stand-ins (miniredis, kfake, the Slack fake) are not linked;
# `go run . demo` (no tags) keeps the demo. `go version -m bin/streamwatch` lists the modules.
build:
	CGO_ENABLED=0 $(GO) build -trimpath -tags nodemo -ldflags '$(LDFLAGS)' -o $(BIN) .

# test: formatting, vet, staticcheck, then every test with the race detector against a real
# redis-server (REDIS_URL, or a throwaway server scripts/with-redis starts on a free port) and
# a real Azurite, which each Azure test starts (internal/testazurite) and must find.
test: fmt-check vet staticcheck azurite
	STREAMWATCH_REQUIRE_AZURITE=1 scripts/with-redis $(GO) test -race -count=1 -timeout 20m ./...

# azurite: Microsoft's Azure Storage emulator from the npm registry, into .cache/azurite (only
# when missing; Node.js and npm come from Debian's packages when they are missing and we are root).
AZURITE_VERSION := 3.37.0
AZURITE_DIR     := .cache/azurite
azurite: $(AZURITE_DIR)/node_modules/.bin/azurite-blob
$(AZURITE_DIR)/node_modules/.bin/azurite-blob:
	@command -v npm >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 && \
	  apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null; } || \
	  { echo "azurite: npm is missing: install Node.js and npm (Debian/Ubuntu: sudo apt-get install nodejs npm)"; exit 1; }
	mkdir -p $(AZURITE_DIR)
	npm install --prefix $(AZURITE_DIR) --no-audit --no-fund --loglevel=error azurite@$(AZURITE_VERSION)

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

staticcheck:
	@command -v staticcheck >/dev/null 2>&1 || [ -x "$$($(GO) env GOPATH)/bin/staticcheck" ] || \
	  $(GO) install honnef.co/go/tools/cmd/staticcheck@v0.8.2
	@PATH="$$PATH:$$($(GO) env GOPATH)/bin" staticcheck ./...

# fuzz runs every fuzz target for FUZZTIME each (the seeds run in `make test`).
FUZZTIME ?= 30s
fuzz:
	@for pkg in $$($(GO) list ./...); do \
	  for t in $$($(GO) test -list '^Fuzz' $$pkg 2>/dev/null | grep '^Fuzz'); do \
	    echo "== $$pkg $$t"; $(GO) test -run '^$$' -fuzz "^$$t$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 2s $$pkg || exit 1; \
	  done; \
	done

# bench: the end-to-end figures in bench/RESULTS.md (ingest vs Alertmanager with Redis persisted
# as in production, the duplicate and distinct-alert storms, Redis memory, lag, checkpoint,
# process memory), min/median/max over 5 runs; about 15 minutes. BENCHFLAGS go to bench/cmd/swbench.
bench:
	scripts/bench $(BENCHFLAGS)

# bench-ab: this tree against BASE (default: the merge base with main, or the previous commit),
# alternated in one run: ingest at 1 and 20 alerts a request, with the ratio of every headline
# figure; one worse by more than 10% is flagged. Run it before submitting a change to the
# webhooks, state/ or the record script. About 3 minutes; CI does not run it.
bench-ab:
	BASE=$(BASE) scripts/bench-ab $(BENCHFLAGS)

clean:
	rm -rf bin
