import XCTest
@testable import HTTP

/// The typed pieces of a head: methods compare case-sensitively, field
/// names without case, statuses by code with RFC 9110's classes; and the
/// one hop-by-hop table classifies names as its list says.
final class HTTPTypedHeadTests: XCTestCase {
    func testMethodsCompareCaseSensitively() {
        XCTAssertEqual(HTTPMethod("GET"), .get)
        XCTAssertNotEqual(HTTPMethod("get"), .get, "RFC 9110 §9.1: the method token is case-sensitive")
        XCTAssertEqual(HTTPMethod("PROPFIND").rawValue, "PROPFIND")
        XCTAssertEqual("\(HTTPMethod.connect)", "CONNECT")
        XCTAssertEqual(Set<HTTPMethod>([.get, "GET", "get"]).count, 2)
    }

    func testMethodsAndStatusesEncodeAsTheirText() throws {
        XCTAssertEqual(String(decoding: try JSONEncoder().encode([HTTPMethod.post]), as: UTF8.self), "[\"POST\"]")
        XCTAssertEqual(String(decoding: try JSONEncoder().encode([HTTPStatus.notFound]), as: UTF8.self), "[404]")
        XCTAssertEqual(try JSONDecoder().decode([HTTPStatus].self, from: Data("[101]".utf8)), [.switchingProtocols])
        XCTAssertEqual(try JSONDecoder().decode([HTTPMethod].self, from: Data("[\"PATCH\"]".utf8)), [.patch])
    }

    func testFieldNamesCompareAndHashIgnoringASCIICaseOnly() {
        XCTAssertEqual(HTTPField.Name("Content-LENGTH"), .contentLength)
        XCTAssertNotEqual(HTTPField.Name("content-lengt"), .contentLength)
        XCTAssertNotEqual(HTTPField.Name("content_length"), .contentLength)
        XCTAssertNotEqual(HTTPField.Name("content-lengths"), .contentLength)
        // Only A–Z fold: a Latin-1 capital is not its lowercase letter.
        XCTAssertNotEqual(HTTPField.Name(String(latin1: [0xC9])), HTTPField.Name(String(latin1: [0xE9])))
        let names: Set<HTTPField.Name> = ["Set-Cookie", "set-cookie", "SET-COOKIE", "Cookie"]
        XCTAssertEqual(names.count, 2)
        XCTAssertTrue(names.contains(.setCookie))
        XCTAssertEqual(HTTPField.Name("X-Mixed-Case").rawName, "X-Mixed-Case", "the spelling is kept")
        XCTAssertEqual(HTTPField.Name("X-Mixed-Case").lowercased, "x-mixed-case")
        XCTAssertTrue(HTTPField(name: "HOST", value: "a").hasName(.host))
    }

    func testSetAppendsUnderTheSpellingOfTheName() {
        var fields: HTTPFields = ["accept": "*/*"]
        fields.set(HTTPField.Name("Content-Length"), "3")
        fields.set(.contentLength, "4")
        XCTAssertEqual(fields.map(\.name), ["accept", "Content-Length"])
        XCTAssertEqual(fields[.contentLength], "4")
    }

    func testStatusClasses() {
        XCTAssertTrue(HTTPStatus.continue.isInformational && HTTPStatus.continue.isInterim)
        XCTAssertTrue(HTTPStatus.switchingProtocols.isInformational)
        XCTAssertFalse(HTTPStatus.switchingProtocols.isInterim, "101 ends the exchange's HTTP: it is final")
        XCTAssertTrue(HTTPStatus(299).isSuccessful && !HTTPStatus(300).isSuccessful)
        XCTAssertTrue(HTTPStatus.found.isRedirection && HTTPStatus(399).isRedirection)
        XCTAssertTrue(HTTPStatus.notFound.isClientError && HTTPStatus(499).isClientError)
        XCTAssertTrue(HTTPStatus.badGateway.isServerError && !HTTPStatus(600).isServerError)
        XCTAssertEqual([HTTPStatus.noContent, .notModified, .continue, .earlyHints, .switchingProtocols].map(\.forbidsBody),
                       [true, true, true, true, true])
        XCTAssertFalse(HTTPStatus.ok.forbidsBody)
        XCTAssertTrue(HTTPStatus(199) < .ok)
        XCTAssertEqual("\(HTTPStatus.notFound)", "404")
    }

    func testFixedHopByHopNamesAgreeWithTheTable() {
        for name in HopByHopFieldNames.fixedNames {
            for spelling in [name.rawName, name.rawName.uppercased(), name.rawName.capitalized] {
                XCTAssertEqual(HopByHopFieldNames.fixedName(spelling), name, spelling)
            }
        }
        for other in ["content-length", "user-agent", "tk", "upgradex", "connectiom", "keep_alive", "proxy-connectio",
                      "transfer-encodin", "http2-settingz", "", "host"] {
            XCTAssertNil(HopByHopFieldNames.fixedName(other), other)
        }
        XCTAssertEqual(HopByHopFieldNames.fixed, Set(HopByHopFieldNames.fixedNames.map(\.rawName)))
        XCTAssertTrue(HopByHopFieldNames.fixedNames.allSatisfy { $0.rawName == $0.lowercased })
        XCTAssertTrue(HopByHopFieldNames.isFraming("Transfer-Encoding"))
        XCTAssertTrue(HopByHopFieldNames.isFraming(.contentLength))
        XCTAssertFalse(HopByHopFieldNames.isFraming(.connection))
    }

    func testNamesInConnectionAreTheListedNamesBeyondTheFixedOnes() {
        let fields = HTTPFields([HTTPField(name: "connection", value: " close,X-Trace ,\tkeep-alive,, Upgrade , te\t"),
                                 HTTPField(name: "Accept", value: "a, b"),
                                 HTTPField(name: "CONNECTION", value: "Transfer-Encoding, content-length, x-\u{e9}t\u{e9}")])
        XCTAssertEqual(HopByHopFieldNames.namesInConnection(fields).map(\.rawName),
                       ["close", "X-Trace", "te", "content-length", "x-\u{e9}t\u{e9}"])
        XCTAssertEqual(HopByHopFieldNames.namesInConnection(["Connection": "keep-alive", "Host": "a"]), [])
        XCTAssertEqual(HopByHopFieldNames.namesInConnection(["Connection": " , ,"]), [])
        XCTAssertEqual(HopByHopFieldNames.namesInConnection(["Host": "a"]), [])
    }

    func testHTTP2DropsWhatConnectionNamesTEIncluded() {
        let head = HTTPResponseHead(status: .ok, fields: HTTPFields([
            HTTPField(name: "Connection", value: "keep-alive, TE, X-Trace"), HTTPField(name: "TE", value: "trailers"),
            HTTPField(name: "x-trace", value: "1"), HTTPField(name: "Keep-Alive", value: "timeout=5"),
            HTTPField(name: "Server", value: "s")]))
        XCTAssertEqual(HTTP2FieldMapping.responseList(head).map(\.name), [":status", "server"])
    }
}
