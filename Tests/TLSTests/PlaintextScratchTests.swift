import XCTest
@testable import TLS

final class PlaintextScratchTests: XCTestCase {
    func testABufferIsBigEnoughAndLentAgainAfterUse() {
        let scratch = PlaintextScratch(keptBuffers: 2, keptCapacity: 4096, minimumCapacity: 1024)
        let first = scratch.withBuffer(capacity: 100) { buffer -> UnsafeMutableRawPointer? in
            XCTAssertGreaterThanOrEqual(buffer.count, 1024)  // never smaller than the minimum
            buffer.storeBytes(of: 7, as: UInt8.self)  // writable
            return buffer.baseAddress
        }
        XCTAssertEqual(scratch.pooledCount, 1)
        let second = scratch.withBuffer(capacity: 1024) { $0.baseAddress }
        XCTAssertEqual(first, second, "the buffer given back is lent again")
        XCTAssertEqual(scratch.pooledCount, 1)
    }

    func testABufferTooSmallIsLeftInThePoolAndABiggerOneMade() {
        let scratch = PlaintextScratch(keptBuffers: 4, keptCapacity: 1 << 20, minimumCapacity: 1024)
        scratch.withBuffer(capacity: 1024) { _ in }
        let count = scratch.withBuffer(capacity: 8192) { buffer -> Int in
            XCTAssertEqual(scratch.pooledCount, 1, "the small buffer stays in the pool")
            return buffer.count
        }
        XCTAssertGreaterThanOrEqual(count, 8192)
        XCTAssertEqual(scratch.pooledCount, 2)
    }

    func testAnOversizedBufferIsFreedNotKept() {
        let scratch = PlaintextScratch(keptBuffers: 4, keptCapacity: 4096, minimumCapacity: 1024)
        scratch.withBuffer(capacity: 64 * 1024) { XCTAssertGreaterThanOrEqual($0.count, 64 * 1024) }
        XCTAssertEqual(scratch.pooledCount, 0)
    }

    func testThePoolKeepsAtMostItsBound() {
        let scratch = PlaintextScratch(keptBuffers: 2, keptCapacity: 4096, minimumCapacity: 1024)
        // Three lent at once (nested): three made; only two are kept afterwards.
        scratch.withBuffer(capacity: 1) { a in
            scratch.withBuffer(capacity: 1) { b in
                scratch.withBuffer(capacity: 1) { c in
                    XCTAssertNotEqual(a.baseAddress, b.baseAddress)
                    XCTAssertNotEqual(b.baseAddress, c.baseAddress)
                    XCTAssertNotEqual(a.baseAddress, c.baseAddress)
                }
            }
        }
        XCTAssertEqual(scratch.pooledCount, 2)
    }
}
