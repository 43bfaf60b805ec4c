import Foundation
import TLS
import Transport
import Wire
import IntactTestSupport
import XCTest

/// A value shared between the test thread and event loops.
/// `@unchecked Sendable`: every access goes through `lock`.
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    func withLock<Result>(_ body: (inout Value) -> Result) -> Result {
        lock.lock()
        defer { lock.unlock() }
        return body(&value)
    }

    var current: Value { withLock { $0 } }
}

/// A development CA and a leaf for `example.test`, made once per test run in a
/// fresh temporary directory by the TLS module's `CertificateAuthority`.
final class TestPKI: Sendable {
    static let hostName = "example.test"
    let authority: CertificateAuthority
    let serverIdentity: TLSIdentity
    /// The CA certificate, PEM, for clients (`curl --cacert`, `openssl -CAfile`).
    var caFile: String { authority.certificatePath }

    private init() throws {
        let directory = NSTemporaryDirectory() + "intact-transport-tests-\(getpid())-\(UUID().uuidString)"
        authority = try CertificateAuthority.create(in: directory)
        serverIdentity = try authority.leaf(for: TestPKI.hostName)
    }

    private static let made = Result { try TestPKI() }

    static func shared() throws -> TestPKI { try made.get() }

    func serverContext(alpn: [String] = ["h2", "http/1.1"]) throws -> TLSContext {
        var configuration = TLSServerConfiguration(identity: serverIdentity)
        configuration.alpnPreference = alpn
        return try TLSContext(server: configuration)
    }

    func clientContext(alpn: [String] = ["h2", "http/1.1"]) throws -> TLSContext {
        var configuration = TLSClientConfiguration(verification: .verify(.caFile(caFile)))
        configuration.alpnOffer = alpn
        return try TLSContext(client: configuration)
    }
}

/// Whether a tool is installed (tests that need it are skipped otherwise).
func toolExists(_ name: String) -> Bool {
    (try? ToolRun.run("sh", ["-c", "command -v \(name)"]).status) == 0
}

/// Deterministic test bytes: `count` bytes of a repeating, position-dependent pattern.
func patternBytes(_ count: Int, seed: UInt8 = 0) -> [UInt8] {
    (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 8 &+ Int(seed)) }
}

/// Writes bytes to a fresh temporary file and returns its path.
func temporaryFile(_ bytes: [UInt8], name: String) throws -> String {
    let path = NSTemporaryDirectory() + "intact-\(getpid())-\(UUID().uuidString)-\(name)"
    try Data(bytes).write(to: URL(fileURLWithPath: path))
    return path
}

/// Compares byte arrays without printing megabytes when they differ.
func assertBytesEqual(_ actual: [UInt8], _ expected: [UInt8], _ message: String = "",
                      file: StaticString = #filePath, line: UInt = #line) {
    guard actual != expected else { return }
    let common = min(actual.count, expected.count)
    let firstDifference = (0..<common).first { actual[$0] != expected[$0] } ?? common
    XCTFail("\(actual.count) bytes, expected \(expected.count); first difference at \(firstDifference). \(message)",
            file: file, line: line)
}

extension XCTestCase {
    /// Waits for expectations with a generous deadline: a safety net against
    /// hangs, never an assertion about speed.
    func waitLong(_ expectations: [XCTestExpectation]) {
        wait(for: expectations, timeout: 60)
    }
}
