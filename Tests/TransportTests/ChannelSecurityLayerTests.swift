import TLS
import Transport
import XCTest

/// `ChannelSecurityLayer` driven by event → command scripts, with no socket:
/// a client and a server layer talk through memory (`LayerEnd`, `pump`).
final class ChannelSecurityLayerTests: XCTestCase {
    private let tenSeconds = Duration.seconds(10)

    private func serverSecurity(policy: ClientHelloPolicy = .proceed, alpn: [String] = ["h2", "http/1.1"]) throws -> ChannelSecurity {
        .tlsServer(TLSServerSetup(context: try TestPKI.shared().serverContext(alpn: alpn), clientHelloPolicy: policy))
    }

    private func clientSecurity(serverName: String? = TestPKI.hostName) throws -> ChannelSecurity {
        .tlsClient(TLSClientSetup(context: try TestPKI.shared().clientContext(), serverName: serverName))
    }

    /// A started server end, its first commands checked.
    private func startedServer(policy: ClientHelloPolicy = .proceed) throws -> LayerEnd {
        let server = LayerEnd(try serverSecurity(policy: policy))
        server.start()
        XCTAssertEqual(server.takeScript(), [.armDeadline(tenSeconds)], "a server waits for the ClientHello, with a deadline")
        return server
    }

    /// A started client end that has sent its ClientHello.
    private func helloingClient(serverName: String? = TestPKI.hostName) throws -> LayerEnd {
        let client = LayerEnd(try clientSecurity(serverName: serverName))
        client.start()
        XCTAssertEqual(client.takeScript(), [.armDeadline(tenSeconds), .later(.startClientHandshake)])
        client.turn()
        XCTAssertEqual(client.takeScript(), [.sendTLS], "the ClientHello, on the next turn")
        return client
    }

    /// The error a closed end reported.
    private func failure(of end: LayerEnd) -> TransportError? {
        end.closedWith?.reason
    }

    // MARK: A whole connection

    func testServerAndClientLayersHandshakeCarryDataBothWaysAndCloseWithCloseNotify() throws {
        let server = try startedServer()
        let client = try helloingClient()
        // Written before the handshake: queued, sent once established.
        XCTAssertEqual(client.write(Array("early".utf8)), .queued)
        XCTAssertEqual(client.layer.earlyWriteByteCount, 5)
        XCTAssertEqual(client.takeScript(), [])

        client.transmit(to: server)
        XCTAssertEqual(server.takeScript(), [.sendTLS], "ServerHello to server Finished")
        XCTAssertEqual(server.layer.clientHello?.serverName, TestPKI.hostName)
        XCTAssertFalse(server.layer.isEstablished)

        server.transmit(to: client)
        XCTAssertEqual(client.takeScript(), [.cancelDeadline, .sendTLS, .established(alpn: "h2"), .then(.readAfterHandshake)],
                       "client Finished and the queued write go out before .established")
        XCTAssertEqual(client.layer.earlyWriteByteCount, 0)
        XCTAssertTrue(client.layer.isEstablished)
        XCTAssertEqual(client.layer.tlsInfo?.serverName, TestPKI.hostName)
        XCTAssertEqual(client.layer.tlsInfo?.verifyResult, .trusted)
        XCTAssertEqual(client.layer.tlsInfo?.version, TLSVersion.tls1_3.rawValue)

        client.transmit(to: server)
        XCTAssertEqual(server.takeScript(), [.cancelDeadline, .sendTLS, .established(alpn: "h2"), .then(.readAfterHandshake),
                                             .received(Array("early".utf8)), .then(.checkReadEnd)],
                       "session tickets out, then the data that came with the client's Finished")
        XCTAssertEqual(server.layer.tlsInfo?.serverName, TestPKI.hostName)

        // Application data both ways.
        XCTAssertEqual(server.write(Array("world".utf8)), .accepted)
        XCTAssertEqual(server.takeScript(), [.sendTLS])
        server.transmit(to: client)
        XCTAssertEqual(client.takeScript(), [.received(Array("world".utf8)), .then(.checkReadEnd)])
        let bulk = patternBytes(100_000)
        XCTAssertEqual(client.write(bulk), .accepted)
        XCTAssertEqual(client.takeScript(), [.sendTLS])
        client.transmit(to: server)
        XCTAssertEqual(server.takeScript(), [.received(bulk), .then(.checkReadEnd)], "every complete record in one event")

        // close_notify one way, then the other.
        client.shutdownWrite()
        XCTAssertEqual(client.takeScript(), [.sendTLS, .shutdownWrite])
        XCTAssertEqual(client.write([1]), .refused, "nothing is written after our close_notify")
        client.transmit(to: server)
        XCTAssertEqual(server.takeScript(), [.readEOF(.closeNotify)])
        XCTAssertEqual(server.write(Array("last".utf8)), .accepted, "a half-closed peer can still be written to")
        server.close()
        XCTAssertEqual(server.takeScript(), [.sendTLS, .sendTLS, .close(nil)], "\"last\", then close_notify before the close")
        XCTAssertTrue(server.layer.isEnding)
        server.transmit(to: client)
        XCTAssertEqual(client.takeScript(), [.received(Array("last".utf8)), .then(.checkReadEnd), .readEOF(.closeNotify)])
        client.readEOF()
        XCTAssertEqual(client.takeScript(), [], ".readEOF comes once")
        assertBytesEqual(server.received, Array("early".utf8) + bulk)
    }

