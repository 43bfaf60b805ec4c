import Hashing
@testable import TLS
import Synchronization
import XCTest

/// Handshakes, negotiation and application data between two engines in memory.
final class TLSEngineTests: XCTestCase {
    func testTLS13HandshakeVerifiesServerAgainstCA() throws {
        let pair = try EnginePair(client: clientContext(), server: serverContext())
        pair.pump()
        XCTAssertEqual(pair.client.state, .established)
        XCTAssertEqual(pair.server.state, .established)
        let client = try XCTUnwrap(pair.client.negotiated)
        let server = try XCTUnwrap(pair.server.negotiated)
        XCTAssertEqual(client.tlsVersion, .tls1_3)
        XCTAssertEqual(server.version, "TLSv1.3")
        XCTAssertTrue(client.cipher.hasPrefix("TLS_AES_") || client.cipher.hasPrefix("TLS_CHACHA20"), client.cipher)
        XCTAssertEqual(client.verifyResult, .trusted)
        XCTAssertEqual(client.serverName, "example.test")
        XCTAssertEqual(server.serverName, "example.test")
        XCTAssertEqual(client.peerCertificate?.subject, "CN=example.test")
        XCTAssertEqual(client.peerCertificate?.issuer, "CN=Intact Test CA")
        let serverCertificate = try TLSCertificate(pem: certificates().bytes("server.pem"))
        XCTAssertEqual(client.peerCertificate?.sha256Fingerprint, serverCertificate.sha256Fingerprint)
        XCTAssertEqual(serverCertificate.sha256Fingerprint.count, 64)
        XCTAssertEqual(server.peerCertificate, nil)
        XCTAssertEqual(server.verifyResult, .noPeerCertificate)
        XCTAssertNil(client.alpn)
    }

    func testTLS12Handshake() throws {
        let pair = try EnginePair(client: clientContext { $0.maximumVersion = .tls1_2 }, server: serverContext())
        pair.pump()
        XCTAssertEqual(pair.client.negotiated?.tlsVersion, .tls1_2)
        XCTAssertEqual(pair.server.negotiated?.tlsVersion, .tls1_2)
        XCTAssertEqual(pair.client.negotiated?.cipher.hasPrefix("ECDHE-ECDSA-"), true, pair.client.negotiated?.cipher ?? "")
        XCTAssertEqual(pair.client.negotiated?.verifyResult, .trusted)
        XCTAssertEqual(pair.server.negotiated?.serverName, "example.test")
    }

    func testIPAddressIsVerifiedButNotSentAsSNI() throws {
        let pair = try EnginePair(client: clientContext(), server: serverContext(), serverName: "127.0.0.1")
        pair.pump()
        XCTAssertEqual(pair.client.negotiated?.verifyResult, .trusted)
        XCTAssertEqual(pair.client.negotiated?.serverName, nil)
        XCTAssertEqual(pair.server.negotiated?.serverName, nil)
    }

    func testALPNPicksH2WhenBothOfferIt() throws {
        let pair = try EnginePair(client: clientContext { $0.alpnOffer = ["http/1.1", "h2"] },
                                  server: serverContext { $0.alpnPreference = ["h2", "http/1.1"] })
        pair.pump()
        XCTAssertEqual(pair.client.negotiated?.alpn, "h2")
        XCTAssertEqual(pair.server.negotiated?.alpn, "h2")
        XCTAssertEqual(pair.server.negotiated?.offeredALPN, ["http/1.1", "h2"])
        XCTAssertEqual(pair.client.negotiated?.offeredALPN, ["http/1.1", "h2"])
    }

    func testALPNWithoutOverlapProceedsWithoutALPNByDefault() throws {
        let pair = try EnginePair(client: clientContext { $0.alpnOffer = ["spdy/3"] },
                                  server: serverContext { $0.alpnPreference = ["h2", "http/1.1"] })
        pair.pump()
        XCTAssertEqual(pair.client.state, .established)
        XCTAssertNil(pair.client.negotiated?.alpn)
        XCTAssertNil(pair.server.negotiated?.alpn)
        XCTAssertEqual(pair.server.negotiated?.offeredALPN, ["spdy/3"])
    }

