import Proxy
import Wire
import XCTest

/// The loop check on normalised addresses, each spelling of the hardening
/// issue against loopback and wildcard listeners.
final class LoopGuardTests: XCTestCase {
    /// Every way the issue wrote "this host" (brackets are the authority's; the target holds the host bare).
    static let spellings = ["127.0.0.1", "localhost", "127.1", "2130706433", "0x7f000001", "0.0.0.0",
                            "::ffff:127.0.0.1", "::ffff:7f00:1", "::127.0.0.1", "sub.localhost"]

    private func target(_ host: String, _ port: Int) -> UpstreamTarget {
        UpstreamTarget(scheme: .http, host: host, port: port)!
    }

    func testEverySpellingOfLoopbackIsRefusedOnALoopbackListener() {
        let guardAt = LoopGuard(listenIP: "127.0.0.1", port: 40000)
        for host in Self.spellings {
            XCTAssertTrue(guardAt.refuses(target(host, 40000)), host)
            XCTAssertFalse(guardAt.refuses(target(host, 40001)), "\(host) on another port")
        }
        for peer in ["127.0.0.1", "::ffff:127.0.0.1", "::ffff:7f00:1"] {
            XCTAssertTrue(guardAt.refuses(peerIP: peer, port: 40000), peer)
        }
        XCTAssertFalse(guardAt.refuses(target("127.0.0.2", 40000)), "another loopback address is another listener")
        XCTAssertFalse(guardAt.refuses(target("example.test", 40000)), "names are checked on the resolved peer")
        XCTAssertFalse(guardAt.refuses(peerIP: "::1", port: 40000), "::1 does not reach a 127.0.0.1 listener")
    }

    func testAWildcardListenerAnswersOnEveryLocalInterface() {
        let local = [SocketAddress(ip: "192.0.2.10", port: 0)!, SocketAddress(ip: "2001:db8::10", port: 0)!]
        let v4 = LoopGuard(listenIP: "0.0.0.0", port: 8080, localAddresses: local)
        for host in Self.spellings + ["127.0.0.5", "192.0.2.10", "::ffff:192.0.2.10", "::ffff:c000:20a"] {
            XCTAssertTrue(v4.refuses(target(host, 8080)), host)
        }
        XCTAssertTrue(v4.refuses(peerIP: "::ffff:192.0.2.10", port: 8080))
        XCTAssertFalse(v4.refuses(target("192.0.2.11", 8080)))
        XCTAssertFalse(v4.refuses(target("2001:db8::10", 8080)), "an IPv4 wildcard does not answer on IPv6")
        let dual = LoopGuard(listenIP: "::", port: 8080, localAddresses: local)
        for host in Self.spellings + ["::1", "::", "2001:db8::10", "192.0.2.10"] {
            XCTAssertTrue(dual.refuses(target(host, 8080)), host)
        }
        XCTAssertFalse(dual.refuses(target("2001:db8::11", 8080)))
    }

    func testTheListenAddressInAnySpellingIsRefused() {
        let specific = LoopGuard(listenIP: "::ffff:192.0.2.10", port: 9000)
        for host in ["192.0.2.10", "::ffff:192.0.2.10", "3221225994", "0xc000020a"] {
            XCTAssertTrue(specific.refuses(target(host, 9000)), host)
        }
        XCTAssertFalse(specific.refuses(target("127.0.0.1", 9000)), "loopback does not reach a specific address")
    }

    func testLoopbackLiteralsInAnySpelling() {
        for host in ["127.0.0.1", "127.1", "::1", "::ffff:127.0.0.1", "[::1]"] {
            XCTAssertTrue(LoopGuard.isLoopbackLiteral(host), host)
        }
        for host in ["0.0.0.0", "192.0.2.1", "localhost", "::"] {
            XCTAssertFalse(LoopGuard.isLoopbackLiteral(host), host)
        }
    }
}
