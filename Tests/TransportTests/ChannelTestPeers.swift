import Dispatch
import Foundation
import TLS
import Transport
import Wire

/// What the server side saw of one connection, complete once it closed.
struct ServerRecord: Sendable {
    var clientHello: ClientHelloSummary?
    var established = false
    var tls: TLSConnectionInfo?
    var received: [UInt8] = []
    var readEnd: ReadEnd?
    var error: TransportError?
}

/// A loopback listener whose connections become server `ByteChannel`s that
/// echo what they receive and half-close when the peer does. Each finished
/// connection's `ServerRecord` can be awaited with `nextClosed()`.
final class EchoServer: Sendable {
    let listener: Listener
    private let closed = Locked<[ServerRecord]>([])
    private let signal = DispatchSemaphore(value: 0)

    var address: SocketAddress { listener.localAddress }

    /// `decide` answers a `.clientHello` (policy `.ask`); nil means continue.
    init(loop: EventLoop, security: @escaping @Sendable () -> ChannelSecurity,
         decide: (@Sendable (ByteChannel, ClientHelloSummary) -> Void)? = nil) throws {
        let closed = self.closed
        let signal = self.signal
        listener = try Listener(bindingTo: .loopbackIPv4(port: 0), on: loop) { connection in
            let channel = ByteChannel(connection: connection, security: security())
            var record = ServerRecord()
            channel.start { event in
                switch event {
                case .clientHello(let hello):
                    record.clientHello = hello
                    if let decide { decide(channel, hello) } else { channel.continueHandshake() }
                case .established(let info):
                    record.established = true
                    record.tls = info
                    record.clientHello = channel.clientHello
                case .received(let bytes):
                    record.received += bytes
                    channel.write(bytes)
                case .readEOF(let end):
                    record.readEnd = end
                    channel.shutdownWrite()
                case .writable:
                    break
                case .closed(let error):
                    record.error = error
                    let finished = record
                    closed.withLock { $0.append(finished) }
                    signal.signal()
                }
            }
        }
    }

    /// The record of the next connection to close (waits up to a minute).
    func nextClosed() -> ServerRecord? {
        guard signal.wait(timeout: .now() + 60) == .success else { return nil }
        return closed.withLock { $0.removeFirst() }
    }

    func close() { listener.close() }
}

/// What a client channel saw.
struct ClientRecord: Sendable {
    var tls: TLSConnectionInfo?
    var received: [UInt8] = []
    var readEnd: ReadEnd?
    var error: TransportError?
    var connectError: WireError?
}

/// Client-side peers for channel tests.
enum ChannelClient {
    /// Connects with `security`, writes `payload`, half-closes, collects
    /// everything until the channel closes. Blocks the calling (test) thread.
    static func exchange(with address: SocketAddress, on loop: EventLoop, security: ChannelSecurity,
                         payload: [UInt8], then ending: Ending = .shutdownWrite) -> ClientRecord {
        let result = Locked(ClientRecord())
        let done = DispatchSemaphore(value: 0)
        Connection.connect(to: address, on: loop) { outcome in
            switch outcome {
            case .failure(let error):
                result.withLock { $0.connectError = error }
                done.signal()
            case .success(let connection):
                let channel = ByteChannel(connection: connection, security: security)
                var record = ClientRecord()
                channel.start { event in
                    switch event {
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
                channel.write(payload)
                switch ending {
                case .shutdownWrite:
                    channel.shutdownWrite()
                case .stayOpen:
                    break
                case .abortAfterSending:
                    // Runs after the flush the write scheduled, so the bytes leave first.
                    loop.execute { loop.execute { channel.abort() } }
                }
            }
        }
        _ = done.wait(timeout: .now() + 60)
        return result.current
    }

    enum Ending {
        /// Half-close after the payload; the peer's echo and FIN end the exchange.
        case shutdownWrite
        /// Keep the connection open until the peer closes it.
        case stayOpen
        /// Reset the connection right after the payload left.
        case abortAfterSending
    }
}

/// The first bytes of a real ClientHello for `example.test`, made by a TLS
/// client engine (no socket needed).
func sampleClientHello(serverName: String? = TestPKI.hostName) throws -> [UInt8] {
    let pki = try TestPKI.shared()
    let engine = try TLSEngine(context: pki.clientContext(), serverName: serverName)
    _ = engine.handshake()
    return engine.takeOutbound()
}
