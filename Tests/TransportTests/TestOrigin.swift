import IntactTestSupport
import Foundation
import HTTP
import Hashing
import TLS
import Transport
import Wire

/// What the origin saw while streaming a large body under backpressure.
struct StreamingStats: Sendable {
    var sent = 0
    /// The most outbound bytes the stream held after any write.
    var maxPending = 0
    /// How many times the stream stopped because it was not writable.
    var blockedCount = 0
}

/// A loopback `HTTPServer` (TLS for `example.test` by default) with test routes:
/// - `GET /bytes/N`: N pattern bytes with Content-Length;
/// - `POST /sha256`: hashes the streamed request body, answers `hex count`;
/// - `POST /echo`: answers the request body;
/// - `GET /trailers`: a chunked body and an `x-checksum` trailer (its SHA-256);
/// - `GET /stream/N`: N bytes in 64 KiB chunks, written only while the stream is
///   writable (stats in `streaming`, `onBlocked` called each time it stops);
/// - `GET /wire`: the request's wire form as received, `--`, the response's as sent (see `render`);
/// - `GET /whoami`: the subject of the client certificate, or `nobody`;
/// - `POST /ignore-body`: 204 at once, without reading the request body;
/// - `GET /reset`: resets the stream with REFUSED_STREAM (HTTP/1.1: resets the connection);
/// - `GET /goaway`: closes the connection gracefully, then answers 200 (HTTP/2:
///   GOAWAY before the response; HTTP/1.1: `Connection: close`);
/// - `GET /version`: the HTTP version and stream id as text;
/// - anything else: 404.
final class TestOrigin: Sendable {
    let group: EventLoopGroup
    let server: HTTPServer
    let address: SocketAddress
    var port: UInt16 { address.port }
    /// Malformed requests the connections reported, in order.
    let malformed = Locked<[(HTTP1ParseError, Int?)]>([])
    /// Connections that became ready.
    let readyCount = Locked(0)
    let streaming = Locked(StreamingStats())
    let onBlocked = Locked<(@Sendable () -> Void)?>(nil)

    /// The chunk `/stream/N` repeats.
    static let streamChunk = patternBytes(64 * 1024, seed: 7)

    /// The origin, on loopback sockets; or with `network` on an embedded
    /// loop's in-memory network at 127.0.0.1:8443 (start it on that loop's
    /// thread; `stop()` then needs the loop run).
    init(tls: Bool = true, protocols: HTTPProtocolChoice = .negotiated, loopCount: Int = 2,
         clientCertificate: TLSClientCertificatePolicy = .none,
         connection: HTTPServerConnection.Configuration = HTTPServerConnection.Configuration(),
         network: EmbeddedNetwork? = nil) throws {
        group = EventLoopGroup(loopCount: network == nil ? loopCount : 1, label: "test-origin")
        var configuration = HTTPServer.Configuration(connection: connection)
        if network != nil { configuration.address = .loopbackIPv4(port: 8443) }
        if tls {
            configuration.tls = try HTTPServer.tlsSetup(identity: TestPKI.shared().serverIdentity, protocols: protocols,
                                                        clientCertificate: clientCertificate)
        } else {
            configuration.connection.protocolChoice = protocols
        }
        let malformed = self.malformed
        let readyCount = self.readyCount
        let streaming = self.streaming
        let onBlocked = self.onBlocked
        server = HTTPServer(group: group, configuration: configuration, onConnectionEvent: { _, event in
            switch event {
            case .ready: readyCount.withLock { $0 += 1 }
            case .malformedRequest(let error, let answer, _): malformed.withLock { $0.append((error, answer?.status.code)) }
            case .stream, .closed, .refusedStream: break
            }
        }, onStream: { stream in
            TestOrigin.route(stream, streaming: streaming, onBlocked: onBlocked)
        })
        let server = self.server
        address = try network.map { server.start(on: $0) } ?? server.start()
    }

    func stop() {
        let done = DispatchSemaphore(value: 0)
        server.stop { done.signal() }
        _ = done.wait(timeout: .now() + 10)
    }

