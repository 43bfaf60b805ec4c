import Foundation
import IntactTestSupport
import Proxy
import Wire
import XCTest
@testable import IntactCLI

/// `--listen` with host names and IPv6, the warning for a listener others
/// can reach, and `--allow`. Only loopback addresses are ever bound.
final class ProxyListenTests: XCTestCase {
    func testListenTakesNamesAndBracketedIPv6() throws {
        let listen = { (text: String) in try parsed(["proxy", "--listen", text])[ProxyCommand.options.listen] }
        XCTAssertEqual(try listen("localhost:8080"), HostPort(host: "localhost", port: 8080))
        XCTAssertEqual(try listen("[::1]:0"), HostPort(host: "::1", port: 0))
        XCTAssertEqual(try listen("127.0.0.1:9"), HostPort(host: "127.0.0.1", port: 9))
        XCTAssertEqual(try parsed(["proxy"])[ProxyCommand.options.listen], HostPort(host: "127.0.0.1", port: 8080))
    }

    func testAllowRangesParseAndMatch() throws {
        let list = ClientAllowList(try parsed(["proxy", "--allow", "192.0.2.0/24", "--allow", "::1",
                                               "--allow", "10.1.0.0/16"])[ProxyCommand.options.allow])
        XCTAssertEqual(list.ranges.map(\.description), ["192.0.2.0/24", "::1/128", "10.1.0.0/16"])
        for (address, admitted) in [("192.0.2.77:1", true), ("192.0.3.1:1", false), ("[::1]:1", true),
                                    ("[::ffff:10.1.2.3]:1", true), ("10.2.0.1:1", false), ("127.0.0.1:1", false)] {
            XCTAssertEqual(list.admits(SocketAddress(address)!), admitted, address)
        }
        XCTAssertTrue(ClientAllowList().admits(SocketAddress("203.0.113.9:1")!), "no --allow: everyone")
    }

    func testTheWarningNamesExposedAddressesAndWhetherAllowLimitsThem() {
        // Text only: nothing is bound to these addresses.
        XCTAssertNil(ProxyCommand.exposureWarning([SocketAddress("127.0.0.1:8080")!, SocketAddress("[::1]:8080")!],
                                                  allowed: ClientAllowList()))
        XCTAssertEqual(ProxyCommand.exposureWarning([SocketAddress("0.0.0.0:8080")!], allowed: ClientAllowList()),
                       "intact proxy: WARNING: listening on 0.0.0.0:8080, not loopback: anyone who can reach this address "
                       + "can use the proxy and read what it records; limit clients with --allow CIDR")
        XCTAssertEqual(ProxyCommand.exposureWarning([SocketAddress("127.0.0.1:8080")!, SocketAddress("192.0.2.10:8080")!],
                                                    allowed: ClientAllowList([AddressRange("192.0.2.0/24")!])),
                       "intact proxy: WARNING: listening on 192.0.2.10:8080, not loopback; only clients in "
                       + "192.0.2.0/24 may connect (--allow)")
    }

    func testAnUnresolvableListenNameIsNamed() {
        let directory = makeTemporaryDirectory()
        let run = intact(["proxy", "--ca-dir", directory + "/ca", "--listen", "nowhere.invalid:0"])
        XCTAssertEqual(run.status, 1)
        XCTAssertTrue(run.error.hasSuffix("intact: cannot listen on nowhere.invalid:0: host name 'nowhere.invalid' not found\n"),
                      run.error)
    }

    func testLocalhostBindsEveryAddressOnOnePortAndAllowRefusesOthers() throws {
        let directory = makeTemporaryDirectory()
        let proxy = try IntactProcess(["proxy", "--listen", "localhost:0", "--ca-dir", directory + "/ca"],
                                      directory: directory, name: "names")
        let port = try proxy.waitForPort()
        XCTAssertTrue(proxy.standardError.contains("listening on 127.0.0.1:\(port) and [::1]:\(port) (forward mode)"),
                      proxy.standardError)
        XCTAssertFalse(proxy.standardError.contains("WARNING"), proxy.standardError)
        for host in ["127.0.0.1", "[::1]"] {
            let page = try ToolRun.curl(["-o", "/dev/null", "-w", "%{http_code}", "http://\(host):\(port)/"])
            XCTAssertEqual(page.output, "200", host + page.error)
            // Through the proxy, each of its addresses is the proxy itself: its page, never a loop.
            let viaProxy = try ToolRun.curl(["-x", "http://127.0.0.1:\(port)", "-w", "\n%{http_code}", "http://\(host):\(port)/"])
            XCTAssertTrue(viaProxy.output.hasSuffix("\n200") && viaProxy.output.contains("Install Intact"),
                          host + viaProxy.output + viaProxy.error)
        }
        proxy.signal(SIGINT)
        XCTAssertEqual(proxy.waitForExit(), 0, proxy.standardError)

        let limited = try IntactProcess(["proxy", "--listen", "127.0.0.1:0", "--ca-dir", directory + "/ca",
                                         "--allow", "127.0.0.2/32", "--allow", "::1/128"],
                                        directory: directory, name: "allow")
        let limitedPort = try limited.waitForPort()
        let refused = try ToolRun.curl(["-o", "/dev/null", "-w", "%{http_code}", "http://127.0.0.1:\(limitedPort)/"])
        XCTAssertNotEqual(refused.status, 0, "a client outside --allow gets no answer")
        XCTAssertEqual(refused.output, "000")
        limited.signal(SIGINT)
        XCTAssertEqual(limited.waitForExit(), 0, limited.standardError)
        XCTAssertTrue(limited.standardError.contains("intact proxy: refused a connection from 127.0.0.1: not in --allow"),
                      limited.standardError)

        let admitted = try IntactProcess(["proxy", "--listen", "127.0.0.1:0", "--ca-dir", directory + "/ca",
                                          "--allow", "127.0.0.0/8"], directory: directory, name: "admitted")
        let admittedPort = try admitted.waitForPort()
        let page = try ToolRun.curl(["-o", "/dev/null", "-w", "%{http_code}", "http://127.0.0.1:\(admittedPort)/"])
        XCTAssertEqual(page.output, "200", page.error)
        admitted.signal(SIGINT)
        XCTAssertEqual(admitted.waitForExit(), 0)
        XCTAssertFalse(admitted.standardError.contains("refused"), admitted.standardError)
    }
}
