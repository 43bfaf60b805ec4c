import Foundation
import TLS
import Transport
import Wire
import IntactTestSupport
import XCTest

/// `ByteChannel` over loopback: TLS both ways, real peers (openssl s_client),
/// bad inputs on a TLS listener, STARTTLS-style upgrade and passthrough.
final class ByteChannelTests: XCTestCase {
    private let loop = EventLoop(label: "byte-channel-tests")

    private func tlsServer(handshakeTimeout: Duration = .seconds(10), policy: ClientHelloPolicy = .proceed,
                           decide: (@Sendable (ByteChannel, ClientHelloSummary) -> Void)? = nil) throws -> EchoServer {
        let context = try TestPKI.shared().serverContext()
        return try EchoServer(loop: loop, security: {
            .tlsServer(TLSServerSetup(context: context, clientHelloPolicy: policy, handshakeTimeout: handshakeTimeout))
        }, decide: decide)
    }

    private func tlsClient(alpn: [String] = ["h2", "http/1.1"], serverName: String? = TestPKI.hostName) throws -> ChannelSecurity {
        .tlsClient(TLSClientSetup(context: try TestPKI.shared().clientContext(alpn: alpn), serverName: serverName))
    }

    /// A good client after a bad input: the listener still serves.
    private func assertStillServes(_ server: EchoServer, file: StaticString = #filePath, line: UInt = #line) throws {
        let payload = patternBytes(4096)
        let client = ChannelClient.exchange(with: server.address, on: loop, security: try tlsClient(), payload: payload)
        XCTAssertNil(client.error, "\(String(describing: client.error))", file: file, line: line)
        assertBytesEqual(client.received, payload, file: file, line: line)
        let record = server.nextClosed()
        XCTAssertEqual(record?.established, true, file: file, line: line)
    }

    func testTLSEchoBetweenChannelsCarriesAMebibyteAndReportsTheHandshake() throws {
        let server = try tlsServer()
        defer { server.close() }
        let payload = patternBytes(1 << 20)
        let client = ChannelClient.exchange(with: server.address, on: loop, security: try tlsClient(), payload: payload)
        XCTAssertNil(client.error)
        assertBytesEqual(client.received, payload)
        XCTAssertEqual(client.tls?.alpn, "h2")
        XCTAssertEqual(client.tls?.verifyResult, .trusted)
        XCTAssertEqual(client.readEnd, .closeNotify)

        let record = try XCTUnwrap(server.nextClosed())
        XCTAssertNil(record.error)
        XCTAssertEqual(record.clientHello?.serverName, TestPKI.hostName)
        XCTAssertEqual(record.clientHello?.alpn, ["h2", "http/1.1"])
        XCTAssertEqual(record.tls?.serverName, TestPKI.hostName)
        XCTAssertEqual(record.tls?.alpn, "h2")
        XCTAssertEqual(record.readEnd, .closeNotify)
        XCTAssertEqual(record.received.count, payload.count)
    }

    func testOpenSSLClientVerifiesTheChainAndNegotiatesH2() throws {
        let pki = try TestPKI.shared()
        let server = try tlsServer()
        defer { server.close() }
        let output = try ToolRun.run("openssl", ["s_client", "-connect", "127.0.0.1:\(server.address.port)",
                                  "-servername", TestPKI.hostName, "-alpn", "h2", "-CAfile", pki.caFile,
                                  "-verify_return_error"])
        XCTAssertTrue(output.output.contains("Verify return code: 0 (ok)"), output.output + output.error)
        XCTAssertTrue(output.output.contains("ALPN protocol: h2"), output.output)
        let record = try XCTUnwrap(server.nextClosed())
        XCTAssertEqual(record.tls?.alpn, "h2")
        XCTAssertEqual(record.tls?.serverName, TestPKI.hostName)
    }

    func testPlainHTTPWhereAClientHelloBelongsIsRefusedByName() throws {
        let server = try tlsServer()
        defer { server.close() }
        let raw = ChannelClient.exchange(with: server.address, on: loop, security: .plaintext,
                                         payload: Array("GET / HTTP/1.1\r\nHost: example.test\r\n\r\n".utf8), then: .stayOpen)
        XCTAssertEqual(raw.received, [], "nothing is answered to a plain request")
        let record = try XCTUnwrap(server.nextClosed())
        guard case .tlsHandshake(let error) = record.error else { return XCTFail("\(String(describing: record.error))") }
        XCTAssertEqual(error.kind, .notTLS)
        XCTAssertTrue(error.explanation.contains("GET / HTTP/1.1"), error.explanation)
        XCTAssertFalse(record.established)
        try assertStillServes(server)
    }

