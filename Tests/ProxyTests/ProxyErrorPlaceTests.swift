import Evidence
@testable import Proxy
import XCTest

/// `ProxyError.Place`: the typed place of a proxy failure, recorded as the
/// same `location`, side and stage that recordings always carried.
final class ProxyErrorPlaceTests: XCTestCase {
    static let target = UpstreamTarget(scheme: .https, host: "origin.test", port: 8443)!
    static let places: [ProxyError.Place] = [
        .downstream, .downstreamConnection, .downstreamTLSHandshake, .downstreamConnect, .downstreamRequest,
        .downstreamResponseHead, .downstreamResponseBody, .downstreamResponseEnd,
        .upstreamConnect, .upstreamConnectForCONNECT, .upstreamConnectViaProxy, .upstream(target),
        .upstreamRequestBody, .upstreamRequestEnd, .upstreamResponse, .passthroughTunnel(to: "origin.test:443"),
        .upgrade, .upgradedConnection, .hook(on: .request), .hook(on: .response), .proxy,
    ]
    static let kinds: [ExchangeRecord.Failure.Kind] = [
        .connectionRefused, .resolution, .tls, .reset, .closedEarly, .timeout, .protocolError, .internal,
    ]

    func testEveryPlaceRecordsWhatItsTextAlwaysSaid() {
        for place in Self.places {
            for kind in Self.kinds {
                let typed = ProxyError(kind, at: place, "m", status: .proxyInternalError).failure
                // What a recording of an older build says: side and stage read from the text.
                let read = ExchangeRecord.Failure(kind: kind, location: place.description, message: "m")
                XCTAssertEqual(typed, read, "\(place) with \(kind)")
            }
        }
    }

    func testTheRecordedTextOfEachPlace() {
        XCTAssertEqual(ProxyError.Place.upstream(Self.target).description, "upstream https://origin.test:8443")
        XCTAssertEqual(ProxyError.Place.hook(on: .response).description, "proxy hook on the response")
        XCTAssertEqual(ProxyError.Place.passthroughTunnel(to: "a.test:443").description, "passthrough tunnel to a.test:443")
        XCTAssertEqual(ProxyError.Place.upstreamConnectForCONNECT.description, "upstream connect (CONNECT)")
        XCTAssertEqual(Set(Self.places.map(\.description)).count, Self.places.count, "no two places read the same")
    }

    func testAHostNamedLikeAStageDoesNotChangeTheStage() {
        let target = UpstreamTarget(scheme: .https, host: "tls-response.test", port: 443)!
        let failure = ProxyError(.reset, at: .upstream(target), "reset", status: .connectionTerminated).failure
        XCTAssertEqual(failure.side, .upstream)
        XCTAssertNil(failure.stage, "the place says no stage; a reset implies none")
    }
}
