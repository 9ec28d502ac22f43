# LiveBind: `make run` starts the demo server, `make test` runs every test suite.
# Both install what is missing first (Debian packages via apt-get, Python packages into .venv).

SWIFT        ?= swift
HOST         ?= 127.0.0.1
PORT         ?= 8080
# Where `make run` keeps the demo's models and history (so the dashboard's history charts have data).
RUN_DATA     ?= .build/run-data
VENV         := .venv
PYTHON       := $(VENV)/bin/python
SUDO         := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
APT_INSTALL  := $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends
PY_PACKAGES  := pytest==9.0.3 selenium==4.51.0 schemathesis==4.32.5 openapi-spec-validator==0.9.0 hypothesis==6.170.17
# The version, from its one place in the sources (also what --version, /healthz and Server: say).
VERSION      := $(shell sed -n 's/.*static let string = "\(.*\)"/\1/p' Sources/LiveBind/LiveBind.swift)
# Release builds link the Swift runtime and Foundation statically: the binary needs only Debian's
# libraries (libmicrohttpd12, libsqlite3-0, libc), so it runs outside the toolchain and in the .deb.
RELEASE      := -c release --static-swift-stdlib
DEB          := dist/livebind_$(VERSION)_amd64.deb
# The .deb's Maintainer field and changelog signature (deploy/build-deb.sh reads it): set your own,
# e.g. make deb DEB_MAINTAINER='Jane Doe <jane@example.org>' (docs/Deploying.md, "Installing the server").
export DEB_MAINTAINER ?= LiveBind maintainers <maintainers@livebind.invalid>
MARIONETTE_VERSION := 3.7.1
# Where the Swift suites build and test (swift build --scratch-path): `make test` gives its Swift lane a
# tree of its own, so that lane's builds run beside the release build in .build (SwiftPM builds one at a
# time in a tree).
SWIFT_TREE   ?= .build
SWIFT_DEBUG  := $(SWIFT) build --scratch-path $(SWIFT_TREE)
SWIFT_TEST   := $(SWIFT) test --scratch-path $(SWIFT_TREE) --skip-build
# A hung test must fail CI quickly, not run into its 90-minute limit.
LIMIT        := timeout --kill-after=15
# Every Swift suite, run with the environment $(1): first the Swift client's mirror and transport in a
# process of their own, then the rest. The client's own tasks read the network on Swift's cooperative
# pool (two threads on two cores); beside hundreds of tests that block those threads (synchronous
# HTTP, sleeps) they waited minutes for a turn under the sanitizers and timed out. The rest runs even
# when the first part failed (a failure there must not hide the others'); the status is the first failure's.
OWN_PROCESS  := MirrorTests|TransportTests
swift_suites  = $(1) $(LIMIT) 600 $(SWIFT_TEST) --filter '$(OWN_PROCESS)'; first=$$?; \
                $(1) $(LIMIT) 1200 $(SWIFT_TEST) --skip '$(OWN_PROCESS)' && exit $$first

.PHONY: help check run build release deb test resolve build-for-tests mirror format test-swift test-tsan test-asan test-firefox test-browser test-clients test-cli test-hostile \
        test-contract test-access test-property test-dist test-cluster bench fuzz clean deps-server deps-browser deps-python deps-dist \
        cluster deps-cluster

## help: this list, from the Makefile's own `## target:` comments
help:
	@awk -v host=$(HOST) -v port=$(PORT) -v data=$(RUN_DATA) -v version=$(VERSION) -v logs=$(TEST_LOGS) \
	  '{ gsub(/\$$\(HOST\)/, host); gsub(/\$$\(PORT\)/, port); gsub(/\$$\(RUN_DATA\)/, data); gsub(/\$$\(VERSION\)/, version); \
	     gsub(/\$$\(TEST_LOGS\)/, logs) } \
	   /^## [a-z-]+:/ { sub(/^## /, ""); name = $$0; sub(/:.*/, "", name); text = $$0; sub(/^[^:]*: */, "", text); \
	        printf "  make %-14s %s\n", name, text; next } \
	      /^##  / { sub(/^## +/, ""); printf "  %-19s %s\n", "", $$0 }' $(MAKEFILE_LIST)

## run: install libmicrohttpd if missing, build in release mode, serve the demo on http://$(HOST):$(PORT)/
##      (models and history kept in $(RUN_DATA))
run: deps-server
	$(SWIFT) build $(RELEASE) --product livebind-server
	exec .build/release/livebind-server --host $(HOST) --port $(PORT) --public Public --demo --data $(RUN_DATA)

