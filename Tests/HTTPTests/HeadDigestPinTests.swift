import Hashing
import HTTP
import XCTest

/// Pins every output of `HeadDigest` and `BodyDigest.TrailersDigest`, byte
/// for byte, under plain SHA-256 and under HMAC-SHA-256 with a fixed key,
/// over heads chosen to reach every path of the digest code: both wire
/// forms, each request target kind, every hop-by-hop rule (fixed names,
/// `Connection` tokens with OWS, empty tokens and odd case, names it lists
/// that the form would keep or leave out anyway), repeated names in mixed
/// case, names sorting around the letters (`_`, `[`, `` ` ``), names longer
/// than a small string, cookie crumbs, ISO-8859-1 and non-Latin-1 text.
///
/// The pinned values were taken from the implementation before the head
/// digest was made cheaper (issue 12); a recording made by any build must
/// keep comparing equal with one made by another, so these never change
/// unless the canonical form's version does.
final class HeadDigestPinTests: XCTestCase {
    /// HMAC-SHA-256 under the key 0, 1, …, 31.
    private static let keyed = SecretDigester(key: (0..<32).map { UInt8($0) }).digests

    /// Every output of a head digest as text, one line each, so a failing
    /// pin shows what changed.
    static func rendering(_ digest: HeadDigest) -> String {
        var lines = ["exact \(digest.exact)", "semantic \(digest.semantic)", "target \(digest.target?.hex ?? "-")"]
        for (name, value) in digest.fields { lines.append("field \(name) \(value)") }
        lines.append("hop-by-hop \(digest.hopByHop.joined(separator: ","))")
        lines.append("names \(digest.fieldNames.joined(separator: "|"))")
        lines.append("wire \(digest.wireLength) \(digest.version) \(digest.method ?? "-") \(digest.targetForm.map { "\($0)" } ?? "-")"
            + " \(digest.status.map(String.init) ?? "-") \(digest.reasonPhrase ?? "-")")
        return lines.joined(separator: "\n")
    }

    /// The ISO-8859-1 wire bytes of head lines, each ended by CRLF.
    static func wire(_ lines: [String]) -> HeadDigest.WireForm {
        .http1(head: lines.flatMap { ($0 + "\r\n").latin1Bytes })
    }

    static func fields(_ pairs: [(String, String)]) -> HTTPFields {
        HTTPFields(pairs.map { HTTPField(name: $0.0, value: $0.1) })
    }

    /// The token POST of the sign-in flow, through the parser.
    static func parsedTokenPost() -> (HTTPRequestHead, HeadDigest.WireForm) {
        let text = "POST /suite/mobileAuthTokenConsumer HTTP/1.1\r\nHost: intact.example.test:8443\r\n"
            + "User-Agent: IntactClient/0.1 (Linux; mobile simulator)\r\nAccept: application/json\r\n"
            + "Accept-Language: en-US,en;q=0.9\r\nContent-Type: application/x-www-form-urlencoded\r\n"
            + "Content-Length: 5\r\nCookie: __intactLoginTx=4f1c2a; JSESSIONID=node01abc\r\n"
            + "Intact-Trace: run-7f3a-0009\r\nX-Forwarded-For: 127.0.0.1\r\nConnection: keep-alive\r\n\r\nabcde"
        var parser = HTTP1Parser(parsing: .request)
        parser.feed(Array(text.utf8))
        guard case .requestHead(let parsed)? = (try? parser.parseAvailable())?.first else {
            fatalError("the token POST does not parse")
        }
        return (parsed.head, .http1(head: parsed.rawHead))
    }

    static let nginxFields = fields([
        ("Server", "nginx/1.22.1"), ("Date", "Tue, 01 Dec 2026 16:00:00 GMT"), ("Content-Type", "application/octet-stream"),
        ("Content-Length", "1024"), ("Last-Modified", "Tue, 01 Dec 2026 15:59:00 GMT"), ("Connection", "keep-alive"),
        ("ETag", "\"692dba2c-400\""), ("Accept-Ranges", "bytes"),
    ])

