# FeedProxy — every command a developer or CI needs.
SWIFT ?= $(shell command -v swift 2>/dev/null || echo /opt/swift/usr/bin/swift)
PORT ?= 8080
APT_PACKAGES = libcurl4-openssl-dev libssl-dev libxxhash-dev zlib1g-dev libexpat1-dev libgumbo-dev libhiredis-dev libsqlite3-dev libvips-dev redis-server curl

.PHONY: run build release test soak test-under-load test-tsan scaleout-test storm-test chaos-test prometheus-check deps bench events-bench fuzz base-images image container-check api-check docs-check add-upstream-check deploy-check lint format ci clean

# Debian packages the build links against; installed when missing and running as root.
deps:
	@missing=""; for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	  else echo "missing packages:$$missing (run as root or: sudo apt-get install$$missing)"; exit 1; fi; \
	fi
	@# The tests' OTLP receiver decodes exports with OpenTelemetry's own protobuf definitions.
	@python3 -c "import opentelemetry.proto" 2>/dev/null || python3 -m pip install -q opentelemetry-proto 2>&1 | grep -v "as the 'root' user" || true

build: deps
	$(SWIFT) build

# The service alone: TestSupport, a library of the tests, needs the debug build's @testable.
release: deps
	$(SWIFT) build -c release --product feedproxy

# ARGS passes flags through, e.g. make run ARGS=--fixtures (offline).
run: release
	$$($(SWIFT) build -c release --show-bin-path)/feedproxy --port $(PORT) $(ARGS)

test: deps
	SWIFT=$(SWIFT) scripts/tests/test.sh

# The Swift suite in parallel with one busy loop per core beside it (RUNS=3 for three in a
# row; LOAD sets the loops), then its slowest tests (scripts/tests/test-under-load.sh).
test-under-load: deps
	SWIFT=$(SWIFT) scripts/tests/test-under-load.sh

# Memory under load (scripts/tests/soak.py): cache misses as fast as the server answers them
# beside hits, alone, with Redis, with 10,000 open streams and with image resizes; fails when RSS
# passes its ceiling (docs/operations.md, Memory) or still climbs. SOAK_SECONDS per variant.
soak: deps
	@command -v wrk >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null; \
	  else echo "missing wrk (run as root or: sudo apt-get install wrk)"; exit 1; fi; }
	$(SWIFT) build --product feedproxy
	python3 scripts/tests/soak.py $$($(SWIFT) build --show-bin-path)/feedproxy --seconds $(or $(SOAK_SECONDS),40)

# Three replicas sharing one Redis behind nginx, against the counting fixture upstream, on
# loopback (scripts/tests/scaleout-test.py): single-flight across replicas, one rate budget, Redis
# killed/stopped/absent/full, a lock holder killed. Installs nginx-light when missing.
scaleout-test: deps
	@command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx-light >/dev/null; \
	  else echo "missing nginx (run as root or: sudo apt-get install nginx-light)"; exit 1; fi; }
	$(SWIFT) build
	FEEDPROXY_BIN=$$($(SWIFT) build --show-bin-path)/feedproxy python3 scripts/tests/scaleout-test.py

# A storm of library refreshes on three replicas sharing Redis against a loopback hosting platform
# (scripts/bench/storm.py at CI scale, the debug binary): each feed downloaded and revalidated
# once in total, few lookups, every batch within its deadline (+2 s here), no app following
# docs/API.md's sync recipe missing an episode, one address's flood leaving another's feed on time.
storm-test: deps
	$(SWIFT) build --product feedproxy
	python3 scripts/bench/storm.py $$($(SWIFT) build --show-bin-path)/feedproxy --podcasts 300 --apps 60 --per-app 50 --delay-ms 50 --check --margin 2

# Faults while episodes are published (scripts/tests/chaos-test.py, the debug binary): 60 apps
# following docs/API.md's sync recipe and event stream through nginx to three replicas sharing
# Redis, while a replica is SIGKILLed, Redis restarts empty, a replica is SIGSTOPped and all three
# are redeployed one by one; fails when an app misses an episode or is reset (resync). About 50 s.
# Installs nginx-light when missing.
chaos-test: deps
	@command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || { \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx-light >/dev/null; \
	  else echo "missing nginx (run as root or: sudo apt-get install nginx-light)"; exit 1; fi; }
	$(SWIFT) build --product feedproxy
	python3 scripts/tests/chaos-test.py $$($(SWIFT) build --show-bin-path)/feedproxy

# deploy/prometheus/ against the real thing, on loopback: promtool check/test rules, then
# Debian's prometheus scraping two replicas (Redis, traffic) and evaluating every alert and
# dashboard query through its API (scripts/checks/prometheus-check.sh). Installs prometheus when missing.
prometheus-check: deps
	$(SWIFT) build
	FEEDPROXY_BIN=$$($(SWIFT) build --show-bin-path)/feedproxy scripts/checks/prometheus-check.sh