    /// A record damaged on the way fails the channel with a TLS error, and the
    /// alert goes out before the close.
    func testDamagedRecordAfterTheHandshakeFailsWithATLSError() throws {
        let server = try startedServer()
        let client = try helloingClient()
        pump(client, server)
        _ = client.takeScript()
        _ = server.takeScript()
        client.write(Array("hello".utf8))
        client.wire[client.wire.count - 3] ^= 0xFF
        client.transmit(to: server)
        XCTAssertEqual(server.takeScript().count, 2)
        guard case .close(.tls(let error))? = server.closedWith else { return XCTFail("\(String(describing: server.closedWith))") }
        XCTAssertEqual(error.alert, .sent(.badRecordMAC), "\(error)")
        XCTAssertEqual(server.received, [])
    }

    func testEndOfStreamWithoutCloseNotifyIsReportedOnce() throws {
        let server = try startedServer()
        let client = try helloingClient()
        pump(client, server)
        _ = server.takeScript()
        server.readEOF()
        XCTAssertEqual(server.takeScript(), [.readEOF(.endOfStreamWithoutCloseNotify)])
        server.readEOF()
        XCTAssertEqual(server.takeScript(), [])
        XCTAssertEqual(server.write([1]), .accepted, "writing goes on after the peer's FIN")
    }

    // MARK: ClientHello peek failures

    func testGarbageWhereAClientHelloBelongsFailsNamingTheByte() throws {
        let server = try startedServer()
        server.receive([0x16, 0x09, 0x00, 0x00, 0x05, 1, 2, 3, 4, 5])
        let expected = TransportError.tlsHandshake(TLSError(kind: .notTLS, explanation: "record version major byte 9 is not 3"))
        XCTAssertEqual(server.takeScript(), [.close(expected)], "no engine saw the bytes, so nothing is sent")
        XCTAssertTrue(server.layer.isEnding)
        server.receive([1, 2, 3])
        server.deadlinePassed()
        XCTAssertEqual(server.takeScript(), [], "a closing layer ignores what still comes")
    }

    func testPlainHTTPRequestWhereAClientHelloBelongsIsNamed() throws {
        let server = try startedServer()
        server.receive(Array("GET / HTTP/1.1\r\nHost: example.test\r\n\r\n".utf8))
        guard case .close(.tlsHandshake(let error)?)? = server.closedWith else {
            return XCTFail("\(String(describing: server.closedWith))")
        }
        XCTAssertEqual(error.kind, .notTLS)
        XCTAssertTrue(error.explanation.contains("\"GET / HTTP/1.1\""), error.explanation)
        XCTAssertEqual(server.takeScript(), [.close(.tlsHandshake(error))])
        XCTAssertNil(server.layer.clientHello)
    }

    func testClientHelloSplitAcrossReadsIsCollectedAndAFinThenFailsTheHandshake() throws {
        let server = try startedServer()
        let hello = try sampleClientHello()
        server.receive(Array(hello.prefix(3)))
        server.receive(Array(hello.prefix(20).dropFirst(3)))
        XCTAssertEqual(server.takeScript(), [], "a valid prefix waits for more")
        server.readEOF()
        XCTAssertEqual(server.takeScript(), [.close(.peerClosed(during: .tlsHandshake))])
    }

