# Intact: the two commands of the quick start are `make demo` and `make test`.
# Both install the Debian packages they need (as root, only those missing).

SWIFT ?= swift
# Debian packages the build needs (the C libraries behind COpenSSL, CNGHTTP2 and CZlib).
BUILD_PACKAGES := pkg-config libssl-dev libnghttp2-dev zlib1g-dev
# What the tests drive besides: real peers (openssl, curl, nghttp), the HTML
# report's browser (chromium), and the load balancers of the scenarios.
TEST_PACKAGES := openssl curl nghttp2-client chromium nginx haproxy

.PHONY: deps test-deps build release demo test microbench bench-deps bench clean

## deps: install the build's Debian packages that are missing (needs root when any is missing).
deps:
	@./scripts/install-deps.sh $(BUILD_PACKAGES)

## test-deps: the build's packages and the tests' tools.
test-deps:
	@./scripts/install-deps.sh $(BUILD_PACKAGES) $(TEST_PACKAGES)

## build: debug build of the package.
build: deps
	$(SWIFT) build

## release: optimised build of the `intact` executable.
release: deps
	$(SWIFT) build -c release --product intact

## demo: the whole sign-in flow through the proxy on this machine, then its verification (release build).
## DEMO_ARGS passes options, e.g. make demo DEMO_ARGS="--http1 --keep".
demo: release
	.build/release/intact demo $(DEMO_ARGS)

## test: install what is missing, build, and run the whole suite.
test: test-deps
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build

## microbench: HTTP/1.1 parse throughput and digest cost per message (release build; prints, asserts nothing).
microbench: deps
	$(SWIFT) build -c release --product intact-microbench
	.build/release/intact-microbench

## bench-deps: the load generators and peers of the benchmark (wrk, h2load, nginx, haproxy,
## mitmproxy for mitmdump, socat for the forward-mode CONNECT tunnel, python3 for the handshake client).
bench-deps:
	@./scripts/install-deps.sh $(BUILD_PACKAGES) openssl curl wrk nghttp2-client nginx haproxy mitmproxy socat python3

## bench: Intact against nginx direct, HAProxy, nginx re-encrypting and mitmproxy (release build; prints one
## ratio table, recording on as the headline; gates nothing).
## BENCH_MODE=full for longer runs; quick by default (about three minutes).
bench: bench-deps release
	./Benchmarks/run.sh

clean:
	rm -rf .build
