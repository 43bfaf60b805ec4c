import Evidence
import IntactTestSupport
import Foundation
import Glibc
import Synchronization
import XCTest

/// `intact proxy` as a child process: resident memory while a 1 GiB response
/// streams through, a recording that survives `kill -9`, and SIGTERM
/// draining in-flight exchanges before a clean exit.
final class ProxyProcessTests: XCTestCase {
    private var directory = ""
    private var origin: NginxOrigin?

    override func setUpWithError() throws {
        directory = TemporaryDirectory.create(prefix: "intact-process")
        origin = try NginxOrigin()
    }

    override func tearDown() {
        origin?.stop()
        try? FileManager.default.removeItem(atPath: directory)
        super.tearDown()
    }

    /// Starts `intact proxy` in forward mode trusting the origin; returns it and its port.
    private func startProxy(_ extra: [String] = []) throws -> (IntactProcess, Int) {
        let origin = try XCTUnwrap(origin)
        let process = try IntactProcess(["proxy", "--listen", "127.0.0.1:0", "--ca-dir", directory + "/ca",
                                         "--upstream-ca", origin.caFile, "--record", directory + "/run.jsonl"] + extra,
                                        directory: directory)
        return (process, try process.waitForPort())
    }

    private func curl(_ port: Int, _ path: String, _ extra: [String] = []) throws -> ToolRun {
        try Self.curl(port: port, caFile: directory + "/ca/ca-cert.pem", url: try XCTUnwrap(origin).url(path), extra)
    }

    /// curl through the proxy on `port`, discarding the body; prints status and size.
    private static func curl(port: Int, caFile: String, url: String, _ extra: [String] = []) throws -> ToolRun {
        try ToolRun.curl(["-x", "http://127.0.0.1:\(port)", "--cacert", caFile, "-o", "/dev/null",
                          "-w", "%{http_code} %{size_download}"] + extra + [url])
    }

