import TLS
@testable import Transport
import Wire
import XCTest

/// How a TLS `ByteChannel` turns writes into records, on an embedded loop:
/// the client is a `TLSEngine` the test drives by hand over an `EmbeddedPeer`,
/// so every record the channel sent is seen as it crossed.
final class ByteChannelRecordTests: XCTestCase {
    private let address = SocketAddress.loopbackIPv4(port: 8443)

    /// The server channel's side: what its owner does with each event. `@unchecked
    /// Sendable`: used only on the embedded loop's thread, the test's.
    final class Server: @unchecked Sendable {
        var channel: ByteChannel?
        var onReceived: (ByteChannel, [UInt8]) -> Void = { _, _ in }
        var established = false
    }

    /// A loop, a TLS server channel accepting on `address`, and a client
    /// engine whose handshake with it is complete (its flights drained).
    private func connected() throws -> (EventLoop, Server, EmbeddedPeer, TLSEngine) {
        let loop = EventLoop.embedded()
        let network = EmbeddedNetwork(loop: loop)
        let server = Server()
        let context = try TestPKI.shared().serverContext()
        network.listen(on: address) { connection in
            let channel = ByteChannel(connection: connection,
                                      security: .tlsServer(TLSServerSetup(context: context, clientHelloPolicy: .proceed)))
            server.channel = channel
            channel.start { event in
                switch event {
                case .established: server.established = true
                case .received(let bytes): server.onReceived(channel, bytes)
                default: break
                }
            }
        }
        let peer = try network.connect(to: address)
        let client = try TLSEngine(context: try TestPKI.shared().clientContext(), serverName: TestPKI.hostName)
        for _ in 0..<10 where client.handshake() != .complete || !server.established {
            if client.hasOutbound { peer.send(client.takeOutbound()) }
            loop.run()
            client.feed(peer.read())
        }
        XCTAssertEqual(client.handshake(), .complete)
        XCTAssertTrue(server.established)
        // Whatever else the server's last flight held (session tickets) is read now.
        XCTAssertEqual(try client.readPlaintext(), [])
        return (loop, server, peer, client)
    }

    /// The lengths of the whole TLS records in `bytes` (each 5-byte header and its body).
    private func recordLengths(_ bytes: [UInt8]) -> [Int] {
        var lengths: [Int] = []
        var index = 0
        while index + 5 <= bytes.count {
            let length = Int(bytes[index + 3]) << 8 | Int(bytes[index + 4])
            lengths.append(length)
            index += 5 + length
        }
        XCTAssertEqual(index, bytes.count, "the wire ends on a record boundary")
        return lengths
    }

    /// Sends `request` from the client, lets the server's owner answer, and
    /// returns the records that came back and their plaintext.
    private func exchange(_ request: String, loop: EventLoop, peer: EmbeddedPeer,
                          client: TLSEngine) throws -> (records: [Int], plaintext: [UInt8]) {
        try client.writePlaintext(Array(request.utf8))
        peer.send(client.takeOutbound())
        loop.run()
        let wire = peer.read()
        client.feed(wire)
        return (recordLengths(wire), try client.readPlaintext())
    }

    func testWritesOfOneTurnLeaveAsOneRecord() throws {
        let (loop, server, peer, client) = try connected()
        server.onReceived = { channel, _ in
            XCTAssertTrue(channel.write(Array("HTTP/1.1 200 OK\r\n\r\n".utf8)))
            XCTAssertTrue(channel.write([UInt8](repeating: 0x61, count: 1024)))
            XCTAssertEqual(channel.pendingWriteByteCount, 19 + 1024, "held plaintext counts as pending")
        }
        let answer = try exchange("GET", loop: loop, peer: peer, client: client)
        XCTAssertEqual(answer.records.count, 1, "head and body in one record: \(answer.records)")
        XCTAssertEqual(answer.plaintext, Array("HTTP/1.1 200 OK\r\n\r\n".utf8) + [UInt8](repeating: 0x61, count: 1024))
        XCTAssertEqual(server.channel?.pendingWriteByteCount, 0)
    }

