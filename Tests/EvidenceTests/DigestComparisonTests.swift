import Evidence
import HTTP
import Hashing
import XCTest

/// Heads for one request as HTTP/1.1 and HTTP/2 would carry it, built by hand
/// so these tests do not depend on the codecs.
private enum Sample {
    static let http1Lines = [
        "GET /account?tab=1 HTTP/1.1",
        "Host: app.test",
        "User-Agent: intact-test",
        "Accept: text/html",
        "Accept: application/json",
        "Cookie: a=1; b=2",
        "Intact-Trace: t-1",
    ]

    /// A parsed HTTP/1.1 head matching `lines`: name case kept, Host filling the authority.
    static func http1(_ lines: [String] = http1Lines, scheme: String? = nil, targetForm: RequestTargetForm = .origin)
        -> (HTTPRequestHead, HeadDigest.WireForm)
    {
        let parts = lines[0].split(separator: " ")
        var fields = HTTPFields()
        for line in lines.dropFirst() {
            let colon = line.firstIndex(of: ":")!
            fields.append(String(line[..<colon]), String(line[line.index(after: colon)...]).trimmingCharacters(in: .whitespaces))
        }
        var path = String(parts[1])
        var authority = fields["host"]
        if targetForm == .absolute, let url = URLComponents(string: path) {
            authority = url.host
            path = url.percentEncodedPath + (url.percentEncodedQuery.map { "?" + $0 } ?? "")
        }
        let head = HTTPRequestHead(method: HTTPMethod(String(parts[0])), scheme: scheme, authority: authority, path: path,
                                   targetForm: targetForm, version: .http1_1, fields: fields)
        let raw = Array(lines.map { $0 + "\r\n" }.joined().utf8)
        return (head, .http1(head: raw))
    }

    /// The same request as HTTP/2: lowercase names, no Host, cookie crumbs.
    static func http2(cookies: [String] = ["a=1", "b=2"]) -> (HTTPRequestHead, HeadDigest.WireForm) {
        var fields: HTTPFields = ["user-agent": "intact-test", "accept": "text/html"]
        fields.append("accept", "application/json")
        for crumb in cookies { fields.append("cookie", crumb) }
        fields.append("intact-trace", "t-1")
        let head = HTTPRequestHead(method: "GET", scheme: "https", authority: "app.test", path: "/account?tab=1",
                                   targetForm: .origin, version: .http2, fields: fields)
        return (head, .http2Request(head))
    }

    static func digest(_ pair: (HTTPRequestHead, HeadDigest.WireForm), body: [UInt8] = []) -> MessageDigest {
        var digester = BodyDigester(using: .sha256)
        digester.update(body)
        return MessageDigest(head: HeadDigest(request: pair.0, wire: pair.1, connectionScheme: "https", using: .sha256),
                             body: digester.finish())
    }

    static func replacing(_ old: String, with new: String) -> [String] {
        http1Lines.map { $0 == old ? new : $0 }
    }
}

final class MessageDigestTests: XCTestCase {
    func testSameRequestOverHTTP1AndHTTP2IsEquivalent() {
        let one = Sample.digest(Sample.http1())
        let two = Sample.digest(Sample.http2())
        XCTAssertEqual(one.head.semantic, two.head.semantic)
        XCTAssertNotEqual(one.head.exact, two.head.exact)
        let comparison = DigestComparison(before: one, after: two)
        XCTAssertEqual(comparison.verdict, .equivalent)
        XCTAssertTrue(comparison.reasons.contains(.version(from: .http1_1, to: .http2)))
        XCTAssertTrue(comparison.reasons.contains(.host))
        XCTAssertTrue(comparison.reasons.contains(.cookieCrumbs(from: 1, to: 2)))
        XCTAssertTrue(comparison.reasons.contains(
            .fieldNameCase(names: ["accept", "cookie", "intact-trace", "user-agent"])), "\(comparison.reasons)")
        XCTAssertEqual(comparison.changes, [])
    }

    func testIdenticalMessagesAreIdentical() {
        let comparison = DigestComparison(before: Sample.digest(Sample.http1(), body: [1, 2]),
                                          after: Sample.digest(Sample.http1(), body: [1, 2]))
        XCTAssertEqual(comparison, DigestComparison(verdict: .identical, reasons: [], changes: []))
    }

    func testFieldNameCaseKeepsSemantic() {
        let before = Sample.digest(Sample.http1())
        let after = Sample.digest(Sample.http1(Sample.replacing("User-Agent: intact-test", with: "USER-agent: intact-test")))
        XCTAssertNotEqual(before.head.exact, after.head.exact)
        let comparison = DigestComparison(before: before, after: after)
        XCTAssertEqual(comparison.verdict, .equivalent)
        XCTAssertEqual(comparison.reasons, [.fieldNameCase(names: ["user-agent"])])
    }