    func testGarbageBytesAreRefused() throws {
        let server = try tlsServer()
        defer { server.close() }
        _ = ChannelClient.exchange(with: server.address, on: loop, security: .plaintext,
                                   payload: [0x16, 0x09, 0x00, 0x00, 0x05, 1, 2, 3, 4, 5], then: .stayOpen)
        let record = try XCTUnwrap(server.nextClosed())
        guard case .tlsHandshake(let error) = record.error else { return XCTFail("\(String(describing: record.error))") }
        XCTAssertEqual(error.kind, .notTLS)
        XCTAssertTrue(error.explanation.contains("major byte 9"), error.explanation)
        try assertStillServes(server)
    }

    func testClientHelloWithoutSNIIsServedWithNoServerName() throws {
        let server = try tlsServer()
        defer { server.close() }
        let payload = patternBytes(100)
        let client = ChannelClient.exchange(with: server.address, on: loop, security: try tlsClient(serverName: nil),
                                            payload: payload)
        assertBytesEqual(client.received, payload)
        let record = try XCTUnwrap(server.nextClosed())
        XCTAssertNil(record.error)
        XCTAssertTrue(record.established)
        XCTAssertNotNil(record.clientHello)
        XCTAssertNil(record.clientHello?.serverName)
        XCTAssertNil(record.tls?.serverName)
    }

    /// An SNI that is not a host name is accepted (as nginx does) and its
    /// issue travels with the session's details.
    func testSNIThatIsNotAHostNameIsAcceptedAndNoted() throws {
        let server = try tlsServer()
        defer { server.close() }
        let output = try ToolRun.run("openssl", ["s_client", "-connect", "127.0.0.1:\(server.address.port)",
                                  "-servername", "bad_name.example"])
        XCTAssertFalse(output.error.contains("unrecognized name"), output.error)
        let record = try XCTUnwrap(server.nextClosed())
        XCTAssertTrue(record.established)
        XCTAssertNil(record.clientHello?.serverName)
        XCTAssertEqual(record.tls?.serverName, "bad_name.example")
        XCTAssertTrue(record.tls?.serverNameIssue?.contains("not a valid host name") == true,
                      record.tls?.serverNameIssue ?? "no issue")
        try assertStillServes(server)
    }

    func testPeerThatStopsMidHandshakeTimesOut() throws {
        let server = try tlsServer(handshakeTimeout: .milliseconds(200))
        defer { server.close() }
        let hello = try sampleClientHello()
        let raw = ChannelClient.exchange(with: server.address, on: loop, security: .plaintext,
                                         payload: Array(hello.prefix(hello.count / 2)), then: .stayOpen)
        XCTAssertEqual(raw.error, .connection(.connectionReset), "the server resets a stalled handshake")
        let record = try XCTUnwrap(server.nextClosed())
        XCTAssertEqual(record.error, .timeout(.tlsHandshake))
        try assertStillServes(server)
    }

    func testPeerThatResetsMidHandshakeIsReported() throws {
        let server = try tlsServer()
        defer { server.close() }
        let hello = try sampleClientHello()
        _ = ChannelClient.exchange(with: server.address, on: loop, security: .plaintext,
                                   payload: Array(hello.prefix(20)), then: .abortAfterSending)
        let record = try XCTUnwrap(server.nextClosed())
        XCTAssertEqual(record.error, .connection(.connectionReset))
        XCTAssertFalse(record.established)
        try assertStillServes(server)
    }

    func testPeerThatClosesMidHandshakeIsReported() throws {
        let server = try tlsServer()
        defer { server.close() }
        let hello = try sampleClientHello()
        _ = ChannelClient.exchange(with: server.address, on: loop, security: .plaintext,
                                   payload: Array(hello.prefix(20)), then: .shutdownWrite)
        let record = try XCTUnwrap(server.nextClosed())
        XCTAssertEqual(record.error, .peerClosed(during: .tlsHandshake))
    }

