// swift-tools-version:6.0
// Intact: an intercepting verification proxy for mobile sign-in flows.
// Layers, bottom to top: a target depends only on targets of lower layers
// (RepositoryTests checks it, and that README.md repeats this list).
//   1. C libraries:       COpenSSL, CNGHTTP2, CZlib, CEpoll, CLibFuzzer
//   2. foundations:       Wire, Hashing, Compression, ConfigurationFile
//   3. codecs:            Codecs
//   4. protocol engines:  TLS, HTTP
//   5. shared models:     Transport, Evidence, AuthFlow, Browser
//   6. flow pieces:       Faults, SignIn, Scenarios
//   7. the proxy:         Proxy
//   8. proxy add-ons:     ProxyAddons
//   9. the demo:          Demo
//   10. the command line: IntactCLI
//   11. executables:      intact, intact-microbench
// Proxy imports neither AuthFlow nor Faults: the sign-in flow's add-ons plug
// into it from ProxyAddons through the hook protocol.
// Protocol logic is sans-io (events in, commands out; tested without sockets):
// ChannelSecurityLayer (TLS), HTTP1ServerLayer/HTTP1ClientLayer, HTTP2ConnectionLayer,
// DownstreamLayer/ExchangeFlow (the proxy); the pool's decisions are HTTPClientPool+StateMachine.
// One request passes six places (README "One request, end to end"): Wire's loop (EventPoller,
// Connection) -> ByteChannel (socket, TLS) -> HTTPConnection and its HTTP driver -> DownstreamDriver
// -> ExchangeFlow -> HTTPClientPool, whose upstream leg runs the first three again as a client.
// Wire's EmbeddedNetwork runs the same middle in memory for the proxy playbook (IntactTestSupport).
import PackageDescription

