import TLS
import XCTest

/// Certificate checks on both sides, and what each side says when they fail.
final class TLSEngineVerificationTests: XCTestCase {
    func testWrongCAFailsWithAClearErrorOnBothSides() throws {
        let pair = try EnginePair(client: clientContext { $0.verification = .verify(.caFile(try self.certificates().otherCAFile)) },
                                  server: serverContext())
        pair.pump()
        assertTLSError(EnginePair.failure(of: pair.client), .peerCertificateUntrusted, alert: .sent(.unknownCA),
                       mentions: "server certificate is not trusted: unable to get local issuer certificate")
        XCTAssertEqual(EnginePair.failure(of: pair.client)?.verifyError, "unable to get local issuer certificate")
        assertTLSError(EnginePair.failure(of: pair.server), .certificateRejectedByPeer, alert: .received(.unknownCA),
                       mentions: "client rejected our server certificate (alert received: unknown ca")
    }

    func testHostNameMismatchIsNamed() throws {
        let pair = try EnginePair(client: clientContext(), server: serverContext(), serverName: "wrong.test")
        pair.pump()
        let client = try XCTUnwrap(EnginePair.failure(of: pair.client))
        XCTAssertEqual(client.kind, .hostNameMismatch)
        XCTAssertEqual(client.verifyError, "hostname mismatch")
        XCTAssertTrue(client.description.hasPrefix("server certificate does not name wrong.test"), client.description)
    }

    func testIPAddressMismatchIsNamed() throws {
        let pair = try EnginePair(client: clientContext(), server: serverContext(), serverName: "::1")
        pair.pump()
        XCTAssertEqual(EnginePair.failure(of: pair.client)?.kind, .hostNameMismatch)
    }

    func testInsecureClientCompletesAndRecordsWhyItWouldNotTrust() throws {
        let pair = try EnginePair(client: clientContext { $0.verification = .insecureNoVerification },
                                  server: serverContext(), serverName: "wrong.test")
        pair.pump()
        XCTAssertEqual(pair.client.state, .established)
        guard case .untrusted(let reason)? = pair.client.negotiated?.verifyResult else {
            return XCTFail("expected an untrusted verify result, got \(String(describing: pair.client.negotiated))")
        }
        XCTAssertEqual(reason, "unable to get local issuer certificate")
    }

    func testClientCertificateIsRequestedAndVerified() throws {
        for version in TLSVersion.allCases {
            let pair = try EnginePair(
                client: clientContext {
                    $0.identity = try self.certificates().clientIdentity
                    $0.maximumVersion = version
                },
                server: serverContext { $0.clientCertificate = .require(trustedBy: .caFile(try self.certificates().caFile)) })
            pair.pump()
            XCTAssertEqual(pair.server.state, .established, "\(version)")
            let server = try XCTUnwrap(pair.server.negotiated)
            XCTAssertEqual(server.tlsVersion, version)
            XCTAssertEqual(server.peerCertificate?.subject, "CN=Intact Test Client,O=Intact Tests")
            XCTAssertEqual(server.peerCertificate?.sha256Fingerprint,
                           try certificates().clientIdentity.certificate.sha256Fingerprint)
            XCTAssertEqual(server.verifyResult, .trusted)
        }
    }

    func testRequestedClientCertificateMayBeDeclined() throws {
        let pair = try EnginePair(
            client: clientContext(),
            server: serverContext { $0.clientCertificate = .request(trustedBy: .caFile(try self.certificates().caFile)) })
        pair.pump()
        XCTAssertEqual(pair.server.state, .established)
        XCTAssertEqual(pair.server.negotiated?.verifyResult, .noPeerCertificate)
        XCTAssertNil(pair.server.negotiated?.peerCertificate)
    }

    func testMissingClientCertificateTLS13() throws {
        let pair = try EnginePair(
            client: clientContext(),
            server: serverContext { $0.clientCertificate = .require(trustedBy: .caFile(try self.certificates().caFile)) })
        pair.pump()
        assertTLSError(EnginePair.failure(of: pair.server), .clientCertificateRequired, alert: .sent(.certificateRequired),
                       mentions: "peer presented no client certificate but one is required (alert sent: certificate required")
        // In TLS 1.3 the client finishes first and learns of the refusal on its next read.
        assertTLSError(pair.clientReadError, .clientCertificateRequired, alert: .received(.certificateRequired),
                       mentions: "server requires a client certificate")
    }

    func testMissingClientCertificateTLS12() throws {
        let pair = try EnginePair(
            client: clientContext { $0.maximumVersion = .tls1_2 },
            server: serverContext { $0.clientCertificate = .require(trustedBy: .caFile(try self.certificates().caFile)) })
        pair.pump()
        assertTLSError(EnginePair.failure(of: pair.server), .clientCertificateRequired, alert: .sent(.handshakeFailure),
                       mentions: "peer presented no client certificate but one is required")
        assertTLSError(EnginePair.failure(of: pair.client), .clientCertificateRequired, alert: .received(.handshakeFailure),
                       mentions: "server asked for a client certificate")
    }

    func testClientCertificateFromAnotherCAIsRejected() throws {
        let pair = try EnginePair(
            client: clientContext { $0.identity = try self.certificates().clientIdentity },
            server: serverContext { $0.clientCertificate = .require(trustedBy: .caFile(try self.certificates().otherCAFile)) })
        pair.pump()
        assertTLSError(EnginePair.failure(of: pair.server), .peerCertificateUntrusted, alert: .sent(.unknownCA),
                       mentions: "client certificate is not trusted")
        assertTLSError(pair.clientReadError ?? EnginePair.failure(of: pair.client), .certificateRejectedByPeer,
                       alert: .received(.unknownCA), mentions: "server rejected our client certificate")
    }

    func testPlainHTTPFedToAServerFailsClearly() throws {
        let server = try TLSEngine(context: serverContext())
        server.feed(Array("GET / HTTP/1.1\r\nHost: example.test\r\n\r\n".utf8))
        guard case .failed(let error) = server.handshake() else { return XCTFail("garbage accepted") }
        XCTAssertEqual(error.kind, .notTLS)
        XCTAssertTrue(error.description.contains("plain HTTP request where a TLS ClientHello was expected"), error.description)
        XCTAssertEqual(server.handshake(), .failed(error))
    }

    func testBinaryGarbageFedToAServerFailsClearly() throws {
        let server = try TLSEngine(context: serverContext())
        server.feed([0x16, 0x07, 0x00, 0x40, 0x00] + [UInt8](repeating: 0xAB, count: 64))
        guard case .failed(let error) = server.handshake() else { return XCTFail("garbage accepted") }
        XCTAssertEqual(error.kind, .notTLS)
        XCTAssertNotNil(error.openSSLReason)
    }
}
