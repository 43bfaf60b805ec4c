import Glibc
import XCTest
@testable import Wire

final class SocketAddressTests: XCTestCase {
    func testParsesIPv4AndBracketedIPv6() throws {
        let v4 = try XCTUnwrap(SocketAddress("127.0.0.1:8080"))
        XCTAssertEqual(v4.family, .ipv4)
        XCTAssertEqual(v4.addressBytes, [127, 0, 0, 1])
        XCTAssertEqual(v4.port, 8080)
        XCTAssertEqual(v4.description, "127.0.0.1:8080")

        let v6 = try XCTUnwrap(SocketAddress("[::1]:0"))
        XCTAssertEqual(v6.family, .ipv6)
        XCTAssertEqual(v6.port, 0)
        XCTAssertEqual(v6, SocketAddress.loopbackIPv6(port: 0))
        XCTAssertEqual(v6.description, "[::1]:0")
        XCTAssertEqual(v6.ip, "::1")
    }

    func testRejectsNamesAndMalformedText() {
        for text in ["localhost:80", "127.0.0.1", "127.0.0.1:", "127.0.0.1:65536", "127.0.0.1:-1", "127.0.0.1:+80",
                     "::1:80", "[::1]", "[::1]80", "[127.0.0.1]:80", "127.1:80", "1.2.3.4.5:80", "", ":80",
                     "[::1]:8080x", "256.0.0.1:1"] {
            XCTAssertNil(SocketAddress(text), "accepted \(text)")
        }
    }

    func testDescriptionRoundTrips() throws {
        for text in ["0.0.0.0:0", "10.1.2.3:65535", "[::]:443", "[2001:db8::1]:8443", "[::ffff:127.0.0.1]:9"] {
            XCTAssertEqual(try XCTUnwrap(SocketAddress(text)).description, text)
        }
    }

    func testLoopbackDetection() throws {
        XCTAssertTrue(SocketAddress.loopbackIPv4(port: 1).isLoopback)
        XCTAssertTrue(try XCTUnwrap(SocketAddress("127.8.9.10:1")).isLoopback)
        XCTAssertTrue(SocketAddress.loopbackIPv6(port: 1).isLoopback)
        XCTAssertTrue(try XCTUnwrap(SocketAddress("[::ffff:127.0.0.1]:1")).isLoopback)
        XCTAssertFalse(try XCTUnwrap(SocketAddress("10.0.0.1:1")).isLoopback)
        XCTAssertFalse(try XCTUnwrap(SocketAddress("[::2]:1")).isLoopback)
        XCTAssertFalse(try XCTUnwrap(SocketAddress("[::ffff:10.0.0.1]:1")).isLoopback)
    }

    func testWithPortKeepsTheAddress() {
        let address = SocketAddress.loopbackIPv4(port: 1).withPort(443)
        XCTAssertEqual(address.description, "127.0.0.1:443")
    }

    func testCSocketAddressRoundTrip() throws {
        for text in ["127.0.0.1:8080", "[::1]:443"] {
            let address = try XCTUnwrap(SocketAddress(text))
            let back = address.withSockAddr { pointer, _ in SocketAddress(pointer) }
            XCTAssertEqual(back, address)
        }
    }
}