    func testAddedFieldIsNamed() {
        let comparison = DigestComparison(before: Sample.digest(Sample.http1()),
                                          after: Sample.digest(Sample.http1(Sample.http1Lines + ["Via: 1.1 lb"])))
        XCTAssertEqual(comparison.verdict, .modified)
        XCTAssertEqual(comparison.changes, [.fieldAdded(name: "via")])
    }

    func testRemovedAndChangedFieldsAreNamed() {
        let lines = Sample.replacing("Accept: text/html", with: "Accept: text/plain").filter { !$0.hasPrefix("User-Agent") }
        let comparison = DigestComparison(before: Sample.digest(Sample.http1()), after: Sample.digest(Sample.http1(lines)))
        XCTAssertEqual(comparison.verdict, .modified)
        XCTAssertEqual(comparison.changes, [.fieldChanged(name: "accept"), .fieldRemoved(name: "user-agent")])
    }

    func testReorderingValuesOfOneFieldIsAChange() {
        var lines = Sample.http1Lines
        lines.swapAt(3, 4)
        let comparison = DigestComparison(before: Sample.digest(Sample.http1()), after: Sample.digest(Sample.http1(lines)))
        XCTAssertEqual(comparison.verdict, .modified)
        XCTAssertEqual(comparison.changes, [.fieldChanged(name: "accept")])
    }

    func testReorderingDifferentFieldsIsEquivalent() {
        var lines = Sample.http1Lines
        lines.swapAt(2, 6)
        let comparison = DigestComparison(before: Sample.digest(Sample.http1()), after: Sample.digest(Sample.http1(lines)))
        XCTAssertEqual(comparison.verdict, .equivalent)
        XCTAssertEqual(comparison.reasons, [.fieldOrder])
    }

    func testOneBodyByteChangedIsNamed() {
        let body = Array("hello, body".utf8)
        var changed = body
        changed[4] ^= 1
        let comparison = DigestComparison(before: Sample.digest(Sample.http1(), body: body),
                                          after: Sample.digest(Sample.http1(), body: changed))
        XCTAssertEqual(comparison.verdict, .modified)
        XCTAssertEqual(comparison.changes, [.bodyChanged(fromLength: body.count, toLength: body.count)])
        XCTAssertEqual(comparison.reasons, [])
    }

    func testCookieCrumbsSplitOrJoinedAreEquivalent() {
        let split = Sample.digest(Sample.http2(cookies: ["a=1", "b=2"]))
        let joined = Sample.digest(Sample.http2(cookies: ["a=1; b=2"]))
        XCTAssertEqual(split.head.semantic, joined.head.semantic)
        XCTAssertEqual(split.head.fields["cookie"], joined.head.fields["cookie"])
        let comparison = DigestComparison(before: split, after: joined)
        XCTAssertEqual(comparison.verdict, .equivalent)
        XCTAssertEqual(comparison.reasons, [.cookieCrumbs(from: 2, to: 1)])
        XCTAssertEqual(DigestComparison(before: split, after: Sample.digest(Sample.http2(cookies: ["b=2", "a=1"]))).changes,
                       [.fieldChanged(name: "cookie")])
    }

    func testHopByHopDifferencesAreEquivalentWithTheReason() {
        let lines = Sample.http1Lines + ["Connection: keep-alive, X-Hop", "Keep-Alive: timeout=5", "X-Hop: 1", "TE: trailers"]
        let comparison = DigestComparison(before: Sample.digest(Sample.http1(lines)), after: Sample.digest(Sample.http1()))
        XCTAssertEqual(comparison.verdict, .equivalent)
        XCTAssertEqual(comparison.reasons, [.hopByHop(names: ["connection", "keep-alive", "te", "x-hop"])])
    }

    func testFieldNamedByConnectionForwardedWithoutItIsAdded() {
        let before = Sample.digest(Sample.http1(Sample.http1Lines + ["Connection: X-Hop", "X-Hop: 1"]))
        let after = Sample.digest(Sample.http1(Sample.http1Lines + ["X-Hop: 1"]))
        let comparison = DigestComparison(before: before, after: after)
        XCTAssertEqual(comparison.verdict, .modified)
        XCTAssertEqual(comparison.changes, [.fieldAdded(name: "x-hop")])
    }

    func testFramingDifferencesAreEquivalent() {
        let body = Array("0123456789".utf8)
        let lengthFramed = Sample.digest(Sample.http1(Sample.http1Lines + ["Content-Length: 10"]), body: body)
        let chunked = Sample.digest(Sample.http1(Sample.http1Lines + ["Transfer-Encoding: chunked"]), body: body)
        let comparison = DigestComparison(before: lengthFramed, after: chunked)
        XCTAssertEqual(comparison.verdict, .equivalent)
        XCTAssertEqual(comparison.reasons, [.framing(names: ["content-length", "transfer-encoding"])])
    }

