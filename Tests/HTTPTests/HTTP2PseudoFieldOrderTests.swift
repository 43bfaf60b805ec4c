import Foundation
import Hashing
import HTTP
import XCTest

/// The order of an HTTP/2 request's pseudo-fields: read from the wire, kept
/// on the head, sent again in it (what a proxy relaying HTTP/2 to HTTP/2
/// does), and recorded in the head digest.
final class HTTP2PseudoFieldOrderTests: XCTestCase {
    /// Chromium's order.
    private static let chromium: [HTTPField] = [
        HTTPField(name: ":method", value: "GET"), HTTPField(name: ":authority", value: "app.test"),
        HTTPField(name: ":scheme", value: "https"), HTTPField(name: ":path", value: "/suite/rest/protected"),
        HTTPField(name: "accept", value: "*/*"),
    ]

    /// The head and decoded list a server session gets for `list`, sent by a client session.
    private func received(_ send: (HTTP2Session) throws -> Void) throws -> (HTTPRequestHead, [HTTPField]) {
        let pair = HTTP2Pair()
        try send(pair.client)
        try pair.pump()
        for case .requestHead(_, let head, let decoded) in pair.serverEvents { return (head, decoded) }
        XCTFail("no request head: \(pair.serverEvents)")
        throw CancellationError()
    }

    func testAClientsOrderIsKeptOnTheHeadAndSentAgainInIt() throws {
        let (head, decoded) = try received { _ = try $0.sendRequest(fields: Self.chromium, endStream: true) }
        XCTAssertEqual(decoded, Self.chromium, "nghttp2 sends a list in the order given")
        XCTAssertEqual(head.pseudoFieldOrder?.names, [.method, .authority, .scheme, .path])
        XCTAssertEqual(head.pseudoFieldOrder?.description, ":method :authority :scheme :path")

        // The proxy's upstream leg: the head as received, sent by another session.
        XCTAssertEqual(HTTP2FieldMapping.requestList(head), Self.chromium)
        let (again, relayed) = try received { _ = try $0.sendRequest(head, endStream: true) }
        XCTAssertEqual(relayed, Self.chromium)
        XCTAssertEqual(again, head)
    }

    func testTheStandardOrderLeavesTheHeadWithoutOne() throws {
        let standard = [Self.chromium[0], Self.chromium[2], Self.chromium[1], Self.chromium[3], Self.chromium[4]]
        let (head, _) = try received { _ = try $0.sendRequest(fields: standard, endStream: true) }
        XCTAssertNil(head.pseudoFieldOrder)
        XCTAssertEqual(head, HTTPRequestHead(method: "GET", scheme: "https", authority: "app.test",
                                             path: "/suite/rest/protected", version: .http2, fields: ["accept": "*/*"]))
    }

    /// curl's order with a head changed on the way to carry other
    /// pseudo-fields (a CONNECT): the order no longer fits and the standard one is sent.
    func testAnOrderThatNoLongerFitsTheHeadGivesWayToTheStandardOne() throws {
        let curl = [HTTPField(name: ":method", value: "GET"), HTTPField(name: ":path", value: "/"),
                    HTTPField(name: ":scheme", value: "https"), HTTPField(name: ":authority", value: "app.test")]
        var head = HTTPRequestHead.decodedFromHTTP2(curl)
        XCTAssertEqual(head.pseudoFieldOrder?.description, ":method :path :scheme :authority")
        XCTAssertEqual(HTTP2FieldMapping.requestList(head).map(\.name), [":method", ":path", ":scheme", ":authority"])
        head.method = "CONNECT"
        head.targetForm = .authority
        XCTAssertEqual(HTTP2FieldMapping.requestList(head).map(\.name), [":method", ":authority"])
    }

    func testTheHeadDigestRecordsTheOrderOfHTTP2RequestsOnly() throws {
        let head = HTTPRequestHead.decodedFromHTTP2(Self.chromium)
        let h2 = HeadDigest(request: head, wire: .http2(fields: Self.chromium), connectionScheme: "https", using: .sha256)
        XCTAssertEqual(h2.pseudoFieldOrder?.names, [.method, .authority, .scheme, .path])
        let standard = HeadDigest(request: head, wire: .http2Request(HTTPRequestHead(method: "GET", scheme: "https",
            authority: "app.test", path: "/", version: .http2)), connectionScheme: "https", using: .sha256)
        XCTAssertEqual(standard.pseudoFieldOrder?.names, [.method, .scheme, .authority, .path])
        let h1 = HeadDigest(request: HTTPRequestHead(method: "GET", path: "/", fields: ["Host": "app.test"]),
                            wire: .http1(head: Array("GET / HTTP/1.1\r\nHost: app.test\r\n".utf8)),
                            connectionScheme: "https", using: .sha256)
        XCTAssertNil(h1.pseudoFieldOrder)
        let response = HTTPResponseHead(status: 200, version: .http2)
        XCTAssertNil(HeadDigest(response: response, wire: .http2Response(response), using: .sha256).pseudoFieldOrder)
    }

    func testOrdersAreRefusedWhenEmptyOrRepeated() throws {
        XCTAssertNil(HTTP2PseudoFieldOrder([]))
        XCTAssertNil(HTTP2PseudoFieldOrder([.method, .path, .method]))
        XCTAssertNil(HTTP2PseudoFieldOrder(requestList: [HTTPField(name: ":status", value: "200")]))
        XCTAssertNil(HTTP2PseudoFieldOrder(requestList: [HTTPField(name: "accept", value: "*/*")]))
        XCTAssertEqual(HTTP2PseudoFieldOrder([.method, .scheme, .authority, .path])?.isStandard, true)
        XCTAssertEqual(HTTP2PseudoFieldOrder([.method, .path, .scheme, .authority])?.isStandard, false)
    }

    func testTheOrderRoundTripsAsAnArrayOfNamesAndBadOnesAreNamed() throws {
        let order = try XCTUnwrap(HTTP2PseudoFieldOrder([.method, .authority, .scheme, .path]))
        let json = try JSONEncoder().encode(order)
        XCTAssertEqual(String(decoding: json, as: UTF8.self), #"[":method",":authority",":scheme",":path"]"#)
        XCTAssertEqual(try JSONDecoder().decode(HTTP2PseudoFieldOrder.self, from: json), order)
        for (text, expected) in [(#"[":method",":foo"]"#, #"unknown pseudo-header ":foo""#),
                                 (#"[":path",":path"]"#, "pseudo-header :path given twice"),
                                 ("[]", "an empty pseudo-header order")] {
            XCTAssertThrowsError(try JSONDecoder().decode(HTTP2PseudoFieldOrder.self, from: Data(text.utf8)), text) { error in
                guard case DecodingError.dataCorrupted(let context) = error else { return XCTFail("\(error)") }
                XCTAssertTrue(context.debugDescription.contains(expected), context.debugDescription)
            }
        }
    }

    /// Each pseudo-field is known by its name only: names of the same
    /// length, a letter off, another case, a prefix or a longer name are not.
    func testAPseudoFieldIsKnownByItsExactName() {
        for name in HTTP2PseudoFieldOrder.Name.allCases {
            XCTAssertEqual(HTTP2PseudoFieldOrder.Name(fieldName: name.fieldName.description), name)
        }
        for other in [":paths", ":pat", ":patx", ":PATH", ":Method", ":methox", ":schemf", ":protocoL", ":authoritx",
                      "authority", "method:", "", ":", "x-frame", "user-agent", ":status"] {
            XCTAssertNil(HTTP2PseudoFieldOrder.Name(fieldName: other), other)
        }
    }
}
