# funcgraph — the two commands are `make run` and `make test`.

SHELL     := /bin/bash
GO        ?= go
TOOLS     := .tools
AZURITE_VERSION := 3.35.0
AZURITE   := $(TOOLS)/node_modules/.bin/azurite
AZURITE_DIR := $(TOOLS)/azurite
# Test ports: away from Azurite's defaults so a developer's own Azurite keeps running.
AZURITE_BLOB_PORT  ?= 10100
AZURITE_QUEUE_PORT ?= 10101
AZURITE_TABLE_PORT ?= 10102
DEV_ACCOUNT := devstoreaccount1
DEV_KEY     := Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==
AZURITE_CONN := DefaultEndpointsProtocol=http;AccountName=$(DEV_ACCOUNT);AccountKey=$(DEV_KEY);BlobEndpoint=http://127.0.0.1:$(AZURITE_BLOB_PORT)/$(DEV_ACCOUNT);QueueEndpoint=http://127.0.0.1:$(AZURITE_QUEUE_PORT)/$(DEV_ACCOUNT);TableEndpoint=http://127.0.0.1:$(AZURITE_TABLE_PORT)/$(DEV_ACCOUNT);

FUZZTIME  ?= 30s
# The npm packages of the SDK and browser tests, installed once per lock file (npm ci) into $(TOOLS).
SDKTEST := $(TOOLS)/sdktest
SDKTEST_DEPS := $(SDKTEST)/node_modules/.funcgraph-installed
INSPECTORTEST := $(TOOLS)/inspectortest
A2ATEST := $(TOOLS)/a2atest
A2ATEST_DEPS := $(A2ATEST)/node_modules/.funcgraph-installed
MCPTEST := $(TOOLS)/mcptest
MCPTEST_DEPS := $(MCPTEST)/node_modules/.funcgraph-installed
INSPECTORTEST_DEPS := $(INSPECTORTEST)/node_modules/.funcgraph-installed
# Packages with integration tests (files tagged `integration`), so the run lists only real runs.
# pkg/exampleapp, the longest, is listed first so that go test starts it first.
INTEGRATION_PKGS ?= $(filter ./pkg/exampleapp,$(INTEGRATION_ALL)) $(filter-out ./pkg/exampleapp,$(INTEGRATION_ALL))
INTEGRATION_ALL = $(sort $(patsubst %/,./%,$(dir $(shell grep -rl --include='*_test.go' '^//go:build integration' pkg handler))))
DEV_FUNCTION_KEY ?= dev-function-key
DEV_MASTER_KEY   ?= dev-master-key
TRACE            ?=
# PORT is the port of `make run` and `make run-azurite` (make run PORT=8080).
PORT             ?= 7071

.PHONY: all build run run-azurite test prefetch tidy-check vet bench-check unit integration gotest fuzz fuzz-short bench bench-lock bench-azure bench-plots local package functions azurite-install clean platform-sdk-test a2a-sdk-test mcp-sdk-test browser-install inspector-setup inspector-test inspector-screenshots

all: build

build:
	$(GO) build -o bin/funcgraph ./handler

## run: serve the example app on 127.0.0.1:$(PORT), default 7071 (embedded in-memory backend, no
## Azure); make run PORT=8080 picks another port.
## make run TRACE=stdout prints OpenTelemetry spans on stderr.
run: build
	@echo "funcgraph example app on http://127.0.0.1:$(PORT)/api"
	@echo "  health:  curl http://127.0.0.1:$(PORT)/api/health"
	@echo "  invoke:  curl -H 'x-functions-key: $(DEV_FUNCTION_KEY)' -H 'content-type: application/json' \\"
	@echo "             -d '{\"input\":{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]},\"config\":{\"configurable\":{\"thread_id\":\"t1\"}}}' \\"
	@echo "             http://127.0.0.1:$(PORT)/api/graphs/echo_agent/invoke"
	@echo "  (development keys: function=$(DEV_FUNCTION_KEY) master=$(DEV_MASTER_KEY); never use them in Azure)"
	FUNCGRAPH_TRACE_EXPORTER=$(TRACE) FUNCGRAPH_FUNCTION_KEY=$(DEV_FUNCTION_KEY) FUNCGRAPH_MASTER_KEY=$(DEV_MASTER_KEY) ./bin/funcgraph serve --addr 127.0.0.1:$(PORT)

