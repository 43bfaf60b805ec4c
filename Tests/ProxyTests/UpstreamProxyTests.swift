import Evidence
import Foundation
import Glibc
import IntactTestSupport
import XCTest
@testable import Proxy

/// `--upstream-proxy`: a chain client → Intact → another intercepting proxy
/// (a second Intact) → nginx, for CONNECT and plain HTTP; and an upstream
/// proxy that refuses CONNECT (407, 403, 502), which the client sees as a
/// 502 naming that proxy and its answer, recorded.
final class UpstreamProxyTests: XCTestCase {
    func testAChainThroughASecondInterceptingProxyReachesTheOriginAndBothRecordIt() throws {
        let origin = try NginxOrigin.serving([("hello", 2048)]).0
        defer { origin.stop() }
        let inner = try ProxyHarness { $0.upstreamVerification = .caFile(origin.caFile); $0.tap = "inner" }
        let innerCA = inner.caFile
        let outer = try ProxyHarness {
            $0.upstreamProxy = UpstreamProxy(url: "http://127.0.0.1:\(inner.port)")
            // The inner proxy intercepts too: the outer one must trust its CA.
            $0.upstreamVerification = .caFile(innerCA)
            $0.tap = "outer"
        }
        for version in ["--http1.1", "--http2"] {
            let run = try ToolRun.curl(["-x", outer.proxyURL, "--cacert", outer.caFile, version, "-o", "/dev/null",
                                        "-w", "%{http_code} %{size_download}", origin.url("/hello")])
            XCTAssertEqual(run.output, "200 2048", version + run.error)
        }
        // A passthrough host is tunnelled through the upstream proxy too (CONNECT there, bytes relayed).
        let passthrough = try ProxyHarness {
            $0.upstreamProxy = UpstreamProxy(url: "http://127.0.0.1:\(inner.port)")
            $0.passthroughHosts = ["127.0.0.1"]
        }
        let relayed = try ToolRun.curl(["-x", passthrough.proxyURL, "--cacert", innerCA, "-o", "/dev/null",
                                        "-w", "%{http_code} %{size_download}", origin.url("/hello")])
        XCTAssertEqual(relayed.output, "200 2048", "the inner proxy's certificate came through the tunnel: " + relayed.error)
        let tunnels = try passthrough.stopAndRead().records
        XCTAssertEqual(tunnels.count, 1)
        XCTAssertNil(tunnels.first?.error)
        let outerRecords = try outer.stopAndRead().records
        let innerRecords = try inner.stopAndRead().records
        XCTAssertEqual(outerRecords.count, 2)
        XCTAssertEqual(innerRecords.count, 3, "every exchange crossed the second proxy")
        for record in outerRecords + innerRecords.prefix(2) {
            XCTAssertNil(record.error)
            XCTAssertEqual(record.leg(.upstream)?.response?.status, 200)
            XCTAssertEqual(record.leg(.downstream)?.request?.path, "/hello")
        }
    }

    func testPlainHTTPAndExemptHostsThroughTheUpstreamProxy() throws {
        let refusing = try RefusingProxy.start(status: 403, reason: "Forbidden")
        defer { refusing.stop() }
        let origin = try RawOrigin(.swallow)
        defer { origin.stop() }
        // 127.0.0.1 is exempt: a plain-HTTP request goes straight to it, never to the refusing proxy.
        let proxy = try ProxyHarness {
            $0.upstreamProxy = UpstreamProxy(url: "http://127.0.0.1:\(refusing.port)", exemptions: ["127.0.0.1"])
            $0.connectTimeout = .seconds(2)
        }
        XCTAssertNil(proxy.server.configuration.upstreamProxy?.address(for: "127.0.0.1"))
        XCTAssertNotNil(proxy.server.configuration.upstreamProxy?.address(for: "example.test"))
        let direct = try ToolRun.curl(["-x", proxy.proxyURL, "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "2",
                                       "http://127.0.0.1:\(origin.port)/"])
        XCTAssertNotEqual(direct.output, "502", "an exempt host is reached directly")
        XCTAssertEqual(refusing.requestHeads.count, 0)
    }

