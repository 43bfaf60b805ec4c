import TLS
import XCTest

/// Peeking at ClientHellos: real ones from OpenSSL and hand-built edge cases.
final class ClientHelloPeekTests: XCTestCase {
    /// The ClientHello a client engine sends first.
    private func realClientHello(serverName: String?, configure: (inout TLSClientConfiguration) -> Void = { _ in }) throws -> [UInt8] {
        let engine = try TLSEngine(context: clientContext(configure), serverName: serverName)
        XCTAssertEqual(engine.handshake(), .incomplete)
        return engine.takeOutbound()
    }

    /// A ClientHello record around the given extensions (type, data).
    private func builtClientHello(extensions: [(UInt16, [UInt8])]?, legacyVersion: UInt16 = 0x0303) -> [UInt8] {
        var body: [UInt8] = [UInt8(legacyVersion >> 8), UInt8(legacyVersion & 0xff)]
        body += [UInt8](repeating: 7, count: 32)          // random
        body += [0]                                        // legacy_session_id
        body += [0, 2, 0x13, 0x01]                         // cipher_suites: TLS_AES_128_GCM_SHA256
        body += [1, 0]                                     // compression: null
        if let extensions {
            var block: [UInt8] = []
            for (type, data) in extensions {
                block += [UInt8(type >> 8), UInt8(type & 0xff), UInt8(data.count >> 8), UInt8(data.count & 0xff)] + data
            }
            body += [UInt8(block.count >> 8), UInt8(block.count & 0xff)] + block
        }
        let handshake = [1, UInt8(body.count >> 16), UInt8(body.count >> 8 & 0xff), UInt8(body.count & 0xff)] + body
        return record(handshake)
    }

    private func record(_ fragment: [UInt8]) -> [UInt8] {
        [22, 3, 1, UInt8(fragment.count >> 8), UInt8(fragment.count & 0xff)] + fragment
    }

    private func serverNameExtension(_ name: [UInt8]) -> (UInt16, [UInt8]) {
        let entry = [0, UInt8(name.count >> 8), UInt8(name.count & 0xff)] + name
        return (0, [UInt8(entry.count >> 8), UInt8(entry.count & 0xff)] + entry)
    }

    func testRealClientHelloWithSNIAndALPN() throws {
        let hello = try realClientHello(serverName: "Example.Test") { $0.alpnOffer = ["h2", "http/1.1"] }
        guard case .clientHello(let summary) = ClientHelloPeek.inspect(hello) else {
            return XCTFail("\(ClientHelloPeek.inspect(hello))")
        }
        XCTAssertEqual(summary.serverName, "example.test")
        XCTAssertEqual(summary.alpn, ["h2", "http/1.1"])
        XCTAssertEqual(summary.legacyVersion, 0x0303)
        XCTAssertEqual(summary.supportedVersions, [0x0304, 0x0303])
    }

    func testEveryPrefixNeedsMoreData() throws {
        let hello = try realClientHello(serverName: "example.test")
        for length in 0..<hello.count {
            XCTAssertEqual(ClientHelloPeek.inspect(Array(hello.prefix(length))), .needMoreData, "prefix \(length)")
        }
        // Bytes after the hello (say, early data) do not matter.
        guard case .clientHello = ClientHelloPeek.inspect(hello + [23, 3, 3, 0, 1, 0]) else { return XCTFail() }
    }

    func testClientHelloWithoutSNI() throws {
        let hello = try realClientHello(serverName: nil)
        guard case .clientHello(let summary) = ClientHelloPeek.inspect(hello) else { return XCTFail() }
        XCTAssertNil(summary.serverName)
        XCTAssertEqual(summary.alpn, [])
    }

    func testTLS12OnlyClientHasNoSupportedVersions() throws {
        let hello = try realClientHello(serverName: "example.test") { $0.maximumVersion = .tls1_2 }
        guard case .clientHello(let summary) = ClientHelloPeek.inspect(hello) else { return XCTFail() }
        XCTAssertEqual(summary.supportedVersions, [])
        XCTAssertEqual(summary.serverName, "example.test")
    }

    func testHelloWithoutExtensions() {
        guard case .clientHello(let summary) = ClientHelloPeek.inspect(builtClientHello(extensions: nil)) else {
            return XCTFail()
        }
        XCTAssertEqual(summary, ClientHelloSummary(serverName: nil, alpn: [], legacyVersion: 0x0303, supportedVersions: []))
    }

    func testHelloSplitAcrossRecords() {
        let whole = builtClientHello(extensions: [serverNameExtension(Array("split.test".utf8))])
        let handshake = Array(whole.dropFirst(5))
        let split = record(Array(handshake.prefix(10))) + record(Array(handshake.dropFirst(10)))
        guard case .clientHello(let summary) = ClientHelloPeek.inspect(split) else {
            return XCTFail("\(ClientHelloPeek.inspect(split))")
        }
        XCTAssertEqual(summary.serverName, "split.test")
    }

    func testGREASEVersionsAreDropped() {
        let versions: (UInt16, [UInt8]) = (43, [6, 0x3a, 0x3a, 0x03, 0x04, 0x03, 0x03])
        guard case .clientHello(let summary) = ClientHelloPeek.inspect(builtClientHello(extensions: [versions])) else {
            return XCTFail()
        }
        XCTAssertEqual(summary.supportedVersions, [0x0304, 0x0303])
    }