    /// A client cannot send an SNI that is not a host name: the layer fails
    /// at start, before any byte, with `.invalidServerName`.
    func testClientWithAnInvalidServerNameFailsAtStart() throws {
        let client = LayerEnd(try clientSecurity(serverName: "bad_name.test"))
        client.start()
        guard case .close(.tlsHandshake(let error)?)? = client.closedWith else {
            return XCTFail("\(String(describing: client.closedWith))")
        }
        XCTAssertEqual(error.kind, .invalidServerName)
        XCTAssertTrue(error.explanation.contains("bad_name.test"), error.explanation)
        XCTAssertEqual(client.takeScript(), [.close(.tlsHandshake(error))], "no deadline, no ClientHello")
        XCTAssertTrue(client.wire.isEmpty)
    }

    /// A server accepts an SNI that is not a host name (as nginx does): the
    /// summary has no server name, says why, and the handshake goes on.
    func testServerNotesAnSNIThatIsNotAHostNameAndGoesOn() throws {
        let server = try startedServer(policy: .ask)
        var hello = try sampleClientHello()
        let name = Array(TestPKI.hostName.utf8)
        let at = try XCTUnwrap((0...(hello.count - name.count)).first { Array(hello[$0..<($0 + name.count)]) == name })
        hello[at + 3] = UInt8(ascii: "_")  // exa_ple.test
        server.receive(hello)
        XCTAssertEqual(server.takeScript(), [.updateReading, .clientHello(serverName: nil)])
        XCTAssertEqual(server.layer.clientHello?.serverNameSent, Array("exa_ple.test".utf8))
        XCTAssertTrue(server.layer.clientHello?.serverNameIssue?.contains("not a valid host name") == true,
                      server.layer.clientHello?.serverNameIssue ?? "no issue")
        server.call { $0.continueHandshake(with: nil, into: &$1) }
        server.turn()
        XCTAssertEqual(server.takeScript(), [.later(.resumeHandshakeAfterDecision), .updateReading, .sendTLS])
    }

    // MARK: ClientHelloPolicy.ask

    func testAskThenContinueWithAnotherContextDecidesALPN() throws {
        let server = try startedServer(policy: .ask)
        let client = try helloingClient()
        client.transmit(to: server)
        XCTAssertEqual(server.takeScript(), [.updateReading, .clientHello(serverName: TestPKI.hostName)])
        XCTAssertEqual(server.layer.readGate, .shut, "no byte is read while the owner decides")
        XCTAssertTrue(server.wire.isEmpty)

        let http1 = try TestPKI.shared().serverContext(alpn: ["http/1.1"])
        server.call { $0.continueHandshake(with: http1, into: &$1) }
        XCTAssertEqual(server.takeScript(), [.later(.resumeHandshakeAfterDecision)],
                       "the handshake, and reading, resume on the next turn")
        server.turn()
        XCTAssertEqual(server.takeScript(), [.updateReading, .sendTLS])
        XCTAssertEqual(server.layer.readGate, .ownerDecides)

        pump(client, server)
        XCTAssertEqual(client.layer.tlsInfo?.alpn, "http/1.1")
        XCTAssertEqual(server.layer.tlsInfo?.alpn, "http/1.1")
        XCTAssertTrue(server.layer.isEstablished)
    }

    func testAskThenPassThroughGivesThePeekedBytesBackRaw() throws {
        let server = try startedServer(policy: .ask)
        let hello = try sampleClientHello()
        server.receive(hello)
        XCTAssertEqual(server.takeScript(), [.updateReading, .clientHello(serverName: TestPKI.hostName)])
        server.receive(Array("more".utf8))
        XCTAssertEqual(server.takeScript(), [], "bytes arriving while the owner decides are held")

        server.call { $0.passThrough(into: &$1) }
        server.speaksTLS = false
        XCTAssertEqual(server.takeScript(), [.cancelDeadline, .updateReading, .later(.announcePlaintext)])
        XCTAssertEqual(server.layer.readGate, .shut, "reading waits for the announcement")
        XCTAssertFalse(server.layer.isEstablished)
        server.turn()
        let replay = hello + Array("more".utf8)
        XCTAssertEqual(server.takeScript(), [.establishedPlaintext, .then(.replay(replay)), .received(replay),
                                             .then(.reopenReading), .updateReading])
        XCTAssertNil(server.layer.tlsInfo)
        XCTAssertEqual(server.layer.clientHello?.serverName, TestPKI.hostName)
        server.receive(Array("next".utf8))
        XCTAssertEqual(server.write(Array("raw".utf8)), .accepted)
        XCTAssertEqual(server.takeScript(), [.received(Array("next".utf8)), .send(Array("raw".utf8))])
        server.deadlinePassed()
        XCTAssertEqual(server.takeScript(), [], "the deadline no longer applies")
    }

