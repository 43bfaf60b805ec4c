import Evidence
import IntactTestSupport
import Foundation
import HTTP
import TLS
import XCTest
@testable import Proxy

/// The upstream leg's options, on the playbook (the test is client and
/// origin): a client certificate for an origin that asks for one,
/// verification turned off, and an HTTP/2 client to an HTTP/1.1 origin.
final class ProxyUpstreamTests: XCTestCase {
    /// A client's CONNECT to `origin.test:443`, its probe answered by a TLS
    /// origin offering `alpn` (and asking for `clientCertificates`), then the
    /// client's handshake offering `clientALPN`; the client's end.
    private func tunnel(_ playbook: ProxyPlaybook, alpn: [String] = ["http/1.1"], clientALPN: [String] = ["http/1.1"],
                        clientCertificates: TLSClientCertificatePolicy = .none) throws -> PlaybookPeer {
        let client = try playbook.connectClient()
        client.send("CONNECT origin.test:443 HTTP/1.1\r\nHost: origin.test:443\r\n\r\n")
        _ = try playbook.acceptDial(host: "origin.test", port: 443, tls: true, alpn: alpn, clientCertificates: clientCertificates)
        XCTAssertTrue(client.readText().hasPrefix("HTTP/1.1 200 "))
        try playbook.startClientTLS(client, serverName: "origin.test", alpn: clientALPN)
        playbook.run()
        XCTAssertNil(client.tlsFailure)
        return client
    }

    func testAClientCertificateAnswersAnUpstreamThatRequiresOne() throws {
        let directory = TemporaryDirectory.create(prefix: "intact-client-ca")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let clientCA = try CertificateAuthority.create(in: directory + "/ca")
        let issued = try clientCA.issueClient(commonName: "intact-tap", password: "pw")
        let asks = TLSClientCertificatePolicy.request(trustedBy: .caFile(clientCA.certificatePath))
        let file = (0..<4096).map { UInt8(truncatingIfNeeded: $0 % 251) }
        // The origin (as nginx with `ssl_verify_client on`) answers 400 to a request that came without a certificate.
        for sendsCertificate in [true, false] {
            let playbook = try ProxyPlaybook { if sendsCertificate { $0.upstreamClientIdentity = issued.identity } }
            let client = try tunnel(playbook, clientCertificates: asks)
            client.send("GET /file HTTP/1.1\r\nHost: origin.test\r\n\r\n")
            let origin = try playbook.acceptDial(host: "origin.test", port: 443, tls: true, clientCertificates: asks)
            XCTAssertNil(origin.tlsFailure)
            XCTAssertTrue(origin.readText().hasPrefix("GET /file HTTP/1.1\r\n"))
            let certificate = origin.negotiated?.peerCertificate
            if sendsCertificate {
                XCTAssertTrue(certificate?.subject.contains("intact-tap") == true, "\(String(describing: certificate))")
                origin.send("HTTP/1.1 200 OK\r\nContent-Length: \(file.count)\r\n\r\n")
                origin.send(file)
                playbook.run()
                let answer = client.read()
                XCTAssertTrue(String(decoding: answer.prefix(15), as: UTF8.self).hasPrefix("HTTP/1.1 200 "))
                XCTAssertEqual(Array(answer.suffix(file.count)), file)
            } else {
                XCTAssertNil(certificate, "no certificate without an identity configured")
                origin.send("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
                playbook.run()
                XCTAssertTrue(client.readText().hasPrefix("HTTP/1.1 400 "), "the origin refuses a request without a client certificate")
            }
        }
    }

    func testInsecureUpstreamReachesAnOriginNobodyTrusts() throws {
        // The origin's leaf is from the playbook's origin CA, which `.insecure` does not need.
        let playbook = try ProxyPlaybook { $0.upstreamVerification = .insecure }
        let client = try tunnel(playbook)
        client.send("GET /file HTTP/1.1\r\nHost: origin.test\r\n\r\n")
        let origin = try playbook.acceptDial(host: "origin.test", port: 443, tls: true)
        XCTAssertTrue(origin.readText().hasPrefix("GET /file HTTP/1.1\r\n"))
        playbook.answer("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n0123456789", from: origin, reaches: client)
        let record = try XCTUnwrap(playbook.records.first)
        XCTAssertNil(record.error)
        XCTAssertNotNil(record.leg(.upstream)?.tls?.peerCertificateSHA256)
    }

    func testHTTP2ClientsReachAnHTTP1OriginWithBodiesOfUnknownLength() throws {
        let playbook = try ProxyPlaybook()
        let client = playbook.speakHTTP2(try tunnel(playbook, alpn: ["http/1.1"], clientALPN: ["h2"]), role: .client)
        XCTAssertEqual(client.peer.negotiated?.alpn, "h2")
        let file = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 % 251) }
        let download = try XCTUnwrap(client.request(HTTPRequestHead(method: "GET", authority: "origin.test", path: "/file")))
        let origin = try playbook.acceptDial(host: "origin.test", port: 443, tls: true)
        XCTAssertTrue(origin.readText().hasPrefix("GET /file HTTP/1.1\r\n"))
        origin.send("HTTP/1.1 200 OK\r\nContent-Length: \(file.count)\r\n\r\n")
        origin.send(file)
        playbook.run()
        var events = client.takeEvents()
        XCTAssertEqual(events.statuses[download], 200)
        XCTAssertEqual(events.bodies[download], file)
        XCTAssertTrue(events.endedStreams.contains(download))

        // An upload with no length: HTTP/2 sends none, so HTTP/1.1 upstream is chunked.
        let source = (0..<200_000).map { UInt8(truncatingIfNeeded: $0 % 241) }
        let upload = try XCTUnwrap(client.request(HTTPRequestHead(method: "PUT", authority: "origin.test", path: "/streamed"),
                                                  body: source))
        playbook.run()
        let upstream = playbook.network.dials.isEmpty ? origin : try playbook.acceptDial(host: "origin.test", port: 443, tls: true)
        var parser = HTTP1Parser(parsing: .request)
        var head: HTTP1ParsedRequestHead?
        var body: [UInt8] = []
        var ended = false
        for _ in 0..<1_000 where !ended {
            let bytes = upstream.read()
            if bytes.isEmpty { playbook.run(); continue }
            parser.feed(bytes)
            for event in try parser.parseAvailable() {
                switch event {
                case .requestHead(let parsed): head = parsed
                case .body(let bytes): body += bytes
                case .end: ended = true
                default: break
                }
            }
        }
        let fields = try XCTUnwrap(head?.head.fields)
        XCTAssertEqual(fields.first { $0.name.lowercased() == "transfer-encoding" }?.value, "chunked")
        XCTAssertNil(fields.first { $0.name.lowercased() == "content-length" })
        XCTAssertEqual(body, source, "the upload arrived whole")
        upstream.send("HTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n")
        playbook.run()
        events = client.takeEvents()
        XCTAssertEqual(events.statuses[upload], 201)

        let records = playbook.records
        XCTAssertEqual(records.count, 2)
        for record in records {
            assertCleanHop(record)
            XCTAssertEqual(record.leg(.downstream)?.request?.version, .http2)
            XCTAssertEqual(record.leg(.upstream)?.request?.version, .http1_1)
            XCTAssertEqual(record.leg(.upstream)?.response?.version, .http1_1)
            XCTAssertEqual(record.leg(.downstream)?.response?.version, .http2)
        }
    }
}