## cluster: the demo on three nodes (three NATS JetStream servers) behind nginx on http://127.0.0.1:$(PORT)/;
##          Ctrl-C stops every process it started (deploy/cluster/run.sh, deploy/nginx/cluster.conf)
cluster: deps-server deps-cluster
	$(SWIFT) build $(RELEASE) --product livebind-server
	exec bash deploy/cluster/run.sh .build/release/livebind-server $(PORT)

## build: a debug build of every target
build: deps-server
	$(SWIFT) build

## release: .build/release/livebind-server, static Swift runtime (needs only Debian's libraries)
release: deps-server
	$(SWIFT) build $(RELEASE) --product livebind-server

## deb: dist/livebind_$(VERSION)_amd64.deb (dpkg-deb; Depends from dpkg-shlibdeps; see deploy/)
deb: release deps-dist
	bash deploy/build-deb.sh .build/release/livebind-server $(VERSION) dist

## test: every suite (Swift, thread and address sanitizers, curl, contract, access, property, distribution,
##       clients, browser, cluster), each timed, in lanes side by side (the Swift suites, in a build tree of
##       their own, their test runs at a lower priority; the release build, then two lanes of suites that
##       drive it from outside); goes on past a failure and fails if any failed,
##       ending with the failing lines of each failed suite (whole logs in $(TEST_LOGS))
SWIFT_SUITES    := test-swift test-tsan test-asan
# The suites that drive the release binary from outside, in two lanes of their own (they wait on
# sockets, timeouts and child processes most of their time; each picks free ports and folders).
PROTOCOL_SUITES := test-property test-cluster test-cli test-access
CLIENT_SUITES   := test-browser test-contract test-dist test-clients
TEST_LOGS      := .build/test-logs
# What marks a failure in a suite's log: Swift Testing, XCTest and the compiler, pytest, the shell suites,
# crashes and the sanitizers' reports.
export FAILURE_LINES := ✘|error:|\*\*\*|FAILED|^FAIL |^E   |Fatal error|[Tt]imed out|Killed|Sanitizer|SUMMARY:|[Ss]ignal [0-9]|exited with
test:
	@bash Tests/support/run-suites.sh $(TEST_LOGS) "$(SWIFT_SUITES)" "$(PROTOCOL_SUITES)" "$(CLIENT_SUITES)"

## resolve: the packages Package.swift names, checked out at the versions Package.resolved pins (make test
##          resolves once, before its two build trees start)
resolve: deps-server
	$(SWIFT) package resolve

## build-for-tests: what the suites run from outside (release binary, .deb, Python, Chromium, nginx, NATS),
##                  made before the two lanes of `make test` start
build-for-tests: release deb deps-python deps-browser deps-cluster

## check: the inner loop, a few minutes on a warm build: test-swift (the public API list, every Swift
##        suite, no sanitizer), test-cli (`make help`, the flags table, curl) and test-access
check: test-swift test-cli test-access

## test-swift: the layers (docs/ARCHITECTURE.md), the format (`make format`), the build, the public API (its
##             symbol graph), then `swift test` (every Swift suite, real servers on loopback ports)
test-swift: deps-server
	python3 Tests/architecture/layers.py --check docs/ARCHITECTURE.md
	git ls-files -z '*.swift' | xargs -0 $(SWIFT) format lint --strict --parallel
	$(SWIFT_DEBUG) --build-tests
	python3 Tests/api/public_api.py --check --tree $(SWIFT_TREE)
	$(call swift_suites,)

## format: every Swift file formatted by the toolchain's swift-format (.swift-format: its layout, no rules)
format:
	git ls-files -z '*.swift' | xargs -0 $(SWIFT) format format --in-place --parallel

## test-hostile: only the hostile-sequence suite (issue 13), which `test-swift` and the sanitizer runs include
test-hostile: deps-server
	$(SWIFT_DEBUG) --build-tests
	$(LIMIT) 900 $(SWIFT_TEST) --filter HostileSequenceTests

