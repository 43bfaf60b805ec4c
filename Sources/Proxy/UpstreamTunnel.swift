import HTTP
import Transport
import Wire

/// The upstream-connect step through an upstream proxy for a CONNECT the
/// proxy probes (and, for a passthrough host, relays): TCP to the upstream
/// proxy, `CONNECT target` (with its credentials), and its answer. The
/// result is a plaintext channel already started whose bytes after the
/// answer belong to the target (`leftover`), or the refusal as a
/// `ProxyError` naming the upstream proxy and its answer.
///
/// Loop-confined: created, run and completed on `loop`. Keeps itself alive
/// through the closures it hands out until it completes, once.
final class UpstreamTunnel: @unchecked Sendable {
    /// An open tunnel to the target.
    struct Opened {
        let channel: ByteChannel
        /// Bytes the upstream proxy sent after its 2xx, already the target's.
        let leftover: [UInt8]
    }

    private let target: UpstreamTarget
    private let proxy: HTTPProxyAddress
    private let loop: EventLoop
    private let location = ProxyError.Place.upstreamConnectViaProxy
    private var completion: ((Result<Opened, ProxyError>) -> Void)?
    private var timer: LoopTimer?

    private init(target: UpstreamTarget, proxy: HTTPProxyAddress, loop: EventLoop,
                 completion: @escaping (Result<Opened, ProxyError>) -> Void) {
        self.target = target
        self.proxy = proxy
        self.loop = loop
        self.completion = completion
    }

    /// Opens a tunnel to `target` through `proxy`; `completion` runs on `loop`, later, once.
    static func open(to target: UpstreamTarget, via proxy: HTTPProxyAddress, on loop: EventLoop, timeout: Duration,
                     completion: @escaping (Result<Opened, ProxyError>) -> Void) {
        let tunnel = UpstreamTunnel(target: target, proxy: proxy, loop: loop, completion: completion)
        Connection.connect(host: proxy.host, port: proxy.port, on: loop, timeout: timeout) { result in
            switch result {
            case .failure(let error):
                tunnel.finish(.failure(.connectError(
                    error, message: "connecting to upstream proxy \(proxy) failed: \(error)", at: tunnel.location)))
            case .success(let connection):
                tunnel.connected(connection, timeout: timeout)
            }
        }
    }

    private func connected(_ connection: Connection, timeout: Duration) {
        var handshake: ProxyConnectHandshake
        do {
            handshake = try ProxyConnectHandshake(authority: target.authority, authorization: proxy.authorization)
        } catch {
            connection.close()
            return finish(.failure(ProxyError(.internal, at: location, "\(error)", status: .proxyInternalError)))
        }
        let channel = ByteChannel(connection: connection, security: .plaintext)
        timer = loop.schedule(after: timeout) { [self] in
            channel.abort()
            finish(.failure(ProxyError(.timeout, at: location,
                                       "upstream proxy \(proxy) did not answer CONNECT \(target.authority) in time",
                                       status: .connectionTimeout)))
        }
        channel.start { [self] event in
            switch event {
            case .received(let bytes):
                switch handshake.receive(bytes) {
                case .needMoreBytes:
                    return
                case .tunnel(let leftover):
                    channel.setHandler { _ in }
                    channel.pauseReading()
                    finish(.success(Opened(channel: channel, leftover: leftover)))
                case .refused(let head):
                    channel.close()
                    finish(.failure(.upstreamProxyRefused(proxy: proxy.description, status: head.status.code,
                                                          reason: head.reason, at: location)))
                case .malformed(let error):
                    channel.close()
                    finish(.failure(ProxyError(.protocolError, at: location,
                                               "upstream proxy \(proxy) answered CONNECT with malformed HTTP: \(error)",
                                               status: .httpProtocolError, nextHop: proxy.description)))
                }
            case .readEOF, .closed:
                channel.close()
                finish(.failure(ProxyError(.closedEarly, at: location,
                                           "upstream proxy \(proxy) closed the connection before answering CONNECT",
                                           status: .connectionTerminated, nextHop: proxy.description)))
            case .clientHello, .established, .writable:
                return
            }
        }
        channel.write(handshake.request)
    }

    private func finish(_ result: Result<Opened, ProxyError>) {
        timer?.cancel()
        timer = nil
        guard let completion else { return }
        self.completion = nil
        completion(result)
    }
}
