import HTTP
import XCTest
@testable import Evidence

/// RFC 8441 §5 on a hop: an HTTP/2 extended CONNECT against the HTTP/1.1
/// `Upgrade` sent for it, and the `101` against the `200`, are equivalent by
/// the RFC's mapping (method, status, WebSocket key and accept); anything
/// else that changed is still named.
final class VerifierExtendedConnectTests: XCTestCase {
    private let judge = MessageJudge(policy: .strict)
    private let connect = HTTPRequestHead(method: "CONNECT", scheme: "https", authority: "chat.test", path: "/chat",
                                          version: .http2, fields: ["sec-websocket-version": "13"],
                                          connectProtocol: "websocket")

    private func recorded(_ head: HTTPRequestHead) throws -> RecordedMessage {
        let wire: HeadDigest.WireForm
        if head.version == .http2 {
            wire = .http2Sent(request: head)
        } else {
            var serializer = HTTP1Serializer()
            wire = .http1(head: Array(try serializer.writeRequestHead(head).rawHead))
        }
        return RecordedMessage(request: head, connectionScheme: "https",
                               digest: MessageDigest(head: HeadDigest(request: head, wire: wire, connectionScheme: "https", using: RedactionPolicy().digests)),
                               timings: MessageTimings(start: Timestamp(millisecondsSince1970: 1)), redaction: RedactionPolicy())
    }

    private func recorded(_ head: HTTPResponseHead) throws -> RecordedMessage {
        let wire: HeadDigest.WireForm
        if head.version == .http2 {
            wire = .http2Sent(response: head)
        } else {
            var serializer = HTTP1Serializer()
            wire = .http1(head: Array(try serializer.writeResponseHead(head, requestMethod: "GET").rawHead))
        }
        return RecordedMessage(response: head, digest: MessageDigest(head: HeadDigest(response: head, wire: wire, using: RedactionPolicy().digests)),
                               timings: MessageTimings(start: Timestamp(millisecondsSince1970: 1)), redaction: RedactionPolicy())
    }

    private func upgrade(extra: [(String, String)] = []) -> HTTPRequestHead {
        var head = ExtendedConnect.http1Upgrade(connect, key: "dGhlIHNhbXBsZSBub25jZQ==")
        head.fields.append("Host", "chat.test")
        for (name, value) in extra { head.fields.append(name, value) }
        return head
    }

    func testTheTranslatedRequestIsEquivalent() throws {
        let result = judge.judge(before: try recorded(connect), after: try recorded(upgrade()), as: .request)
        XCTAssertEqual(result.outcome, .equivalent, "\(result)")
        XCTAssertTrue(result.reasons.contains { $0.kind == .extendedConnect }, "\(result.reasons)")
    }

    func testAnythingElseThatChangedIsStillNamed() throws {
        let result = judge.judge(before: try recorded(connect), after: try recorded(upgrade(extra: [("X-Added", "1")])),
                                 as: .request)
        XCTAssertEqual(result.outcome, .modified)
        XCTAssertEqual(result.differences.map(\.kind), [.fieldAdded])
        XCTAssertEqual(result.differences.first?.field, "x-added")
    }

    func testThe101AndThe200AreEquivalent() throws {
        let switching = HTTPResponseHead(status: 101, fields: ["Upgrade": "websocket", "Connection": "Upgrade",
                                                               "Sec-WebSocket-Accept": "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="])
        let result = judge.judge(before: try recorded(switching), after: try recorded(ExtendedConnect.acceptedResponse(switching)),
                                 as: .response)
        XCTAssertEqual(result.outcome, .equivalent, "\(result)")
        XCTAssertTrue(result.reasons.contains { $0.kind == .extendedConnect })
    }

    /// Without an extended CONNECT on either side a method change stays a modification.
    func testAPlainMethodChangeIsStillModified() throws {
        var get = HTTPRequestHead(method: "GET", scheme: "https", authority: "chat.test", path: "/chat", version: .http2)
        let before = try recorded(get)
        get.method = "POST"
        let result = judge.judge(before: before, after: try recorded(get), as: .request)
        XCTAssertEqual(result.outcome, .modified)
        XCTAssertEqual(result.differences.map(\.kind), [.methodChanged])
        let notSwitched = HTTPResponseHead(status: 204, fields: [:])
        XCTAssertEqual(judge.judge(before: try recorded(notSwitched),
                                   after: try recorded(HTTPResponseHead(status: 200, reason: "", version: .http2)),
                                   as: .response).outcome, .modified)
    }
}