    func testAbsoluteAndOriginFormNamingOneResourceAreEquivalent() {
        var absolute = Sample.http1Lines
        absolute[0] = "GET https://app.test/account?tab=1 HTTP/1.1"
        let before = Sample.digest(Sample.http1())
        let after = Sample.digest(Sample.http1(absolute, scheme: "https", targetForm: .absolute))
        let comparison = DigestComparison(before: before, after: after)
        XCTAssertEqual(comparison.verdict, .equivalent)
        XCTAssertEqual(comparison.reasons, [.targetForm(from: .origin, to: .absolute)])
    }

    func testChangedPathMethodAndSchemeAreNamed() {
        var lines = Sample.http1Lines
        lines[0] = "POST /other HTTP/1.1"
        let comparison = DigestComparison(before: Sample.digest(Sample.http1()), after: Sample.digest(Sample.http1(lines)))
        XCTAssertEqual(comparison.changes, [.methodChanged(from: "GET", to: "POST"), .targetChanged])
        let plain = MessageDigest(head: HeadDigest(request: Sample.http1().0, wire: Sample.http1().1, connectionScheme: "http",
                                                   using: .sha256))
        XCTAssertEqual(DigestComparison(before: Sample.digest(Sample.http1()), after: plain).changes, [.targetChanged])
    }

    func testResponseStatusAndReasonPhrase() {
        func response(_ status: Int, _ reason: String, extra: [String] = []) -> MessageDigest {
            let lines = ["HTTP/1.1 \(status) \(reason)", "Content-Type: text/plain"] + extra
            let head = HTTPResponseHead(status: HTTPStatus(status), reason: reason, fields: ["Content-Type": "text/plain"])
            return MessageDigest(head: HeadDigest(response: head, wire: .http1(head: Array(lines.map { $0 + "\r\n" }.joined().utf8)),
                                                  using: .sha256))
        }
        let ok = response(200, "OK")
        let fine = DigestComparison(before: ok, after: response(200, "Fine"))
        XCTAssertEqual(fine.verdict, .equivalent)
        XCTAssertEqual(fine.reasons, [.reasonPhrase])
        XCTAssertEqual(DigestComparison(before: ok, after: response(502, "Bad Gateway")).changes, [.statusChanged(from: 200, to: 502)])
        let h2 = HTTPResponseHead(status: 200, reason: "", version: .http2, fields: ["content-type": "text/plain"])
        XCTAssertEqual(HeadDigest(response: h2, wire: .http2Response(h2), using: .sha256).semantic, ok.head.semantic)
    }

    func testWhitespaceOnlyDifferenceIsWireFormatting() {
        let before = Sample.digest(Sample.http1())
        let (head, _) = Sample.http1()
        let raw = Array(Sample.http1Lines.map { $0.replacingOccurrences(of: ": ", with: ":  ") + "\r\n" }.joined().utf8)
        let after = MessageDigest(head: HeadDigest(request: head, wire: .http1(head: raw), connectionScheme: "https", using: .sha256))
        XCTAssertEqual(DigestComparison(before: before, after: after).reasons, [.wireFormatting])
    }

    /// Pins the documented canonical form byte for byte, so the text in Docs/verify.md
    /// and the code cannot drift apart.
    func testSemanticFormMatchesTheDocumentedBytes() {
        let head = HTTPRequestHead(method: "GET", authority: "A.test", path: "/p", version: .http1_1,
                                   fields: ["Host": "A.test", "X-B": "2", "Cookie": "c=1", "x-a": "1", "Connection": "close"])
        let digest = HeadDigest(request: head, wire: .http1(head: []), connectionScheme: "HTTPS", using: .sha256)
        func item(_ s: String) -> [UInt8] { count(s.utf8.count) + Array(s.utf8) }
        func count(_ n: Int) -> [UInt8] { [0, 0, UInt8(n >> 8), UInt8(n & 0xff)] }
        let expected = item("request") + item("GET") + item("https") + item("a.test") + item("/p")
            + count(3) + item("cookie") + count(1) + item("c=1") + item("x-a") + count(1) + item("1")
            + item("x-b") + count(1) + item("2")
        XCTAssertEqual(digest.semantic, SHA256Digest.of(expected))
        XCTAssertEqual(digest.target, SHA256Digest.of(item("https") + item("a.test") + item("/p")))
        XCTAssertEqual(digest.fields["x-a"], SHA256Digest.of(item("x-a") + count(1) + item("1")))
        XCTAssertEqual(digest.exact, SHA256Digest.ofNothing)
        XCTAssertEqual(digest.hopByHop, ["connection"])
        XCTAssertEqual(Set(digest.fields.keys), ["host", "x-b", "cookie", "x-a", "connection"])
    }