    /// A sparse 1 GiB file at the origin: nginx sends zeros without the disk holding a gibibyte.
    private func makeSparseGibibyte() throws {
        let path = try XCTUnwrap(origin).root + "/gibibyte"
        XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: nil))
        XCTAssertEqual(truncate(path, 1 << 30), 0)
    }

    /// Runs `body` while sampling `proxy`'s VmRSS every 20 ms; returns its result and the peak in KiB.
    private static func peakResidentKiB<T>(of proxy: IntactProcess, _ body: () throws -> T) throws -> (T, Int) {
        let peak = Mutex(0)
        let sampling = Atomic<Bool>(true)
        let sampler = Thread {
            while sampling.load(ordering: .relaxed) {
                if let kib = proxy.residentKiB() { peak.withLock { $0 = max($0, kib) } }
                usleep(20_000)
            }
        }
        sampler.start()
        defer { sampling.store(false, ordering: .relaxed) }
        let result = try body()
        return (result, peak.withLock { $0 })
    }

    func testAGibibyteStreamsThroughWhileResidentMemoryStaysUnder64MiB() throws {
        try makeSparseGibibyte()
        let (proxy, port) = try startProxy(["--quiet"])
        let (run, peakKiB) = try Self.peakResidentKiB(of: proxy) { try curl(port, "/gibibyte", ["--http2"]) }
        XCTAssertEqual(run.status, 0, run.error)
        XCTAssertEqual(run.output, "200 \(1 << 30)")
        print("intact proxy peak VmRSS while 1 GiB streamed: \(peakKiB) KiB")
        XCTAssertGreaterThan(peakKiB, 0, "VmRSS was read")
        XCTAssertLessThan(peakKiB, 64 * 1024, "peak resident memory \(peakKiB) KiB")
        proxy.signal(SIGTERM)
        XCTAssertEqual(proxy.waitForExit(), 0, proxy.standardError)
        let record = try XCTUnwrap(RecordingReader.read(path: directory + "/run.jsonl").records.first)
        XCTAssertEqual(record.leg(.downstream)?.response?.digest.body, record.leg(.upstream)?.response?.digest.body)
        XCTAssertEqual(record.leg(.downstream)?.response?.digest.body.length, 1 << 30)
    }

    /// A client that reads a 1 GiB response at 100 KiB/s while the origin
    /// could send it at loopback speed: the proxy must hold the origin back
    /// (HTTP/2 window, HTTP/1.1 by not reading past its write watermark), not
    /// buffer what the client has not taken. Eight seconds per version are
    /// enough: an unbounded proxy would hold hundreds of MiB by then.
    func testASlowReaderOfAGibibyteHoldsTheOriginBackAndMemoryStaysUnder64MiB() throws {
        try makeSparseGibibyte()
        let (proxy, port) = try startProxy(["--quiet"])
        for version in ["--http1.1", "--http2"] {
            let (run, peakKiB) = try Self.peakResidentKiB(of: proxy) {
                try curl(port, "/gibibyte", [version, "--limit-rate", "100K", "--max-time", "8"])
            }
            XCTAssertEqual(run.status, 28, "curl stops at its --max-time, the response still flowing: \(run.error)")
            let fields = run.output.split(separator: " ")
            XCTAssertEqual(fields.first, "200", run.output)
            let received = Int(fields.last ?? "") ?? 0
            XCTAssertGreaterThan(received, 100 * 1024, "the body flowed (\(version))")
            XCTAssertLessThan(received, 4 << 20, "curl kept to its rate (\(version))")
            print("intact proxy peak VmRSS, 1 GiB read at 100 KiB/s (\(version)): \(peakKiB) KiB")
            XCTAssertGreaterThan(peakKiB, 0, "VmRSS was read")
            XCTAssertLessThan(peakKiB, 64 * 1024, "peak resident memory \(peakKiB) KiB with a slow reader (\(version))")
        }
        proxy.signal(SIGTERM)
        XCTAssertEqual(proxy.waitForExit(), 0, proxy.standardError)
    }

    /// Clients that hang up while a response is still being written make the
    /// proxy's writes fail; that must end their exchange, never the process.
    /// (`make bench` found the proxy killed by SIGPIPE under wrk; the
    /// deterministic check of that is EventLoopTests.testMakingALoopIgnoresSIGPIPE,
    /// this is the end-to-end guard.)
    func testClientsThatHangUpMidResponseDoNotTakeTheProxyDown() throws {
        let origin = try XCTUnwrap(origin)
        let path = origin.root + "/sixteen"
        XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: nil))
        XCTAssertEqual(truncate(path, 16 << 20), 0)
        let (proxy, port) = try startProxy(["--quiet"])
        let url = origin.url("/sixteen")
        for version in ["--http1.1", "--http2", "--http1.1", "--http2"] {
            // curl reads a little, then head exits and curl dies on its closed pipe, closing its socket.
            _ = try ToolRun.run("/bin/bash", ["-c", "curl -s \(version) -x http://127.0.0.1:\(port) "
                + "--cacert '\(directory)/ca/ca-cert.pem' '\(url)' | head -c 1000 > /dev/null"])
        }
        usleep(200_000)
        XCTAssertTrue(proxy.process.isRunning, "the proxy died: \(proxy.standardError)")
        let after = try curl(port, "/sixteen", ["--http2"])
        XCTAssertEqual(after.output, "200 \(16 << 20)", after.error)
        proxy.signal(SIGTERM)
        XCTAssertEqual(proxy.waitForExit(), 0, proxy.standardError)
    }

    func testKill9LeavesEveryCompleteLineReadable() throws {
        let origin = try XCTUnwrap(origin)
        try origin.serve("small", size: 1000)
        try origin.serve("large", size: 50 << 20)
        let (proxy, port) = try startProxy()
        for _ in 0..<20 {
            XCTAssertEqual(try curl(port, "/small").output, "200 1000")
        }
        // Kill it while a download is in flight.
        let caFile = directory + "/ca/ca-cert.pem", url = origin.url("/large")
        let inFlight = Thread { _ = try? Self.curl(port: port, caFile: caFile, url: url, ["--limit-rate", "5M"]) }
        inFlight.start()
        usleep(300_000)
        proxy.signal(SIGKILL)
        XCTAssertEqual(proxy.waitForExit(), 128 + SIGKILL)

        let bytes = try Data(contentsOf: URL(fileURLWithPath: directory + "/run.jsonl"))
        let completeLines = bytes.filter { $0 == UInt8(ascii: "\n") }.count
        let recording = try RecordingReader.read(path: directory + "/run.jsonl")
        XCTAssertEqual(recording.records.count, completeLines - 1, "every complete line after the header is a record")
        XCTAssertLessThanOrEqual(recording.warnings.count, 1, "only a torn last line may be skipped")
        XCTAssertGreaterThanOrEqual(recording.records.count, 1)
        XCTAssertTrue(recording.records.allSatisfy { $0.leg(.upstream)?.response?.digest.body.length == 1000 })
    }

    func testSIGTERMDrainsInFlightExchangesAndExitsZero() throws {
        let origin = try XCTUnwrap(origin)
        try origin.serve("large", size: 20 << 20)
        let (proxy, port) = try startProxy(["--drain-timeout", "20"])
        let caFile = directory + "/ca/ca-cert.pem", url = origin.url("/large")
        let results = Mutex<[String: String]>([:])
        let downloads = ["--http1.1", "--http2"].map { version in
            Thread {
                let run = try? Self.curl(port: port, caFile: caFile, url: url, ["--limit-rate", "20M", version])
                results.withLock { $0[version] = run?.output ?? "failed" }
            }
        }
        downloads.forEach { $0.start() }
        usleep(300_000)
        proxy.signal(SIGTERM)
        XCTAssertEqual(proxy.waitForExit(), 0, proxy.standardError)
        while results.withLock({ $0.count }) < 2 { usleep(20_000) }
        XCTAssertEqual(results.withLock { $0 }, ["--http1.1": "200 \(20 << 20)", "--http2": "200 \(20 << 20)"],
                       "both in-flight downloads finished")
        XCTAssertTrue(proxy.standardError.contains("draining"), proxy.standardError)
        let recording = try RecordingReader.read(path: directory + "/run.jsonl")
        XCTAssertEqual(recording.records.count, 2)
        XCTAssertTrue(recording.records.allSatisfy { $0.leg(.downstream)?.response?.complete == true })
        XCTAssertTrue(recording.warnings.isEmpty)
    }
}