    /// Names that sort around the letters and across case, long names, Latin-1 and other text.
    static let zooFields = fields([
        ("Zeta", "z"), ("_under", "u"), ("[br", "b"), ("`tick", "t"), ("x-a", "1"), ("X-A", "2"), ("x-a-b", "3"),
        ("x", ""), ("a-very-long-field-name-over-fifteen", "long"), ("A-VERY-LONG-FIELD-NAME-OVER-FIFTEEN-b", "longer"),
        ("accept-encoding", "gzip"), ("Accept-EncodinG", "br"), ("X-\u{C9}t\u{E9}", "caf\u{E9}"), ("x-\u{E9}t\u{E9}", "\u{FF}"),
        ("X-\u{263A}", "\u{263A} smile"), ("Empty", ""), ("Spaces", "  a  b  "), ("COOKIE", "A=1"), ("cookie", "b=2"),
        ("Cookie", "c=3; d=4"), ("Host", "first.test"), ("HOST", "second.test"),
    ])

    /// Every hop-by-hop rule at once.
    static let hopFields = fields([
        ("Connection", " , X-Hop ,\tKEEP-alive,,"), ("Keep-Alive", "t=5"), ("TE", "trailers"), ("Upgrade", "h2c"),
        ("Transfer-Encoding", "chunked"), ("Proxy-Connection", "close"), ("HTTP2-Settings", "AAMAAABkAAQAAP__"),
        ("connection", "Cookie, Content-Length, vary, host"), ("x-hop", "1"), ("X-Hop", "2"), ("Vary", "a"),
        ("Cookie", "a=1"), ("Host", "h.test"), ("Content-Length", "0"), ("content-length", "0"), ("X-Kept", "k"),
    ])

    /// The heads pinned: a name and the digest of that head under a function.
    static let heads: [(name: String, digest: @Sendable (DigestFunction) -> HeadDigest)] = [
        ("token POST, HTTP/1.1 as parsed", { function in
            let (head, wire) = parsedTokenPost()
            return HeadDigest(request: head, wire: wire, connectionScheme: "https", using: function)
        }),
        ("token POST, as HTTP/2 sends it", { function in
            let (head, _) = parsedTokenPost()
            return HeadDigest(request: head, wire: .http2Sent(request: head), connectionScheme: "https", using: function)
        }),
        ("GET, one field", { function in
            let head = HTTPRequestHead(method: "GET", path: "/1k", fields: ["Host": "localhost:8443"])
            return HeadDigest(request: head, wire: wire(["GET /1k HTTP/1.1", "Host: localhost:8443"]),
                              connectionScheme: "https", using: function)
        }),
        ("nginx 200, HTTP/1.1", { function in
            let head = HTTPResponseHead(status: 200, fields: nginxFields)
            return HeadDigest(response: head, wire: wire(["HTTP/1.1 200 OK"] + nginxFields.map { "\($0.name): \($0.value)" }),
                              using: function)
        }),
        ("nginx 200, HTTP/2 list", { function in
            let head = HTTPResponseHead(status: 200, version: .http2, fields: nginxFields)
            return HeadDigest(response: head, wire: .http2Response(head), using: function)
        }),
        ("nginx 200, as HTTP/2 sends it", { function in
            let head = HTTPResponseHead(status: 200, version: .http2, fields: nginxFields)
            return HeadDigest(response: head, wire: .http2Sent(response: head), using: function)
        }),
        ("HTTP/2 request with cookie crumbs", { function in
            let head = HTTPRequestHead(method: "GET", scheme: "https", authority: "app.test", path: "/a?b=c", version: .http2,
                                       fields: fields([("user-agent", "t"), ("cookie", "a=1"), ("accept", "x"),
                                                       ("cookie", "b=2"), ("cookie", "c=3")]))
            return HeadDigest(request: head, wire: .http2Request(head), connectionScheme: "http", using: function)
        }),
        ("extended CONNECT", { function in
            let head = HTTPRequestHead(method: "CONNECT", scheme: "https", authority: "ws.test", path: "/chat", version: .http2,
                                       fields: fields([("sec-websocket-version", "13"), ("origin", "https://ws.test")]),
                                       connectProtocol: "websocket")
            return HeadDigest(request: head, wire: .http2Request(head), connectionScheme: "https", using: function)
        }),
        ("CONNECT, authority form", { function in
            let head = HTTPRequestHead(method: "CONNECT", authority: "Tunnel.Test:443", path: "", targetForm: .authority,
                                       fields: ["Host": "tunnel.test:443", "Proxy-Authorization": "Basic eDp5"])
            return HeadDigest(request: head, wire: wire(["CONNECT Tunnel.Test:443 HTTP/1.1", "Host: tunnel.test:443",
                                                         "Proxy-Authorization: Basic eDp5"]),
                              connectionScheme: "http", using: function)
        }),
        ("name zoo, absolute form, HTTP/1.1", { function in
            let head = HTTPRequestHead(method: "PUT", scheme: "HTTP", authority: "Mixed.Case:8080", path: "/z?q=1",
                                       targetForm: .absolute, fields: zooFields)
            return HeadDigest(request: head, wire: wire(["PUT http://Mixed.Case:8080/z?q=1 HTTP/1.1"]
                                                            + zooFields.map { "\($0.name): \($0.value)" }),
                              connectionScheme: "https", using: function)
        }),
        ("name zoo, HTTP/2 list, Host for authority", { function in
            let head = HTTPRequestHead(method: "PUT", path: "/z", version: .http2, fields: zooFields)
            return HeadDigest(request: head, wire: .http2Request(head), connectionScheme: "HTTPS", using: function)
        }),
        ("hop-by-hop zoo, response", { function in
            let head = HTTPResponseHead(status: 299, reason: "Odd", fields: hopFields)
            return HeadDigest(response: head, wire: wire(["HTTP/1.1 299 Odd"] + hopFields.map { "\($0.name): \($0.value)" }),
                              using: function)
        }),
        ("hop-by-hop zoo, request as HTTP/2 sends it", { function in
            let head = HTTPRequestHead(method: "POST", path: "/h", fields: hopFields)
            return HeadDigest(request: head, wire: .http2Sent(request: head), connectionScheme: "https", using: function)
        }),
        ("no fields, no authority", { function in
            let head = HTTPRequestHead(method: "OPTIONS", path: "*", targetForm: .asterisk)
            return HeadDigest(request: head, wire: .http1(head: []), connectionScheme: "HTTPS", using: function)
        }),
        ("101, no fields", { function in
            let head = HTTPResponseHead(status: 101, reason: "Switching Protocols")
            return HeadDigest(response: head, wire: wire(["HTTP/1.1 101 Switching Protocols"]), using: function)
        }),
    ]

