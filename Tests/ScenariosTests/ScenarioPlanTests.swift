import XCTest
@testable import Scenarios

/// The plan wires the path client → tap A → load balancer → tap B → server on loopback only.
final class ScenarioPlanTests: XCTestCase {
    private func plan(_ name: String) throws -> ScenarioPlan {
        ScenarioPlan(scenario: try ScenarioFixtures.example(name), ports: ScenarioPorts(base: 20000),
                     runDirectory: "/tmp/run/", intactExecutable: "/opt/intact", loadBalancerExecutable: "/usr/sbin/lb")
    }

    private func value(after option: String, in command: ProcessCommand) -> String? {
        guard let index = command.arguments.firstIndex(of: option), index + 1 < command.arguments.count else { return nil }
        return command.arguments[index + 1]
    }

    func testThePathGoesThroughEachListenerInTurn() throws {
        let plan = try plan("nginx/good")
        let roles = plan.services.map(\.role)
        XCTAssertEqual(roles, [.server, .tapB, .loadBalancer, .tapA])
        let server = plan.services[0], tapB = plan.services[1], tapA = plan.services[3]
        XCTAssertEqual(server.arguments.first, "server")
        XCTAssertEqual(value(after: "--listen", in: server), "127.0.0.1:20003")
        // contextUrl and tokenUrl must name what the client sees: tap A's origin.
        XCTAssertEqual(value(after: "--external-url", in: server), "https://127.0.0.1:20000")
        XCTAssertEqual(value(after: "--listen", in: tapB), "127.0.0.1:20002")
        XCTAssertEqual(value(after: "--mode", in: tapB), "reverse:https://127.0.0.1:20003")
        XCTAssertEqual(value(after: "--listen", in: tapA), "127.0.0.1:20000")
        XCTAssertEqual(value(after: "--mode", in: tapA), "reverse:https://127.0.0.1:20001")
        XCTAssertEqual(plan.placeholderValues["LISTEN_PORT"], "20001")
        XCTAssertEqual(plan.placeholderValues["UPSTREAM_PORT"], "20002")
        XCTAssertEqual(plan.client.arguments.prefix(2), ["client", "https://127.0.0.1:20000/suite/rest/protected"])
        XCTAssertNil(plan.client.arguments.firstIndex(of: "--proxy"))
        XCTAssertEqual(plan.runDirectory, "/tmp/run")
    }

    func testEveryTapRecordsUnderItsNameAndVerifyReadsThemInPathOrder() throws {
        let plan = try plan("nginx/good")
        let commands = [plan.client, plan.services[3], plan.services[1], plan.services[0]]
        for (tap, command) in zip(ScenarioPlan.tapNames, commands) {
            XCTAssertEqual(value(after: "--tap", in: command), tap)
            XCTAssertEqual(value(after: "--record", in: command), "/tmp/run/\(tap).jsonl")
        }
        XCTAssertEqual(plan.verify.arguments.prefix(5), ["verify", "/tmp/run/client.jsonl", "/tmp/run/tap-a.jsonl",
                                                         "/tmp/run/tap-b.jsonl", "/tmp/run/server.jsonl"])
        XCTAssertEqual(value(after: "--path", in: plan.verify), "client,tap-a,tap-b,server")
        XCTAssertNil(value(after: "--policy", in: plan.verify))
    }

    func testEveryAddressIsLoopback() throws {
        let plan = try plan("haproxy/good")
        for command in plan.services + [plan.client] {
            for argument in command.arguments where argument.contains("://") || argument.hasSuffix(":20000") {
                XCTAssertTrue(argument.contains("127.0.0.1:"), "\(command.role): \(argument)")
            }
        }
        XCTAssertEqual(plan.placeholderValues["LISTEN_ADDRESS"], "127.0.0.1")
        XCTAssertEqual(plan.placeholderValues["UPSTREAM_ADDRESS"], "127.0.0.1")
    }

