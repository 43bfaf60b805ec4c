import Foundation
import XCTest
@testable import Wire

/// A value shared between a test and loop callbacks, guarded by a lock.
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    func withValue<Result>(_ body: (inout Value) -> Result) -> Result {
        lock.lock()
        defer { lock.unlock() }
        return body(&value)
    }

    var current: Value { withValue { $0 } }
}

/// How long a test waits for an outcome before failing; a hang guard, not a timing assertion.
let patience: TimeInterval = 60

/// Number of descriptors this process has open.
func openDescriptorCount() throws -> Int {
    try openDescriptors().count
}

/// The descriptors the process has open now (`/proc/self/fd`). Comparing
/// two sets, not two counts, names what a test leaked: a descriptor an
/// earlier test's connection closes meanwhile would make a count look fine
/// (or short by one) while the test leaked one.
func openDescriptors() throws -> Set<Int32> {
    Set(try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").compactMap { Int32($0) })
}

/// Runs `body` on `loop` and waits for it.
func onLoop<Result: Sendable>(_ loop: EventLoop, _ body: @escaping @Sendable () -> Result) -> Result {
    let box = Locked<Result?>(nil)
    let done = DispatchSemaphore(value: 0)
    loop.execute {
        box.withValue { $0 = body() }
        done.signal()
    }
    done.wait()
    return box.current!
}

/// A byte stream whose byte at offset `i` is `i % 251`: any dropped, repeated
/// or reordered run whose length is not a multiple of 251 shows up, and 251 is
/// prime so no power-of-two chunk size is a multiple of it.
enum Pattern {
    static let period = 251
    static let maxChunk = 128 * 1024
    static let table: [UInt8] = (0..<(period + maxChunk)).map { UInt8($0 % period) }

    /// `count` bytes of the stream starting at `offset`.
    static func bytes(at offset: Int, count: Int) -> [UInt8] {
        precondition(count <= maxChunk)
        let start = offset % period
        return Array(table[start..<(start + count)])
    }

    /// True when `chunk` is the stream's bytes at `offset`.
    static func matches(_ chunk: [UInt8], at offset: Int) -> Bool {
        guard chunk.count <= maxChunk else {
            return stride(from: 0, to: chunk.count, by: maxChunk).allSatisfy { start in
                matches(Array(chunk[start..<min(chunk.count, start + maxChunk)]), at: offset + start)
            }
        }
        let start = offset % period
        return chunk.withUnsafeBytes { received in
            table.withUnsafeBytes { expected in
                memcmp(received.baseAddress!, expected.baseAddress! + start, chunk.count) == 0
            }
        }
    }
}

extension XCTestCase {
    /// Connects to `address` on `loop` and waits for the outcome.
    func connectAndWait(to address: SocketAddress, on loop: EventLoop,
                        timeout: Duration = .seconds(10)) -> Result<Connection, WireError> {
        let outcome = Locked<Result<Connection, WireError>?>(nil)
        let done = expectation(description: "connect to \(address)")
        Connection.connect(to: address, on: loop, timeout: timeout) { result in
            XCTAssertTrue(loop.isOnLoop)
            outcome.withValue { $0 = result }
            done.fulfill()
        }
        wait(for: [done], timeout: patience)
        return outcome.current ?? .failure(.timedOut)
    }
}

extension Result {
    /// The failure, or nil on success.
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}

/// A connection's events, recorded in order as text (`received` chunks are
/// merged into the byte buffer instead).
struct EventLog {
    var bytes: [UInt8] = []
    var events: [String] = []
    var closeError: WireError?

    mutating func record(_ event: ConnectionEvent) {
        switch event {
        case .received(let chunk):
            bytes += chunk
            if events.last != "received" { events.append("received") }
        case .readEOF:
            events.append("readEOF")
        case .writable:
            events.append("writable")
        case .closed(let error):
            closeError = error
            events.append("closed")
        }
    }
}

/// Starts `connection` (call on its loop) with a handler that records every
/// event and fulfills `closed` on `.closed`; returns the record.
func startRecording(_ connection: Connection, fulfilling closed: XCTestExpectation) -> Locked<EventLog> {
    let log = Locked(EventLog())
    connection.start { event in
        log.withValue { $0.record(event) }
        if case .closed = event { closed.fulfill() }
    }
    return log
}