    /// SHA-256 of `rendering(_:)` per head, as (plain SHA-256, HMAC-SHA-256).
    static let pinned: [String: (plain: String, keyed: String)] = [
        "token POST, HTTP/1.1 as parsed": ("152b342044336022251237a923cb25a84cb3afc2f610f184e870894cc34db383",
                                           "dec0d643c39aca349faa9adbe685102fdcdd9902a446e8ec1336ee76f8f5357a"),
        "token POST, as HTTP/2 sends it": ("8241d0544d0e303aaa6faebf878e9ad5f13ae967d1fb91f6d83b8f009180b79b",
                                           "c840418cd74c5078e07e875f665617eb2774fa5da16492e0a54bb5b2ff3de290"),
        "GET, one field": ("c61beac1f6d772558a365cbba59a23c830c6316fc3dd344457a721be2f687352",
                           "7c19b4f8851e81c6ee6d64803dec950d041ba6582132c93ebd4abcadd2800dd1"),
        "nginx 200, HTTP/1.1": ("8f08ceec623cbf6ae5f6b5e15b0c12fd6abc7c9b6d49a9209c9725a55600b2f6",
                                "5fe7994d614b5d22e1d6ca866c58ee84e8e165e9c6c4f0e3e2c5f8d0abad0a60"),
        "nginx 200, HTTP/2 list": ("0147b1cec333ef6caf68898a1284f47e059aa20b1659009fcf29d8e7f33ffb04",
                                   "7e83f517c1b0b818639b7aa72dd6108003e33047611e2c198e0dc11a45aab6a9"),
        "nginx 200, as HTTP/2 sends it": ("21f4b7fce40cf5db4c95da3b51466a79f5ec0e341b39dc4cfe9acd08e7068b93",
                                          "6f9d7891c5ae7838947cf9f9307b0da3a31515416a14b3dbfbe3e43d86d0914b"),
        "HTTP/2 request with cookie crumbs": ("711b5f2004549b4541c0ebcee66a66f9071b38ed1f4d0f4326d6d20642b85974",
                                              "7f9dfc31f8fea64080fa37dad081242541e8d1b98ba8ec5186cad83d9376da7c"),
        "extended CONNECT": ("0a27cd4b7583d0863c72bc7d3e93f387fed735a5b9765f3fff29604e5388e008",
                             "da4fac700a1f9ba506fcd1759de1353a057695dbdf34166aca2eba845caac624"),
        "CONNECT, authority form": ("70c689c51815cdd6ca18d8f68308682d42ed2d37a85690ff81aa5cb811ea4c85",
                                    "46ddedc5632064682e5cbea124de81fc8f37f89bf7b5f04cdd2b535736368c24"),
        "name zoo, absolute form, HTTP/1.1": ("0e181a4bc9fb38c4786b7881e7669c75f152bc01f3a56d99cb6902088258a6f4",
                                              "1af514ecf3a6a6794016f4703b92476dd30fcc8179c9dfe1e24ef47fc463b70f"),
        "name zoo, HTTP/2 list, Host for authority": ("a91c4a22478cd279211a4cb96c7da3a9905b2b0acf348c50a1bed5848e7a8b8c",
                                                      "fb5046d273233606489398046586791d7811ddab0480c6043ed55310dca23b18"),
        "hop-by-hop zoo, response": ("c1af6335eec04707db7e5bbc46dd58a390db3e50c4efc01d1d6af31770f22f53",
                                     "7844ba5a3d0ab1a970b75dbf1d4c9b67843ae47db09f2e3c7be945b9a2bc5201"),
        "hop-by-hop zoo, request as HTTP/2 sends it": ("22cf994205e26133f2ce9a6205460b662d07d3cf0f50414a63d563efee6bac5a",
                                                       "df1b2dc665b34b901671226ab325e8e256f3574d264347265edfd34b1d4442b9"),
        "no fields, no authority": ("0f40b887f8dfd8cb69ee3d35788a04c8c859f3b51ece5160363866f6fbd67aa2",
                                    "4dd51caf0a296a2a9dd9c6257ffa9fe958a26c94f40f7cf00c5eac09ac528144"),
        "101, no fields": ("f2d6086b744539d02b22082a00710a5af744dd68b9d5ee3052e73aff5b55a953",
                           "0527b70ff682439b3231b87958f31c3db4790ff0423101bdfcb0761c44091800"),
    ]

