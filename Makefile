# Intact: the two commands of the quick start are `make demo` and `make test`.
# Both install the Debian packages they need (as root, only those missing).

SWIFT ?= swift
# Debian packages the build needs (the C libraries behind COpenSSL, CNGHTTP2 and CZlib).
BUILD_PACKAGES := pkg-config libssl-dev libnghttp2-dev zlib1g-dev
# What the tests drive besides: real peers (openssl, curl, nghttp, h2load), the HTML
# report's browser (chromium), the intermediaries of the scenarios (nginx, HAProxy,
# Apache httpd, Caddy, Traffic Server, Varnish and hitch, nghttpx, Squid with
# ssl-bump, tinyproxy; their services are never used: the runner starts each
# in the foreground on loopback ports), python3 with python3-h2 (an HTTP/2
# client sending a header block over 64 KiB: nghttp2, behind curl, nghttp and the
# playbook's HTTP/2 ends, refuses to) and util-linux (prlimit, setpriv, mount
# for the recording's disk-full and read-only cases).
TEST_PACKAGES := openssl curl nghttp2-client chromium libnss3-tools nginx haproxy apache2 caddy trafficserver varnish hitch nghttp2-proxy \
	squid-openssl tinyproxy python3 python3-h2 socat util-linux wrk

.PHONY: deps test-deps build release demo test microbench bench-deps bench bench-callgrind fuzz-build fuzz soak clean

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

## microbench: HTTP/1.1 parse throughput, digest cost per message and per recording line (release build; prints, asserts nothing).
microbench: deps
	$(SWIFT) build -c release --product intact-microbench
	.build/release/intact-microbench

## bench-deps: the load generators and peers of the benchmark (wrk, h2load, nginx, haproxy,
## mitmproxy for mitmdump, socat for the forward-mode CONNECT tunnel, python3 for the handshake client,
## valgrind for the callgrind row).
bench-deps:
	@./scripts/install-deps.sh $(BUILD_PACKAGES) openssl curl wrk nghttp2-client nginx haproxy mitmproxy socat python3 valgrind

## bench: Intact against nginx direct, HAProxy, nginx re-encrypting and mitmproxy (release build; prints one
## ratio table, recording on as the headline, with the callgrind rows of Benchmarks/callgrind.sh; gates
## nothing), then the verify row: records/s one tap records vs records/s verify judges, verify's peak RSS
## at 100k and 400k records (Benchmarks/verify.sh).
## BENCH_MODE=full for longer runs; quick by default (about three minutes, plus a few for the verify row).
bench: bench-deps release
	./Benchmarks/run.sh
	./Benchmarks/verify.sh .build/release/intact

## bench-callgrind: instructions and mallocs per proxied 1 KiB request (h1, h2; one connection),
## Intact beside HAProxy, each under callgrind (deterministic: a long window minus a short one).
## INTACT=path measures another build (default .build/release/intact, which this target builds).
bench-callgrind: bench-deps release
	./Benchmarks/callgrind.sh

## fuzz: every libFuzzer target (Tests/Fuzz) for FUZZ_SECONDS each; FUZZ_TARGETS="http1-request ..." picks some.
## Release build with coverage and AddressSanitizer in .build/fuzz; details in Docs/Fuzzing.md.
FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?=
FUZZ_RUNTIME = $(firstword $(wildcard $(dir $(realpath $(shell command -v $(SWIFT))))../lib/clang/*/lib/linux/libclang_rt.fuzzer_no_main-x86_64.a))
FUZZ_FLAGS = -Xswiftc -sanitize=address -Xswiftc -sanitize-coverage=edge,inline-8bit-counters,pc-table,trace-cmp \
	-Xswiftc -DINTACT_LIBFUZZER -Xlinker --whole-archive -Xlinker $(FUZZ_RUNTIME) -Xlinker --no-whole-archive -Xlinker -lstdc++

fuzz-build: deps
	@test -n "$(FUZZ_RUNTIME)" || { echo "fuzz: libclang_rt.fuzzer_no_main is not in this Swift toolchain"; exit 1; }
	$(SWIFT) build -c release --scratch-path .build/fuzz --product intact-fuzz $(FUZZ_FLAGS)

fuzz: fuzz-build
	./scripts/fuzz.sh .build/fuzz/release/intact-fuzz $(FUZZ_SECONDS) $(FUZZ_TARGETS)

## soak: the recording proxy under h2load, wrk, curl, slow and idle clients against nginx for SOAK_MINUTES,
## then zero failed requests, descriptors back to baseline, bounded RSS, a complete recording, verify (Docs/soak.md).
SOAK_MINUTES ?= 10
SOAK_RSS_LIMIT_MB ?= 256
soak: release
	@./scripts/install-deps.sh $(BUILD_PACKAGES) openssl curl wrk nghttp2-client nginx python3
	./scripts/soak.sh $(SOAK_MINUTES) .build/release/intact $(SOAK_RSS_LIMIT_MB)

clean:
	rm -rf .build