    func testUntrustedServerFailsTheClientHandshakeWithTheVerifyError() throws {
        let server = try tlsServer()
        defer { server.close() }
        // The system store does not hold the test CA.
        var configuration = TLSClientConfiguration(verification: .verify(.systemStore))
        configuration.alpnOffer = ["h2"]
        let context = try TLSContext(client: configuration)
        let client = ChannelClient.exchange(with: server.address, on: loop,
                                            security: .tlsClient(TLSClientSetup(context: context, serverName: TestPKI.hostName)),
                                            payload: [1])
        guard case .tlsHandshake(let error) = client.error else { return XCTFail("\(String(describing: client.error))") }
        XCTAssertEqual(error.kind, .peerCertificateUntrusted)
        let record = try XCTUnwrap(server.nextClosed())
        XCTAssertNotNil(record.error, "the server learns of the rejection")
    }

    func testAskPolicyCanPassTheClientHelloThroughRaw() throws {
        let server = try tlsServer(policy: .ask) { channel, hello in
            XCTAssertEqual(hello.serverName, TestPKI.hostName)
            channel.passThrough()
        }
        defer { server.close() }
        let hello = try sampleClientHello()
        let raw = ChannelClient.exchange(with: server.address, on: loop, security: .plaintext, payload: hello)
        XCTAssertEqual(raw.received, hello, "the echo server got the ClientHello bytes raw and echoed them")
        let record = try XCTUnwrap(server.nextClosed())
        XCTAssertNil(record.tls)
        XCTAssertEqual(record.clientHello?.serverName, TestPKI.hostName)
        XCTAssertEqual(record.received, hello)
    }

    func testAskPolicyCanContinueWithAnotherContext() throws {
        let context = try TestPKI.shared().serverContext(alpn: ["http/1.1"])
        let server = try tlsServer(policy: .ask) { channel, _ in channel.continueHandshake(with: context) }
        defer { server.close() }
        let client = ChannelClient.exchange(with: server.address, on: loop, security: try tlsClient(), payload: [7, 8, 9])
        XCTAssertEqual(client.received, [7, 8, 9])
        XCTAssertEqual(client.tls?.alpn, "http/1.1", "the context chosen after the peek decided ALPN")
        XCTAssertEqual(server.nextClosed()?.tls?.alpn, "http/1.1")
    }

    /// A plaintext preamble, then TLS on the same connection, with the start
    /// of the ClientHello arriving in the same segment as the preamble.
    func testPlaintextChannelUpgradesToTLSInPlaceWithLeftoverBytes() throws {
        let context = try TestPKI.shared().serverContext()
        let preamble = Array("STARTTLS\n".utf8)
        let outcome = Locked(ServerRecord())
        let done = DispatchSemaphore(value: 0)
        let accepted = Locked(0)
        let listener = try Listener(bindingTo: .loopbackIPv4(port: 0), on: loop) { connection in
            // The first peer never finishes its handshake: give it a short deadline.
            let isFirst = accepted.withLock { count in
                count += 1
                return count == 1
            }
            let setup = TLSServerSetup(context: context, handshakeTimeout: isFirst ? .milliseconds(300) : .seconds(10))
            let channel = ByteChannel(connection: connection, security: .plaintext)
            var buffered: [UInt8] = []
            var record = ServerRecord()
            channel.start { event in
                switch event {
                case .received(let bytes) where record.tls == nil && !record.established:
                    buffered += bytes
                    guard let newline = buffered.firstIndex(of: UInt8(ascii: "\n")) else { return }
                    XCTAssertEqual(Array(buffered[...newline]), preamble)
                    record.established = true
                    channel.startTLS(.tlsServer(setup), leftover: Array(buffered[(newline + 1)...]))
                case .established(let info):
                    record.tls = info ?? record.tls
                case .received(let bytes):
                    record.received += bytes
                    channel.write(bytes)
                case .readEOF(let end):
                    record.readEnd = end
                    channel.shutdownWrite()
                case .clientHello, .writable:
                    break
                case .closed(let error):
                    record.error = error
                    let finished = record
                    outcome.withLock { $0 = finished }
                    done.signal()
                }
            }
        }
        defer { listener.close() }

        // The client writes the preamble and the whole ClientHello in one go.
        let hello = try sampleClientHello()
        let client = ChannelClient.exchange(with: listener.localAddress, on: loop, security: .plaintext,
                                            payload: preamble + hello, then: .stayOpen)
        XCTAssertEqual(done.wait(timeout: .now() + 60), .success)
        let record = outcome.current
        XCTAssertEqual(record.error, .timeout(.tlsHandshake), "the raw client cannot finish the handshake it started")
        XCTAssertEqual(client.received.first, 22, "the server answered the leftover ClientHello with a handshake record")

        // A real TLS client after its own preamble.
        let upgraded = try upgradeAndEcho(to: listener.localAddress, preamble: preamble)
        XCTAssertEqual(done.wait(timeout: .now() + 60), .success)
        assertBytesEqual(upgraded.received, patternBytes(5000))
        XCTAssertEqual(upgraded.tls?.serverName, TestPKI.hostName)
        assertBytesEqual(outcome.current.received, patternBytes(5000))
        XCTAssertNil(outcome.current.error)
    }

