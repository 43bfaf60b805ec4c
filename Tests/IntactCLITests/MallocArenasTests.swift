@testable import IntactCLI
import XCTest

final class MallocArenasTests: XCTestCase {
    /// glibc takes the cap (the symbol is found and `mallopt` accepts the parameter).
    func testTheCapIsSetWhenTheEnvironmentSaysNothing() {
        XCTAssertTrue(MallocArenas.limit(to: 4, environment: [:]))
        XCTAssertTrue(MallocArenas.limit(to: 0, environment: [:]), "no loops still means one arena, not an error")
    }

    /// The user's `MALLOC_ARENA_MAX` wins: glibc read it at start, the proxy leaves it.
    func testMallocArenaMaxInTheEnvironmentWins() {
        XCTAssertFalse(MallocArenas.limit(to: 1, environment: ["MALLOC_ARENA_MAX": "8"]))
    }
}
