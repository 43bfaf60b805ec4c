import XCTest
@testable import IntactCLI

/// `intact faults`: the preset catalogue as a user reads it.
final class FaultsCommandTests: XCTestCase {
    private func run(_ arguments: [String]) -> (status: Int32, out: String, err: String) {
        let output = CapturedOutput()
        let error = CapturedOutput()
        let status = IntactCommandLine.run(arguments, context: CommandContext(standardOutput: output.writer,
                                                                              standardError: error.writer))
        return (status, output.text, error.text)
    }

    func testListsEveryPresetOfTheDesignWithTheSentenceItBreaks() {
        let result = run(["faults"])
        XCTAssertEqual(result.status, 0)
        for name in ["auth-redirect", "html-401", "foreign-response", "gateway-cookie", "strip-set-cookie",
                     "rewrite-set-cookie", "strip-cookie", "rewrite-urls", "drop-challenge", "alter-token-post",
                     "compress", "client-cert-required", "reset-token-post", "latency"] {
            XCTAssertTrue(result.out.contains("\n\(name) ") || result.out.hasPrefix("\(name) "), "missing \(name)")
        }
        XCTAssertTrue(result.out.contains("both the request and response must remain unmodified"))
        XCTAssertTrue(result.out.contains("client sees:"))
    }

    func testOnePresetShowsItsParameters() {
        let result = run(["faults", "latency"])
        XCTAssertEqual(result.status, 0)
        XCTAssertTrue(result.out.hasPrefix("latency: "), result.out)
        XCTAssertTrue(result.out.contains("parameters (--fault latency:key=value,...):"), result.out)
    }

    func testUnknownPresetNamesTheKnownOnes() {
        let result = run(["faults", "no-such-preset"])
        XCTAssertEqual(result.status, 1)
        XCTAssertTrue(result.err.contains("no-such-preset"), result.err)
        XCTAssertTrue(result.err.contains("strip-set-cookie"), result.err)
    }
}