    /// Connects in plaintext, sends `preamble`, starts TLS as a client at once, echoes 5000 bytes.
    private func upgradeAndEcho(to address: SocketAddress, preamble: [UInt8]) throws -> ClientRecord {
        let security = try tlsClient()
        let result = Locked(ClientRecord())
        let done = DispatchSemaphore(value: 0)
        Connection.connect(to: address, on: loop) { outcome in
            guard case .success(let connection) = outcome else {
                done.signal()
                return
            }
            let channel = ByteChannel(connection: connection, security: .plaintext)
            var record = ClientRecord()
            channel.start { event in
                switch event {
                case .established(nil) where record.tls == nil:
                    channel.write(preamble)
                    channel.startTLS(security)
                    channel.write(patternBytes(5000))
                    channel.shutdownWrite()
                case .established(let info):
                    record.tls = info
                case .received(let bytes):
                    record.received += bytes
                case .readEOF(let end):
                    record.readEnd = end
                case .clientHello, .writable:
                    break
                case .closed(let error):
                    record.error = error
                    let finished = record
                    result.withLock { $0 = finished }
                    done.signal()
                }
            }
        }
        _ = done.wait(timeout: .now() + 60)
        return result.current
    }

    /// Bytes already waiting in the socket when a plaintext channel starts
    /// arrive after `.established(nil)`, never before, even when the owner
    /// calls `resumeReading()` before the announcement.
    func testPlaintextChannelAnnouncesItselfBeforeBytesAlreadyWaiting() throws {
        let greeting = Array("hello before start\n".utf8)
        let written = DispatchSemaphore(value: 0)
        let listener = try Listener(bindingTo: .loopbackIPv4(port: 0), on: loop) { connection in
            let channel = ByteChannel(connection: connection, security: .plaintext)
            channel.start { event in
                guard case .established = event else { return }
                channel.write(greeting)
                channel.shutdownWrite()
                // Queued after the flush the write scheduled, so the bytes are out when it runs.
                connection.loop.execute { written.signal() }
            }
        }
        defer { listener.close() }

        let clientLoop = EventLoop(label: "late-starter")
        let connected = Locked<Connection?>(nil)
        let ready = DispatchSemaphore(value: 0)
        Connection.connect(to: listener.localAddress, on: clientLoop) { result in
            connected.withLock { $0 = try? result.get() }
            ready.signal()
        }
        XCTAssertEqual(ready.wait(timeout: .now() + 60), .success)
        let connection = try XCTUnwrap(connected.current)
        XCTAssertEqual(written.wait(timeout: .now() + 60), .success)

        let events = Locked<[String]>([])
        let closed = DispatchSemaphore(value: 0)
        clientLoop.execute {
            let channel = ByteChannel(connection: connection, security: .plaintext)
            channel.start { event in
                switch event {
                case .established(let info): events.withLock { $0.append("established \(info == nil)") }
                case .received(let bytes): events.withLock { $0.append("received \(bytes.count)") }
                case .readEOF: channel.close()
                case .closed: closed.signal()
                case .clientHello, .writable: break
                }
            }
            channel.resumeReading()
        }
        XCTAssertEqual(closed.wait(timeout: .now() + 60), .success)
        XCTAssertEqual(events.current.first, "established true", "\(events.current)")
        XCTAssertEqual(events.current.dropFirst().first?.hasPrefix("received"), true, "\(events.current)")
    }
}