    func testAskThenCloseClosesWithoutAWord() throws {
        let server = try startedServer(policy: .ask)
        server.receive(try sampleClientHello())
        _ = server.takeScript()
        server.close()
        XCTAssertEqual(server.takeScript(), [.close(nil)])
        XCTAssertTrue(server.wire.isEmpty)
        server.call { $0.continueHandshake(with: nil, into: &$1) }
        server.call { $0.passThrough(into: &$1) }
        XCTAssertEqual(server.takeScript(), [], "a decision after the close is ignored")
    }

    func testOwnerDecidingFromInsideTheClientHelloEventIsCarriedOutInOrder() throws {
        let server = try startedServer(policy: .ask)
        server.owner = { event, end in
            if case .clientHello = event { end.call { $0.continueHandshake(with: nil, into: &$1) } }
        }
        let client = try helloingClient()
        client.transmit(to: server)
        XCTAssertEqual(server.takeScript(), [.updateReading, .clientHello(serverName: TestPKI.hostName),
                                             .later(.resumeHandshakeAfterDecision)])
        pump(client, server)
        XCTAssertTrue(server.layer.isEstablished)
        XCTAssertTrue(client.layer.isEstablished)
    }

    // MARK: startTLS

    /// A plaintext preamble, then TLS on the same stream, with the start of
    /// the ClientHello read together with the preamble.
    func testStartTLSInPlaceWithLeftoverBytes() throws {
        let server = LayerEnd(.plaintext)
        let client = LayerEnd(.plaintext)
        for end in [server, client] {
            end.start()
            XCTAssertEqual(end.takeScript(), [.updateReading, .later(.announcePlaintext)])
            end.turn()
            XCTAssertEqual(end.takeScript(), [.establishedPlaintext, .then(.replay([])), .then(.reopenReading), .updateReading])
        }
        let preamble = Array("STARTTLS\n".utf8)
        XCTAssertEqual(client.write(preamble), .accepted)
        XCTAssertTrue(client.startTLS(try clientSecurity()))
        XCTAssertEqual(client.write(Array("secret".utf8)), .queued)
        XCTAssertEqual(client.takeScript(), [.send(preamble), .armDeadline(tenSeconds), .later(.startClientHandshake)])
        client.turn()
        XCTAssertEqual(client.takeScript(), [.sendTLS])

        let sent = client.wire
        client.wire = []
        let split = preamble.count + 20
        server.receive(Array(sent.prefix(split)))
        XCTAssertEqual(server.takeScript(), [.received(Array(sent.prefix(split)))])
        XCTAssertTrue(server.startTLS(try serverSecurity(), leftover: Array(sent[preamble.count..<split])))
        XCTAssertEqual(server.takeScript(), [.armDeadline(tenSeconds), .later(.peekLeftover)])
        server.turn()
        XCTAssertEqual(server.takeScript(), [], "the leftover is a ClientHello's start: wait for the rest")
        server.receive(Array(sent.dropFirst(split)))
        XCTAssertEqual(server.takeScript(), [.sendTLS])

        pump(client, server)
        XCTAssertEqual(server.received, Array("STARTTLS\n".utf8) + Array(sent[preamble.count..<split]) + Array("secret".utf8))
        XCTAssertEqual(server.layer.tlsInfo?.serverName, TestPKI.hostName)
        XCTAssertEqual(client.layer.tlsInfo?.alpn, "h2")
    }

    func testStartTLSNeedsAnOpenPlaintextChannel() throws {
        let ended = LayerEnd(.plaintext)
        ended.start()
        ended.turn()
        ended.readEOF()
        _ = ended.takeScript()
        XCTAssertFalse(ended.startTLS(try serverSecurity()))
        XCTAssertEqual(ended.takeScript(), [.close(.invalidState("startTLS needs an open plaintext channel"))])

        let server = try startedServer()
        XCTAssertFalse(server.startTLS(try serverSecurity()))
        XCTAssertEqual(server.takeScript(), [.close(.invalidState("startTLS needs an open plaintext channel"))])
    }

    // MARK: Early writes