    func testALPNWithoutOverlapFailsWhenConfigured() throws {
        let pair = try EnginePair(client: clientContext { $0.alpnOffer = ["spdy/3"] },
                                  server: serverContext {
                                      $0.alpnPreference = ["h2"]
                                      $0.alpnMismatch = .fail
                                  })
        pair.pump()
        assertTLSError(EnginePair.failure(of: pair.server), .noApplicationProtocol, alert: .sent(.noApplicationProtocol),
                       mentions: "client offered ALPN spdy/3 but the server speaks only h2")
        assertTLSError(EnginePair.failure(of: pair.client), .noApplicationProtocol, alert: .received(.noApplicationProtocol),
                       mentions: "alert received: no application protocol")
    }

    func testCertificateProviderIsCalledWithTheSNI() throws {
        let other = try certificates().otherServerIdentity
        let asked = Mutex<[String?]>([])
        let server = try serverContext {
            $0.certificateProvider = { name in
                asked.withLock { $0.append(name) }
                return name == "other.test" ? other : nil
            }
        }
        let toOther = try EnginePair(client: clientContext(), server: server, serverName: "other.test")
        toOther.pump()
        XCTAssertEqual(toOther.client.negotiated?.verifyResult, .trusted)
        XCTAssertEqual(toOther.client.negotiated?.peerCertificate?.subject, "CN=other.test")
        XCTAssertEqual(toOther.server.negotiated?.serverName, "other.test")

        // The provider declines example.test: the context's own identity is presented.
        let toDefault = try EnginePair(client: clientContext(), server: server, serverName: "example.test")
        toDefault.pump()
        XCTAssertEqual(toDefault.client.negotiated?.peerCertificate?.subject, "CN=example.test")
        XCTAssertEqual(asked.withLock { $0 }, ["other.test", "example.test"])
    }

    func testClientHelloWithoutSNIReachesTheProviderAsNil() throws {
        let asked = Mutex<[String?]>([])
        let identity = try certificates().serverIdentity
        let server = try TLSContext(server: {
            var configuration = TLSServerConfiguration(certificateProvider: { name in
                asked.withLock { $0.append(name) }
                return identity
            })
            configuration.keyLog = .disabled
            return configuration
        }())
        let pair = try EnginePair(client: clientContext(), server: server, serverName: nil)
        pair.pump()
        XCTAssertEqual(pair.client.state, .established)
        XCTAssertNil(pair.server.negotiated?.serverName)
        XCTAssertEqual(asked.withLock { $0 }, [nil])
    }

    func testServerWithoutCertificateForTheNameRefusesIt() throws {
        let server = try TLSContext(server: {
            var configuration = TLSServerConfiguration(certificateProvider: { _ in nil })
            configuration.keyLog = .disabled
            return configuration
        }())
        let pair = try EnginePair(client: clientContext(), server: server, serverName: "unknown.test")
        pair.pump()
        assertTLSError(EnginePair.failure(of: pair.server), .unknownServerName, alert: .sent(.unrecognizedName),
                       mentions: "unknown.test")
        assertTLSError(EnginePair.failure(of: pair.client), .unknownServerName, alert: .received(.unrecognizedName),
                       mentions: "server has no certificate for the name unknown.test")
    }

    func testVersionRangesWithoutOverlapFail() throws {
        let pair = try EnginePair(client: clientContext { $0.maximumVersion = .tls1_2 },
                                  server: serverContext { $0.minimumVersion = .tls1_3 })
        pair.pump()
        XCTAssertEqual(EnginePair.failure(of: pair.server)?.kind, .protocolVersionMismatch)
        XCTAssertEqual(EnginePair.failure(of: pair.client)?.kind, .protocolVersionMismatch)
        XCTAssertEqual(EnginePair.failure(of: pair.client)?.alert, .received(.protocolVersion))
    }

    func testOneMebibyteEachWay() throws {
        let pair = try EnginePair(client: clientContext(), server: serverContext())
        pair.pump()
        let upload = SecureRandom.bytes(1 << 20)
        let download = SecureRandom.bytes(1 << 20)
        try pair.client.writePlaintext(upload)
        try pair.server.writePlaintext(download)
        pair.pump()
        XCTAssertEqual(pair.serverReceived.count, upload.count)
        XCTAssertEqual(pair.clientReceived.count, download.count)
        XCTAssertEqual(SHA256.hash(pair.serverReceived), SHA256.hash(upload))
        XCTAssertEqual(SHA256.hash(pair.clientReceived), SHA256.hash(download))
        XCTAssertNil(pair.clientReadError)
        XCTAssertNil(pair.serverReadError)
    }

