import Hashing

/// RFC 8441 extended CONNECT (HTTP/2's way to open a WebSocket, `:method
/// CONNECT` with `:protocol websocket`) and its HTTP/1.1 counterpart, the
/// `Upgrade` handshake of RFC 6455, as a proxy translates one into the other.
///
/// RFC 8441 §5: the HTTP/2 side carries no `Sec-WebSocket-Key` or
/// `Sec-WebSocket-Accept`; the proxy makes the key for the HTTP/1.1 leg and
/// checks the accept the origin derives from it. `Sec-WebSocket-Version`,
/// `-Protocol` and `-Extensions` go through as they are.
public enum ExtendedConnect {
    /// RFC 6455 §1.3: the GUID the accept value is derived with.
    static let webSocketGUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

    /// The HTTP/1.1 request an extended CONNECT becomes: `GET` of the same
    /// path and authority with `Upgrade: <protocol>`, `Connection: Upgrade`
    /// and, for `websocket`, `Sec-WebSocket-Key: key`; every other field as
    /// it was. `head` must be an extended CONNECT.
    public static func http1Upgrade(_ head: HTTPRequestHead, key: String) -> HTTPRequestHead {
        precondition(head.isExtendedConnect, "not an extended CONNECT")
        let token = head.connectProtocol ?? ""
        var fields = head.fields
        fields.remove(.secWebSocketKey)
        fields.append("Upgrade", token)
        fields.append("Connection", "Upgrade")
        if isWebSocket(token) { fields.append("Sec-WebSocket-Key", key) }
        return HTTPRequestHead(method: .get, scheme: head.scheme, authority: head.authority,
                               path: head.path.isEmpty ? "/" : head.path, targetForm: .origin,
                               version: .http1_1, fields: fields)
    }

    /// A fresh `Sec-WebSocket-Key`: 16 random bytes, base64 (RFC 6455 §4.1).
    public static func newWebSocketKey() -> String {
        Encoding.base64(SecureRandom.bytes(16))
    }

    /// The `Sec-WebSocket-Accept` an origin answers `key` with (RFC 6455 §4.2.2).
    public static func webSocketAccept(key: String) -> String {
        Encoding.base64(SHA1.hash(Array((key + webSocketGUID).utf8)))
    }

    /// Whether an upgrade token names the WebSocket protocol (tokens are case-insensitive).
    public static func isWebSocket(_ token: String) -> Bool {
        HTTPField.lowercaseASCII(token) == "websocket"
    }

    /// Why the origin's `101` does not complete the HTTP/1.1 handshake that
    /// `sent` (the translated request) began, nil when it does: it must
    /// switch to the protocol asked for and, for a WebSocket, carry the
    /// accept derived from the key sent.
    public static func problem(with response: HTTPResponseHead, to sent: HTTPRequestHead) -> String? {
        guard let asked = sent.fields[.upgrade] else { return "the request asked for no upgrade" }
        guard let switched = response.fields[.upgrade],
              HTTPField.lowercaseASCII(switched) == HTTPField.lowercaseASCII(asked) else {
            return "101 switched to \"\(response.fields[.upgrade] ?? "")\", not the \"\(asked)\" asked for"
        }
        guard isWebSocket(asked), let key = sent.fields[.secWebSocketKey] else { return nil }
        let expected = webSocketAccept(key: key)
        guard response.fields[.secWebSocketAccept] == expected else {
            return "Sec-WebSocket-Accept \"\(response.fields[.secWebSocketAccept] ?? "")\" does not match "
                + "the key the proxy sent (expected \"\(expected)\")"
        }
        return nil
    }

    /// The `200` an HTTP/2 client gets for the origin's `101` (RFC 8441 §5):
    /// the same fields without the HTTP/1.1 handshake's own (`Upgrade`,
    /// `Connection` and what it names, `Sec-WebSocket-Accept`).
    public static func acceptedResponse(_ response: HTTPResponseHead) -> HTTPResponseHead {
        var named: Set<HTTPField.Name> = [.upgrade, .connection, .secWebSocketAccept]
        for value in response.fields.values(.connection) {
            for token in value.split(separator: ",") {
                named.insert(HTTPField.Name(token.trimmingSpacesAndTabs()))
            }
        }
        var fields = response.fields
        fields.removeAll { named.contains(HTTPField.Name($0.name)) }
        return HTTPResponseHead(status: .ok, reason: nil, version: .http2, fields: fields)
    }
}
