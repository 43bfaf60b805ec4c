import Evidence
import Foundation
import Glibc
import HTTP
import IntactTestSupport
import TLS
import XCTest
@testable import Proxy

/// `--upstream-proxy`: a chain client → Intact → another intercepting proxy
/// (a second Intact) → nginx, for CONNECT and plain HTTP; and an upstream
/// proxy that refuses CONNECT (407, 403, 502), which the client sees as a
/// 502 naming that proxy and its answer, recorded.
final class UpstreamProxyTests: XCTestCase {
    /// On the playbook: the playbook's proxy (outer), a second one on its
    /// network (inner, its upstream proxy; a dial to it is a socket pair in
    /// memory) and a third that passes through to the inner one; the test
    /// is the client and the origin.
    func testAChainThroughASecondInterceptingProxyReachesTheOriginAndBothRecordIt() throws {
        let directory = TemporaryDirectory.create(prefix: "intact-inner")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let innerCA = try CertificateAuthority.create(in: directory + "/ca")
        let playbook = try ProxyPlaybook {
            $0.upstreamProxy = UpstreamProxy(url: "http://127.0.0.1:3128")
            // The inner proxy intercepts too: the outer one must trust its CA.
            $0.upstreamVerification = .caFile(innerCA.certificatePath)
            $0.tap = "outer"
        }
        let inner = try playbook.startProxy(port: 3128, authority: innerCA) { $0.tap = "inner" }
        let hello = [UInt8](repeating: 0x68, count: 2048)
        var origins: [PlaybookPeer] = []
        /// The origin: takes every dial (the inner proxy's probes and request
        /// connections, all to origin.test:443) and answers each GET /hello.
        func serveOrigin() throws {
            for _ in 0..<20 {
                playbook.run()
                while !playbook.network.dials.isEmpty {
                    origins.append(try playbook.acceptDial(host: "origin.test", port: 443, tls: true))
                }
                for origin in origins where origin.readText().hasPrefix("GET /hello HTTP/1.1\r\n") {
                    origin.send("HTTP/1.1 200 OK\r\nContent-Length: \(hello.count)\r\n\r\n")
                    origin.send(hello)
                }
            }
        }
        for alpn in ["http/1.1", "h2"] {
            let client = try playbook.connectClient()
            client.send("CONNECT origin.test:443 HTTP/1.1\r\nHost: origin.test:443\r\n\r\n")
            playbook.run()
            XCTAssertTrue(client.readText().hasPrefix("HTTP/1.1 200 "), alpn)
            try playbook.startClientTLS(client, serverName: "origin.test", alpn: [alpn])
            if alpn == "h2" {
                let session = playbook.speakHTTP2(client, role: .client)
                let stream = try XCTUnwrap(session.request(HTTPRequestHead(method: "GET", authority: "origin.test", path: "/hello")))
                try serveOrigin()
                let events = session.takeEvents()
                XCTAssertEqual(events.statuses[stream], 200, alpn)
                XCTAssertEqual(events.bodies[stream], hello, alpn)
            } else {
                client.send("GET /hello HTTP/1.1\r\nHost: origin.test\r\n\r\n")
                try serveOrigin()
                let answer = client.read()
                XCTAssertTrue(String(decoding: answer.prefix(13), as: UTF8.self).hasPrefix("HTTP/1.1 200 "), alpn)
                XCTAssertEqual(Array(answer.suffix(hello.count)), hello, alpn)
            }
        }
        // A passthrough host is tunnelled through the upstream proxy too (CONNECT there, bytes relayed).
        let passthrough = try playbook.startProxy(port: 8082, authority: playbook.authority) {
            $0.upstreamProxy = UpstreamProxy(url: "http://127.0.0.1:3128")
            $0.passthroughHosts = ["origin.test"]
        }
        let relayed = try playbook.connectClient(to: passthrough.address)
        relayed.send("CONNECT origin.test:443 HTTP/1.1\r\nHost: origin.test:443\r\n\r\n")
        try serveOrigin()
        XCTAssertTrue(relayed.readText().hasPrefix("HTTP/1.1 200 "))
        // The inner proxy's certificate comes through the tunnel.
        try playbook.startClientTLS(relayed, serverName: "origin.test", trusting: innerCA.certificatePath)
        relayed.send("GET /hello HTTP/1.1\r\nHost: origin.test\r\n\r\n")
        try serveOrigin()
        XCTAssertNil(relayed.tlsFailure, "the inner proxy's certificate came through the tunnel")
        XCTAssertEqual(Array(relayed.read().suffix(hello.count)), hello)
        // The client leaves: the tunnel ends, and is recorded.
        relayed.finishSending()
        try serveOrigin()
        let tunnels = passthrough.records
        XCTAssertEqual(tunnels.count, 1)
        XCTAssertNil(tunnels.first?.error)
        let outerRecords = playbook.records
        let innerRecords = inner.records
        XCTAssertEqual(outerRecords.count, 2)
        XCTAssertEqual(innerRecords.count, 3, "every exchange crossed the second proxy")
        for record in outerRecords + innerRecords.prefix(2) {
            XCTAssertNil(record.error)
            XCTAssertEqual(record.leg(.upstream)?.response?.status, 200)
            XCTAssertEqual(record.leg(.downstream)?.request?.path, "/hello")
        }
    }

