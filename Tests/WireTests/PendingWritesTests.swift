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
}