    static func route(_ stream: HTTPServerStream, streaming: Locked<StreamingStats>,
                      onBlocked: Locked<(@Sendable () -> Void)?>) {
        let path = stream.request.path
        if path.hasPrefix("/bytes/"), let count = Int(path.dropFirst(7)) {
            stream.collectBody { _ in
                try? stream.respond(HTTPResponseHead(status: 200, fields: ["content-type": "application/octet-stream"]),
                                    body: patternBytes(count))
            }
        } else if path == "/sha256" {
            var hash = SHA256()
            var count = 0
            stream.setHandler { event in
                switch event {
                case .body(let bytes):
                    hash.update(bytes)
                    count += bytes.count
                case .end:
                    let text = Encoding.hex(hash.finalize()) + " \(count)"
                    try? stream.respond(HTTPResponseHead(status: 200), body: Array(text.utf8))
                default:
                    break
                }
            }
        } else if path == "/echo" {
            stream.collectBody(limit: 16 << 20) { result in
                guard case .success(let (body, _)) = result else { return }
                var head = HTTPResponseHead(status: 200)
                head.fields.append("x-request-method", stream.request.method.rawValue)
                try? stream.respond(head, body: body)
            }
        } else if path == "/trailers" {
            let body = patternBytes(5000, seed: 3)
            stream.collectBody { _ in
                try? stream.respond(HTTPResponseHead(status: 200, fields: ["trailer": "x-checksum"]), body: body,
                                    trailers: ["x-checksum": Encoding.hex(SHA256.hash(body))])
            }
        } else if path.hasPrefix("/stream/"), let total = Int(path.dropFirst(8)) {
            streamBody(stream, total: total, streaming: streaming, onBlocked: onBlocked)
        } else if path == "/wire" {
            stream.collectBody { _ in
                guard let responseWire = try? stream.sendHead(HTTPResponseHead(status: 200, fields: ["x-test": "Wire"])) else { return }
                try? stream.sendBody(Array((render(stream.requestWire) + "\n--\n" + render(responseWire)).utf8))
                try? stream.sendEnd()
            }
        } else if path == "/whoami" {
            stream.collectBody { _ in
                let subject = stream.connection?.channel.tlsInfo?.peerCertificate?.subject ?? "nobody"
                try? stream.respond(HTTPResponseHead(status: 200), body: Array(subject.utf8))
            }
        } else if path == "/ignore-body" {
            try? stream.respond(HTTPResponseHead(status: 204))
        } else if path == "/goaway" {
            stream.collectBody { _ in
                stream.connection?.close()
                try? stream.respond(HTTPResponseHead(status: 200), body: Array("going away".utf8))
            }
        } else if path == "/reset" {
            stream.reset(code: .refusedStream)
        } else if path == "/version" {
            stream.collectBody { _ in
                try? stream.respond(HTTPResponseHead(status: 200), body: Array("\(stream.version) \(stream.streamID)".utf8))
            }
        } else {
            stream.collectBody { _ in try? stream.respond(HTTPResponseHead(status: 404)) }
        }
    }

    /// Writes `total` bytes while the stream is writable, resuming on `.writable`.
    private static func streamBody(_ stream: HTTPServerStream, total: Int, streaming: Locked<StreamingStats>,
                                   onBlocked: Locked<(@Sendable () -> Void)?>) {
        var sent = 0
        var ended = false
        func writeMore() {
            while sent < total {
                guard stream.isWritable else {
                    streaming.withLock { $0.blockedCount += 1 }
                    onBlocked.current?()
                    return
                }
                let count = min(streamChunk.count, total - sent)
                try? stream.sendBody(count == streamChunk.count ? streamChunk : Array(streamChunk[..<count]))
                sent += count
                let pending = stream.pendingOutboundBytes
                streaming.withLock {
                    $0.sent = sent
                    $0.maxPending = max($0.maxPending, pending)
                }
            }
            if !ended {
                ended = true
                try? stream.sendEnd()
            }
        }
        stream.setHandler { event in
            if case .writable = event { writeMore() }
        }
        _ = try? stream.sendHead(HTTPResponseHead(status: 200, fields: ["content-length": String(total)]))
        writeMore()
    }
}

/// `curl` against a `TestOrigin` with the test CA and `example.test` resolved to loopback.
func curl(_ origin: TestOrigin, _ arguments: [String]) throws -> ToolRun {
    let pki = try TestPKI.shared()
    return try ToolRun.run("curl", ["-sS", "--max-time", "20", "--cacert", pki.caFile,
                        "--resolve", "\(TestPKI.hostName):\(origin.port):127.0.0.1"] + arguments, timeout: 30)
}

/// A wire form as text: HTTP/1.1 head bytes as they are, HTTP/2 fields one `name: value` per line.
func render(_ wire: HeadDigest.WireForm) -> String {
    switch wire {
    case .http1(let head): return String(latin1: head)
    case .http2(let fields): return fields.map { "\($0.name): \($0.value)" }.joined(separator: "\n")
    }
}