    /// An exempt host is reached directly (on the playbook: the proxy's one
    /// dial goes to the origin, none to the upstream proxy).
    func testPlainHTTPAndExemptHostsThroughTheUpstreamProxy() throws {
        // 127.0.0.1 is exempt: a plain-HTTP request goes straight to it, never to the upstream proxy.
        let playbook = try ProxyPlaybook {
            $0.upstreamProxy = UpstreamProxy(url: "http://127.0.0.1:3128", exemptions: ["127.0.0.1"])
            $0.connectTimeout = .seconds(2)
        }
        XCTAssertNil(playbook.server.configuration.upstreamProxy?.address(for: "127.0.0.1"))
        XCTAssertNotNil(playbook.server.configuration.upstreamProxy?.address(for: "example.test"))
        let client = try playbook.connectClient()
        client.send("GET http://127.0.0.1:8081/ HTTP/1.1\r\nHost: 127.0.0.1:8081\r\n\r\n")
        let origin = try playbook.acceptDial(host: "127.0.0.1", port: 8081)
        XCTAssertTrue(playbook.network.dials.isEmpty, "nothing dialled the upstream proxy")
        origin.expect("GET / HTTP/1.1\r\nHost: 127.0.0.1:8081\r\n\r\n")
        playbook.answer("HTTP/1.1 204 No Content\r\n\r\n", from: origin, reaches: client)
        XCTAssertNil(playbook.records.first?.error)
    }

    /// Each refusal of CONNECT by the upstream proxy (on the playbook: the
    /// test is that proxy, answering the proxy's dial to it).
    func testRefusalsGiveTheClient502NamingTheUpstreamProxyAndItsAnswerRecorded() throws {
        for (status, reason, type) in [(407, "Proxy Authentication Required", "proxy_configuration_error"),
                                       (403, "Forbidden", "destination_unavailable"),
                                       (502, "Bad Gateway", "destination_unavailable")] {
            let upstream = "http://127.0.0.1:3128"
            let playbook = try ProxyPlaybook {
                $0.upstreamProxy = UpstreamProxy(url: "http://ann:s%3Acret@127.0.0.1:3128")
            }
            var requests: [String] = []
            /// The upstream proxy: takes the proxy's dial, keeps the CONNECT head, refuses it.
            func refuse() throws {
                let refusing = try playbook.acceptDial(host: "127.0.0.1", port: 3128)
                requests.append(refusing.readText())
                refusing.send(RefusingProxy.answer(status: status, reason: reason))
                refusing.finishSending()
                playbook.run()
            }
            // Plain HTTP (absolute form): the pool's dial CONNECTs through the upstream proxy.
            let client = try playbook.connectClient()
            client.send("GET http://origin.test:8080/x HTTP/1.1\r\nHost: origin.test:8080\r\n\r\n")
            try refuse()
            let plain = client.readText()
            XCTAssertTrue(plain.hasPrefix("HTTP/1.1 502"), "\(status): \(plain)")
            let expected = "Proxy-Status: intact; error=\(type); next-hop=\"\(upstream)\"; received-status=\(status); "
                + "details=\"upstream proxy \(upstream) refused CONNECT: \(status) \(reason)"
            XCTAssertTrue(plain.contains(expected), "\(status): \(plain)")
            // HTTPS: the CONNECT is accepted (nothing is probed through an upstream proxy); the request
            // inside the intercepted TLS needs the upstream connection, and gets the 502.
            let tunnelled = try playbook.connectClient()
            tunnelled.send("CONNECT origin.test:443 HTTP/1.1\r\nHost: origin.test:443\r\n\r\n")
            playbook.run()
            XCTAssertTrue(playbook.network.dials.isEmpty, "no probe through an upstream proxy")
            XCTAssertTrue(tunnelled.readText().hasPrefix("HTTP/1.1 200 "))
            try playbook.startClientTLS(tunnelled, serverName: "origin.test")
            tunnelled.send("GET / HTTP/1.1\r\nHost: origin.test\r\n\r\n")
            playbook.run()
            XCTAssertNil(tunnelled.tlsFailure)
            try refuse()
            let tunnel = tunnelled.readText()
            XCTAssertTrue(tunnel.contains("HTTP/1.1 502"), "\(status): \(tunnel)")
            XCTAssertTrue(tunnel.contains(expected), "\(status): \(tunnel)")

            let records = playbook.records
            XCTAssertEqual(records.count, 2)
            for record in records {
                XCTAssertEqual(record.leg(.downstream)?.response?.status, 502)
                XCTAssertEqual(record.error?.kind, .connectionRefused)
                XCTAssertTrue(record.error?.message.hasPrefix("upstream proxy \(upstream) refused CONNECT: \(status) \(reason)") == true,
                              "\(record.error.map { "\($0)" } ?? "no error")")
            }
            // Both CONNECTs carried the credentials, percent-decoded then Base64.
            XCTAssertEqual(requests.count, 2)
            XCTAssertEqual(Set(requests.map { $0.split(separator: "\r\n").first.map(String.init) ?? "" }),
                           ["CONNECT origin.test:8080 HTTP/1.1", "CONNECT origin.test:443 HTTP/1.1"])
            let token = Data("ann:s:cret".utf8).base64EncodedString()
            XCTAssertTrue(requests.allSatisfy { $0.contains("\r\nProxy-Authorization: Basic \(token)\r\n") }, "\(requests)")
        }
    }
}

/// How a forward proxy refuses a CONNECT with `status`: the answer's bytes.
enum RefusingProxy {
    static func answer(status: Int, reason: String) -> String {
        "HTTP/1.1 \(status) \(reason)\r\n"
            + (status == 407 ? "Proxy-Authenticate: Basic realm=\"corp\"\r\n" : "")
            + "Content-Length: 0\r\nConnection: close\r\n\r\n"
    }
}
