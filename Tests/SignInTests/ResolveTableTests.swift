import XCTest
@testable import SignIn

/// `--resolve` as curl takes it, and what each bad form is told.
final class ResolveTableTests: XCTestCase {
    private func error(_ specifications: [String]) -> String {
        do {
            _ = try ResolveTable(parsing: specifications)
            return "no error"
        } catch {
            return "\(error)"
        }
    }

    func testCurlsFormsAreAccepted() throws {
        let table = try ResolveTable(parsing: ["Intact-HSTS.test:8443:127.0.0.1", "+plus.test:443:[::1],127.0.0.2",
                                               "*:443:127.0.0.3", "v6.test:80:::1", "gone.test:1:127.0.0.9", "-gone.test:1"])
        XCTAssertEqual(table.entries.map(\.description),
                       ["intact-hsts.test:8443:127.0.0.1", "plus.test:443:[::1],127.0.0.2", "*:443:127.0.0.3", "v6.test:80:[::1]"])
        XCTAssertEqual(table.address(host: "INTACT-hsts.test", port: 8443), "127.0.0.1", "names compare without case")
        XCTAssertNil(table.address(host: "intact-hsts.test", port: 8444), "an entry is for one port")
        XCTAssertEqual(table.address(host: "plus.test", port: 443), "::1", "the first of several addresses")
        XCTAssertEqual(table.address(host: "other.test", port: 443), "127.0.0.3", "* takes any other name on its port")
        XCTAssertNil(table.address(host: "gone.test", port: 1), "-HOST:PORT took it back")
        // Chromium takes the first rule that matches: named entries before *.
        XCTAssertEqual(table.chromiumRules, ["MAP intact-hsts.test:8443 127.0.0.1", "MAP plus.test:443 [::1]",
                                             "MAP v6.test:80 [::1]", "MAP *:443 127.0.0.3"])
    }

    func testEachBadFormIsNamed() {
        XCTAssertEqual(error(["intact.test"]), "--resolve 'intact.test': expected HOST:PORT:ADDRESS")
        XCTAssertEqual(error([":443:127.0.0.1"]), "--resolve ':443:127.0.0.1': expected HOST:PORT:ADDRESS")
        XCTAssertEqual(error(["intact.test:443"]), "--resolve 'intact.test:443': the address is missing (HOST:PORT:ADDRESS)")
        XCTAssertEqual(error(["intact.test:443:"]), "--resolve 'intact.test:443:': the address is missing (HOST:PORT:ADDRESS)")
        XCTAssertEqual(error(["intact.test::127.0.0.1"]), "--resolve 'intact.test::127.0.0.1': the port is missing")
        XCTAssertEqual(error(["intact.test:https:127.0.0.1"]), "--resolve 'intact.test:https:127.0.0.1': the port 'https' is not a number")
        XCTAssertEqual(error(["intact.test:-1:127.0.0.1"]), "--resolve 'intact.test:-1:127.0.0.1': the port '-1' is not a number")
        XCTAssertEqual(error(["intact.test:0:127.0.0.1"]), "--resolve 'intact.test:0:127.0.0.1': the port 0 is out of range (1-65535)")
        XCTAssertEqual(error(["intact.test:65536:127.0.0.1"]),
                       "--resolve 'intact.test:65536:127.0.0.1': the port 65536 is out of range (1-65535)")
        XCTAssertEqual(error(["intact.test:443:127.0.0.256"]),
                       "--resolve 'intact.test:443:127.0.0.256': '127.0.0.256' is not an IPv4 or IPv6 address")
        XCTAssertEqual(error(["intact.test:443:localhost"]),
                       "--resolve 'intact.test:443:localhost': 'localhost' is not an IPv4 or IPv6 address")
        XCTAssertEqual(error(["intact.test:443:127.0.0.1,"]), "--resolve 'intact.test:443:127.0.0.1,': an address in the list is empty")
        XCTAssertEqual(error(["in_tact.test:443:127.0.0.1"]),
                       "--resolve 'in_tact.test:443:127.0.0.1': 'in_tact.test' is not a host name (letters, digits, '-' and '.', or *)")
        XCTAssertEqual(error(["-intact.test:443:127.0.0.1"]), "--resolve '-intact.test:443:127.0.0.1': -HOST:PORT takes no address")
        XCTAssertEqual(error(["intact..test:443:127.0.0.1"]).hasSuffix("is not a host name (letters, digits, '-' and '.', or *)"), true)
        XCTAssertEqual(error(["intact.test:443:127.0.0.1", "INTACT.test:443:127.0.0.2"]),
                       "--resolve 'INTACT.test:443:127.0.0.2': intact.test:443 is already given (one --resolve per HOST:PORT)")
    }

    func testHostNames() {
        for good in ["intact-hsts.test", "a", "x1.y2", "intact.test.", "127.0.0.1"] { XCTAssertTrue(ResolveTable.isHostName(good), good) }
        for bad in ["", "-a.test", "a-.test", "a..b", "a b", "ä.test", String(repeating: "a", count: 64) + ".test", "[::1]"] {
            XCTAssertFalse(ResolveTable.isHostName(bad), bad)
        }
    }
}
