import Evidence
import HTTP
import IntactTestSupport
import Proxy
import XCTest

/// An HTTP/2 client that leaves while its upstream connection is still
/// being opened (the origin's TLS handshake held back), on the playbook: the
/// exchange's record carries the upstream leg, broken with why, and the
/// connection dialled for it joins the pool clean (no request head went out
/// on it), so the next request reuses it.
final class SlowUpstreamTests: XCTestCase {
    func testClientLeavingBeforeTheUpstreamHandshakeEndsLeavesACleanPooledConnection() throws {
        let target = try XCTUnwrap(UpstreamTarget(scheme: .https, host: "origin.test", port: 443))
        let playbook = try ProxyPlaybook(mode: .reverse(target))

        // The client (HTTP/2, as curl speaks it) gives up while the upstream TLS handshake waits.
        let impatient = try playbook.connectHTTP2Client(tls: "origin.test")
        impatient.request(HTTPRequestHead(method: "GET", authority: "origin.test", path: "/file"))
        let origin = try playbook.acceptDial(host: "origin.test", port: 443, tls: true, holdsTLS: true)
        XCTAssertNil(origin.negotiated, "the handshake is held")
        impatient.peer.reset()
        playbook.run()
        XCTAssertEqual(playbook.records.count, 1, "the abandoned exchange is recorded at once")
        // The handshake finishes: the connection then sits in the pool, idle.
        origin.holdsTLS = false
        playbook.run()
        XCTAssertNotNil(origin.negotiated)
        XCTAssertEqual(origin.read(), [], "no head went out for the request that was abandoned")
        XCTAssertFalse(origin.isClosed)

        let patient = try playbook.connectHTTP2Client(tls: "origin.test")
        let stream = try XCTUnwrap(patient.request(HTTPRequestHead(method: "GET", authority: "origin.test", path: "/file")))
        playbook.run()
        XCTAssertTrue(playbook.network.dials.isEmpty, "the connection dialled for the abandoned request serves the next one")
        XCTAssertTrue(origin.readText().hasPrefix("GET /file HTTP/1.1\r\n"))
        origin.send("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
        playbook.run()
        let events = patient.takeEvents()
        XCTAssertEqual(events.statuses[stream], 200)
        XCTAssertEqual(events.bodies[stream], Array("ok".utf8))

        let records = playbook.records
        XCTAssertEqual(records.count, 2)
        let abandoned = try XCTUnwrap(records.first { $0.error != nil }, "\(records)")
        XCTAssertEqual(abandoned.error?.side, .client)
        let leg = try XCTUnwrap(abandoned.leg(.upstream), "the upstream attempt is recorded")
        XCTAssertEqual(leg.connectionID, "none")
        XCTAssertNil(leg.request)
        XCTAssertTrue(leg.broken?.hasPrefix("the client left") == true, leg.broken ?? "not broken")
        XCTAssertTrue(leg.broken?.hasSuffix("before the upstream connection was ready") == true, leg.broken ?? "")
        let served = try XCTUnwrap(records.first { $0.error == nil })
        assertCleanHop(served)
        XCTAssertNil(served.leg(.upstream)?.broken)
    }
}