    func testHeadDigestsMatchThePinnedBytes() {
        for (name, digest) in Self.heads {
            for (function, label) in [(DigestFunction.sha256, "sha256"), (Self.keyed, "hmac")] {
                let rendering = Self.rendering(digest(function))
                let pin = SHA256Digest.of(Array(rendering.utf8)).hex
                let expected = label == "sha256" ? Self.pinned[name]?.plain : Self.pinned[name]?.keyed
                XCTAssertEqual(pin, expected, "\(name), \(label):\n\(rendering)")
            }
        }
    }

    func testTrailerDigestsMatchThePinnedBytes() {
        let trailers = Self.fields([("Grpc-Status", "0"), ("X-T", "a"), ("cookie", "a=1"), ("x-t", "b"), ("Cookie", "b=2"),
                                    ("Grpc-Message", "caf\u{E9} \u{263A}")])
        let pins = [(DigestFunction.sha256, "055bbc0b30685047e8e8dbba53fbdcc093b7935f81842025c40efb02472517c6",
                     "d64b061e66111f6f97b5e0c151cdea5970a321c62d0e0650ebccb2a62caf6156"),
                    (Self.keyed, "a126a6e3032203ead9aa80a15a90da0491af0936beeb819575ac9038056c001a",
                     "04de3570cb3c07f5c543187ec6d03b12e51c87f41a6e072c29882f9dc960e57e")]
        for (function, exact, semantic) in pins {
            guard let digest = BodyDigest.TrailersDigest(trailers, using: function) else { return XCTFail("no trailer digest") }
            XCTAssertEqual(digest.exact.hex, exact, "\(function)")
            XCTAssertEqual(digest.semantic.hex, semantic, "\(function)")
            XCTAssertEqual(digest.fieldNames, trailers.map(\.name))
        }
    }
}