    /// A name that is not a valid host name is accepted (nginx, HAProxy and
    /// mitmproxy accept them too): no `serverName`, the bytes as sent, and
    /// the reason it is not one.
    func testInvalidServerNamesAreAcceptedWithTheirIssue() {
        let cases: [(String, String)] = [
            ("bad_name.test", "'_'"),
            ("127.0.0.1", "IP address"),
            ("::1", "IP address"),
            ("example.test.", "trailing dot"),
            ("-lead.test", "start or end with '-'"),
            (String(repeating: "a", count: 64) + ".test", "longer than 63"),
            ("a..b", "empty"),
            ("example.123", "all digits"),
            ("localhost:8443", "':'"),
            (String(repeating: "a", count: 300), "300 bytes"),
        ]
        for (name, expected) in cases {
            let outcome = ClientHelloPeek.inspect(builtClientHello(extensions: [serverNameExtension(Array(name.utf8))]))
            guard case .clientHello(let summary) = outcome else {
                XCTFail("\(name): \(outcome)")
                continue
            }
            XCTAssertNil(summary.serverName, name)
            XCTAssertEqual(summary.serverNameSent, Array(name.utf8))
            XCTAssertEqual(summary.escapedServerNameSent, name)
            let issue = summary.serverNameIssue ?? ""
            XCTAssertTrue(issue.contains(expected), "\(name): \(issue)")
        }
        let binary = ClientHelloPeek.inspect(builtClientHello(extensions: [serverNameExtension([0x65, 0x00, 0x66, 0x5C])]))
        guard case .clientHello(let summary) = binary else { return XCTFail("\(binary)") }
        XCTAssertEqual(summary.escapedServerNameSent, "e\\x00f\\x5C")
        XCTAssertTrue(summary.serverNameIssue?.contains("0x00") == true, summary.serverNameIssue ?? "")
    }

    /// The address or host inside an SNI that is not a host name, for picking a certificate.
    func testTheAddressInsideAnOddServerName() {
        let cases: [(String, String?)] = [
            ("127.0.0.1", "127.0.0.1"), ("::1", "::1"), ("Localhost:8443", "localhost"), ("127.0.0.1:443", "127.0.0.1"),
            ("[::1]:443", "::1"), ("bad_name:443", nil), ("host:", nil), ("bad_name", nil), ("example.test", nil),
        ]
        for (name, expected) in cases {
            guard case .clientHello(let summary) = ClientHelloPeek.inspect(
                builtClientHello(extensions: [serverNameExtension(Array(name.utf8))])) else { return XCTFail(name) }
            XCTAssertEqual(summary.serverNameAddress, expected, name)
        }
    }

    func testPlainHTTPIsNotTLS() {
        let outcome = ClientHelloPeek.inspect(Array("GET / HTTP/1.1\r\nHost: example.test\r\n\r\n".utf8))
        guard case .notTLS(let reason) = outcome else { return XCTFail("\(outcome)") }
        XCTAssertTrue(reason.contains("\"GET / HTTP/1.1\""), reason)
        // One byte is enough to tell.
        guard case .notTLS = ClientHelloPeek.inspect([UInt8(ascii: "C")]) else { return XCTFail() }
    }

    func testSSLv2AndOtherRecordTypesAreNotTLS() {
        guard case .notTLS(let sslv2) = ClientHelloPeek.inspect([0x80, 0x2e, 0x01, 0x03, 0x01]) else { return XCTFail() }
        XCTAssertTrue(sslv2.contains("SSLv2"), sslv2)
        guard case .notTLS(let alert) = ClientHelloPeek.inspect([21, 3, 3, 0, 2, 2, 40]) else { return XCTFail() }
        XCTAssertTrue(alert.contains("(22)"), alert)
        guard case .notTLS(let serverHello) = ClientHelloPeek.inspect(record([2, 0, 0, 1, 0])) else { return XCTFail() }
        XCTAssertTrue(serverHello.contains("not ClientHello"), serverHello)
    }

    func testOversizedHelloIsRejectedBeforeItArrives() {
        // A header claiming a 20 000-byte ClientHello: refused without waiting for the bytes.
        let outcome = ClientHelloPeek.inspect(record([1, 0, 0x4e, 0x20] + [UInt8](repeating: 0, count: 100)))
        guard case .notTLS(let reason) = outcome else { return XCTFail("\(outcome)") }
        XCTAssertTrue(reason.contains("20000 bytes exceeds"), reason)
        guard case .notTLS = ClientHelloPeek.inspect([22, 3, 1, 0x40, 0x01]) else { return XCTFail("record over 16 KiB") }
    }

    func testMalformedHellosAreNotTLS() {
        var truncatedVector = builtClientHello(extensions: [serverNameExtension(Array("a.test".utf8))])
        truncatedVector[5 + 4 + 2 + 32] = 200  // session ID length far past the end
        guard case .notTLS(let reason) = ClientHelloPeek.inspect(truncatedVector) else { return XCTFail() }
        XCTAssertTrue(reason.contains("malformed ClientHello"), reason)
        let duplicated = builtClientHello(extensions: [(16, [0, 3, 2, 0x68, 0x32]), (16, [0, 3, 2, 0x68, 0x32])])
        guard case .notTLS(let twice) = ClientHelloPeek.inspect(duplicated) else { return XCTFail() }
        XCTAssertTrue(twice.contains("twice"), twice)
    }
}
