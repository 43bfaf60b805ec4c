import HTTP
import Wire

/// A request sent by an `HTTPClientConnection`, and the response to it.
///
/// The request head went out when the stream was opened (`requestWire` is
/// its wire form as sent). The owner sends the body with `sendBody` and ends
/// it with `sendEnd`, unless the head already ended the message (framing
/// with no body). The response arrives as `.interimResponse`* then
/// `.response`, `.body`*, `.end` events to the handler given at opening.
public final class HTTPClientStream: HTTPStream, @unchecked Sendable {
    /// The final response head, once received. Read only on the loop.
    public internal(set) var response: HTTPResponseHead?
    /// Its wire form as received. Read only on the loop.
    public internal(set) var responseWire: HeadDigest.WireForm?
    /// The connection the request went out on (its TLS details, its channel's
    /// id and addresses, for a record of the upstream leg); nil once it is gone.
    public private(set) weak var connection: HTTPClientConnection?

    init(loop: EventLoop, streamID: Int, version: HTTPVersion, request: HTTPRequestHead,
         requestWire: HeadDigest.WireForm, connection: HTTPClientConnection, driver: any HTTPStreamDriver) {
        self.connection = connection
        super.init(loop: loop, streamID: streamID, version: version, request: request,
                   requestWire: requestWire, driver: driver)
    }

    /// The driver received the final response head.
    func receiveResponse(_ head: HTTPResponseHead, wire: HeadDigest.WireForm) {
        response = head
        responseWire = wire
        receive(.response(head, wire: wire))
    }
}
