# Intact: the two commands of the quick start are `make demo` and `make test`.
# Both install the Debian packages they need (as root, only those missing).

SWIFT ?= swift
# Debian packages the build and the tests need. Later issues add their test tools here.
DEBIAN_PACKAGES := pkg-config libssl-dev libnghttp2-dev openssl curl nghttp2-client chromium

.PHONY: deps build release test microbench clean

## deps: install the Debian packages that are missing (needs root when any is missing).
deps:
	@./scripts/install-deps.sh $(DEBIAN_PACKAGES)

## build: debug build of the package.
build: deps
	$(SWIFT) build

## release: optimised build of the `intact` executable.
release: deps
	$(SWIFT) build -c release --product intact

## test: install what is missing, build, and run the whole suite.
test: deps
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build

## microbench: HTTP/1.1 parse throughput and digest cost per message (release build; prints, asserts nothing).
microbench: deps
	$(SWIFT) build -c release --product intact-microbench
	.build/release/intact-microbench

clean:
	rm -rf .build
