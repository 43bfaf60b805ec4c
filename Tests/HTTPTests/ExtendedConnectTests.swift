import HTTP
import XCTest

/// RFC 8441 extended CONNECT: the translation to and from the HTTP/1.1
/// WebSocket handshake, and the HTTP/2 session carrying `:protocol` only
/// where SETTINGS_ENABLE_CONNECT_PROTOCOL allows it.
final class ExtendedConnectTests: XCTestCase {
    private let connect = HTTPRequestHead(method: "CONNECT", scheme: "https", authority: "chat.test", path: "/chat?room=1",
                                          version: .http2,
                                          fields: ["sec-websocket-version": "13", "sec-websocket-protocol": "chat",
                                                   "origin": "https://chat.test"],
                                          connectProtocol: "websocket")

    /// RFC 6455 §1.3's worked example.
    func testTheAcceptIsDerivedFromTheKeyAsRFC6455Says() {
        XCTAssertEqual(ExtendedConnect.webSocketAccept(key: "dGhlIHNhbXBsZSBub25jZQ=="), "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
        let key = ExtendedConnect.newWebSocketKey()
        XCTAssertEqual(key.count, 24)
        XCTAssertTrue(key.hasSuffix("=="))
        XCTAssertNotEqual(key, ExtendedConnect.newWebSocketKey())
    }

    func testAnExtendedConnectBecomesAGetWithUpgradeAndTheProxysKey() {
        let get = ExtendedConnect.http1Upgrade(connect, key: "dGhlIHNhbXBsZSBub25jZQ==")
        XCTAssertEqual(get.method, "GET")
        XCTAssertNil(get.connectProtocol)
        XCTAssertFalse(get.isExtendedConnect)
        XCTAssertEqual(get.path, "/chat?room=1")
        XCTAssertEqual(get.authority, "chat.test")
        XCTAssertEqual(get.targetForm, .origin)
        XCTAssertEqual(get.version, .http1_1)
        XCTAssertEqual(get.fields.map(\.name), ["sec-websocket-version", "sec-websocket-protocol", "origin",
                                                "Upgrade", "Connection", "Sec-WebSocket-Key"])
        XCTAssertEqual(get.fields["upgrade"], "websocket")
        XCTAssertEqual(get.fields["connection"], "Upgrade")
        XCTAssertEqual(get.fields["sec-websocket-key"], "dGhlIHNhbXBsZSBub25jZQ==")
    }

    func testThe101IsCheckedAgainstTheKeySent() {
        let sent = ExtendedConnect.http1Upgrade(connect, key: "dGhlIHNhbXBsZSBub25jZQ==")
        var ok = HTTPResponseHead(status: 101, fields: ["Upgrade": "websocket", "Connection": "Upgrade",
                                                        "Sec-WebSocket-Accept": "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=",
                                                        "Sec-WebSocket-Protocol": "chat"])
        XCTAssertNil(ExtendedConnect.problem(with: ok, to: sent))
        ok.fields.removeAll { $0.lowercasedName == "sec-websocket-accept" }
        ok.fields.append("Sec-WebSocket-Accept", "d3Jvbmc=")
        XCTAssertEqual(ExtendedConnect.problem(with: ok, to: sent)?.contains("does not match"), true)
        let other = HTTPResponseHead(status: 101, fields: ["Upgrade": "h2c", "Connection": "Upgrade"])
        XCTAssertEqual(ExtendedConnect.problem(with: other, to: sent)?.contains("\"h2c\""), true)
    }

    func testThe101BecomesA200WithoutTheHTTP1HandshakeFields() {
        let switched = HTTPResponseHead(status: 101, fields: ["Upgrade": "websocket", "Connection": "Upgrade, X-Hop",
                                                              "X-Hop": "1", "Sec-WebSocket-Accept": "abc",
                                                              "Sec-WebSocket-Protocol": "chat"])
        let accepted = ExtendedConnect.acceptedResponse(switched)
        XCTAssertEqual(accepted.status, 200)
        XCTAssertEqual(accepted.version, .http2)
        XCTAssertEqual(accepted.fields.map(\.name), ["Sec-WebSocket-Protocol"])
    }

    /// A server that enables the protocol: the client learns it from SETTINGS,
    /// its CONNECT arrives with `:protocol`, `:scheme` and `:path`, and DATA
    /// flows both ways on the stream.
    func testTheSessionCarriesProtocolWhenTheServerAllowsIt() throws {
        var server = HTTP2Configuration()
        server.enableConnectProtocol = true
        let pair = HTTP2Pair(server: server)
        XCTAssertFalse(pair.client.peerAllowsExtendedConnect, "nothing is known before the server's SETTINGS")
        XCTAssertFalse(pair.client.peerSettingsReceived)
        try pair.pump()
        XCTAssertTrue(pair.client.peerSettingsReceived)
        XCTAssertTrue(pair.client.peerAllowsExtendedConnect)
        let id = try pair.client.sendRequest(connect, endStream: false)
        try pair.pump()
        let head = try XCTUnwrap(pair.serverEvents.lazy.compactMap { event -> HTTPRequestHead? in
            if case .requestHead(id, let head, _) = event { return head }
            return nil
        }.first)
        XCTAssertEqual(head.method, "CONNECT")
        XCTAssertEqual(head.connectProtocol, "websocket")
        XCTAssertEqual(head.scheme, "https")
        XCTAssertEqual(head.path, "/chat?room=1")
        XCTAssertEqual(head.authority, "chat.test")
        XCTAssertEqual(head.targetForm, .origin)
        try pair.server.sendResponse(stream: id, head: HTTPResponseHead(status: 200, version: .http2), endStream: false)
        try pair.server.sendData(stream: id, bytes: Array("from server".utf8), endStream: false)
        try pair.client.sendData(stream: id, bytes: Array("from client".utf8), endStream: false)
        try pair.pump()
        XCTAssertTrue(pair.clientEvents.contains(.data(stream: id, bytes: Array("from server".utf8))))
        XCTAssertTrue(pair.serverEvents.contains(.data(stream: id, bytes: Array("from client".utf8))))
    }

    /// A server that did not enable it (the default) refuses `:protocol`: the
    /// stream is reset, its reason naming the field.
    func testAServerThatDidNotEnableItResetsTheStream() throws {
        let pair = HTTP2Pair()
        try pair.pump()
        XCTAssertFalse(pair.client.peerAllowsExtendedConnect)
        let id = try pair.client.sendRequest(connect, endStream: false)
        try pair.pump()
        XCTAssertFalse(pair.serverEvents.contains { if case .requestHead = $0 { return true } else { return false } })
        let reset = try XCTUnwrap(pair.serverEvents.lazy.compactMap { event -> HTTP2StreamReset? in
            if case .streamReset(let reset) = event, reset.stream == id { return reset }
            return nil
        }.first)
        XCTAssertEqual(reset.code, .protocolError)
        XCTAssertTrue(reset.reason?.contains(":protocol") == true, "\(reset)")
    }

    /// The semantic digest tells an extended CONNECT from a plain CONNECT.
    func testTheSemanticDigestNamesTheProtocol() {
        var plain = connect
        plain.connectProtocol = nil
        let a = HeadDigest(request: connect, wire: .http2Request(connect), connectionScheme: "https", using: .sha256)
        let b = HeadDigest(request: plain, wire: .http2Request(plain), connectionScheme: "https", using: .sha256)
        XCTAssertNotEqual(a.semantic, b.semantic)
    }
}