## test-tsan: every Swift suite under the thread sanitizer
# Every suite under the thread sanitizer, which instruments LiveBind's library and executable targets
# (LIVEBIND_SANITIZE in Package.swift): the dependencies and the tests are the plain build's, so this
# recompiles those targets and nothing else. The one suppression is explained in Tests/sanitizers/tsan.supp.
test-tsan: deps-server
	LIVEBIND_SANITIZE=thread $(SWIFT_DEBUG) --build-tests
	$(call swift_suites,LIVEBIND_SANITIZE=thread TSAN_OPTIONS=suppressions=$(CURDIR)/Tests/sanitizers/tsan.supp)

## test-asan: every Swift suite under the address sanitizer
# Every suite under the address sanitizer, LiveBind's own targets instrumented as for test-tsan. The
# suppressions name only the XCTest runner (leaks) and Foundation's own copies in Process.run (see
# Tests/sanitizers/).
test-asan: deps-server
	LIVEBIND_SANITIZE=address $(SWIFT_DEBUG) --build-tests
	$(call swift_suites,LIVEBIND_SANITIZE=address ASAN_OPTIONS=suppressions=$(CURDIR)/Tests/sanitizers/asan.supp \
	  LSAN_OPTIONS=suppressions=$(CURDIR)/Tests/sanitizers/lsan.supp)

## test-cli: curl against the release binary; docs/HTTP.md's table of flags is the one --help makes,
##           `make help` describes every target; the settings file, and a SIGTERM right after start (pytest)
test-cli: release deps-python
	python3 Tests/cli/make_help.py
	python3 Tests/cli/options_table.py .build/release/livebind-server --check docs/HTTP.md
	$(LIMIT) 300 bash Tests/cli/curl_test.sh .build/release/livebind-server
	LIVEBIND_SERVER=.build/release/livebind-server $(LIMIT) 300 $(PYTHON) -m pytest -q Tests/cli

## test-contract: Public/openapi.json is valid OpenAPI 3.1, and schemathesis finds no 5xx and no answer
##                outside it on a live release server (CONTRACT_EXAMPLES per operation, CONTRACT_SEED)
test-contract: release deps-python
	$(LIMIT) 900 bash Tests/contract/run.sh .build/release/livebind-server $(VENV)/bin

## test-access: every route as every kind of caller, with the default policy and --private: the status each
##              route declares, and no answer or event showing a model to a caller who may not read it
test-access: release deps-python
	LIVEBIND_SERVER=.build/release/livebind-server $(LIMIT) 600 $(PYTHON) -m pytest -q Tests/access

## test-property: a stateful, model-based search (hypothesis) for counterexamples to the event-stream
##                protocol on a live release server: fixed seed, PROPERTY_EXAMPLES (default 60) runs;
##                likewise history, views, idempotency and the cost table (test_cost.py: amplification)
test-property: release deps-python
	LIVEBIND_SERVER=.build/release/livebind-server $(LIMIT) 900 $(PYTHON) -m pytest -q Tests/property

## test-clients: both clients, Python (clients/python) and Swift (LiveBindClient, driven through
##               livebind-mirror --commands), run the same conformance tests against a release server:
##               mirrors converge through drops, silences, restarts and resyncs; writes back, conflicts,
##               the offline queue; windows and views
# The Swift client's driver is the debug build's, which the Swift suites have built.
test-clients: release deps-python mirror
	LIVEBIND_SERVER=.build/release/livebind-server LIVEBIND_MIRROR=$(MIRROR) \
		$(LIMIT) 900 $(PYTHON) -m pytest -q Tests/clients

## mirror: the debug livebind-mirror, the Swift client's driver in test-clients (MIRROR; `make test` passes
##         the copy it kept of the plain build's)
MIRROR ?= $(CURDIR)/$(SWIFT_TREE)/debug/livebind-mirror
mirror: deps-server
	$(SWIFT_DEBUG) --product livebind-mirror

## test-dist: the static binary runs without the toolchain; the .deb passes lintian, unpacks and serves
test-dist: deb
	$(LIMIT) 600 bash Tests/dist/run.sh .build/release/livebind-server $(DEB)

## test-browser: livebind.js, the dashboard and the examples in headless Chromium (selenium), nginx in front
test-browser: release deps-browser deps-cluster deps-python
	LIVEBIND_SERVER=.build/release/livebind-server $(LIMIT) 1200 $(PYTHON) -m pytest -q Tests/browser

## test-cluster: three nats-servers (one JetStream cluster), three nodes with --cluster and nginx in front,
##               on free loopback ports: ordering, If-Match across nodes, resumes, kill -9 faults (Tests/cluster)
test-cluster: release deps-cluster deps-browser deps-python
	LIVEBIND_SERVER=.build/release/livebind-server $(LIMIT) 900 $(PYTHON) -m pytest -q Tests/cluster

