import XCTest
@testable import Wire

/// Every spelling of one destination normalises to one address.
final class SocketAddressNormalisedTests: XCTestCase {
    func testIPv4SpellingsThatGetaddrinfoAcceptsAreOneAddress() throws {
        let expected = SocketAddress.loopbackIPv4(port: 80)
        for spelling in ["127.0.0.1", "127.1", "2130706433", "0x7f000001", "0177.0.0.1", "[::ffff:127.0.0.1]",
                         "::ffff:7f00:1", "[::ffff:7f00:1]", "::127.0.0.1"] {
            let address = try XCTUnwrap(SocketAddress(numericHost: spelling, port: 80), spelling)
            XCTAssertEqual(address.normalised, expected, spelling)
        }
    }

    func testHostNamesAreNotLiterals() {
        XCTAssertNil(SocketAddress(numericHost: "localhost", port: 80))
        XCTAssertNil(SocketAddress(numericHost: "example.test", port: 80))
        XCTAssertNil(SocketAddress(numericHost: "", port: 80))
        XCTAssertNil(SocketAddress(numericHost: "[]", port: 80))
    }

    func testLoopbackAndUnspecifiedIPv6StayIPv6() throws {
        let one = try XCTUnwrap(SocketAddress(numericHost: "::1", port: 1))
        XCTAssertEqual(one.normalised, .loopbackIPv6(port: 1))
        let any = try XCTUnwrap(SocketAddress(numericHost: "::", port: 1))
        XCTAssertEqual(any.normalised.family, .ipv6)
        XCTAssertTrue(any.normalised.isUnspecified)
        XCTAssertTrue(try XCTUnwrap(SocketAddress(numericHost: "0.0.0.0", port: 1)).isUnspecified)
        XCTAssertFalse(SocketAddress.loopbackIPv4(port: 1).isUnspecified)
        let other = try XCTUnwrap(SocketAddress(numericHost: "2001:db8::1", port: 1))
        XCTAssertEqual(other.normalised, other)
    }

    func testLocalInterfacesIncludeLoopbackNormalised() {
        let addresses = LocalInterfaces.addresses()
        XCTAssertTrue(addresses.contains(.loopbackIPv4(port: 0)), "\(addresses)")
        XCTAssertTrue(addresses.allSatisfy { $0.port == 0 && $0.normalised == $0 }, "\(addresses)")
    }
}