## run-azurite: the example app on Azure storage: Azurite on its default ports (10000-10002) with
## its data kept under .tools/azurite-data, so durable runs, threads and checkpoints survive a
## restart of the app (and of this target). Stops Azurite when the app stops. It fails, naming
## the port, when one of Azurite's ports is taken (the app would talk to whatever holds it);
## make run-azurite RUN_AZURITE_BLOB_PORT=20000 RUN_AZURITE_QUEUE_PORT=20001
## RUN_AZURITE_TABLE_PORT=20002 picks others.
AZURITE_DATA := $(TOOLS)/azurite-data
RUN_AZURITE_BLOB_PORT  ?= 10000
RUN_AZURITE_QUEUE_PORT ?= 10001
RUN_AZURITE_TABLE_PORT ?= 10002
RUN_AZURITE_PORTS := blob:$(RUN_AZURITE_BLOB_PORT) queue:$(RUN_AZURITE_QUEUE_PORT) table:$(RUN_AZURITE_TABLE_PORT)
# The app's storage: UseDevelopmentStorage=true names the default ports; others take the
# emulator's account (its public, well-known key) at those ports.
ifeq ($(RUN_AZURITE_BLOB_PORT) $(RUN_AZURITE_QUEUE_PORT) $(RUN_AZURITE_TABLE_PORT),10000 10001 10002)
RUN_AZURITE_STORAGE := UseDevelopmentStorage=true
else
RUN_AZURITE_STORAGE := DefaultEndpointsProtocol=http;AccountName=$(DEV_ACCOUNT);AccountKey=$(DEV_KEY);BlobEndpoint=http://127.0.0.1:$(RUN_AZURITE_BLOB_PORT)/$(DEV_ACCOUNT);QueueEndpoint=http://127.0.0.1:$(RUN_AZURITE_QUEUE_PORT)/$(DEV_ACCOUNT);TableEndpoint=http://127.0.0.1:$(RUN_AZURITE_TABLE_PORT)/$(DEV_ACCOUNT);
endif
run-azurite: build $(AZURITE)
	@for svc in $(RUN_AZURITE_PORTS); do \
	  port=$${svc#*:}; \
	  if (exec 3<>/dev/tcp/127.0.0.1/$$port) 2>/dev/null; then \
	    echo "make run-azurite: 127.0.0.1:$$port (Azurite's $${svc%%:*} port) is already taken: the app would use whatever listens" \
	      "there (another Azurite, with other data) instead of the Azurite this target starts. Stop that process (find it with" \
	      "ss -ltnp 'sport = :$$port' or lsof -i :$$port), or run this one on free ports: make run-azurite" \
	      "RUN_AZURITE_BLOB_PORT=20000 RUN_AZURITE_QUEUE_PORT=20001 RUN_AZURITE_TABLE_PORT=20002" >&2; \
	    exit 1; \
	  fi; \
	done
	@mkdir -p $(AZURITE_DATA); \
	$(AZURITE) --location $(AZURITE_DATA) --disableTelemetry --silent --skipApiVersionCheck --loose \
	  --blobHost 127.0.0.1 --blobPort $(RUN_AZURITE_BLOB_PORT) --queueHost 127.0.0.1 --queuePort $(RUN_AZURITE_QUEUE_PORT) \
	  --tableHost 127.0.0.1 --tablePort $(RUN_AZURITE_TABLE_PORT) > $(AZURITE_DATA)/azurite.log 2>&1 & pid=$$!; \
	trap 'kill $$pid 2>/dev/null; wait $$pid 2>/dev/null' EXIT INT TERM; \
	up=0; for i in $$(seq 1 300); do \
	  if ! kill -0 $$pid 2>/dev/null; then break; fi; \
	  up=1; for svc in $(RUN_AZURITE_PORTS); do (exec 3<>/dev/tcp/127.0.0.1/$${svc#*:}) 2>/dev/null || up=0; done; \
	  if [ $$up -eq 1 ]; then break; fi; sleep 0.1; \
	done; \
	if [ $$up -ne 1 ] || ! kill -0 $$pid 2>/dev/null; then echo "make run-azurite: Azurite did not start:" >&2; cat $(AZURITE_DATA)/azurite.log >&2; exit 1; fi; \
	echo "funcgraph example app on http://127.0.0.1:$(PORT)/api, storage: Azurite on ports $(RUN_AZURITE_BLOB_PORT), $(RUN_AZURITE_QUEUE_PORT), $(RUN_AZURITE_TABLE_PORT) (data in $(AZURITE_DATA))"; \
	AzureWebJobsStorage='$(RUN_AZURITE_STORAGE)' FUNCGRAPH_FUNCTION_KEY=$(DEV_FUNCTION_KEY) FUNCGRAPH_MASTER_KEY=$(DEV_MASTER_KEY) \
	  ./bin/funcgraph serve --addr 127.0.0.1:$(PORT)

## test: tidy modules, vet (the product and bench/), lint (staticcheck and gofmt), then the run
## inspector in headless Chromium, and every Go test, unit and integration, race-enabled against
## Azurite (gotest), with the SDK tests and a short fuzz pass beside them. What the later steps
## install (Chromium, Azurite and the npm packages of the browser and SDK tests) downloads in the
## background while the Go checks use the CPU (prefetch; its log is $(TOOLS)/prefetch.log), and
## the fuzz pass runs beside the Go tests, whose Azurite tests leave much of the CPU idle (not
## beside the browser test, whose page waits a busy machine slows past their bounds).
test: tidy-check
	@mkdir -p $(TOOLS); echo "prefetch (in the background, log $(TOOLS)/prefetch.log): Chromium, Azurite, the npm packages of the browser and SDK tests"; \
	$(MAKE) --no-print-directory prefetch > $(TOOLS)/prefetch.log 2>&1 & pf=$$!; \
	$(MAKE) --no-print-directory vet bench-check lint; rc=$$?; \
	if ! wait $$pf; then echo "prefetch failed:"; cat $(TOOLS)/prefetch.log; exit 1; fi; \
	if [ $$rc != 0 ]; then exit $$rc; fi; \
	$(MAKE) --no-print-directory build; \
	$(MAKE) --no-print-directory inspector-test; irc=$$?; \
	echo "fuzz-short (in the background, beside the Go tests, whose Azurite tests wait on storage more than they compute; its output follows theirs)"; \
	$(MAKE) --no-print-directory fuzz-short > $(TOOLS)/fuzz-short.log 2>&1 & fz=$$!; \
	$(MAKE) --no-print-directory gotest; rc=$$?; \
	wait $$fz; frc=$$?; cat $(TOOLS)/fuzz-short.log; \
	if [ $$irc != 0 ]; then echo "inspector-test failed"; exit $$irc; fi; \
	if [ $$frc != 0 ]; then echo "fuzz-short failed"; exit $$frc; fi; \
	exit $$rc

## prefetch: install what the browser, SDK and Azurite steps need (each once; kept in $(TOOLS)).
prefetch: browser-install $(AZURITE) $(SDKTEST_DEPS) $(INSPECTORTEST_DEPS) $(A2ATEST_DEPS) $(MCPTEST_DEPS)

## tidy-check: `go mod tidy` leaves go.mod and go.sum unchanged in every module of the repository
## (the product, bench/, test fixtures); it prints the change it would make, and fails, without
## touching the files.
GO_MODULES = $(sort $(dir $(shell find . -name go.mod -not -path './.tools/*' -not -path './dist/*' -not -path './local/*')))
tidy-check:
	@set -e; for m in $(GO_MODULES); do echo "go mod tidy -diff ($$m)"; (cd $$m && $(GO) mod tidy -diff); done

## vet: go vet over the product with the integration tag, which adds test files only (no file
## is built without it alone), so every file is vetted in one pass.
vet:
	$(GO) vet -tags integration ./...

## lint: a gofmt check that lists every unformatted Go file of the repository and fails, then
## staticcheck with its default checks over the product (with the integration tag, which only
## adds test files) and over bench/. staticcheck is pinned (STATICCHECK_VERSION) and installed by `go install`
## into the git-ignored .tools/ on first use, as Azurite is; it shares Go's build cache and
## keeps its results under the user cache directory (STATICCHECK_CACHE moves them).
STATICCHECK_VERSION := v0.8.2
STATICCHECK := $(TOOLS)/staticcheck-$(STATICCHECK_VERSION)/staticcheck
.PHONY: lint staticcheck-install
lint: $(STATICCHECK)
	@unformatted=$$(find . \( -path ./.tools -o -path ./dist -o -path ./local \) -prune -o -name '*.go' -print \
	  | xargs -r "$$($(GO) env GOROOT)/bin/gofmt" -l) || { echo "gofmt failed" >&2; exit 1; }; \
	if [ -n "$$unformatted" ]; then echo "gofmt: these files are not formatted (gofmt -w them):" >&2; echo "$$unformatted" >&2; exit 1; fi
	@$(STATICCHECK_RUN) $(STATICCHECK) -tags integration ./...
	@cd bench && $(STATICCHECK_RUN) $(CURDIR)/$(STATICCHECK) ./...

staticcheck-install: $(STATICCHECK)

# STATICCHECK_RUN runs staticcheck and, when staticcheck itself panics (seen once on a cold
# cache: an index out of range in v0.8.2's nilness facts, not reproduced since), says so and
# runs it once more; a finding (exit 1) fails at once.
STATICCHECK_RUN = run() { echo "$$*"; "$$@" > $(CURDIR)/$(TOOLS)/staticcheck.out 2>&1; rc=$$?; \
	  if [ $$rc -ne 0 ] && grep -q '^panic:' $(CURDIR)/$(TOOLS)/staticcheck.out; then \
	    echo "staticcheck crashed (its bug, below); running it once more" >&2; head -20 $(CURDIR)/$(TOOLS)/staticcheck.out >&2; \
	    "$$@" > $(CURDIR)/$(TOOLS)/staticcheck.out 2>&1; rc=$$?; fi; \
	  cat $(CURDIR)/$(TOOLS)/staticcheck.out; return $$rc; }; run

$(STATICCHECK):
	GOBIN=$(CURDIR)/$(dir $(STATICCHECK)) $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

## bench-check: the benchmark module (bench/, what `make bench` runs) builds and vets, and its
## chart writer and plot tool pass their tests (tidy-check checks its go.mod and go.sum).
bench-check:
	cd bench && $(GO) build ./... && $(GO) vet ./... && $(GO) test -count=1 ./svgplot/ ./cmd/...

## unit: the race-enabled unit tests, then without the race detector the one test that fills
## the embedded default's whole memory budget (under -race it fills a budget a quarter the size).
## go test's own vet pass is off here and in integration: `make vet` runs all of vet's checks
## (a superset of go test's) on the same packages, with and without the integration tag.
unit:
	$(GO) test -race -vet=off -count=1 -timeout 20m ./...
	$(GO) test -vet=off -count=1 -run '^TestEmbeddedDefault_WaitingRunsWithLargeInputs_RefusedPastTheBudget$$' ./pkg/exampleapp/

# A brief run of every fuzz target (longer: make fuzz FUZZTIME=5m).
fuzz-short:
	@$(MAKE) --no-print-directory fuzz FUZZTIME=3s

# One `go list` names every package with its directory (not one more per package); each package
# with fuzz targets is built once, instrumented (go test -c -fuzz), into $(TOOLS)/fuzz, and the
# binary fuzzes one target at a time from the package's folder (its testdata/fuzz seeds; a
# failing input is written there), with go test's corpus cache.
FUZZBIN := $(TOOLS)/fuzz
fuzz:
	@set -e; mkdir -p $(FUZZBIN); cache=$$($(GO) env GOCACHE)/fuzz; \
	pkgs=$$($(GO) list -f '{{.ImportPath}}={{.Dir}}' ./pkg/...); for p in $$pkgs; do \
	  pkg=$${p%%=*}; dir=$${p#*=}; \
	  targets=$$(grep -L '^//go:build' $$dir/*_test.go 2>/dev/null | xargs -r grep -ho '^func Fuzz[A-Za-z0-9_]*' | sed 's/^func //'); \
	  if [ -z "$$targets" ]; then continue; fi; \
	  bin=$(CURDIR)/$(FUZZBIN)/$$(echo $$pkg | tr / _).test; \
	  $(GO) test -c -fuzz=. -o $$bin $$pkg; \
	  for f in $$targets; do \
	    echo "fuzz $$pkg $$f ($(FUZZTIME))"; \
	    run() { (cd $$dir && $$bin -test.paniconexit0 -test.timeout=10m -test.run='^$$' -test.fuzz="^$$f\$$" \
	      -test.fuzztime=$(FUZZTIME) -test.fuzzcachedir="$$cache/$$pkg") 2>&1; }; \
	    out=$$(run) && { echo "$$out" | tail -2; continue; }; \
	    echo "$$out"; \
	    if echo "$$out" | grep -q 'Failing input written\|panic:'; then exit 1; fi; \
	    for try in 2 3; do \
	      echo "fuzz $$pkg $$f: the fuzzing engine stopped without a failing input (its known deadline flake under load); try $$try of 3"; \
	      out=$$(run) && { echo "$$out" | tail -2; break; }; \
	      echo "$$out"; \
	      if echo "$$out" | grep -q 'Failing input written\|panic:' || [ $$try = 3 ]; then exit 1; fi; \
	    done; \
	  done; \
	done

azurite-install: $(AZURITE)

$(SDKTEST_DEPS): pkg/platform/sdktest/package.json pkg/platform/sdktest/package-lock.json
	rm -rf $(SDKTEST) && mkdir -p $(SDKTEST) && cp pkg/platform/sdktest/package.json pkg/platform/sdktest/package-lock.json $(SDKTEST)/
	cd $(SDKTEST) && npm ci --no-audit --no-fund --loglevel=error
	touch $@

$(A2ATEST_DEPS): pkg/a2aserver/sdktest/package.json pkg/a2aserver/sdktest/package-lock.json
	rm -rf $(A2ATEST) && mkdir -p $(A2ATEST) && cp pkg/a2aserver/sdktest/package.json pkg/a2aserver/sdktest/package-lock.json $(A2ATEST)/
	cd $(A2ATEST) && npm ci --no-audit --no-fund --loglevel=error
	touch $@

$(MCPTEST_DEPS): pkg/mcpserver/sdktest/package.json pkg/mcpserver/sdktest/package-lock.json
	rm -rf $(MCPTEST) && mkdir -p $(MCPTEST) && cp pkg/mcpserver/sdktest/package.json pkg/mcpserver/sdktest/package-lock.json $(MCPTEST)/
	cd $(MCPTEST) && npm ci --no-audit --no-fund --loglevel=error
	touch $@

$(INSPECTORTEST_DEPS): pkg/inspector/browsertest/package.json pkg/inspector/browsertest/package-lock.json
	rm -rf $(INSPECTORTEST) && mkdir -p $(INSPECTORTEST) && cp pkg/inspector/browsertest/package.json pkg/inspector/browsertest/package-lock.json $(INSPECTORTEST)/
	cd $(INSPECTORTEST) && PUPPETEER_SKIP_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error
	touch $@

$(AZURITE):
	mkdir -p $(TOOLS)
	npm install --prefix $(TOOLS) --no-audit --no-fund --loglevel=error azurite@$(AZURITE_VERSION)

# AZURITE_UP is a shell prelude: it starts Azurite in memory on loopback, waits up to 30 s for
# its three ports, arranges to stop it by PID whatever the outcome, and exports the connection
# string. Recipes that need storage start with it. It fails (never skips) when Azurite cannot
# start.
define AZURITE_UP
set -u; mkdir -p $(AZURITE_DIR); \
$(AZURITE) --inMemoryPersistence --disableTelemetry --silent --skipApiVersionCheck --loose --extentMemoryLimit 2048 \
  --blobHost 127.0.0.1 --blobPort $(AZURITE_BLOB_PORT) \
  --queueHost 127.0.0.1 --queuePort $(AZURITE_QUEUE_PORT) \
  --tableHost 127.0.0.1 --tablePort $(AZURITE_TABLE_PORT) \
  > $(AZURITE_DIR)/azurite.log 2>&1 & pid=$$!; echo $$pid > $(AZURITE_DIR)/azurite.pid; \
trap 'kill $$pid 2>/dev/null; wait $$pid 2>/dev/null; rm -f $(AZURITE_DIR)/azurite.pid' EXIT; \
ok=0; for i in $$(seq 1 300); do \
  if (exec 3<>/dev/tcp/127.0.0.1/$(AZURITE_TABLE_PORT)) 2>/dev/null && (exec 3<>/dev/tcp/127.0.0.1/$(AZURITE_BLOB_PORT)) 2>/dev/null && (exec 3<>/dev/tcp/127.0.0.1/$(AZURITE_QUEUE_PORT)) 2>/dev/null; then ok=1; break; fi; \
  if ! kill -0 $$pid 2>/dev/null; then break; fi; sleep 0.1; \
done; \
if [ $$ok -ne 1 ]; then echo "Azurite did not start:"; cat $(AZURITE_DIR)/azurite.log; exit 1; fi; \
export FUNCGRAPH_TEST_STORAGE='$(AZURITE_CONN)';
endef

# integration runs the tagged integration tests against Azurite. Tests that need an Azurite of
# their own (HTTPS with OAuth, for identity-based settings) start FUNCGRAPH_TEST_AZURITE_BIN.
# The SDK tests (platform-sdk-test), which mostly wait on their servers, run beside them on an
# Azurite of their own (SDK_AZURITE_*_PORT, data in $(TOOLS)/azurite-sdk); their output,
# kept in $(TOOLS)/platform-sdk-test.log, follows that of the Go tests.
SDK_AZURITE_BLOB_PORT  ?= 10110
SDK_AZURITE_QUEUE_PORT ?= 10111
SDK_AZURITE_TABLE_PORT ?= 10112
## gotest: every Go test, unit and integration, in one race-enabled pass against Azurite (each
## package's test binary is built once, and the integration tests, which wait on storage, run
## beside the unit tests, which compute), with the SDK tests beside it as in integration; then,
## without the race detector, the one test that fills the embedded default's whole budget.
gotest: $(AZURITE) build $(SDKTEST_DEPS)
	@echo "platform-sdk-test (in the background, on an Azurite of its own; its output follows the Go tests')"; \
	$(MAKE) --no-print-directory platform-sdk-test AZURITE_DIR=$(TOOLS)/azurite-sdk AZURITE_BLOB_PORT=$(SDK_AZURITE_BLOB_PORT) \
	  AZURITE_QUEUE_PORT=$(SDK_AZURITE_QUEUE_PORT) AZURITE_TABLE_PORT=$(SDK_AZURITE_TABLE_PORT) > $(TOOLS)/platform-sdk-test.log 2>&1 & sdk=$$!; \
	( $(AZURITE_UP) FUNCGRAPH_TEST_HANDLER_BIN=$(CURDIR)/bin/funcgraph FUNCGRAPH_TEST_AZURITE_BIN=$(CURDIR)/$(AZURITE) \
	  $(GO) test -race -vet=off -count=1 -timeout 20m -tags integration $(INTEGRATION_PKGS) ./... && \
	  $(GO) test -vet=off -count=1 -run '^TestEmbeddedDefault_WaitingRunsWithLargeInputs_RefusedPastTheBudget$$' ./pkg/exampleapp/ ); rc=$$?; \
	wait $$sdk; src=$$?; echo "platform-sdk-test:"; cat $(TOOLS)/platform-sdk-test.log; \
	if [ $$src != 0 ]; then echo "platform-sdk-test failed"; fi; \
	if [ $$rc != 0 ]; then exit $$rc; fi; exit $$src

integration: $(AZURITE) build $(SDKTEST_DEPS)
	@echo "platform-sdk-test (in the background, on an Azurite of its own; its output follows the Go integration tests')"; \
	$(MAKE) --no-print-directory platform-sdk-test AZURITE_DIR=$(TOOLS)/azurite-sdk AZURITE_BLOB_PORT=$(SDK_AZURITE_BLOB_PORT) \
	  AZURITE_QUEUE_PORT=$(SDK_AZURITE_QUEUE_PORT) AZURITE_TABLE_PORT=$(SDK_AZURITE_TABLE_PORT) > $(TOOLS)/platform-sdk-test.log 2>&1 & sdk=$$!; \
	( $(AZURITE_UP) FUNCGRAPH_TEST_HANDLER_BIN=$(CURDIR)/bin/funcgraph FUNCGRAPH_TEST_AZURITE_BIN=$(CURDIR)/$(AZURITE) \
	  $(GO) test -race -vet=off -count=1 -tags integration -run Integration $(INTEGRATION_PKGS) ); rc=$$?; \
	wait $$sdk; src=$$?; echo "platform-sdk-test:"; cat $(TOOLS)/platform-sdk-test.log; \
	if [ $$src != 0 ]; then echo "platform-sdk-test failed"; fi; \
	if [ $$rc != 0 ]; then exit $$rc; fi; exit $$src

## platform-sdk-test: the official LangGraph JS SDK against the platform routes: on the in-memory
## store, then on Azurite with a server restart (AzureWebJobsStorage: Azure threads, checkpoints, runs).
## --test-force-exit ends a test file once its tests are done, whatever handle an SDK stream left
## open (the harness fails a test whose server does not stop).
platform-sdk-test: $(AZURITE) build $(SDKTEST_DEPS)
	cp pkg/platform/sdktest/*.mjs $(SDKTEST)/
	cd $(SDKTEST) && FUNCGRAPH_SERVER_BIN=$(CURDIR)/bin/funcgraph node --test --test-force-exit sdk.test.mjs
	@$(AZURITE_UP) cd $(SDKTEST) && AzureWebJobsStorage="$$FUNCGRAPH_TEST_STORAGE" FUNCGRAPH_SERVER_BIN=$(CURDIR)/bin/funcgraph \
	  node --test --test-force-exit --test-concurrency=1 sdk.test.mjs restart.test.mjs
	@$(MAKE) --no-print-directory a2a-sdk-test
	@$(MAKE) --no-print-directory mcp-sdk-test

# EMULATE is the emulated Functions host as a command (pkg/funchosttest/testdata/emulate), for the SDK
# tests that run the staged folder under it (server.mjs, copied next to them).
EMULATE := $(TOOLS)/emulate
.PHONY: emulate
emulate:
	$(GO) build -o $(EMULATE) ./pkg/funchosttest/testdata/emulate

## a2a-sdk-test: the official A2A JS SDK (@a2a-js/sdk, pinned in pkg/a2aserver/sdktest) against
## the A2A endpoint (docs/a2a.md): on the in-memory store, then on Azurite, through both
## transports (the standalone server; the staged folder under the emulated Functions host).
## platform-sdk-test runs it after its own, so `make test` does.
a2a-sdk-test: $(AZURITE) build emulate $(A2ATEST_DEPS)
	cp pkg/a2aserver/sdktest/*.mjs pkg/funchosttest/testdata/emulate/server.mjs $(A2ATEST)/
	cd $(A2ATEST) && FUNCGRAPH_SERVER_BIN=$(CURDIR)/bin/funcgraph node --test --test-force-exit a2a.test.mjs
	@$(AZURITE_UP) cd $(A2ATEST) && AzureWebJobsStorage="$$FUNCGRAPH_TEST_STORAGE" FUNCGRAPH_SERVER_BIN=$(CURDIR)/bin/funcgraph \
	  node --test --test-force-exit a2a.test.mjs
	@echo "a2a-sdk-test: the staged folder under the emulated Functions host, on Azurite"
	@$(AZURITE_UP) cd $(A2ATEST) && AzureWebJobsStorage="$$FUNCGRAPH_TEST_STORAGE" FUNCGRAPH_SERVER_BIN=$(CURDIR)/bin/funcgraph \
	  FUNCGRAPH_EMULATE_BIN=$(CURDIR)/$(EMULATE) node --test --test-force-exit a2a.test.mjs

## mcp-sdk-test: the official MCP TypeScript SDK (@modelcontextprotocol/sdk, pinned in
## pkg/mcpserver/sdktest) against the MCP endpoint (docs/mcp.md): its durable and hosted tools
## and tasks, on the in-memory store, then on Azurite, through both transports (as
## a2a-sdk-test). platform-sdk-test runs it after its own, so `make test` does.
mcp-sdk-test: $(AZURITE) build emulate $(MCPTEST_DEPS)
	cp pkg/mcpserver/sdktest/*.mjs pkg/funchosttest/testdata/emulate/server.mjs $(MCPTEST)/
	cd $(MCPTEST) && FUNCGRAPH_SERVER_BIN=$(CURDIR)/bin/funcgraph node --test --test-force-exit mcp.test.mjs
	@$(AZURITE_UP) cd $(MCPTEST) && AzureWebJobsStorage="$$FUNCGRAPH_TEST_STORAGE" FUNCGRAPH_SERVER_BIN=$(CURDIR)/bin/funcgraph \
	  node --test --test-force-exit mcp.test.mjs
	@echo "mcp-sdk-test: the staged folder under the emulated Functions host, on Azurite"
	@$(AZURITE_UP) cd $(MCPTEST) && AzureWebJobsStorage="$$FUNCGRAPH_TEST_STORAGE" FUNCGRAPH_SERVER_BIN=$(CURDIR)/bin/funcgraph \
	  FUNCGRAPH_EMULATE_BIN=$(CURDIR)/$(EMULATE) node --test --test-force-exit mcp.test.mjs

## browser-install: Debian's Chromium for the inspector's browser test, installed with apt-get
## (as root, else through sudo) when $(CHROMIUM) is missing.
CHROMIUM ?= /usr/bin/chromium
browser-install: $(CHROMIUM)

$(CHROMIUM):
	@if [ "$$(id -u)" = 0 ]; then sudo=; else sudo=sudo; fi; \
	$$sudo apt-get update -qq && $$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium fonts-liberation

## inspector-test: the run inspector page (GET /api/inspector) in headless Chromium, driven by
## puppeteer-core (npm, pinned in pkg/inspector/browsertest/package-lock.json; it downloads no
## browser), against pkg/inspector/browsertest/testdata/testapp: the example graphs and triage (a
## child run, a wait with a deadline, a sleep, a failure on demand), built into $(INSPECTORTEST).
## inspector-screenshots regenerates docs/inspector-*.png the same way.
inspector-setup: browser-install $(INSPECTORTEST_DEPS)
	$(GO) build -o $(INSPECTORTEST)/testapp ./pkg/inspector/browsertest/testdata/testapp
	cp pkg/inspector/browsertest/*.mjs $(INSPECTORTEST)/

inspector-test: inspector-setup
	cd $(INSPECTORTEST) && CHROMIUM_BIN=$(CHROMIUM) FUNCGRAPH_SERVER_BIN=$(CURDIR)/$(INSPECTORTEST)/testapp node --test --test-concurrency=1 inspector.test.mjs graph.test.mjs runpage.test.mjs

inspector-screenshots: inspector-setup
	cd $(INSPECTORTEST) && CHROMIUM_BIN=$(CHROMIUM) FUNCGRAPH_SERVER_BIN=$(CURDIR)/$(INSPECTORTEST)/testapp node screenshots.mjs $(CURDIR)/docs

## bench-lock: the blob lease lock against the raw SDK lease, on Azurite.
bench-lock: $(AZURITE)
	@$(AZURITE_UP) $(GO) test -tags integration -run '^$$' -bench Integration -benchmem ./pkg/azure/bloblock/

## bench-azure: the durable engine on Azure Storage (Azurite) against raw SDK peers measured in
## the same run (docs/benchmarks.md, "Durable engine on Azure Storage"): operations per step, step latency,
## 64 concurrent runs, step 10 vs 1 000 — BENCH_ROUNDS interleaved rounds (each round measures
## the engine and its raw peer back to back; docs/benchmarks.md reports medians) — then a worker
## process holding waiting runs. Output: docs/bench/bench-azure.txt (make bench-plots reads it).
## Then the live channel and an idle app's first step (docs/live.md, "Figures", and docs/benchmarks.md,
## "Start to first step on an idle app"), each against its peer in the same run: a chunk
## across two instances against a raw append blob, polled; the start's own receive against
## the queue trigger's delivery. Output: docs/bench/bench-live.txt.
BENCH_AZURE_TIME ?= 3x
# Runs the worker holds waiting (the target is stated at 10 000; Azurite takes about half an
# hour to get there on two cores: make bench-azure BENCH_AZURE_WAITING_RUNS=10000).
BENCH_AZURE_WAITING_RUNS ?= 2000
# Interleaved rounds of every benchmark pair; the figures of docs/benchmarks.md are their medians.
BENCH_ROUNDS ?= 5
bench-azure: $(AZURITE) build
	@mkdir -p docs/bench
	@set -o pipefail; $(AZURITE_UP) export FUNCGRAPH_TEST_HANDLER_BIN=$(CURDIR)/bin/funcgraph; \
	  for i in $$(seq $(BENCH_ROUNDS)); do \
	    echo "round $$i of $(BENCH_ROUNDS)"; \
	    $(GO) test -tags integration -run '^$$' -bench 'Integration(OpsPerStep|StepLatency|StepAt10|Concurrent64)' \
	      -benchtime $(BENCH_AZURE_TIME) -timeout 15m ./pkg/azure/azurebench/ || exit 1; \
	  done 2>&1 | tee docs/bench/bench-azure.txt && \
	  FUNCGRAPH_BENCH_WAITING_RUNS=$(BENCH_AZURE_WAITING_RUNS) \
	  $(GO) test -tags integration -run '^$$' -bench 'IntegrationWorkerRSS' -benchtime 1x -timeout 90m ./pkg/azure/azurebench/ 2>&1 | tee -a docs/bench/bench-azure.txt && \
	  $(GO) test -tags integration -run '^$$' -bench 'IntegrationLive_ChunkAcrossInstances' -benchtime 5x -timeout 15m ./pkg/runsapi/ 2>&1 | tee docs/bench/bench-live.txt && \
	  $(GO) test -tags integration -run '^$$' -bench 'IntegrationStartToFirstStep_IdleApp' -benchtime 1x -timeout 15m ./pkg/exampleapp/ 2>&1 | tee -a docs/bench/bench-live.txt

## bench: the benchmarks reported in docs/benchmarks.md — BENCH_ROUNDS interleaved rounds of every
## package benchmark (BENCH selects them), the in-memory server holding 10 000 waiting runs —
## then funcgraph vs durabletask-go v0.6.0 on the same 3-step chain (separate module bench/,
## so the product's go.mod has no benchmark deps), BENCH_ROUNDS interleaved rounds per figure.
## Output: docs/bench/bench.txt and docs/bench/benchcompare.json (make bench-plots reads them).
BENCH ?= .
bench: build
	@mkdir -p docs/bench
	@set -o pipefail; for i in $$(seq $(BENCH_ROUNDS)); do \
	  echo "round $$i of $(BENCH_ROUNDS)"; \
	  FUNCGRAPH_TEST_HANDLER_BIN=$(CURDIR)/bin/funcgraph $(GO) test -run '^$$' -bench '$(BENCH)' -benchmem -timeout 30m ./pkg/... || exit 1; \
	done 2>&1 | tee docs/bench/bench.txt
	cd bench && $(GO) run ./cmd/benchcompare -rounds $(BENCH_ROUNDS) -json ../docs/bench/benchcompare.json

## bench-plots: the benchmark charts (docs/bench/*.svg) and tables (the bench-figures section of
## docs/benchmarks.md) from the output of the last make bench / make bench-azure.
bench-plots:
	cd bench && $(GO) run ./cmd/benchplots -dir ../docs/bench -page ../docs/benchmarks.md

## functions: regenerate functions/ from the app's route table (MAIN=./path/to/your/main for your app).
MAIN ?= ./handler
BIN  ?= funcgraph
functions:
	$(GO) run $(MAIN) functions --out functions

## local: stage local/ for `func start` (with Azurite on its default ports): the native binary
## $(BIN) built from $(MAIN), which writes the rest itself (`stage`): one folder per function,
## host.json naming $(BIN), local.settings.json (custom runtime, UseDevelopmentStorage=true, the
## work queue setting; settings you added are kept). Then: cd local && func start
## Your own app: make local MAIN=./cmd/myapp BIN=myapp
local:
	mkdir -p local
	$(GO) build -o local/$(BIN) $(MAIN)
	./local/$(BIN) stage --target local --out local --exe $(BIN)
	@echo "local/ is ready: start Azurite, then cd local && func start"

## package: stage dist/ for `func azure functionapp publish`: a linux/amd64 build of $(MAIN)
## named $(BIN), then `stage --target publish`, which writes the function folders, host.json
## naming $(BIN) and the local.settings.json Core Tools reads (FUNCTIONS_WORKER_RUNTIME=custom).
## Your own app: make package MAIN=./cmd/myapp BIN=myapp
package:
	rm -rf dist && mkdir -p dist
	GOOS=linux GOARCH=amd64 CGO_ENABLED=0 $(GO) build -trimpath -o dist/$(BIN) $(MAIN)
	$(GO) run $(MAIN) stage --target publish --out dist --exe $(BIN)
	@echo "dist/ is ready: cd dist && func azure functionapp publish <app-name>"

clean:
	rm -rf bin dist local
