import Glibc
import XCTest
@testable import Wire

final class PendingWritesTests: XCTestCase {
    /// The bytes the iovecs describe, in order.
    private func gathered(_ pending: PendingWrites) -> [UInt8] {
        pending.withIOVecs { vectors, total in
            let bytes = vectors.flatMap { vector in
                Array(UnsafeRawBufferPointer(start: vector.iov_base, count: vector.iov_len))
            }
            XCTAssertEqual(bytes.count, total)
            return bytes
        }
    }

    func testGathersChunksAndConsumesAcrossThem() {
        var pending = PendingWrites()
        pending.append([1, 2, 3])
        pending.append([])
        pending.append([4, 5])
        pending.append([6])
        XCTAssertEqual(pending.byteCount, 6)
        XCTAssertEqual(gathered(pending), [1, 2, 3, 4, 5, 6])

        pending.consume(2)
        XCTAssertEqual(gathered(pending), [3, 4, 5, 6])
        pending.consume(2)
        XCTAssertEqual(gathered(pending), [5, 6])
        XCTAssertEqual(pending.byteCount, 2)
        pending.consume(2)
        XCTAssertTrue(pending.isEmpty)
        XCTAssertEqual(gathered(pending), [])
        XCTAssertEqual(pending.chunkCapacity, 0, "a drained queue kept its storage")
        pending.append([7])
        XCTAssertEqual(gathered(pending), [7])
    }

    func testGatherIsLimitedAndCompactionKeepsOrder() {
        var pending = PendingWrites()
        for value in 0..<200 { pending.append([UInt8(value)]) }
        XCTAssertEqual(gathered(pending), (0..<PendingWrites.maxGather).map { UInt8($0) })
        pending.consume(150)  // drops more than half the chunks: compacts
        XCTAssertEqual(pending.byteCount, 50)
        XCTAssertEqual(gathered(pending), (150..<200).map { UInt8($0) })
        pending.removeAll()
        XCTAssertTrue(pending.isEmpty)
    }

    /// Through a socket whose buffer fills: `writev` takes part of a chunk,
    /// then says `EAGAIN`; the queue resumes mid-chunk once the peer read,
    /// and the peer gets every byte once, in order.
    func testPartialWritesAndEAGAINMidChunkResumeWhereTheKernelStopped() throws {
        var pair: [Int32] = [0, 0]
        XCTAssertEqual(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair), 0)
        defer { Glibc.close(pair[0]); Glibc.close(pair[1]) }
        var small: Int32 = 4096
        setsockopt(pair[0], SOL_SOCKET, SO_SNDBUF, &small, socklen_t(MemoryLayout<Int32>.size))
        XCTAssertEqual(fcntl(pair[0], F_SETFL, fcntl(pair[0], F_GETFL) | O_NONBLOCK), 0)
        XCTAssertEqual(fcntl(pair[1], F_SETFL, fcntl(pair[1], F_GETFL) | O_NONBLOCK), 0)

        var sent: [UInt8] = []
        var pending = PendingWrites()
        for index in 0..<40 {
            let chunk = (0..<(7_000 + index * 13)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ index) }
            sent += chunk
            pending.append(chunk)
        }
        var received: [UInt8] = []
        var sawEAGAIN = false
        var sawPartialChunk = false
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while !pending.isEmpty {
            let written = pending.withIOVecs { vectors, total in
                let count = writev(pair[0], vectors.baseAddress, Int32(vectors.count))
                if count > 0 && count < total { sawPartialChunk = true }
                return count
            }
            if written > 0 {
                pending.consume(written)
            } else {
                XCTAssertEqual(errno, EAGAIN)
                sawEAGAIN = true
                let count = buffer.withUnsafeMutableBytes { Glibc.read(pair[1], $0.baseAddress, $0.count) }
                XCTAssertGreaterThan(count, 0)
                received += buffer[..<count]
            }
        }
        XCTAssertEqual(pending.chunkCapacity, 0, "a drained queue kept its storage")
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(pair[1], $0.baseAddress, $0.count) }
            guard count > 0 else { break }
            received += buffer[..<count]
        }
        XCTAssertTrue(sawEAGAIN)
        XCTAssertTrue(sawPartialChunk)
        XCTAssertEqual(received, sent)
    }
}
