import Evidence
import Foundation
import Hashing
import Proxy
import TLS
import Wire
import IntactTestSupport
import XCTest

/// A `ProxyServer` run in-process on an ephemeral loopback port for a
/// loopback test, with its own CA and recording in a temporary directory.
final class ProxyHarness {
    let directory: String
    let server: ProxyServer
    let address: SocketAddress
    let authority: CertificateAuthority
    private var stopped = false

    var port: Int { Int(address.port) }
    var proxyURL: String { "http://127.0.0.1:\(port)" }
    var caFile: String { authority.certificatePath }
    var recordingPath: String { directory + "/recording.jsonl" }
    /// The digest key the harness records under: 32 bytes of 0x42, so a
    /// test can compute the digests it expects (HMAC-SHA-256 under it).
    static let digester = SecretDigester(key: [UInt8](repeating: 0x42, count: SecretDigester.keyByteCount))

    /// Starts a proxy; `configure` adjusts the configuration (mode, trust, hooks…).
    init(mode: ProxyMode = .forward, bodyStoreLimit: Int = 0,
         configure: (inout ProxyConfiguration) -> Void = { _ in }) throws {
        directory = TemporaryDirectory.create(prefix: "intact-proxy")
        authority = try CertificateAuthority.create(in: directory + "/ca")
        var configuration = ProxyConfiguration(authority: authority)
        configuration.listenPort = 0
        configuration.mode = mode
        configuration.tap = "test"
        configuration.keyLog = .disabled
        configuration.recording = ProxyConfiguration.Recording(path: directory + "/recording.jsonl",
                                                               bodyStoreLimit: bodyStoreLimit,
                                                               redaction: RedactionPolicy(digester: ProxyHarness.digester))
        configure(&configuration)
        server = ProxyServer(configuration: configuration)
        address = try server.start()
    }

    /// Stops the proxy (draining) and reads its recording back.
    func stopAndRead() throws -> Recording {
        stop()
        return try RecordingReader.read(path: recordingPath)
    }

    func stop() {
        guard !stopped else { return }
        stopped = true
        _ = server.stopAndWait(drainTimeout: .seconds(5))
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(atPath: directory)
    }
}

extension XCTestCase {
    /// Fails the test unless both legs of every record show the same semantic
    /// head digests and the same body digests (a clean hop), and each body is complete.
    func assertCleanHop(_ record: ExchangeRecord, file: StaticString = #filePath, line: UInt = #line) {
        guard let down = record.leg(.downstream), let up = record.leg(.upstream) else {
            return XCTFail("\(record.exchangeID): missing a leg", file: file, line: line)
        }
        XCTAssertNil(record.error, "\(record.exchangeID)", file: file, line: line)
        XCTAssertEqual(down.request?.digest.head.semantic, up.request?.digest.head.semantic,
                       "\(record.exchangeID) request head", file: file, line: line)
        XCTAssertEqual(down.request?.digest.body, up.request?.digest.body, "\(record.exchangeID) request body",
                       file: file, line: line)
        XCTAssertEqual(down.response?.digest.head.semantic, up.response?.digest.head.semantic,
                       "\(record.exchangeID) response head", file: file, line: line)
        XCTAssertEqual(down.response?.digest.body, up.response?.digest.body, "\(record.exchangeID) response body",
                       file: file, line: line)
        XCTAssertEqual(down.response?.complete, true, file: file, line: line)
        XCTAssertEqual(up.response?.complete, true, file: file, line: line)
    }
}