    func testPlaintextFedInSmallPiecesArrivesWhole() throws {
        let pair = try EnginePair(client: clientContext(), server: serverContext())
        pair.pump()
        let message = Array("GET / HTTP/1.1\r\nHost: example.test\r\n\r\n".utf8)
        try pair.client.writePlaintext(message)
        var received: [UInt8] = []
        for byte in pair.client.takeOutbound() {
            pair.server.feed([byte])
            received += try pair.server.readPlaintext()
        }
        XCTAssertEqual(received, message)
    }

    func testASmallMessageKeepsNoRecordSizedBuffer() throws {
        // A request head held by a parser on an idle keep-alive connection must
        // not keep a whole record's worth of room with it.
        let pair = try EnginePair(client: clientContext(), server: serverContext())
        pair.pump()
        let message = Array("GET / HTTP/1.1\r\nHost: example.test\r\n\r\n".utf8)
        try pair.client.writePlaintext(message)
        pair.server.feed(pair.client.takeOutbound())
        let received = try pair.server.readPlaintext()
        XCTAssertEqual(received, message)
        XCTAssertLessThan(received.capacity, message.count + 1024)
    }

    func testDrainedEnginesKeepNoFlightInTheirBuffers() throws {
        // An idle keep-alive connection must not hold its handshake flight or
        // its last response in its ciphertext buffers; a record split across
        // reads and the emptied buffers still work.
        let pair = try EnginePair(client: clientContext(), server: serverContext())
        pair.pump()
        XCTAssertEqual(pair.server.memoryBufferCapacity, 0)
        XCTAssertEqual(pair.client.memoryBufferCapacity, 0)
        let response = SecureRandom.bytes(8 * 1024)
        try pair.server.writePlaintext(response)
        let records = pair.server.takeOutbound()
        pair.client.feed(Array(records.prefix(100)))
        XCTAssertTrue(try pair.client.readPlaintext().isEmpty)
        pair.client.feed(Array(records.dropFirst(100)))
        XCTAssertEqual(try pair.client.readPlaintext(), response)
        XCTAssertEqual(pair.server.memoryBufferCapacity, 0)
        XCTAssertEqual(pair.client.memoryBufferCapacity, 0)
        try pair.client.writePlaintext(Array("after".utf8))  // the emptied buffers still carry bytes
        pair.pump()
        XCTAssertEqual(pair.serverReceived, Array("after".utf8))
    }

    func testCloseNotifyBothWaysWithDataAfterHalfClose() throws {
        let pair = try EnginePair(client: clientContext(), server: serverContext())
        pair.pump()
        pair.client.shutdown()
        XCTAssertEqual(pair.client.state, .closeNotifySent)
        pair.pump()
        XCTAssertEqual(pair.server.state, .closeNotifyReceived)
        // The server may still answer before closing its side.
        try pair.server.writePlaintext(Array("last words".utf8))
        pair.server.shutdown()
        XCTAssertEqual(pair.server.state, .closed)
        pair.pump()
        XCTAssertEqual(pair.client.state, .closed)
        XCTAssertEqual(pair.clientReceived, Array("last words".utf8))
        XCTAssertThrowsError(try pair.client.writePlaintext([1])) { error in
            XCTAssertEqual((error as? TLSError)?.kind, .notEstablished)
        }
    }

    func testWritingBeforeTheHandshakeIsRefused() throws {
        let engine = try TLSEngine(context: clientContext(), serverName: "example.test")
        XCTAssertThrowsError(try engine.writePlaintext([1, 2, 3])) { error in
            XCTAssertEqual((error as? TLSError)?.kind, .notEstablished)
        }
        XCTAssertThrowsError(try engine.readPlaintext())
    }

    func testClientRefusesAnInvalidServerName() throws {
        let context = try clientContext()
        XCTAssertThrowsError(try TLSEngine(context: context, serverName: "bad_name.test")) { error in
            let tlsError = error as? TLSError
            XCTAssertEqual(tlsError?.kind, .invalidServerName)
            XCTAssertTrue(tlsError?.description.contains("'_'") == true, tlsError?.description ?? "")
        }
    }
}