let package = Package(
    name: "Intact",
    products: [
        .executable(name: "intact", targets: ["intact"]),
    ],
    targets: [
        // C libraries from Debian, reached through module maps plus header-only shims.
        .systemLibrary(name: "COpenSSL", pkgConfig: "openssl",
                       providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CNGHTTP2", pkgConfig: "libnghttp2",
                       providers: [.apt(["libnghttp2-dev"])]),
        .systemLibrary(name: "CZlib", pkgConfig: "zlib",
                       providers: [.apt(["zlib1g-dev"])]),

        // Foundations. Wire: bytes, event loops, sockets, connections; no C library but Glibc and its epoll (CEpoll).
        .systemLibrary(name: "CEpoll"),
        .target(name: "Wire", dependencies: ["CEpoll"]),
        // SHA-256 over OpenSSL's EVP and its 32-byte digest value, hex and base64url, secure random bytes.
        .target(name: "Hashing", dependencies: ["COpenSSL"]),
        // JSON configuration files read with line and column: fault rules, policies, scenario.json.
        .target(name: "ConfigurationFile"),
        // gzip, zlib and raw DEFLATE both ways over zlib: streaming, bounded output, precise errors.
        .target(name: "Compression", dependencies: ["CZlib"]),

        // Codecs: the JSON writer of recording lines and the HTML escaping of every page Intact writes.
        .target(name: "Codecs", dependencies: ["Hashing"]),

        // Protocol engines (sans-io).
        // TLS contexts, the sans-io engine, ClientHello peek, key log, the development CA, PKCS#12.
        .target(name: "TLS", dependencies: ["COpenSSL", "Hashing"]),
        // Version-neutral HTTP model, HTTP/1.1 codec and its sans-io connection layers (server and
        // client: events in, commands out), HTTP/2 session, message digests (their values, not their encoding).
        .target(name: "HTTP", dependencies: ["CNGHTTP2", "Hashing"]),

        // Shared models: what the proxy, the mock server and the client share.
        // A byte channel over a connection (plaintext or TLS) and HTTP/1.1 or HTTP/2 on it, both roles
        // (its HTTP/1.1 and HTTP/2 drivers only drive HTTP's connection layers).
        .target(name: "Transport", dependencies: ["Wire", "TLS", "HTTP"]),
        // Exchange records, recordings (and the digests' encoding in them), HAR, the verifier and its reports.
        .target(name: "Evidence", dependencies: ["HTTP", "Hashing", "Codecs", "TLS", "Compression", "ConfigurationFile"]),
        // The mobile sign-in flow with no I/O: mock server, client flow, step classifier, diagnoses.
        .target(name: "AuthFlow", dependencies: ["HTTP", "Hashing", "Codecs", "Compression", "ConfigurationFile"]),
        // A real browser for steps 6–8: Chromium over the DevTools pipe (framer, messages, the sans-io
        // sign-in state machine) and its process driver, with a fresh profile per run.
        .target(name: "Browser", dependencies: ["Codecs", "ConfigurationFile"]),

        // Flow pieces, the proxy, its add-ons, the demo.
        // The fault engine: rules, presets and their effect on messages, as outputs for the proxy.
        .target(name: "Faults", dependencies: ["HTTP", "AuthFlow", "Codecs", "Compression", "ConfigurationFile"]),
        // The intercepting proxy: sans-io layers (mode, TLS, HTTP, exchange) and their driver on Transport.
        // It knows no add-on by name: they plug in through `ProxyAddon`/`ExchangeHook`.
        .target(name: "Proxy", dependencies: ["Wire", "Hashing", "Codecs", "TLS", "HTTP", "Evidence", "Transport"]),
        // The sign-in flow's add-ons to the proxy: the auth-step labeller and the fault engine.
        .target(name: "ProxyAddons", dependencies: ["Proxy", "AuthFlow", "Faults", "Evidence", "HTTP", "TLS"]),
        // The sign-in flow on real connections: the mock server host and the client runner, both recording.
        .target(name: "SignIn", dependencies: ["AuthFlow", "Browser", "Evidence", "Hashing", "Transport", "TLS", "HTTP", "Wire"]),
        // The whole sign-in flow in one process (CA, mock server, proxy, client), then verified: `intact demo`.
        .target(name: "Demo", dependencies: ["AuthFlow", "Evidence", "Proxy", "ProxyAddons", "SignIn", "TLS", "Wire"]),
        // Load balancer scenarios: real nginx/HAProxy between two taps, run and judged end to end.
        .target(name: "Scenarios", dependencies: ["TLS", "Evidence", "AuthFlow", "ConfigurationFile"]),

        // The command line, as a library so tests can drive it, and the executable.
        .target(name: "IntactCLI", dependencies: ["Wire", "TLS", "Evidence", "AuthFlow", "Browser", "Faults", "Proxy",
                                                  "ProxyAddons", "SignIn", "Demo", "Scenarios", "ConfigurationFile"]),
        .executableTarget(name: "intact", dependencies: ["IntactCLI"]),
        // Parse throughput and digest cost per message: `make microbench` (a tool, not a test).
        .executableTarget(name: "intact-microbench", dependencies: ["HTTP", "Hashing", "Evidence"],
                          path: "Benchmarks/Microbench"),

        // Fuzzing: one entry function per target (FuzzTargetsTests replays the corpus through each in
        // `make test`) and the libFuzzer driver `make fuzz` builds with coverage and AddressSanitizer.
        .systemLibrary(name: "CLibFuzzer", path: "Tests/Fuzz/CLibFuzzer"),
        .target(name: "FuzzTargets", dependencies: ["HTTP", "TLS", "Evidence", "Faults", "ConfigurationFile"], path: "Tests/Fuzz/Targets"),
        .executableTarget(name: "intact-fuzz", dependencies: ["FuzzTargets", "CLibFuzzer"], path: "Tests/Fuzz/Driver"),
        .testTarget(name: "FuzzTargetsTests", dependencies: ["FuzzTargets"]),

        // Helpers shared by test targets: child processes (intact, curl), tool runs, the proxy playbook
        // (the whole proxy in memory on an embedded loop), a seeded random generator.
        .target(name: "IntactTestSupport", dependencies: ["Wire", "TLS", "HTTP", "Evidence", "Proxy"], path: "Tests/IntactTestSupport"),
        .testTarget(name: "HashingTests", dependencies: ["Hashing"]),
        .testTarget(name: "ConfigurationFileTests", dependencies: ["ConfigurationFile"]),
        .testTarget(name: "CompressionTests", dependencies: ["Compression", "IntactTestSupport"]),
        .testTarget(name: "CodecsTests", dependencies: ["Codecs", "Hashing"]),
        .testTarget(name: "HTTPTests", dependencies: ["HTTP", "Hashing"]),
        .testTarget(name: "WireTests", dependencies: ["Wire"]),
        .testTarget(name: "TLSTests", dependencies: ["IntactTestSupport", "TLS", "Hashing", "COpenSSL"]),
        .testTarget(name: "IntactCLITests", dependencies: ["IntactTestSupport", "IntactCLI", "Browser", "Evidence", "HTTP", "SignIn", "AuthFlow", "Proxy", "ProxyAddons", "Wire"]),
        .testTarget(name: "EvidenceTests", dependencies: ["IntactTestSupport", "Evidence", "HTTP", "Hashing", "Codecs", "Compression", "ConfigurationFile"]),
        .testTarget(name: "AuthFlowTests", dependencies: ["AuthFlow", "HTTP", "Codecs", "Compression", "ConfigurationFile"]),
        .testTarget(name: "TransportTests", dependencies: ["IntactTestSupport", "Transport", "Wire", "TLS", "HTTP", "Hashing"]),
        .testTarget(name: "FaultsTests", dependencies: ["Faults", "HTTP", "AuthFlow", "Compression", "ConfigurationFile"]),
        .testTarget(name: "ScenariosTests", dependencies: ["IntactTestSupport", "Scenarios", "IntactCLI", "Evidence", "AuthFlow", "Transport", "TLS", "HTTP", "Wire"]),
        .testTarget(name: "ProxyTests", dependencies: ["IntactTestSupport", "Proxy", "Evidence", "HTTP", "TLS", "Transport", "Wire", "Hashing", "AuthFlow", "Faults", "ProxyAddons", "SignIn"]),
        // Flow-level tests across modules: the demo's whole flow in one process (DemoRig), every fault
        // preset through it (the client's diagnosis and the verifier's verdict), `intact demo --keep`.
        .testTarget(name: "IntegrationTests", dependencies: ["IntactTestSupport", "Browser", "Demo", "Wire", "Proxy", "ProxyAddons", "Faults", "AuthFlow",
                                                             "Evidence", "SignIn", "TLS", "Hashing", "HTTP"]),
        // The repository itself: no committed private key, dependencies as imported, the layer list true, links that lead somewhere.
        .testTarget(name: "RepositoryTests", dependencies: ["IntactTestSupport"]),
        .testTarget(name: "BrowserTests", dependencies: ["IntactTestSupport", "Browser", "ConfigurationFile"]),
        .testTarget(name: "SignInTests", dependencies: ["IntactTestSupport", "SignIn", "AuthFlow", "Browser", "Evidence", "Transport", "TLS", "HTTP", "Hashing", "Wire"]),
    ],
    swiftLanguageModes: [.v6]
)

// Release builds check exclusive access at compile time only (why: about 4 % of a
// proxied request's instructions, Docs/performance.md#exclusivity-checks-off-in-release-builds).
// Debug builds, which `make test` runs, keep the dynamic checks, so an overlapping
// access still fails there; and the drivers that could be re-entered guard that
// themselves (`DownstreamDriver.isHandling`).
for target in package.targets where target.type == .regular || target.type == .executable {
    target.swiftSettings = (target.swiftSettings ?? [])
        + [.unsafeFlags(["-enforce-exclusivity=unchecked"], .when(configuration: .release))]
}
