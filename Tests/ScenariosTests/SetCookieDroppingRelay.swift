import Dispatch
import HTTP
import TLS
import Transport
import Wire

/// A test-only intermediary for the hop between two taps: an HTTPS relay on
/// Transport that passes every request and response through as it got them,
/// but for one known modification: it removes the `Set-Cookie` field that
/// sets `droppedCookie` from every response. Like any relay it leaves out
/// hop-by-hop fields (which the verifier ignores). Bodies are collected
/// whole: the sign-in flow's messages are small.
///
/// It presents a certificate for 127.0.0.1 minted by the CA in
/// `caDirectory` and trusts that CA for its upstream, as the taps do.
final class SetCookieDroppingRelay: Sendable {
    /// Fields that belong to one connection, not to the message.
    static let hopByHop: Set<String> = ["connection", "keep-alive", "proxy-connection", "te", "transfer-encoding", "upgrade"]

    private let group: EventLoopGroup
    private let server: HTTPServer
    private let client: HTTPClient

    /// Starts relaying what arrives on `socket` (listening on 127.0.0.1
    /// already; taken over) to https://127.0.0.1:`upstreamPort`.
    /// Blocks on disk I/O (the CA).
    init(socket: ListeningSocket, upstreamPort: Int, caDirectory: String, droppedCookie: String) throws {
        let authority = try CertificateAuthority.load(from: caDirectory)
        let upstream = HTTPEndpoint(host: "127.0.0.1", port: UInt16(upstreamPort),
                                    tls: try HTTPClientTLS(trustRoots: .caPEM(Array(authority.certificatePEM.utf8))))
        group = EventLoopGroup(loopCount: 1, label: "test-relay")
        let client = HTTPClient(loop: group.loops[0])
        self.client = client
        var configuration = HTTPServer.Configuration(address: socket.localAddress)
        configuration.tls = try HTTPServer.tlsSetup(identity: try authority.leaf(for: "127.0.0.1"))
        server = HTTPServer(group: group, configuration: configuration) { stream in
            SetCookieDroppingRelay.relay(stream, through: client, to: upstream, dropping: droppedCookie)
        }
        _ = try server.start(on: socket)
    }

    /// Forwards one exchange; called on the stream's loop.
    private static func relay(_ stream: HTTPServerStream, through client: HTTPClient, to upstream: HTTPEndpoint,
                              dropping droppedCookie: String) {
        stream.collectBody { collected in
            guard case let .success((body, _)) = collected else { return }
            var request = stream.request
            request.fields.removeAll { hopByHop.contains($0.lowercasedName) }
            client.send(request, body: body, to: upstream) { answered in
                stream.loop.execute {
                    switch answered {
                    case let .success(response):
                        var head = response.head
                        head.version = stream.version
                        head.fields.removeAll { field in
                            hopByHop.contains(field.lowercasedName)
                                || (field.lowercasedName == "set-cookie" && field.value.hasPrefix(droppedCookie + "="))
                        }
                        try? stream.respond(head, body: response.body, trailers: response.trailers)
                    case let .failure(error):
                        try? stream.respond(HTTPResponseHead(status: 502, fields: ["Content-Type": "text/plain"]),
                                            body: Array("test relay: \(error)\n".utf8))
                    }
                }
            }
        }
    }

    /// Stops listening and closes every connection; waits at most 10 s.
    func stop() {
        client.close()
        let done = DispatchSemaphore(value: 0)
        server.stop { done.signal() }
        _ = done.wait(timeout: .now() + 10)
    }
}