    func testRefusalsGiveTheClient502NamingTheUpstreamProxyAndItsAnswerRecorded() throws {
        for (status, reason, type) in [(407, "Proxy Authentication Required", "proxy_configuration_error"),
                                       (403, "Forbidden", "destination_unavailable"),
                                       (502, "Bad Gateway", "destination_unavailable")] {
            let refusing = try RefusingProxy.start(status: status, reason: reason)
            defer { refusing.stop() }
            let upstream = "http://127.0.0.1:\(refusing.port)"
            let proxy = try ProxyHarness {
                $0.upstreamProxy = UpstreamProxy(url: "http://ann:s%3Acret@127.0.0.1:\(refusing.port)")
            }
            // Plain HTTP (absolute form): the pool's dial CONNECTs through the upstream proxy.
            let plain = try ToolRun.curl(["-x", proxy.proxyURL, "-s", "-D", "-", "-o", "/dev/null",
                                          "http://origin.test:8080/x"])
            XCTAssertTrue(plain.output.hasPrefix("HTTP/1.1 502"), "\(status): \(plain.output)")
            let expected = "Proxy-Status: intact; error=\(type); next-hop=\"\(upstream)\"; received-status=\(status); "
                + "details=\"upstream proxy \(upstream) refused CONNECT: \(status) \(reason)"
            XCTAssertTrue(plain.output.contains(expected), "\(status): \(plain.output)")
            // HTTPS: the CONNECT is accepted (nothing is probed through an upstream proxy); the request
            // inside the intercepted TLS needs the upstream connection, and gets the 502.
            let tunnel = try ToolRun.curl(["-x", proxy.proxyURL, "--cacert", proxy.caFile, "--http1.1", "-s", "-D", "-",
                                           "-o", "/dev/null", "https://origin.test/"])
            XCTAssertTrue(tunnel.output.contains("HTTP/1.1 502"), "\(status): \(tunnel.output)")
            XCTAssertTrue(tunnel.output.contains(expected), "\(status): \(tunnel.output)")

            let records = try proxy.stopAndRead().records
            XCTAssertEqual(records.count, 2)
            for record in records {
                XCTAssertEqual(record.leg(.downstream)?.response?.status, 502)
                XCTAssertEqual(record.error?.kind, .connectionRefused)
                XCTAssertTrue(record.error?.message.hasPrefix("upstream proxy \(upstream) refused CONNECT: \(status) \(reason)") == true,
                              "\(record.error.map { "\($0)" } ?? "no error")")
            }
            // Both CONNECTs carried the credentials, percent-decoded then Base64.
            let requests = refusing.requestHeads
            XCTAssertEqual(requests.count, 2)
            XCTAssertEqual(Set(requests.map { $0.split(separator: "\r\n").first.map(String.init) ?? "" }),
                           ["CONNECT origin.test:8080 HTTP/1.1", "CONNECT origin.test:443 HTTP/1.1"])
            let token = Data("ann:s:cret".utf8).base64EncodedString()
            XCTAssertTrue(requests.allSatisfy { $0.contains("\r\nProxy-Authorization: Basic \(token)\r\n") }, "\(requests)")
        }
    }
}

/// A forward proxy that answers every CONNECT with one refusal, keeping each request head.
enum RefusingProxy {
    static func start(status: Int, reason: String) throws -> RawOrigin {
        try RawOrigin(.answer("HTTP/1.1 \(status) \(reason)\r\n"
            + (status == 407 ? "Proxy-Authenticate: Basic realm=\"corp\"\r\n" : "")
            + "Content-Length: 0\r\nConnection: close\r\n\r\n"))
    }
}
