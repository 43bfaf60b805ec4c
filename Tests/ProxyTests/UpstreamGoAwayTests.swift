import Evidence
import Foundation
import IntactTestSupport
import Proxy
import XCTest

/// An HTTP/2 origin that sends GOAWAY every few requests (nginx
/// `keepalive_requests`): each connection it retires is closed by the
/// proxy's pool once its last stream ended, so descriptors do not pile up.
final class UpstreamGoAwayTests: XCTestCase {
    /// The test process's open sockets (the in-process proxy's among them;
    /// other descriptors, such as the files of tool runs, are left out).
    private static var openDescriptors: Int {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return entries.filter {
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/" + $0))?.hasPrefix("socket:") == true
        }.count
    }

    func testConnectionsRetiredByGoAwayAreClosedAndDescriptorsDoNotAccumulate() throws {
        let origin = try NginxOrigin(http2: true, keepaliveRequests: 3)
        defer { origin.stop() }
        try origin.serve("file", size: 1000)
        let target = try XCTUnwrap(UpstreamTarget(scheme: .https, host: "127.0.0.1", port: origin.port))
        let proxy = try ProxyHarness(mode: .reverse(target)) { $0.upstreamVerification = .caFile(origin.caFile) }
        let url = "https://127.0.0.1:\(proxy.port)/file"
        let warm = try ToolRun.curl(["--cacert", proxy.caFile, "-o", "/dev/null", "-w", "%{http_code}", url])
        XCTAssertEqual(warm.output, "200", warm.error)
        Thread.sleep(forTimeInterval: 0.5)
        let baseline = Self.openDescriptors

        // 60 requests on one client connection: nginx retires its connection every 3, 20 times over.
        let rounds = 60
        let run = try ToolRun.curl(["--cacert", proxy.caFile, "--http2", "-w", "%{http_code}\n"]
                                   + Array(repeating: ["-o", "/dev/null", url], count: rounds).flatMap { $0 })
        XCTAssertEqual(run.output.split(separator: "\n").filter { $0 == "200" }.count, rounds, run.output + run.error)

        // The retired connections close (the pool's, not only nginx's doing); what stays is the pool's live one.
        var now = Self.openDescriptors
        for _ in 0..<100 where now > baseline + 2 {
            Thread.sleep(forTimeInterval: 0.05)
            now = Self.openDescriptors
        }
        XCTAssertLessThanOrEqual(now, baseline + 2, "descriptors grew from \(baseline) to \(now)")

        let records = try proxy.stopAndRead().records
        XCTAssertEqual(records.count, rounds + 1)
        XCTAssertEqual(Set(records.compactMap { $0.leg(.upstream)?.connectionID }).count, rounds / 3 + 1,
                       "a new upstream connection after each GOAWAY")
        for record in records { assertCleanHop(record) }
    }

    /// A burst ten times as wide as the origin's requests per connection
    /// (nginx `keepalive_requests 10`, 100 streams at once): the first GOAWAY
    /// refuses streams, the pool learns the budget from it and spreads later
    /// streams over connections of at most ten, so none is refused again and
    /// every request is answered.
    func testABurstWiderThanTheOriginsRequestsPerConnectionIsAllAnswered() throws {
        let origin = try NginxOrigin(http2: true, keepaliveRequests: 10)
        defer { origin.stop() }
        try origin.serve("file", size: 100)
        let target = try XCTUnwrap(UpstreamTarget(scheme: .https, host: "127.0.0.1", port: origin.port))
        let proxy = try ProxyHarness(mode: .reverse(target)) { $0.upstreamVerification = .caFile(origin.caFile) }
        let requests = 2000
        let run = try ToolRun.run("/usr/bin/h2load", ["-n", "\(requests)", "-c", "10", "-m", "10",
                                                      "https://127.0.0.1:\(proxy.port)/file"])
        XCTAssertTrue(run.output.contains("\(requests) succeeded, 0 failed"), run.output)

        let records = try proxy.stopAndRead().records.filter { $0.connection == nil }
        XCTAssertEqual(records.count, requests)
        XCTAssertTrue(records.allSatisfy { $0.error == nil }, "\(records.compactMap(\.error).prefix(3))")
        // Refusals happen before the budget is known (the first connection's GOAWAY), hardly after.
        let refused = records.reduce(0) { $0 + ($1.retries?.count ?? 0) }
        XCTAssertLessThan(refused, 200, "streams refused by GOAWAY: the budget was not kept")
        // At most ten streams per upstream connection.
        let perConnection = Dictionary(grouping: records.compactMap { $0.leg(.upstream)?.connectionID }, by: { $0 })
        XCTAssertLessThanOrEqual(perConnection.values.map(\.count).max() ?? 0, 10)
    }
}
