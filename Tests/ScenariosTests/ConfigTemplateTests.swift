import XCTest
@testable import Scenarios

final class ConfigTemplateTests: XCTestCase {
    func testFillsEveryPlaceholderAndLeavesOtherBracesAlone() throws {
        let template = ConfigTemplate(file: "t.conf", text: "listen {{LISTEN_ADDRESS}}:{{LISTEN_PORT}};\nmap $x { a 1; }\n{{LISTEN_PORT}}")
        XCTAssertEqual(try template.render(["LISTEN_ADDRESS": "127.0.0.1", "LISTEN_PORT": "8443"]),
                       "listen 127.0.0.1:8443;\nmap $x { a 1; }\n8443")
    }

    func testUnknownPlaceholderNamesTheLineAndTheKnownNames() {
        let template = ConfigTemplate(file: "t.conf", text: "a\nb\nlisten {{LISTEN_PROT}};\n")
        guard case let .configTemplate(file, line, reason)? = scenarioError({ try template.render(["LISTEN_PORT": "1"]) }) else {
            return
        }
        XCTAssertEqual(file, "t.conf")
        XCTAssertEqual(line, 3)
        XCTAssertTrue(reason == "unknown placeholder {{LISTEN_PROT}} (known here: LISTEN_PORT)", reason)
    }

    func testUnterminatedAndMalformedPlaceholdersAreErrors() {
        let unterminated = ConfigTemplate(file: "t.conf", text: "x {{CERT\n}}")
        assertThrows(.configTemplate(file: "t.conf", line: 1, reason: "'{{' without a closing '}}' on the same line")) {
            try unterminated.render(["CERT": "c"])
        }
        let lowercase = ConfigTemplate(file: "t.conf", text: "\n{{cert}}")
        assertThrows(.configTemplate(file: "t.conf", line: 2,
                                     reason: "'{{cert}}' is not a placeholder (names are upper case, digits and '_')")) {
            try lowercase.render(["CERT": "c"])
        }
    }

    func testEveryDocumentedPlaceholderIsFilledByAPlan() throws {
        let plan = ScenarioPlan(scenario: try ScenarioFixtures.example("nginx/good"), ports: ScenarioPorts(base: 20000),
                                runDirectory: "/tmp/run", intactExecutable: "/bin/intact",
                                loadBalancerExecutable: "/usr/sbin/nginx")
        XCTAssertEqual(Set(plan.placeholderValues.keys), Set(ConfigTemplate.commonPlaceholders.map(\.name)))
        // A kind's own placeholders are defined for that kind only.
        for kind in IntermediaryKind.builtIn {
            let scenario = try ScenarioFixtures.example("\(kind.name)/good")
            let plan = ScenarioPlan(scenario: scenario, ports: ScenarioPorts(base: 20000), runDirectory: "/tmp/run",
                                    intactExecutable: "/bin/intact", loadBalancerExecutable: "/bin/true")
            XCTAssertEqual(Set(plan.placeholderValues.keys), Set(kind.placeholders), kind.name)
            let documented = Set((ConfigTemplate.commonPlaceholders + ConfigTemplate.kindPlaceholders).map(\.name))
            XCTAssertTrue(Set(kind.placeholders).isSubset(of: documented), kind.name)
        }
    }
}
