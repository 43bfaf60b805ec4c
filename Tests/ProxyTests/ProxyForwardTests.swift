import Evidence
import IntactTestSupport
import Foundation
import XCTest
@testable import Proxy

/// Real clients through the forward proxy to an nginx origin on loopback:
/// curl with HTTP/1.1 and HTTP/2 inside CONNECT, downloads and uploads of
/// 0 B, 1 KiB, 1 MiB and 100 MiB compared by SHA-256, and the recording
/// showing a clean hop for every exchange.
final class ProxyForwardTests: XCTestCase {
    /// One origin for the whole class (nginx starts in a few milliseconds, but files take longer).
    static let sizes: [(name: String, size: Int)] = [("empty", 0), ("one-kib", 1024), ("one-mib", 1 << 20),
                                                     ("hundred-mib", 100 << 20)]
    static let shared = SharedNginxOrigin(sizes)
    static var digests: [String: String] { shared.digests }

    override class func setUp() {
        super.setUp()
        shared.start()
    }

    override class func tearDown() {
        shared.stop()
        super.tearDown()
    }

    private func origin() throws -> NginxOrigin {
        try Self.shared.started()
    }

    private func forwardProxy(bodyStoreLimit: Int = 0) throws -> ProxyHarness {
        let caFile = try origin().caFile
        return try ProxyHarness(bodyStoreLimit: bodyStoreLimit) { $0.upstreamVerification = .caFile(caFile) }
    }

    /// curl through the proxy; returns the run and the downloaded file's SHA-256.
    private func download(_ path: String, via proxy: ProxyHarness, version: String) throws -> (ToolRun, String) {
        let output = proxy.directory + "/download-\(UUID().uuidString)"
        let run = try ToolRun.curl(["-x", proxy.proxyURL, "--cacert", proxy.caFile, version, "-o", output,
                                    "-w", "%{http_code} %{http_version}", try origin().url(path)])
        let digest = (try? NginxOrigin.sha256(ofFile: output)) ?? "missing"
        try? FileManager.default.removeItem(atPath: output)
        return (run, digest)
    }

    func testDownloadsArriveByteIdenticalOverHTTP1AndHTTP2() throws {
        let proxy = try forwardProxy()
        for version in ["--http1.1", "--http2"] {
            for (name, _) in Self.sizes {
                let (run, digest) = try download("/" + name, via: proxy, version: version)
                XCTAssertEqual(run.status, 0, "\(version) \(name): \(run.error)")
                XCTAssertEqual(run.output, version == "--http2" ? "200 2" : "200 1.1", "\(version) \(name)")
                XCTAssertEqual(digest, Self.digests[name], "\(version) \(name)")
            }
        }
        let recording = try proxy.stopAndRead()
        XCTAssertEqual(recording.header.tap, "test")
        XCTAssertEqual(recording.header.mode, "forward")
        XCTAssertEqual(recording.records.count, 2 * Self.sizes.count)
        for record in recording.records {
            assertCleanHop(record)
            XCTAssertEqual(record.leg(.downstream)?.tls?.sni, nil, "curl sends no SNI for an IP address")
            XCTAssertNotNil(record.leg(.upstream)?.tls?.cipher)
        }
        let versions = Set(recording.records.compactMap { $0.leg(.downstream)?.request?.version })
        XCTAssertEqual(versions, [.http1_1, .http2])
        let lengths = recording.records.compactMap { $0.leg(.upstream)?.response?.digest.body.length }
        XCTAssertEqual(Set(lengths), Set(Self.sizes.map(\.size)))
    }

    func testUploadsArriveByteIdenticalOverHTTP1AndHTTP2() throws {
        let proxy = try forwardProxy()
        let origin = try origin()
        for version in ["--http1.1", "--http2"] {
            for (name, size) in Self.sizes where size > 0 {
                let source = proxy.directory + "/upload-\(name)"
                let digest = try NginxOrigin.writePatternFile(source, size: size + 1)
                let target = "/uploads\(version)-\(name)"
                let run = try ToolRun.curl(["-x", proxy.proxyURL, "--cacert", proxy.caFile, version, "-T", source,
                                            "-w", "%{http_code}", "-o", "/dev/null", origin.url(target)])
                XCTAssertEqual(run.status, 0, "\(version) \(name): \(run.error)")
                XCTAssertEqual(run.output, "201", "\(version) \(name)")
                XCTAssertEqual(try NginxOrigin.sha256(ofFile: origin.root + target), digest, "\(version) \(name)")
                try? FileManager.default.removeItem(atPath: source)
            }
        }
        let recording = try proxy.stopAndRead()
        XCTAssertEqual(recording.records.count, 6)
        recording.records.forEach { assertCleanHop($0) }
        XCTAssertEqual(Set(recording.records.compactMap { $0.leg(.upstream)?.request?.digest.body.length }),
                       [1025, (1 << 20) + 1, (100 << 20) + 1])
    }

    func testUpstreamConnectionsAreReusedAcrossClientConnections() throws {
        let proxy = try forwardProxy()
        for _ in 0..<3 {
            let (run, digest) = try download("/one-kib", via: proxy, version: "--http1.1")
            XCTAssertEqual(run.status, 0, run.error)
            XCTAssertEqual(digest, Self.digests["one-kib"])
        }
        let recording = try proxy.stopAndRead()
        let clients = Set(recording.records.compactMap { $0.leg(.downstream)?.connectionID })
        let upstreams = Set(recording.records.compactMap { $0.leg(.upstream)?.connectionID })
        XCTAssertEqual(clients.count, 3)
        XCTAssertEqual(upstreams.count, 1, "one pooled upstream connection served three client connections")
    }

    func testBodiesAreStoredOnlyUpToTheLimit() throws {
        let proxy = try forwardProxy(bodyStoreLimit: 100)
        let (run, _) = try download("/one-kib", via: proxy, version: "--http2")
        XCTAssertEqual(run.status, 0, run.error)
        let record = try XCTUnwrap(proxy.stopAndRead().records.first)
        let stored = try XCTUnwrap(record.leg(.upstream)?.response?.body)
        XCTAssertEqual(stored.bytes?.count, 100)
        XCTAssertTrue(stored.truncated)
    }
}
