import HTTP

/// The client side of a CONNECT exchange with a forward proxy, sans-io: the
/// request bytes to send, then the proxy's bytes in until it says whether the
/// tunnel is open. Interim responses are skipped; a 2xx opens the tunnel with
/// whatever bytes came after the response head (the start of the origin's
/// TLS ServerHello, rarely); any other status refuses it.
public struct ProxyConnectHandshake {
    /// What the bytes received so far decided.
    public enum Outcome: Equatable {
        case needMoreBytes
        /// The tunnel is open; `leftover` belongs to the tunnelled stream.
        case tunnel(leftover: [UInt8])
        case refused(HTTPResponseHead)
        case malformed(HTTP1ParseError)
    }

    /// `CONNECT authority HTTP/1.1` with a `Host` field, to send first.
    public let request: [UInt8]
    private var parser = HTTP1Parser(parsing: .response)

    /// `authorization` is sent as `Proxy-Authorization` (Basic credentials).
    /// Throws when `authority` cannot be a request target (spaces, control bytes).
    public init(authority: String, authorization: String? = nil) throws(HTTP1SerializerError) {
        var fields: HTTPFields = ["Host": authority]
        if let authorization { fields.append("Proxy-Authorization", authorization) }
        let head = HTTPRequestHead(method: "CONNECT", authority: authority, path: "", targetForm: .authority,
                                   fields: fields)
        var serializer = HTTP1Serializer()
        request = try serializer.writeRequestHead(head).bytes
        parser.expectResponse(to: "CONNECT")
    }

    /// Feeds the proxy's bytes; the outcome once it is known.
    public mutating func receive(_ bytes: [UInt8]) -> Outcome {
        parser.feed(bytes)
        do {
            while let event = try parser.next() {
                switch event {
                case .responseHead(let parsed) where parsed.isInterim:
                    continue
                case .responseHead(let parsed):
                    guard (200..<300).contains(parsed.head.status) else { return .refused(parsed.head) }
                case .tunnel(let leftover):
                    return .tunnel(leftover: leftover)
                case .requestHead, .body, .end:
                    continue
                }
            }
        } catch {
            return .malformed(error)
        }
        return .needMoreBytes
    }
}