# Two tests at a time: half the serial run's time; fully parallel, TSan's slowdown makes
# Redis commands miss their deadlines.
test-tsan: deps
	$(SWIFT) test --sanitize=thread --scratch-path .build/tsan --parallel --experimental-maximum-parallelization-width 2

bench: deps
	scripts/bench/bench.sh

# Event fan-out alone (also part of make bench): STREAMS idle streams (default 10,000) beside nginx + nchan;
# SHAPE=same (every stream one podcast), libraries (each an app's Zipf-drawn library) or both (default).
events-bench: deps
	$(SWIFT) build -c release --product feedproxy >/dev/null
	python3 scripts/bench/events-bench.py "$$($(SWIFT) build -c release --show-bin-path)/feedproxy" $(or $(STREAMS),10000) --shape $(or $(SHAPE),both)

# FUZZ_SECONDS bounds the run (default 60).
fuzz: deps
	scripts/checks/fuzz.sh $(or $(FUZZ_SECONDS),60)

# The two images the Dockerfile starts FROM, made locally when no registry is reachable
# (kept while their inputs are unchanged; an upstream image of the same name is never replaced).
base-images:
	scripts/setup/base-images.sh

# podman build of the Dockerfile (both stages), tagged feedproxy:<version>.
image:
	scripts/setup/image.sh

# hadolint, make image, then the image run by podman: routes, HEALTHCHECK, read-only root,
# SIGTERM drain with a request in flight, size budget; podman kube play when deploy/kubernetes/ exists.
container-check:
	scripts/checks/container-check.sh

# schemathesis against /openapi.json with the service in --fixtures mode.
api-check: deps
	scripts/checks/api-check.sh

# Every example request in README.md and docs/API.md (```console commands with their shown
# output, curl lines in ```sh blocks, `GET /…` → `200 …` lines) run against the debug binary in
# --fixtures mode on loopback, each answer compared with the one shown: status, headers, JSON
# shape and literals, `…` for what is left out (scripts/checks/docs-check.py says the rules).
docs-check: deps
	$(SWIFT) build --product feedproxy
	python3 scripts/checks/docs-check.py $$($(SWIFT) build --show-bin-path)/feedproxy

# docs/adding-an-upstream.md done on a copy of the tree (scripts/checks/add-upstream-check.py):
# docs/examples/news/ (a GET /news with a query parameter) built, tested and served, then each
# part left out in turn must fail the generator, the build or a test; docs/examples/books/ (a
# path id, GET /books/{id}, and a form, POST /books) built, tested and served in the same copy
# (news taken out; an incremental build). EXAMPLE=dir
# does one upstream of yours, with every omission.
EXAMPLE ?=
# OMISSIONS= leaves out the rounds that leave each part out (.ci/run, for its 25 minutes).
OMISSIONS ?= --omissions
add-upstream-check: deps
ifeq ($(EXAMPLE),)
	SWIFT=$(SWIFT) scripts/checks/add-upstream-check.py --example docs/examples/news $(OMISSIONS) --then docs/examples/books
else
	SWIFT=$(SWIFT) scripts/checks/add-upstream-check.py --example $(EXAMPLE) $(OMISSIONS)
endif

# deploy/ offline: yamllint, kubernetes-validate --strict, check-jsonschema (compose-spec),
# nginx -t, redis-server on both Redis configurations, scripts/checks/deploy-policy.py, and a
# broken copy each must reject. No Swift build.
deploy-check:
	scripts/checks/deploy-check.sh

# swift format with the repository's .swift-format (4 spaces, 160 columns); the route tables
# against docs/openapi.json; no tracked file but the catalog's, the adapters' and the data that
# must lists the upstreams (scripts/checks/upstream-names-check.py says the rules); the demo
# page's HTML, CSS and JavaScript parsed as what they are (scripts/checks/demo-lint.py); every
# import against the README's module order (scripts/checks/module-deps-check.py).
lint:
	$(SWIFT) format lint --strict -r Sources Tests Benchmarks Fuzz docs/examples Package.swift
	python3 scripts/generate/route-tables.py --check
	python3 scripts/checks/upstream-names-check.py
	python3 scripts/checks/demo-lint.py
	python3 scripts/checks/module-deps-check.py

format:
	$(SWIFT) format format -i -r Sources Tests Benchmarks Fuzz docs/examples Package.swift

# Everything CI runs (.ci/run, in its order): tests, the suite again with the cores busy, the scale-out run, the alerts and dashboard against Prometheus, deployment files, ThreadSanitizer, API conformance, the container stage, a short fuzz.
ci: lint test test-under-load soak scaleout-test storm-test chaos-test prometheus-check deploy-check test-tsan api-check docs-check add-upstream-check container-check
	$(MAKE) fuzz FUZZ_SECONDS=30

clean:
	rm -rf .build
