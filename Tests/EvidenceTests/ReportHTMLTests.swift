import Foundation
import IntactTestSupport
import XCTest
import Evidence

/// The HTML report is one self-contained page that a real browser renders
/// with the verdicts and differences on it. The browser is Debian's
/// `chromium` (in the Makefile's TEST_PACKAGES), run headless.
final class ReportHTMLTests: XCTestCase {
    static let chromium = "/usr/bin/chromium"

    func testPageIsSelfContained() throws {
        let html = HTMLReport.render(try ReportSamples.report())
        XCTAssertTrue(html.hasPrefix("<!DOCTYPE html>"))
        for forbidden in ["<script", "<link", "<img", "<iframe", "src=", "href=", "@import", "url("] {
            XCTAssertFalse(html.contains(forbidden), "the page must not load anything: found \(forbidden)")
        }
        XCTAssertTrue(html.contains("/suite?x=&lt;b&gt;"), "text is escaped")
        XCTAssertFalse(html.contains("x=<b>"))
    }

    func testChromiumRendersVerdictsAndDifferences() throws {
        guard FileManager.default.isExecutableFile(atPath: ReportHTMLTests.chromium) else {
            return XCTFail("\(ReportHTMLTests.chromium) is missing: run `make deps` (Debian package chromium)")
        }
        let page = temporaryPath("report.html")
        try HTMLReport.render(try ReportSamples.report()).write(toFile: page, atomically: true, encoding: .utf8)
        let dom = try dumpDOM(page)

        XCTAssertTrue(dom.contains("Policy lb FAILS: 4 of 6 exchanges fail"), dom)
        let expectedVerdicts = [1: "equivalent", 2: "tolerated", 3: "modified", 4: "broken", 5: "foreign", 6: "missing"]
        for (number, verdict) in expectedVerdicts {
            XCTAssertTrue(dom.contains("id=\"exchange-\(number)\" data-verdict=\"\(verdict)\""), "exchange \(number) \(verdict)")
        }
        for arrow in [
            "data-hop=\"2\" data-message=\"request\" data-verdict=\"equivalent\"",
            "data-hop=\"2\" data-message=\"response\" data-verdict=\"modified\"",
            "data-hop=\"2\" data-message=\"response\" data-verdict=\"foreign\"",
            "data-hop=\"1\" data-message=\"request\" data-verdict=\"missing\"",
            "data-hop=\"3\" data-message=\"response\" data-verdict=\"broken\"",
        ] {
            XCTAssertTrue(dom.contains(arrow), "missing arrow \(arrow)")
        }
        for difference in [
            "request equivalent: version HTTP/1.1 → HTTP/2",
            "cookie crumbs (1 → 2 fields)",
            "request tolerated: Via added (1.1 lb) [tolerated: field via added in requests (LB)]",
            "response modified: JSESSIONID removed",
            "injected on purpose: strip-set-cookie (removed 1 Set-Cookie)",
            "broken: proxy-a, upstream response head: reset: connection reset by peer",
            "response foreign: 503 reached proxy-a downstream but never left proxy-a upstream",
            "request missing: GET /suite/rest/c left client, never reached proxy-a",
            "hops 1, 3 paired by sequence alignment (no shared trace id)",
        ] {
            XCTAssertTrue(dom.contains(difference), "missing difference \(difference)")
        }
        XCTAssertTrue(dom.contains("modified (injected)</text>"), "the injected arrow is labelled")
        XCTAssertTrue(dom.contains("#6 GET /suite/rest/c"))
    }

    /// Loads the page in headless Chromium and returns the DOM it built.
    private func dumpDOM(_ page: String) throws -> String {
        let profile = temporaryPath("chromium-profile")
        let run = try ToolRun.run(ReportHTMLTests.chromium,
                                  ["--headless", "--no-sandbox", "--disable-gpu", "--user-data-dir=\(profile)",
                                   "--dump-dom", URL(fileURLWithPath: page).absoluteString], timeout: 120)
        XCTAssertEqual(run.status, 0, "chromium exit status")
        return run.output
    }
}
