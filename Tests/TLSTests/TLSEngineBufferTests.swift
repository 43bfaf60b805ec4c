import Hashing
@testable import TLS
import XCTest

/// How the engine's buffers carry a body: lent input read in place, output
/// sized ahead, large plaintext decrypted into the array handed out.
final class TLSEngineBufferTests: XCTestCase {
    /// A megabyte of records, lent in 64 KiB reads as a socket's read buffer
    /// would be, comes out whole; the engine keeps none of the lent bytes
    /// (OpenSSL takes the start of a split record into its own buffer).
    func testLentCiphertextIsReadInPlaceAndNothingIsKept() throws {
        let (pair, body, records) = try established(sending: 1 << 20)
        var received: [UInt8] = []
        for start in stride(from: 0, to: records.count, by: 64 * 1024) {
            let read = Array(records[start..<min(start + 64 * 1024, records.count)])
            let plaintext = try read.withUnsafeBytes { lent in
                try pair.client.withLentInbound(lent) { Result { try pair.client.readPlaintext() } }.get()
            }
            received += plaintext
            XCTAssertEqual(pair.client.keptInboundCount, 0, "after the read at \(start)")
        }
        XCTAssertEqual(received, body)
        XCTAssertEqual(pair.client.memoryBufferCapacity, 0)
    }

    /// Lent bytes the body did not get to are copied before the call returns
    /// and read, in order, after bytes fed earlier.
    func testLentBytesLeftUnreadAreKeptInOrder() throws {
        let (pair, message, records) = try established(sending: 40_000)
        pair.client.feed(Array(records.prefix(3000)))  // fed before, not read yet
        var lent = Array(records.dropFirst(3000))
        lent.withUnsafeBytes { bytes in
            pair.client.withLentInbound(bytes) {}  // nothing read meanwhile
        }
        XCTAssertEqual(pair.client.keptInboundCount, records.count)
        lent.withUnsafeMutableBytes { $0.initializeMemory(as: UInt8.self, repeating: 0) }  // the lender reuses its buffer
        XCTAssertEqual(try pair.client.readPlaintext(), message)
        XCTAssertEqual(pair.client.keptInboundCount, 0)
    }

    /// The start of the next flight fed, the rest lent: a handshake step
    /// reads across both.
    func testAHandshakeReadsAcrossFedAndLentBytes() throws {
        let pair = try EnginePair(client: clientContext(), server: serverContext())
        _ = pair.client.handshake()
        let hello = pair.client.takeOutbound()
        pair.server.feed(Array(hello.prefix(7)))
        let rest = Array(hello.dropFirst(7))
        let step = rest.withUnsafeBytes { bytes in pair.server.withLentInbound(bytes) { pair.server.handshake() } }
        XCTAssertEqual(step, .incomplete)
        XCTAssertTrue(pair.server.hasOutbound, "the server answered the ClientHello")
        XCTAssertEqual(pair.server.keptInboundCount, 0)
        pair.pump()
        XCTAssertEqual(pair.client.state, .established)
        XCTAssertEqual(pair.server.state, .established)
    }

    /// Writing a megabyte leaves the records in one buffer sized ahead, not
    /// one that doubled as OpenSSL appended (up to twice the bytes, each
    /// doubling a copy of everything written so far).
    func testOutboundCiphertextIsSizedBeforeOpenSSLWrites() throws {
        let pair = try EnginePair(client: clientContext(), server: serverContext())
        pair.pump()
        let body = SecureRandom.bytes(1 << 20)
        try pair.server.writePlaintext(body)
        XCTAssertLessThanOrEqual(pair.server.memoryBufferCapacity, body.count + 64 * TLSEngine.recordOverhead + 64)
        let records = pair.server.takeOutbound()
        XCTAssertGreaterThan(records.count, body.count)
        XCTAssertLessThanOrEqual(records.capacity - records.count, TLSEngine.plaintextSlack)
        XCTAssertEqual(pair.server.memoryBufferCapacity, 0)
        pair.client.feed(records)
        XCTAssertEqual(try pair.client.readPlaintext(), body)
    }

    /// A burst is decrypted into the array handed out: its spare room stays
    /// within about one record, and several reads in a row stay whole.
    func testABurstIsDecryptedIntoTheArrayHandedOut() throws {
        let (pair, body, records) = try established(sending: 200_000)
        pair.client.feed(Array(records.prefix(150_000)))
        let first = try pair.client.readPlaintext()
        XCTAssertLessThanOrEqual(first.capacity - first.count, 2 * (16 * 1024 + 256))
        pair.client.feed(Array(records.dropFirst(150_000)))
        let second = try pair.client.readPlaintext()
        XCTAssertEqual(first + second, body)
    }

    /// An established pair whose server wrote `count` random bytes, and the
    /// records that made (taken from the server).
    private func established(sending count: Int) throws -> (EnginePair, [UInt8], [UInt8]) {
        let pair = try EnginePair(client: clientContext(), server: serverContext())
        pair.pump()
        let plaintext = SecureRandom.bytes(count)
        try pair.server.writePlaintext(plaintext)
        return (pair, plaintext, pair.server.takeOutbound())
    }
}