    /// Repeated names group in their order, cookie crumbs join with "; ",
    /// and names the semantic form leaves out keep their per-field digests.
    func testGroupsOfRepeatedNamesMatchTheDocumentedBytes() {
        let head = HTTPResponseHead(status: 200, version: .http1_1,
                                    fields: HTTPFields([HTTPField(name: "Vary", value: "b"), HTTPField(name: "Cookie", value: "a=1"),
                                             HTTPField(name: "Keep-Alive", value: "t=5"), HTTPField(name: "vary", value: "a"),
                                             HTTPField(name: "Connection", value: "X-Hop, keep-alive"),
                                             HTTPField(name: "cookie", value: "b=2"), HTTPField(name: "x-hop", value: "1"),
                                             HTTPField(name: "Content-Length", value: "0")]))
        let digest = HeadDigest(response: head, wire: .http1(head: Array("x".utf8)), using: .sha256)
        func item(_ s: String) -> [UInt8] { count(s.utf8.count) + Array(s.utf8) }
        func count(_ n: Int) -> [UInt8] { [0, 0, UInt8(n >> 8), UInt8(n & 0xff)] }
        let expected = item("response") + item("200") + count(2) + item("cookie") + count(1) + item("a=1; b=2")
            + item("vary") + count(2) + item("b") + item("a")
        XCTAssertEqual(digest.semantic, SHA256Digest.of(expected))
        XCTAssertEqual(digest.fields["x-hop"], SHA256Digest.of(item("x-hop") + count(1) + item("1")))
        XCTAssertEqual(digest.fields["connection"],
                       SHA256Digest.of(item("connection") + count(1) + item("X-Hop, keep-alive")))
        XCTAssertEqual(digest.fields["content-length"], SHA256Digest.of(item("content-length") + count(1) + item("0")))
        XCTAssertEqual(digest.hopByHop, ["connection", "keep-alive", "x-hop"])
        XCTAssertEqual(digest.fields.count, 6)
        XCTAssertEqual(digest.exact, SHA256Digest.of(Array("x".utf8)))
        XCTAssertEqual(digest.fieldNames.count, 8)
    }

    func testHTTP2ExactFormIsTheLengthPrefixedList() {
        let (head, wire) = Sample.http2(cookies: [])
        guard case .http2(let list) = wire else { return XCTFail("expected an HTTP/2 list") }
        XCTAssertEqual(list.prefix(4).map(\.name), [":method", ":scheme", ":authority", ":path"])
        let expected = list.flatMap { field -> [UInt8] in
            [field.name, field.value].flatMap { s in [0, 0, 0, UInt8(s.utf8.count)] + Array(s.utf8) }
        }
        XCTAssertEqual(HeadDigest(request: head, wire: wire, connectionScheme: "https", using: .sha256).exact, SHA256Digest.of(expected))
    }

    func testBodyDigesterIsIncrementalAndDigestsTrailers() {
        let body = (0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        var digester = BodyDigester(using: .sha256)
        var offset = 0
        for size in [1, 0, 4096, 16384, 79_519] {
            digester.update(body[offset..<offset + size])
            offset += size
        }
        XCTAssertEqual(digester.length, body.count)
        let digest = digester.finish(trailers: ["Grpc-Status": "0"])
        XCTAssertEqual(digest.sha256, SHA256Digest.of(body))
        XCTAssertEqual(digest.length, 100_000)
        XCTAssertEqual(digest.trailers?.fieldNames, ["Grpc-Status"])

        var lower = BodyDigester(using: .sha256)
        lower.update(body)
        let lowerDigest = lower.finish(trailers: ["grpc-status": "0"])
        let comparison = DigestComparison(before: MessageDigest(head: Sample.digest(Sample.http1()).head, body: digest),
                                          after: MessageDigest(head: Sample.digest(Sample.http1()).head, body: lowerDigest))
        XCTAssertEqual(comparison.verdict, .equivalent)
        XCTAssertEqual(comparison.reasons, [.trailerFormatting])
        var empty = BodyDigester(using: .sha256)
        XCTAssertEqual(empty.finish(trailers: HTTPFields()), .empty)
    }

    func testDigestsRoundTripThroughJSON() throws {
        let digest = Sample.digest(Sample.http1(), body: [9, 9, 9])
        let data = try JSONEncoder().encode(digest)
        XCTAssertEqual(try JSONDecoder().decode(MessageDigest.self, from: data), digest)
        let comparison = DigestComparison(before: digest, after: Sample.digest(Sample.http2()))
        XCTAssertEqual(try JSONDecoder().decode(DigestComparison.self, from: try JSONEncoder().encode(comparison)), comparison)
        XCTAssertThrowsError(try JSONDecoder().decode(SHA256Digest.self, from: Data("\"abc\"".utf8)))
    }
}
