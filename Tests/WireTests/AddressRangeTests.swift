import XCTest
@testable import Wire

/// `HostPort` (what `--listen` takes), `AddressRange` (what `--allow` takes)
/// and the blocking resolver used at start-up.
final class AddressRangeTests: XCTestCase {
    func testHostPortParsesNamesLiteralsAndBracketedIPv6() {
        XCTAssertEqual(HostPort("localhost:8080")?.description, "localhost:8080")
        XCTAssertEqual(HostPort("[::1]:0")?.host, "::1")
        XCTAssertEqual(HostPort("[::1]:0")?.description, "[::1]:0")
        XCTAssertEqual(HostPort("127.0.0.1:65535")?.port, 65535)
        for bad in ["localhost", "::1:80", "[::1]", "[::1]80", ":80", "host:", "host:65536", "host:-1", "host:8a",
                    "[127.0.0.1]:80", "a:b:c"] {
            XCTAssertNil(HostPort(bad), bad)
        }
    }

    func testRangesParseStrictlyAndMatchByPrefix() {
        XCTAssertEqual(AddressRange("10.0.0.0/8")?.description, "10.0.0.0/8")
        XCTAssertEqual(AddressRange("192.0.2.1")?.description, "192.0.2.1/32")
        XCTAssertEqual(AddressRange("fd00::/8")?.description, "fd00::/8")
        XCTAssertEqual(AddressRange("0.0.0.0/0")?.contains(SocketAddress("203.0.113.1:9")!), true)
        for bad in ["10.0.0.1/8", "10.0.0.0/33", "10.0.0.0/", "/8", "10.0.0/8", "::1/129", "fd00::1/8", "x", "10.0.0.0/8/8",
                    "10.0.0.0/+8"] {
            XCTAssertNil(AddressRange(bad), bad)
        }
        let block = AddressRange("172.16.0.0/12")!
        XCTAssertTrue(block.contains(SocketAddress("172.31.255.255:1")!))
        XCTAssertFalse(block.contains(SocketAddress("172.32.0.0:1")!))
        XCTAssertTrue(block.contains(SocketAddress("[::ffff:172.16.0.9]:1")!), "IPv4-mapped peers match IPv4 blocks")
        XCTAssertFalse(AddressRange("::1/128")!.contains(SocketAddress("127.0.0.1:1")!))
    }

    func testBlockingResolutionAnswersLocalhostAndInvalidWithoutDNS() {
        XCTAssertEqual(try Resolver.resolveBlocking("localhost", port: 8080).get(),
                       [SocketAddress("127.0.0.1:8080")!, SocketAddress("[::1]:8080")!])
        XCTAssertEqual(try Resolver.resolveBlocking("::1", port: 1).get(), [SocketAddress("[::1]:1")!])
        XCTAssertEqual(Resolver.resolveBlocking("nowhere.invalid", port: 1), .failure(.nameNotFound("nowhere.invalid")))
    }
}
