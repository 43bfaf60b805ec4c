import HTTP
import Wire

/// A whole response as `HTTPClient.send` collected it.
public struct HTTPClientResponse: Sendable {
    /// The request head as it was sent (with the `Host`, authority and scheme filled in).
    public var request: HTTPRequestHead
    public var requestWire: HeadDigest.WireForm
    /// Interim (1xx) heads, in order.
    public var interim: [HTTPResponseHead]
    public var head: HTTPResponseHead
    /// The final head's wire form as received.
    public var wire: HeadDigest.WireForm
    /// The body as it arrived, chunk by chunk.
    public var bodyChunks: [[UInt8]]
    public var trailers: HTTPFields?
    /// The version the exchange travelled in.
    public var version: HTTPVersion

    /// The whole body.
    public var body: [UInt8] { bodyChunks.flatMap { $0 } }
}

/// An HTTP client for the client simulator and tests: sends requests to
/// endpoints (TLS with SNI and ALPN, optionally through a forward proxy) over
/// pooled keep-alive connections on one loop.
///
/// `send` suits small bodies: it sends the body at once and gathers the
/// response. For streaming, use `pool.openStream` on the loop.
public final class HTTPClient: Sendable {
    public let loop: EventLoop
    /// The connections, for streaming requests. Use only on `loop`.
    public let pool: HTTPClientPool

    public init(loop: EventLoop = EventLoop(label: "intact.http.client"),
                configuration: HTTPClientPool.Configuration = HTTPClientPool.Configuration()) {
        self.loop = loop
        self.pool = HTTPClientPool(loop: loop, configuration: configuration)
    }

    /// Sends `head` with `body` to `endpoint` and collects the response.
    /// When missing, the head gets the endpoint's authority and scheme, a
    /// `Host` field, and a `Content-Length` framing for a non-empty body.
    /// `completion` runs on the loop. Callable from any thread.
    public func send(_ head: HTTPRequestHead, body: [UInt8] = [], to endpoint: HTTPEndpoint,
                     completion: @escaping @Sendable (Result<HTTPClientResponse, TransportError>) -> Void) {
        loop.execute { [self] in
            sendOnLoop(head, body: body, to: endpoint, completion: completion)
        }
    }

    /// `send` for async callers.
    public func send(_ head: HTTPRequestHead, body: [UInt8] = [], to endpoint: HTTPEndpoint) async throws -> HTTPClientResponse {
        try await withCheckedThrowingContinuation { continuation in
            send(head, body: body, to: endpoint) { continuation.resume(with: $0) }
        }
    }

    /// Closes the pooled connections: gracefully, or reset at once when
    /// `resetting` (a request given up on). Callable from any thread.
    public func close(resetting: Bool = false) {
        loop.execute { [self] in pool.close(resetting: resetting) }
    }

    /// The head completed with what `send` promises to fill in.
    static func prepared(_ head: HTTPRequestHead, bodyCount: Int, for endpoint: HTTPEndpoint) -> (HTTPRequestHead, HTTP1Framing?) {
        var head = head
        if head.authority == nil { head.authority = head.fields["host"] ?? endpoint.authority }
        if head.scheme == nil { head.scheme = endpoint.scheme }
        if !head.fields.contains("host"), let authority = head.authority { head.fields.append("Host", authority) }
        let declared = head.fields.contains("content-length") || head.fields.contains("transfer-encoding")
        let framing: HTTP1Framing? = declared ? nil : (bodyCount == 0 ? HTTP1Framing.none : .contentLength(bodyCount))
        return (head, framing)
    }

    private func sendOnLoop(_ head: HTTPRequestHead, body: [UInt8], to endpoint: HTTPEndpoint,
                            completion: @escaping @Sendable (Result<HTTPClientResponse, TransportError>) -> Void) {
        let (head, framing) = HTTPClient.prepared(head, bodyCount: body.count, for: endpoint)
        let collector = ResponseCollector(completion: completion)
        pool.openStream(to: endpoint, head, framing: framing, handler: { event in collector.handle(event) }) { result in
            switch result {
            case .failure(let error):
                collector.finish(.failure(error))
            case .success(let stream):
                collector.stream = stream
                do throws(TransportError) {
                    try stream.sendBody(body)
                    if stream.outbound == .open { try stream.sendEnd() }
                } catch {
                    stream.reset()
                    collector.finish(.failure(error))
                }
            }
        }
    }
}

/// Gathers one response for `HTTPClient.send`; completes once. Used only on the client's loop.
private final class ResponseCollector {
    var stream: HTTPClientStream?
    private var interim: [HTTPResponseHead] = []
    private var response: (head: HTTPResponseHead, wire: HeadDigest.WireForm)?
    private var chunks: [[UInt8]] = []
    private var completion: (@Sendable (Result<HTTPClientResponse, TransportError>) -> Void)?

    init(completion: @escaping @Sendable (Result<HTTPClientResponse, TransportError>) -> Void) {
        self.completion = completion
    }

    func handle(_ event: HTTPStreamEvent) {
        switch event {
        case .interimResponse(let head, _):
            interim.append(head)
        case .response(let head, let wire):
            response = (head, wire)
        case .body(let bytes):
            chunks.append(bytes)
        case .end(let trailers):
            guard let response, let stream else {
                finish(.failure(.invalidState("the response ended without a head")))
                return
            }
            finish(.success(HTTPClientResponse(request: stream.request, requestWire: stream.requestWire,
                                               interim: interim, head: response.head, wire: response.wire,
                                               bodyChunks: chunks, trailers: trailers, version: stream.version)))
        case .failed(let error):
            finish(.failure(error))
        case .writable:
            break
        }
    }

    func finish(_ result: Result<HTTPClientResponse, TransportError>) {
        let completion = self.completion
        self.completion = nil
        completion?(result)
    }
}
