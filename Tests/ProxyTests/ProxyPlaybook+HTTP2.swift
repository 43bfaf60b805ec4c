import HTTP
import IntactTestSupport
import Transport
import Wire
import XCTest

/// HTTP/2 on both legs of the playbook: an origin of Transport's HTTP/2
/// server and a client connection of Transport's HTTP/2 client, both on the
/// playbook's network (a dial to a listener is a socket pair in memory).
extension ProxyPlaybook {
    /// Starts Transport's HTTP/2 server as `host`:`port` (a leaf of
    /// `originAuthority`), handing each stream to `handler`. Keep the result: it serves while it lives.
    func startHTTP2Origin(host: String, port: UInt16, handler: @escaping @Sendable (HTTPServerStream) -> Void) throws -> HTTPServer {
        let tls = try HTTPServer.tlsSetup(identity: originAuthority.leaf(for: host), protocols: .http2)
        let origin = HTTPServer(group: EventLoopGroup(loopCount: 1, label: "unused"),
                                configuration: HTTPServer.Configuration(address: .loopbackIPv4(port: port), tls: tls),
                                onStream: handler)
        _ = origin.start(on: network)
        return origin
    }

    /// An HTTP/2 client connection to the proxy, TLS for `serverName` trusting the proxy's CA.
    func connectHTTP2Client(serverName: String, file: StaticString = #filePath, line: UInt = #line) throws -> HTTPClientConnection {
        let tls = try HTTPClientTLS(trustRoots: .caFile(authority.certificatePath), protocols: .http2, serverName: serverName)
        let endpoint = HTTPEndpoint(host: "127.0.0.1", port: address.port, tls: tls, protocolChoice: .http2)
        let client = PlaybookBox<HTTPClientConnection?>(nil)
        HTTPClientConnection.connect(to: endpoint, on: loop, events: { _ in }, completion: { client.value = try? $0.get() })
        run()
        return try XCTUnwrap(client.value, "the client's TLS handshake with the proxy", file: file, line: line)
    }
}

/// A value the test's closures share. `@unchecked Sendable`: the playbook
/// runs everything on the test's thread.
final class PlaybookBox<Value>: @unchecked Sendable {
    var value: Value
    init(_ value: Value) { self.value = value }
}
