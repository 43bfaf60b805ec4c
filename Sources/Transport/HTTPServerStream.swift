import HTTP
import Wire

/// A request received by an `HTTPServerConnection`, and the response to it.
///
/// The request head is known from the start (`request`, `requestWire`);
/// its body arrives as `.body`/`.end` events once a handler is installed
/// (`setHandler`, normally inside the connection's `.stream` event).
/// The owner answers with `sendHead` (interim 1xx heads first if it wants,
/// then one final head), `sendBody`, and `sendEnd` — every final head needs a
/// `sendEnd`, except a head that opens a tunnel (2xx to CONNECT, 101), after
/// which the owner calls `HTTPServerConnection.detachForTunnel`.
///
/// `Expect: 100-continue`: with `HTTPServerConnection.Configuration.automaticContinue`
/// (the default) the connection sends `100 Continue` as soon as the stream
/// wants its body — a handler installed and inbound not paused — unless a
/// response head went out first. A proxy that relays the origin's own 100
/// turns it off and sends the interim head itself.
public final class HTTPServerStream: HTTPStream, @unchecked Sendable {
    /// How the request body is delimited, in HTTP/1.1 terms, for passing it
    /// on: HTTP/1.1 gives the parsed framing; HTTP/2 `.none` when the HEADERS
    /// frame ended the stream, `.contentLength` when the field says, `.chunked`
    /// (length unknown) otherwise.
    public let requestBodyFraming: HTTP1Framing

    /// Whether the client asked for `100 Continue` before sending its body.
    public let expectsContinue: Bool

    /// The connection the request came on (for `detachForTunnel` after
    /// answering a CONNECT); nil once it is gone.
    public private(set) weak var connection: HTTPServerConnection?

    /// The final response head as the driver wrote it (HTTP/1.1: version,
    /// reason and fields of the serialized status line and field lines;
    /// HTTP/2: no reason), once sent. Read only on the loop.
    public private(set) var response: HTTPResponseHead?
    /// The final response head's wire form as sent. Read only on the loop.
    public private(set) var responseWire: HeadDigest.WireForm?

    /// The last response head (interim or final) as the driver wrote it. Read only on the loop.
    public private(set) var lastSentHead: HTTPResponseHead?

    /// The stream's driver as the server-role protocol it conforms to, so a response
    /// head needs no `as? any HTTPServerStreamDriver` (a runtime conformance
    /// lookup each time). Weak: `driver` alone holds the object, and drops
    /// it when the stream is released; used only while `driver` is set.
    private weak var serverDriver: (any HTTPServerStreamDriver)?

    /// Whether the client still waits for a 100 Continue (no response head went out yet).
    private(set) var continueOwed: Bool

    init(loop: EventLoop, streamID: Int, version: HTTPVersion, request: HTTPRequestHead,
         requestWire: HeadDigest.WireForm, requestBodyFraming: HTTP1Framing, expectsContinue: Bool,
         connection: HTTPServerConnection, driver: any HTTPServerStreamDriver) {
        self.connection = connection
        serverDriver = driver
        self.requestBodyFraming = requestBodyFraming
        self.expectsContinue = expectsContinue
        self.continueOwed = expectsContinue
        super.init(loop: loop, streamID: streamID, version: version, request: request,
                   requestWire: requestWire, driver: driver)
    }

    /// Sends a response head and returns its wire form as sent (HTTP/1.1:
    /// the serialized head bytes; HTTP/2: the header list). `framing` chooses
    /// the HTTP/1.1 body framing (nil: `Content-Length` when the head has one,
    /// else chunked; pass the parsed framing to reproduce a message);
    /// HTTP/2 ignores it. An HTTP/2 head is sent as HTTP/1.1 on an HTTP/1.1
    /// connection. Called only on the loop.
    @discardableResult
    public func sendHead(_ head: HTTPResponseHead, framing: HTTP1Framing? = nil) throws(TransportError) -> HeadDigest.WireForm {
        loop.preconditionOnLoop()
        _ = try writableDriver("response head")
        guard response == nil else { throw .invalidState("a second final response head") }
        guard let serverDriver else { throw .invalidState("the stream's driver is gone") }
        let interim = head.isInformational && head.status != 101
        let (sent, wire) = try serverDriver.sendHead(head, framing: framing, on: self)
        continueOwed = false
        lastSentHead = sent
        if !interim {
            response = sent
            responseWire = wire
        }
        return wire
    }

    /// Sends a whole response: the head (with `Content-Length` set when there
    /// are no trailers, it has none, and the status or method allows a body),
    /// the body (dropped for a HEAD, a 204 or a 304: `dropsOutboundBody`), and the end. Called only on the loop.
    public func respond(_ head: HTTPResponseHead, body: [UInt8] = [], trailers: HTTPFields? = nil) throws(TransportError) {
        var head = head
        let framing: HTTP1Framing?
        let bodiless = head.status == 204 || head.status == 304 || request.method == .head
        if trailers?.isEmpty == false {
            framing = .chunked
        } else if bodiless || head.fields.contains("content-length") || head.fields.contains("transfer-encoding") {
            framing = nil
        } else {
            framing = .contentLength(body.count)
            if version == .http2 { head.fields.append("content-length", String(body.count)) }
        }
        try sendHead(head, framing: framing)
        try sendBody(body)
        try sendEnd(trailers: trailers)
    }

    /// A response to HEAD, or a final 204 or 304, carries no body (RFC 9110 §6.4.1).
    override var dropsOutboundBody: Bool {
        if request.method == .head { return true }
        guard let status = response?.status else { return false }
        return status == 204 || status == 304
    }

    /// The driver's answer to the stream's demand may send `100 Continue`:
    /// never inside the owner's call, which may still pause or answer first.
    override var defersInboundWanted: Bool { continueOwed }

    /// Sends `100 Continue` if the client waits for it and no response head
    /// went out. Called by drivers when the stream starts wanting its body.
    func answerContinueIfOwed(automatic: Bool) {
        guard automatic, wantsInbound else { return }
        sendContinueIfOwed()
    }

    /// Sends `100 Continue` now if the client waits for it (it asked, and no
    /// response head went out yet); returns its wire form, nil when none was
    /// owed. A proxy whose next hop will not answer the expectation (HTTP/2
    /// origins send no 100: the body flows under flow control) calls this
    /// once that hop is ready for the body. Called only on the loop.
    @discardableResult
    public func sendContinueIfOwed() -> HeadDigest.WireForm? {
        loop.preconditionOnLoop()
        guard continueOwed else { return nil }
        continueOwed = false
        return try? sendHead(HTTPResponseHead(status: 100, version: request.version == .http2 ? .http2 : .http1_1))
    }
}