## test-firefox: a smoke check of livebind.js and the dashboard in headless Firefox (not in `make test`)
test-firefox: release deps-python
	@command -v firefox >/dev/null || { $(SUDO) apt-get update -qq && $(APT_INSTALL) firefox-esr; }
	$(PYTHON) -m pip install -q --disable-pip-version-check marionette_driver==$(MARIONETTE_VERSION)
	LIVEBIND_SERVER=.build/release/livebind-server $(LIMIT) 300 $(PYTHON) Tests/browser/firefox_smoke.py

## bench: engine, fan-out, write, cluster, views, history and browser benchmarks (see BENCHMARKS.md; BENCH_SKIP, BENCH_QUICK)
bench: release deps-browser deps-python
	bash Benchmarks/run.sh

## fuzz: every libFuzzer target for FUZZ_SECONDS each (default 600), or only FUZZ_TARGETS
##       (`make fuzz FUZZ_TARGETS=FuzzStoreSequence FUZZ_SECONDS=600`)
##       and the property searches (event streams, history, views, cost) for PROPERTY_EXAMPLES (default 2000) random runs
fuzz: deps-server release deps-python
	FUZZ_SECONDS=$${FUZZ_SECONDS:-600} bash Tests/fuzz/run.sh $(FUZZ_TARGETS)
	PROPERTY_EXAMPLES=$${PROPERTY_EXAMPLES:-2000} PROPERTY_RANDOM=1 LIVEBIND_SERVER=.build/release/livebind-server \
	  $(PYTHON) -m pytest -q Tests/property

## clean: removes build output and the virtual environment
clean:
	rm -rf .build .build-* Benchmarks/.build $(VENV) Tests/browser/artifacts dist

# GnuTLS's headers build the certificate callback (CGnuTLS); openssl and curl make and check the TLS
# tests' throwaway certificates.
# libnats-dev: the NATS C client every build links (cluster mode, --cluster; Sources/CNATS).
deps-server:
	@{ pkg-config --exists libmicrohttpd && pkg-config --exists sqlite3 && pkg-config --exists gnutls \
	   && pkg-config --exists libnats && pkg-config --exists libcurl && command -v openssl && command -v curl; } >/dev/null 2>&1 || { \
	  echo "Installing libmicrohttpd-dev, libsqlite3-dev, libgnutls28-dev, libnats-dev, libcurl4-openssl-dev, openssl and curl (Debian)"; \
	  $(SUDO) apt-get update -qq && $(APT_INSTALL) libmicrohttpd-dev libsqlite3-dev libgnutls28-dev libnats-dev libcurl4-openssl-dev pkg-config openssl curl; }

# nats-server (JetStream) for the cluster tests and the cluster demo; nginx balances over the nodes.
deps-cluster:
	@{ command -v nats-server || [ -x /usr/sbin/nats-server ]; } >/dev/null 2>&1 && [ -x /usr/sbin/nginx ] || { \
	  echo "Installing nats-server and nginx (Debian)"; \
	  $(SUDO) apt-get update -qq && $(APT_INSTALL) nats-server nginx; }

# nginx: Tests/browser/test_nginx.py runs deploy/nginx/livebind.conf in front of the server.
deps-browser:
	@{ [ -x /usr/lib/chromium/chromium ] && command -v chromedriver >/dev/null && [ -x /usr/sbin/nginx ] \
	   && command -v openssl >/dev/null; } || { \
	  echo "Installing chromium, chromium-driver, nginx and openssl (Debian)"; \
	  $(SUDO) apt-get update -qq && $(APT_INSTALL) chromium chromium-driver nginx openssl; }

deps-dist:
	@{ command -v dpkg-shlibdeps && command -v lintian && command -v help2man && command -v objdump; } >/dev/null || { \
	  echo "Installing dpkg-dev, lintian, help2man and binutils (Debian)"; \
	  $(SUDO) apt-get update -qq && $(APT_INSTALL) dpkg-dev lintian help2man binutils; }

deps-python: $(VENV)/.installed

# Remade when the Makefile changes, so a pin added to PY_PACKAGES reaches an existing .venv.
$(VENV)/.installed: Makefile
	python3 -m venv $(VENV)
	$(PYTHON) -m pip install -q --disable-pip-version-check $(PY_PACKAGES)
	touch $@
