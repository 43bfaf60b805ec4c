import Foundation
import HTTP
import Transport
import Wire

/// A minimal forward proxy for tests: answers `CONNECT` with 200, takes the
/// channel back with `detachForTunnel`, and relays raw bytes both ways to
/// `target` (whatever host the CONNECT named). Other requests get 405.
final class TunnelProxy: Sendable {
    let group = EventLoopGroup(loopCount: 1, label: "tunnel-proxy")
    let server: HTTPServer
    let port: UInt16
    /// The authority of every CONNECT, in order.
    let connectTargets = Locked<[String]>([])

    init(target: SocketAddress) throws {
        let targets = connectTargets
        server = HTTPServer(group: group) { stream in
            guard stream.request.method == "CONNECT" else {
                stream.collectBody { _ in try? stream.respond(HTTPResponseHead(status: 405)) }
                return
            }
            targets.withLock { $0.append(stream.request.authority ?? "") }
            stream.setHandler { _ in }
            Connection.connect(to: target, on: stream.loop) { result in
                guard case .success(let upstream) = result, let connection = stream.connection else {
                    stream.reset()
                    return
                }
                _ = try? stream.sendHead(HTTPResponseHead(status: 200))
                let channel = connection.channel
                guard let leftover = try? connection.detachForTunnel(handler: { event in
                          switch event {
                          case .received(let bytes): upstream.write(bytes)
                          case .readEOF: upstream.shutdownWrite()
                          case .closed: upstream.close()
                          case .clientHello, .established, .writable: break
                          }
                      }) else {
                    upstream.close()
                    return
                }
                upstream.start { event in
                    switch event {
                    case .received(let bytes): channel.write(bytes)
                    case .readEOF: channel.shutdownWrite()
                    case .closed: channel.close()
                    case .writable: break
                    }
                }
                if !leftover.isEmpty { upstream.write(leftover) }
            }
        }
        port = try server.start().port
    }

    func stop() {
        let done = DispatchSemaphore(value: 0)
        server.stop { done.signal() }
        _ = done.wait(timeout: .now() + 10)
    }
}
