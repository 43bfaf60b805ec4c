import XCTest
@testable import Wire

final class ResolverTests: XCTestCase {
    private func resolve(_ host: String, port: UInt16 = 443) -> Result<[SocketAddress], WireError>? {
        let loop = EventLoop(label: "test.resolver")
        let outcome = Locked<Result<[SocketAddress], WireError>?>(nil)
        let done = expectation(description: "resolved \(host)")
        Resolver.resolve(host, port: port, on: loop) { result in
            XCTAssertTrue(loop.isOnLoop, "completion must run on the requesting loop")
            outcome.withValue { $0 = result }
            done.fulfill()
        }
        wait(for: [done], timeout: patience)
        return outcome.current
    }

    func testLocalhostIsLoopbackWithoutALookup() throws {
        let addresses = try XCTUnwrap(resolve("localhost", port: 8080)).get()
        XCTAssertEqual(addresses, [.loopbackIPv4(port: 8080), .loopbackIPv6(port: 8080)])
        XCTAssertEqual(try XCTUnwrap(resolve("api.LOCALHOST.")).get().first, .loopbackIPv4(port: 443))
    }

    func testLiteralsResolveToThemselves() throws {
        XCTAssertEqual(try XCTUnwrap(resolve("127.0.0.1", port: 80)).get(), [.loopbackIPv4(port: 80)])
        XCTAssertEqual(try XCTUnwrap(resolve("::1", port: 80)).get(), [.loopbackIPv6(port: 80)])
        XCTAssertEqual(try XCTUnwrap(resolve("[::1]", port: 80)).get(), [.loopbackIPv6(port: 80)])
    }

    func testInvalidNamesFailWithoutTheNetwork() {
        XCTAssertEqual(resolve("intact-test.invalid"), .failure(.nameNotFound("intact-test.invalid")))
        XCTAssertEqual(resolve("bad name"), .failure(.invalidHostName("bad name")))
        XCTAssertEqual(resolve(""), .failure(.invalidHostName("")))
        XCTAssertEqual(resolve("-leading.example"), .failure(.invalidHostName("-leading.example")))
        XCTAssertEqual(resolve("999.1.1.1"), .failure(.invalidHostName("999.1.1.1")))
        XCTAssertEqual(resolve("[localhost]"), .failure(.invalidHostName("[localhost]")))
    }

    func testPlanLooksUpOnlyRealNames() {
        XCTAssertEqual(Resolver.plan(for: "example.com"), .lookup(name: "example.com", numeric: false))
        XCTAssertEqual(Resolver.plan(for: "10.0.0.1"), .lookup(name: "10.0.0.1", numeric: true))
        XCTAssertEqual(Resolver.plan(for: "a.invalid."), .answer(.failure(.nameNotFound("a.invalid."))))
        XCTAssertEqual(Resolver.plan(for: String(repeating: "a", count: 64) + ".com"),
                       .answer(.failure(.invalidHostName(String(repeating: "a", count: 64) + ".com"))))
    }
}
