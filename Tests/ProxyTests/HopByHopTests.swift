import HTTP
import XCTest
@testable import Proxy

/// What a proxy strips from a head by rule, including the cheap first pass
/// that lets most heads through untouched.
final class HopByHopTests: XCTestCase {
    func testAHeadWithNoConnectionSpecificFieldIsLeftAsItIs() {
        // `user-agent` and `keep-alive` share a length: the first pass must not take one for the other.
        let fields: HTTPFields = ["Host": "a.example", "user-agent": "t", "Content-Length": "3"]
        XCTAssertNil(HopByHop.stripped(fields))
        XCTAssertEqual(HopByHop.strip(fields), fields)
    }

    func testFixedNamesGoInAnyCase() {
        let fields = HTTPFields([HTTPField(name: "KEEP-ALIVE", value: "timeout=5"), HTTPField(name: "Accept", value: "*/*"),
                                 HTTPField(name: "Proxy-Connection", value: "keep-alive"),
                                 HTTPField(name: "HTTP2-Settings", value: "AAMAAABkAAQAAP__")])
        XCTAssertEqual(HopByHop.stripped(fields), HTTPFields([HTTPField(name: "Accept", value: "*/*")]))
    }

    func testConnectionGoesWithTheFieldsItNamesButNotFraming() {
        let fields = HTTPFields([HTTPField(name: "Connection", value: "close, X-Trace , content-length"),
                                 HTTPField(name: "x-trace", value: "1"), HTTPField(name: "Content-Length", value: "0"),
                                 HTTPField(name: "X-Other", value: "2")])
        XCTAssertEqual(HopByHop.stripped(fields),
                       HTTPFields([HTTPField(name: "Content-Length", value: "0"), HTTPField(name: "X-Other", value: "2")]))
    }

    func testConnectionNamesMatchInAnyCaseAndFixedTokensNeedNoList() {
        let fields = HTTPFields([HTTPField(name: "Server", value: "s"), HTTPField(name: "Connection", value: "keep-alive"),
                                 HTTPField(name: "Keep-Alive", value: "timeout=5"), HTTPField(name: "X-TRACE", value: "1"),
                                 HTTPField(name: "connection", value: "x-trace, transfer-encoding"),
                                 HTTPField(name: "Transfer-Encoding", value: "chunked")])
        XCTAssertEqual(HopByHop.stripped(fields), HTTPFields([HTTPField(name: "Server", value: "s"),
                                                              HTTPField(name: "Transfer-Encoding", value: "chunked")]))
    }

    func testTEIsKeptOnlyForTrailers() {
        XCTAssertNil(HopByHop.stripped(["TE": " trailers "]))
        XCTAssertEqual(HopByHop.stripped(["te": "gzip", "Tag": "x"]), ["Tag": "x"])
    }

    func testAnUpgradeRequestKeepsUpgradeAndItsConnectionToken() {
        let fields = HTTPFields([HTTPField(name: "Connection", value: "Upgrade"), HTTPField(name: "Upgrade", value: "websocket"),
                                 HTTPField(name: "user-agent", value: "t")])
        let token = HopByHop.upgradeToken(fields, version: .http1_1)
        XCTAssertEqual(token, "Upgrade")
        XCTAssertEqual(HopByHop.strip(fields, keepingUpgrade: token),
                       HTTPFields([HTTPField(name: "user-agent", value: "t"), HTTPField(name: "Upgrade", value: "websocket"),
                                   HTTPField(name: "Connection", value: "Upgrade")]))
        XCTAssertNil(HopByHop.upgradeToken(["user-agent": "t"], version: .http1_1))
        XCTAssertNil(HopByHop.upgradeToken(fields, version: .http1_0))
    }
}