    func testPlaintextWritesBeforeTheAnnouncementAreSentFirstThenTheHalfClose() {
        let end = LayerEnd(.plaintext)
        end.start()
        _ = end.takeScript()
        XCTAssertEqual(end.write(Array("a".utf8)), .queued)
        XCTAssertEqual(end.write(Array("b".utf8)), .queued)
        XCTAssertEqual(end.layer.earlyWriteByteCount, 2)
        end.shutdownWrite()
        XCTAssertEqual(end.write(Array("c".utf8)), .refused, "nothing after the half-close asked for")
        XCTAssertEqual(end.takeScript(), [])
        end.turn()
        XCTAssertEqual(end.takeScript(), [.send(Array("ab".utf8)), .shutdownWrite, .establishedPlaintext,
                                          .then(.replay([])), .then(.reopenReading), .updateReading])
        XCTAssertEqual(end.write(Array("d".utf8)), .accepted, "the socket refuses it, not the layer")
    }

    func testTLSHalfCloseAskedBeforeTheHandshakeFollowsTheQueuedWrites() throws {
        let server = try startedServer()
        let client = try helloingClient()
        client.write(Array("request".utf8))
        client.shutdownWrite()
        XCTAssertEqual(client.takeScript(), [])
        pump(client, server)
        XCTAssertEqual(client.takeScript().prefix(5), [.cancelDeadline, .sendTLS, .shutdownWrite, .established(alpn: "h2"),
                                                       .then(.readAfterHandshake)])
        XCTAssertEqual(server.received, Array("request".utf8))
        XCTAssertTrue(server.takeScript().contains(.readEOF(.closeNotify)))
    }

    // MARK: Handshake deadline

    func testHandshakeDeadlineResetsWhileHandshakingAndIsIgnoredOnceEstablished() throws {
        let peeking = try startedServer()
        peeking.deadlinePassed()
        XCTAssertEqual(peeking.takeScript(), [.reset(.timeout(.tlsHandshake))])

        let deciding = try startedServer(policy: .ask)
        deciding.receive(try sampleClientHello())
        _ = deciding.takeScript()
        deciding.deadlinePassed()
        XCTAssertEqual(deciding.takeScript(), [.reset(.timeout(.tlsHandshake))])

        let server = try startedServer()
        let client = try helloingClient()
        client.transmit(to: server)
        client.deadlinePassed()
        XCTAssertEqual(client.takeScript(), [.reset(.timeout(.tlsHandshake))], "a client waiting for the ServerHello")

        let established = try startedServer()
        let peer = try helloingClient()
        pump(peer, established)
        _ = established.takeScript()
        XCTAssertFalse(established.deadlineArmed)
        established.deadlinePassed()
        XCTAssertEqual(established.takeScript(), [])
        XCTAssertEqual(established.write([1]), .accepted)
    }
}

/// Bytes lent by the connection (its read buffer, reused after the call).
final class ChannelSecurityLayerLendingTests: XCTestCase {
    /// A whole connection whose every read is lent: the ClientHello is
    /// peeked from a copy, the handshake and the application data read in
    /// place, records split across reads and the buffer overwritten after
    /// each call; the plaintext comes out whole and in order.
    func testLentReadsCarryAHandshakeAndSplitRecords() throws {
        let server = LayerEnd(.tlsServer(TLSServerSetup(context: try TestPKI.shared().serverContext(alpn: ["h2"]))))
        server.start()
        let client = LayerEnd(.tlsClient(TLSClientSetup(context: try TestPKI.shared().clientContext(),
                                                        serverName: TestPKI.hostName)))
        client.start()
        client.turn()
        _ = server.takeScript()
        _ = client.takeScript()
        for _ in 0..<4 {
            if !client.wire.isEmpty { server.receiveLent(client.wire); client.wire = [] }
            if !server.wire.isEmpty { client.receiveLent(server.wire); server.wire = [] }
        }
        XCTAssertTrue(server.layer.isEstablished)
        XCTAssertTrue(client.layer.isEstablished)
        let body = patternBytes(300_000)
        XCTAssertEqual(server.write(body), .accepted)
        let records = server.wire
        server.wire = []
        _ = client.takeScript()
        for start in stride(from: 0, to: records.count, by: 7_001) {
            client.receiveLent(Array(records[start..<min(start + 7_001, records.count)]))
        }
        assertBytesEqual(client.received, body)
        XCTAssertFalse(client.takeScript().contains { if case .close = $0 { true } else { false } })
    }

    /// Lent bytes on a plaintext channel are reported as their own array.
    func testLentBytesOnAPlaintextChannelAreCopied() {
        let end = LayerEnd(.plaintext)
        end.start()
        end.turn()
        _ = end.takeScript()
        end.receiveLent(Array("plain".utf8))
        XCTAssertEqual(end.takeScript(), [.received(Array("plain".utf8))])
    }
}