    func testALargeWriteGoesAfterWhatWasHeldAndInOrder() throws {
        let (loop, server, peer, client) = try connected()
        let big = (0..<40_000).map { UInt8($0 % 251) }
        server.onReceived = { channel, _ in
            channel.write([1, 2, 3])
            channel.write(big)
            channel.write([4, 5])
        }
        let answer = try exchange("GET", loop: loop, peer: peer, client: client)
        XCTAssertEqual(answer.plaintext, [1, 2, 3] + big + [4, 5])
        XCTAssertGreaterThanOrEqual(answer.records.count, 4, "the held bytes, the big write's records, the tail")
    }

    func testFlushNowSendsWhatIsHeldAtOnce() throws {
        let (loop, server, peer, client) = try connected()
        var sentInTurn: [UInt8] = []
        server.onReceived = { channel, _ in
            channel.write(Array("done".utf8))
            channel.flushNow()
            sentInTurn = peer.read()
        }
        try client.writePlaintext(Array("GET".utf8))
        peer.send(client.takeOutbound())
        loop.run()
        XCTAssertEqual(recordLengths(sentInTurn).count, 1, "flushNow wrote the held bytes within the turn")
        client.feed(sentInTurn)
        XCTAssertEqual(try client.readPlaintext(), Array("done".utf8))
    }

    func testHeldBytesGoBeforeTheCloseNotify() throws {
        let (loop, server, peer, client) = try connected()
        server.onReceived = { channel, _ in
            channel.write(Array("bye".utf8))
            channel.close()
        }
        let answer = try exchange("GET", loop: loop, peer: peer, client: client)
        XCTAssertEqual(answer.plaintext, Array("bye".utf8))
        XCTAssertEqual(client.state, .closeNotifyReceived)
    }

    func testAbortDropsWhatIsHeld() throws {
        let (loop, server, peer, client) = try connected()
        server.onReceived = { channel, _ in
            channel.write(Array("never".utf8))
            channel.abort()
        }
        let answer = try exchange("GET", loop: loop, peer: peer, client: client)
        XCTAssertEqual(answer.plaintext, [])
        XCTAssertTrue(peer.receivedReset)
    }

    /// The server engine's record buffers: released after each record for a
    /// connection that read once, kept from its second read, given back once
    /// an idle check finds nothing read since the one before.
    func testRecordBuffersAreKeptWhileBusyAndGivenBackWhenIdle() throws {
        let (loop, server, peer, client) = try connected()
        server.onReceived = { channel, _ in channel.write(Array("ok".utf8)) }
        func keeps() -> Bool? { server.channel?.layer.securedEngine?.keepsRecordBuffers }
        XCTAssertEqual(try exchange("GET 1", loop: loop, peer: peer, client: client).plaintext, Array("ok".utf8))
        XCTAssertEqual(keeps(), false, "one request: released after each record")
        XCTAssertEqual(try exchange("GET 2", loop: loop, peer: peer, client: client).plaintext, Array("ok".utf8))
        XCTAssertEqual(keeps(), true, "the second read keeps them")
        // Busy across a check: still kept after it.
        loop.advanceTime(by: RecordBufferPolicy.idleCheckInterval / 2)
        XCTAssertEqual(try exchange("GET 3", loop: loop, peer: peer, client: client).plaintext, Array("ok".utf8))
        loop.advanceTime(by: RecordBufferPolicy.idleCheckInterval / 2)
        XCTAssertEqual(keeps(), true, "read since the last check: kept")
        loop.advanceTime(by: RecordBufferPolicy.idleCheckInterval)
        XCTAssertEqual(keeps(), false, "nothing read for a whole check: given back")
        // Still a working connection, and it keeps again when busy again.
        XCTAssertEqual(try exchange("GET 4", loop: loop, peer: peer, client: client).plaintext, Array("ok".utf8))
        XCTAssertEqual(try exchange("GET 5", loop: loop, peer: peer, client: client).plaintext, Array("ok".utf8))
        XCTAssertEqual(keeps(), true)
    }
}