    func testTapAPresentsAClientCertificateOnlyWhenTheScenarioSaysSo() throws {
        let withCertificate = try plan("nginx/client-cert").services[3]
        XCTAssertEqual(value(after: "--upstream-client-cert", in: withCertificate), "/tmp/run/tap-a-client.p12")
        XCTAssertNil(value(after: "--upstream-client-cert", in: try plan("nginx/client-cert-missing").services[3]))
    }

    func testTheLoadBalancerRunsInTheForegroundWithItsFilesInTheRunDirectory() throws {
        let nginx = try plan("nginx/good")
        XCTAssertEqual(nginx.services[2].arguments, ["-p", "/tmp/run/", "-c", "/tmp/run/nginx.conf", "-e",
                                                      "/tmp/run/nginx-error.log", "-g",
                                                      "daemon off; master_process on; worker_processes 1; pid /tmp/run/nginx.pid;"])
        XCTAssertEqual(nginx.configCheck?.arguments.first, "-t")
        let haproxy = try plan("haproxy/good")
        XCTAssertEqual(haproxy.services[2].arguments, ["-db", "-f", "/tmp/run/haproxy.cfg"])
        XCTAssertEqual(haproxy.configCheck?.arguments, ["-c", "-f", "/tmp/run/haproxy.cfg"])
    }

    /// Under the runner each service takes the socket it reserved at
    /// descriptor 3; by hand (`intact scenario prepare`) each binds its port.
    func testUnderTheRunnerEveryServiceInheritsItsReservedSocket() throws {
        for name in ["nginx/good", "haproxy/good"] {
            let scenario = try ScenarioFixtures.example(name)
            let inherited = ScenarioPlan(scenario: scenario, ports: ScenarioPorts(base: 20000), runDirectory: "/tmp/run/",
                                    intactExecutable: "/opt/intact", loadBalancerExecutable: "/usr/sbin/lb",
                                    listening: .inheritReserved)
            XCTAssertTrue((inherited.services + [inherited.configCheck].compactMap { $0 }).allSatisfy(\.inheritsListener), name)
            XCTAssertFalse(inherited.client.inheritsListener)
            for service in inherited.services where service.role != .loadBalancer {
                XCTAssertEqual(value(after: "--listen-fd", in: service), "3", "\(name) \(service.role)")
                XCTAssertNil(value(after: "--listen", in: service))
            }
            let byHand = try plan(name)
            XCTAssertFalse((byHand.services + [byHand.configCheck].compactMap { $0 }).contains(where: \.inheritsListener), name)
            XCTAssertEqual(byHand.placeholderValues["LISTEN"], "127.0.0.1:20001")
            XCTAssertTrue(byHand.services.allSatisfy(\.environment.isEmpty))
        }
        let nginx = ScenarioPlan(scenario: try ScenarioFixtures.example("nginx/good"), ports: ScenarioPorts(base: 20000),
                                 runDirectory: "/tmp/run", intactExecutable: "/opt/intact",
                                 loadBalancerExecutable: "/usr/sbin/nginx", listening: .inheritReserved)
        XCTAssertEqual(nginx.services[2].environment, ["NGINX": "3;"])
        XCTAssertEqual(nginx.configCheck?.environment, ["NGINX": "3;"])
        XCTAssertEqual(nginx.placeholderValues["LISTEN"], "127.0.0.1:20001", "nginx names the inherited address")
        XCTAssertTrue(nginx.services[2].description.hasPrefix("NGINX='3;' /usr/sbin/nginx -p"), nginx.services[2].description)
        let haproxy = ScenarioPlan(scenario: try ScenarioFixtures.example("haproxy/good"), ports: ScenarioPorts(base: 20000),
                                   runDirectory: "/tmp/run", intactExecutable: "/opt/intact",
                                   loadBalancerExecutable: "/usr/sbin/haproxy", listening: .inheritReserved)
        XCTAssertEqual(haproxy.placeholderValues["LISTEN"], "fd@3")
        XCTAssertEqual(haproxy.services[2].environment, [:])
    }

    func testAPolicyIsPassedToVerify() throws {
        let plan = try plan("nginx/forwarding-fields")
        XCTAssertEqual(value(after: "--policy", in: plan.verify), ScenarioFixtures.repositoryRoot + "/Examples/policies/load-balancer.json")
    }
}
