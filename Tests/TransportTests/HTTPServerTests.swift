import Foundation
import HTTP
import Hashing
import TLS
import Transport
import Wire
import IntactTestSupport
import XCTest

/// `HTTPServer` and `HTTPServerConnection` against real clients (curl, nghttp)
/// and raw byte peers, over loopback TLS.
final class HTTPServerTests: XCTestCase {
    private var origin: TestOrigin!

    override func setUpWithError() throws {
        try XCTSkipUnless(toolExists("curl"), "curl is not installed")
        origin = try TestOrigin()
    }

    override func tearDown() {
        origin?.stop()
        origin = nil
    }

    private func url(_ path: String) -> String { "https://\(TestPKI.hostName):\(origin.port)\(path)" }

    func testCurlDownloadsAreByteIdenticalOverHTTP1AndHTTP2() throws {
        for (flag, expectedVersion) in [("--http1.1", "1.1"), ("--http2", "2")] {
            for size in [0, 1024, 1 << 20] {
                let file = try temporaryFile([], name: "download")
                defer { try? FileManager.default.removeItem(atPath: file) }
                let output = try curl(origin, [flag, "-o", file, "-w", "%{http_version} %{http_code}", url("/bytes/\(size)")])
                XCTAssertEqual(output.status, 0, output.error)
                XCTAssertEqual(output.output, "\(expectedVersion) 200", "\(flag) \(size)")
                let received = try [UInt8](Data(contentsOf: URL(fileURLWithPath: file)))
                XCTAssertEqual(Encoding.hex(SHA256.hash(received)), Encoding.hex(SHA256.hash(patternBytes(size))),
                               "\(flag) \(size) bytes")
            }
        }
    }

    func testCurlUploadsArriveByteIdentical() throws {
        for flag in ["--http1.1", "--http2"] {
            for size in [0, 1024, 1 << 20, (1 << 20) + 1] {
                let body = patternBytes(size, seed: 9)
                let file = try temporaryFile(body, name: "upload")
                defer { try? FileManager.default.removeItem(atPath: file) }
                let output = try curl(origin, [flag, "--data-binary", "@\(file)", url("/sha256")])
                XCTAssertEqual(output.status, 0, output.error)
                XCTAssertEqual(output.output, "\(Encoding.hex(SHA256.hash(body))) \(size)", "\(flag) \(size)")
            }
        }
    }

    func testExpectContinueIsAnswered() throws {
        let body = patternBytes(3000)
        let file = try temporaryFile(body, name: "expect")
        defer { try? FileManager.default.removeItem(atPath: file) }
        let output = try curl(origin, ["--http1.1", "-v", "-H", "Expect: 100-continue", "--expect100-timeout", "15",
                                       "--data-binary", "@\(file)", url("/sha256")])
        XCTAssertEqual(output.status, 0, output.error)
        XCTAssertTrue(output.error.contains("HTTP/1.1 100 Continue"), output.error)
        XCTAssertEqual(output.output, "\(Encoding.hex(SHA256.hash(body))) 3000")
    }

    func testTrailersReachCurl() throws {
        for flag in ["--http1.1", "--http2"] {
            let output = try curl(origin, [flag, "-i", "--raw", url("/trailers")])
            XCTAssertEqual(output.status, 0, output.error)
            let checksum = Encoding.hex(SHA256.hash(patternBytes(5000, seed: 3)))
            XCTAssertTrue(output.output.lowercased().contains("x-checksum: \(checksum)"), "\(flag): \(output.output.suffix(300))")
        }
    }

    func testNghttpFetchesOverHTTP2() throws {
        try XCTSkipUnless(toolExists("nghttp"), "nghttp is not installed")
        let output = try ToolRun.run("nghttp", ["-v", "-n", "https://127.0.0.1:\(origin.port)/bytes/70000"], timeout: 30)
        XCTAssertEqual(output.status, 0, output.error)
        XCTAssertTrue(output.output.contains(":status: 200"), output.output)
        XCTAssertTrue(output.output.contains("content-length: 70000"), output.output)
        XCTAssertTrue(output.output.contains("recv DATA frame"), output.output)
    }

    func testKeepAliveCarriesManyRequestsOnOneConnection() throws {
        for flag in ["--http1.1", "--http2"] {
            origin.readyCount.withLock { $0 = 0 }
            let output = try curl(origin, [flag, url("/version"), url("/version"), url("/version")])
            XCTAssertEqual(output.status, 0, output.error)
            XCTAssertEqual(origin.readyCount.current, 1, flag)
            let expected = flag == "--http2" ? "HTTP/2 1HTTP/2 3HTTP/2 5" : "HTTP/1.1 1HTTP/1.1 2HTTP/1.1 3"
            XCTAssertEqual(output.output, expected)
        }
    }
}
