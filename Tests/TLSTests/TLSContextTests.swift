import Foundation
import TLS
import XCTest

/// Context configuration: key logging and configuration errors.
final class TLSContextTests: XCTestCase {
    private func keyLogLines(version: TLSVersion) throws -> [String] {
        let path = try certificates().path("keys-\(version.rawValue)-\(UUID().uuidString).log")
        let pair = try EnginePair(client: clientContext {
                                      $0.keyLog = .file(path)
                                      $0.maximumVersion = version
                                  },
                                  server: serverContext())
        pair.pump()
        XCTAssertEqual(pair.client.state, .established)
        let text = try String(contentsOfFile: path, encoding: .utf8)
        XCTAssertTrue(text.hasSuffix("\n"))
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        XCTAssertEqual((attributes[.posixPermissions] as? NSNumber)?.intValue, 0o600)
        return text.split(separator: "\n").map(String.init)
    }

    /// Each NSS line: label, 32-byte client random, secret, in hex.
    private func assertNSSFormat(_ lines: [String], file: StaticString = #filePath, line: UInt = #line) {
        for entry in lines {
            let fields = entry.split(separator: " ")
            XCTAssertEqual(fields.count, 3, entry, file: file, line: line)
            XCTAssertEqual(fields.dropFirst().first?.count, 64, entry, file: file, line: line)
        }
    }

    func testKeyLogTLS13() throws {
        let lines = try keyLogLines(version: .tls1_3)
        let labels = Set(lines.compactMap { $0.split(separator: " ").first.map(String.init) })
        XCTAssertEqual(labels, ["CLIENT_HANDSHAKE_TRAFFIC_SECRET", "SERVER_HANDSHAKE_TRAFFIC_SECRET",
                                "CLIENT_TRAFFIC_SECRET_0", "SERVER_TRAFFIC_SECRET_0", "EXPORTER_SECRET"])
        assertNSSFormat(lines)
    }

    func testKeyLogTLS12() throws {
        let lines = try keyLogLines(version: .tls1_2)
        XCTAssertEqual(lines.count, 1)
        XCTAssertTrue(lines.first?.hasPrefix("CLIENT_RANDOM ") == true, lines.first ?? "")
        assertNSSFormat(lines)
    }

    func testContextsNamingOneKeyLogFileShareIt() throws {
        let path = try certificates().path("shared-\(UUID().uuidString).log")
        let server = try serverContext()
        for _ in 0..<3 {
            let pair = try EnginePair(client: clientContext { $0.keyLog = .file(path) }, server: server)
            pair.pump()
        }
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
        XCTAssertEqual(lines.count, 15)
        assertNSSFormat(lines.map(String.init))
    }

    func testKeyLogFollowsSSLKEYLOGFILE() throws {
        let path = try certificates().path("environment-\(UUID().uuidString).log")
        setenv("SSLKEYLOGFILE", path, 1)
        defer { unsetenv("SSLKEYLOGFILE") }
        let pair = try EnginePair(client: clientContext { $0.keyLog = .environment }, server: serverContext())
        pair.pump()
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
        XCTAssertEqual(lines.count, 5)
        assertNSSFormat(lines.map(String.init))
    }

    func testServerWithoutAnyCertificateIsAConfigurationError() {
        XCTAssertThrowsError(try TLSContext(server: TLSServerConfiguration())) { error in
            XCTAssertEqual((error as? TLSError)?.kind, .configuration)
        }
    }

    func testInvertedVersionRangeIsAConfigurationError() throws {
        XCTAssertThrowsError(try clientContext {
            $0.minimumVersion = .tls1_3
            $0.maximumVersion = .tls1_2
        }) { error in
            XCTAssertEqual((error as? TLSError)?.kind, .configuration)
            XCTAssertTrue("\(error)".contains("below the minimum"), "\(error)")
        }
    }

    func testMissingCAFileIsNamed() throws {
        XCTAssertThrowsError(try clientContext { $0.verification = .verify(.caFile("/nonexistent/ca.pem")) }) { error in
            XCTAssertTrue("\(error)".contains("/nonexistent/ca.pem"), "\(error)")
            XCTAssertEqual((error as? TLSError)?.kind, .configuration)
        }
    }

    func testTrustRootsFromPEMInMemory() throws {
        let pem = try certificates().bytes("ca.pem")
        let pair = try EnginePair(client: clientContext { $0.verification = .verify(.caPEM(pem)) }, server: serverContext())
        pair.pump()
        XCTAssertEqual(pair.client.negotiated?.verifyResult, .trusted)
    }

    func testOverlongALPNNameIsAConfigurationError() {
        XCTAssertThrowsError(try clientContext { $0.alpnOffer = [String(repeating: "x", count: 256)] }) { error in
            XCTAssertEqual((error as? TLSError)?.kind, .configuration)
        }
    }
}
