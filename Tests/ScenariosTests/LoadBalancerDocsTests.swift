import Foundation
import XCTest
@testable import Scenarios

/// Docs/load-balancers.md keeps a section per product with what it adds by
/// default, how to make it transparent and how to validate a deployment, and
/// names every example scenario.
final class LoadBalancerDocsTests: XCTestCase {
    private static let document = ScenarioFixtures.repositoryRoot + "/Docs/load-balancers.md"

    func testEveryProductHasItsThreeSubsections() throws {
        let text = try String(contentsOfFile: Self.document, encoding: .utf8)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        for kind in IntermediaryKind.builtIn {
            guard let start = lines.firstIndex(of: "### \(kind.displayName)") else {
                XCTFail("no section \"### \(kind.displayName)\"")
                continue
            }
            let section = lines[(start + 1)...].prefix { !$0.hasPrefix("### ") && !$0.hasPrefix("## ") }
            let headings = section.filter { $0.hasPrefix("#### ") }
            XCTAssertEqual(headings, ["#### What it adds by default", "#### Make it transparent", "#### Validate your deployment"],
                           kind.displayName)
            XCTAssertTrue(section.joined(separator: "\n").contains("--intermediary \(kind.name)"), "\(kind.name): verify's option named")
        }
    }

    func testEveryExampleIsNamedInTheDocument() throws {
        let text = try String(contentsOfFile: Self.document, encoding: .utf8)
        for scenario in try ScenarioCatalog.load([ScenarioFixtures.examples]) {
            XCTAssertTrue(text.contains("`\(scenario.name)`") || text.contains("loadbalancers/\(scenario.name)"),
                          "\(scenario.name) is not named in Docs/load-balancers.md")
        }
    }
}
