import Evidence
import IntactTestSupport
import Foundation
import Glibc
import Synchronization
import XCTest

/// The recording's bad inputs and faults with `intact proxy` as a child
/// process: a full disk (a file-size limit), recording paths that cannot be
/// written, digest key files that must be refused, `kill -9` and SIGINT
/// under concurrent load.
final class ProxyRecordingProcessTests: XCTestCase {
    private var directory = ""
    private var origin: NginxOrigin?

    override func setUpWithError() throws {
        var template = Array("/tmp/intact-recording-XXXXXX".utf8CString)
        directory = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)) }
        origin = try NginxOrigin()
        try origin?.serve("small", size: 1000)
    }

    override func tearDown() {
        origin?.stop()
        _ = try? ToolRun.run("/bin/chmod", ["-R", "u+rwx", directory])
        try? FileManager.default.removeItem(atPath: directory)
        super.tearDown()
    }

    private var recordingPath: String { directory + "/run.jsonl" }

    private func startProxy(_ extra: [String] = [], launcher: [String] = []) throws -> (IntactProcess, Int) {
        let origin = try XCTUnwrap(origin)
        let process = try IntactProcess(["proxy", "--listen", "127.0.0.1:0", "--ca-dir", directory + "/ca",
                                         "--upstream-ca", origin.caFile, "--record", recordingPath, "--quiet"] + extra,
                                        directory: directory, launcher: launcher)
        return (process, try process.waitForPort())
    }

    private func curl(_ port: Int, _ path: String = "/small") throws -> ToolRun {
        try ToolRun.curl(["-x", "http://127.0.0.1:\(port)", "--cacert", directory + "/ca/ca-cert.pem", "-o", "/dev/null",
                          "-w", "%{http_code} %{size_download}", try XCTUnwrap(origin).url(path)])
    }

    /// `intact` run to completion (a start that must fail), through `launcher` when given.
    private func intact(_ arguments: [String], launcher: [String] = []) throws -> ToolRun {
        guard let program = launcher.first else { return try ToolRun.run(IntactProcess.executable, arguments) }
        return try ToolRun.run(program, Array(launcher.dropFirst()) + [IntactProcess.executable] + arguments)
    }

    private func proxyStart(recordingAt path: String, _ extra: [String] = [], launcher: [String] = []) throws -> ToolRun {
        try intact(["proxy", "--listen", "127.0.0.1:0", "--ca-dir", directory + "/ca", "--record", path] + extra,
                   launcher: launcher)
    }

    // MARK: Disk full

    /// A file-size limit (what `ulimit -f` sets) stands in for a full disk:
    /// the proxy goes on serving, says once that recording stopped and how
    /// many records were lost, and the file ends in whole lines.
    func testDiskFullKeepsServingSaysOnceAndLeavesWholeLines() throws {
        _ = try intact(["ca", "init", "--dir", directory + "/ca"])
        let (proxy, port) = try startProxy(launcher: ["/usr/bin/prlimit", "--fsize=7000", "--"])
        for _ in 0..<12 {
            XCTAssertEqual(try curl(port).output, "200 1000", "the proxy keeps serving: \(proxy.standardError)")
        }
        XCTAssertTrue(proxy.process.isRunning)
        let stops = proxy.standardError.components(separatedBy: "recording stopped").count - 1
        XCTAssertEqual(stops, 1, "said once: \(proxy.standardError)")
        XCTAssertTrue(proxy.standardError.contains("File too large"), proxy.standardError)
        XCTAssertTrue(proxy.standardError.contains("record lost") || proxy.standardError.contains("records lost"),
                      proxy.standardError)
        proxy.signal(SIGINT)
        XCTAssertNotEqual(proxy.waitForExit(), 0, "a recording that lost records is a failed run")
        let lost = try XCTUnwrap(Self.lostCount(in: proxy.standardError), proxy.standardError)

        let bytes = try Data(contentsOf: URL(fileURLWithPath: recordingPath))
        XCTAssertEqual(bytes.last, UInt8(ascii: "\n"), "the file ends in a whole line")
        let recording = try RecordingReader.read(path: recordingPath)
        XCTAssertEqual(recording.warnings, [])
        XCTAssertGreaterThanOrEqual(recording.records.count, 1)
        XCTAssertEqual(recording.records.count + lost, 12, "every exchange is recorded or counted as lost")
    }

    /// The last "(N records lost)" the proxy printed: the total at exit.
    private static func lostCount(in text: String) -> Int? {
        let pattern = try! NSRegularExpression(pattern: #"\((\d+) records? lost\)"#)
        let matches = pattern.matches(in: text, range: NSRange(text.startIndex..., in: text))
        return matches.last.flatMap { Range($0.range(at: 1), in: text) }.flatMap { Int(text[$0]) }
    }

    // MARK: Recording paths that cannot be written

    func testADirectoryIsAClearErrorAtStart() throws {
        let run = try proxyStart(recordingAt: directory)
        XCTAssertNotEqual(run.status, 0)
        XCTAssertTrue(run.error.contains("cannot open recording") && run.error.contains("names a directory"), run.error)
    }

    func testAnUnwritableDirectoryIsAClearErrorAtStart() throws {
        let locked = directory + "/locked"
        XCTAssertEqual(mkdir(locked, 0o555), 0)
        _ = try intact(["ca", "init", "--dir", directory + "/ca"])
        XCTAssertEqual(chmod(directory, 0o755), 0)
        // Root may write anywhere: the run drops to nobody, who owns the CA.
        var launcher: [String] = []
        if getuid() == 0 {
            XCTAssertEqual(try ToolRun.run("/bin/chown", ["-R", "65534:65534", directory + "/ca"]).status, 0)
            launcher = ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"]
        }
        let run = try proxyStart(recordingAt: locked + "/run.jsonl", ["--record-secrets"], launcher: launcher)
        XCTAssertNotEqual(run.status, 0)
        XCTAssertTrue(run.error.contains("Permission denied") && run.error.contains("no permission"), run.error)
    }

    func testAReadOnlyFilesystemIsAClearErrorAtStart() throws {
        try XCTSkipUnless(getuid() == 0, "mounting a read-only tmpfs needs root (in a private mount namespace)")
        let mount = directory + "/ro"
        XCTAssertEqual(mkdir(mount, 0o755), 0)
        let script = "mount -t tmpfs -o ro,size=64k tmpfs '\(mount)' && exec \"$0\" \"$@\""
        let run = try intact(["proxy", "--listen", "127.0.0.1:0", "--ca-dir", directory + "/ca", "--record",
                              mount + "/run.jsonl"],
                             launcher: ["/usr/bin/unshare", "-m", "/bin/sh", "-c", script])
        XCTAssertNotEqual(run.status, 0)
        XCTAssertTrue(run.error.contains("Read-only file system") && run.error.contains("mounted read-only"), run.error)
    }

    // MARK: Digest key files

    func testDigestKeyIsMadeBesideTheCAAndNamedInTheHeader() throws {
        let (proxy, port) = try startProxy()
        XCTAssertEqual(try curl(port).output, "200 1000")
        proxy.signal(SIGINT)
        XCTAssertEqual(proxy.waitForExit(), 0, proxy.standardError)
        let keyPath = directory + "/ca/digest-key"
        let attributes = try FileManager.default.attributesOfItem(atPath: keyPath)
        XCTAssertEqual(attributes[.posixPermissions] as? Int, 0o600)
        XCTAssertEqual(attributes[.size] as? Int, 32)
        XCTAssertTrue(proxy.standardError.contains("made the digest key \(keyPath)"), proxy.standardError)
        let fingerprint = try DigestKeyFile.load(at: keyPath).fingerprint
        XCTAssertEqual(try RecordingReader.read(path: recordingPath).header.redaction.digestKey, fingerprint)
    }

    func testABadDigestKeyFileIsRefusedWithTheReason() throws {
        let key = directory + "/key"
        XCTAssertTrue(FileManager.default.createFile(atPath: key, contents: Data(count: 32), attributes: [.posixPermissions: 0o644]))
        var run = try proxyStart(recordingAt: recordingPath, ["--digest-key", key])
        XCTAssertNotEqual(run.status, 0)
        XCTAssertTrue(run.error.contains("digest key \(key) refused") && run.error.contains("chmod 600"), run.error)

        XCTAssertEqual(chmod(key, 0o600), 0)
        XCTAssertEqual(truncate(key, 16), 0)
        run = try proxyStart(recordingAt: recordingPath, ["--digest-key", key])
        XCTAssertNotEqual(run.status, 0)
        XCTAssertTrue(run.error.contains("holds 16 bytes") && run.error.contains("exactly 32"), run.error)
        XCTAssertFalse(FileManager.default.fileExists(atPath: recordingPath), "nothing recorded with a refused key")
    }

    // MARK: Under load

    /// `clients` threads, each running curl (four requests a run) until `stop`.
    private func startLoad(port: Int, clients: Int) throws -> CurlLoad {
        try CurlLoad(port: port, caFile: directory + "/ca/ca-cert.pem", url: XCTUnwrap(origin).url("/small"), clients: clients)
    }

    func testKill9UnderLoadLeavesLinesThatVerifyAndHARRead() throws {
        let (proxy, port) = try startProxy()
        let load = try startLoad(port: port, clients: 4)
        usleep(1_500_000)
        proxy.signal(SIGKILL)
        load.stop()
        XCTAssertEqual(proxy.waitForExit(), 128 + SIGKILL)

        let bytes = try Data(contentsOf: URL(fileURLWithPath: recordingPath))
        let completeLines = bytes.filter { $0 == UInt8(ascii: "\n") }.count
        let recording = try RecordingReader.read(path: recordingPath)
        XCTAssertEqual(recording.records.count, completeLines - 1, "every complete line after the header is a record")
        XCTAssertLessThanOrEqual(recording.warnings.count, 1, "only a torn last line may be skipped")
        XCTAssertGreaterThan(recording.records.count, 4)
        let har = try intact(["har", recordingPath, "-o", directory + "/run.har"])
        XCTAssertEqual(har.status, 0, har.error)
        let verify = try intact(["verify", recordingPath])
        XCTAssertFalse(verify.error.contains("malformed") || verify.error.contains("cannot read"), verify.error)
        XCTAssertTrue(verify.output.contains("proxy"), verify.output + verify.error)
    }

    func testEveryAnsweredRequestIsRecordedAfterSIGINTUnderLoad() throws {
        let (proxy, port) = try startProxy()
        let load = try startLoad(port: port, clients: 4)
        usleep(1_500_000)
        load.stop()
        proxy.signal(SIGINT)
        XCTAssertEqual(proxy.waitForExit(), 0, proxy.standardError)
        let recording = try RecordingReader.read(path: recordingPath)
        let count = load.answered
        XCTAssertGreaterThan(count, 4)
        XCTAssertEqual(recording.records.count, count, "every answered request is in the recording")
        XCTAssertEqual(recording.warnings, [])
    }
}

/// Concurrent curl clients through the proxy, counting whole answers.
/// `@unchecked Sendable`: `answeredCount` and `stopping` are touched only under `lock`.
private final class CurlLoad: @unchecked Sendable {
    private let lock = NSLock()
    private var answeredCount = 0
    private var stopping = false
    private var threads: [Thread] = []

    init(port: Int, caFile: String, url: String, clients: Int) {
        threads = (0..<clients).map { _ in
            Thread { [self] in
                while !lock.withLock({ stopping }) {
                    let run = try? ToolRun.curl(["-x", "http://127.0.0.1:\(port)", "--cacert", caFile, "-w", "%{http_code} "]
                                                + Array(repeating: ["-o", "/dev/null", url], count: 4).flatMap { $0 })
                    let answers = run.map { $0.output.components(separatedBy: "200").count - 1 } ?? 0
                    lock.withLock { answeredCount += answers }
                }
            }
        }
        threads.forEach { $0.start() }
    }

    /// Asks the clients to stop and waits until the last run ended.
    func stop() {
        lock.withLock { stopping = true }
        while threads.contains(where: { !$0.isFinished }) { usleep(10_000) }
    }

    var answered: Int { lock.withLock { answeredCount } }
}
