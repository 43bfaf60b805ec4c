import Evidence
import Hashing
import HTTP
import XCTest
@testable import Proxy

/// A head forwarded with the very field list it came with is recorded once:
/// both legs' messages hold one array of recorded fields. Equal fields in
/// lists of their own are recorded on each leg, to the same values.
final class ExchangeRecorderFieldsTests: XCTestCase {
    private let time = Timestamp(millisecondsSince1970: 1_700_000_000_000)
    private let redaction = RedactionPolicy(digester: SecretDigester(key: [UInt8](repeating: 5, count: 32)))

    /// True when the two arrays are one storage.
    private func sameStorage(_ a: [RecordedField], _ b: [RecordedField]) -> Bool {
        a.withUnsafeBufferPointer { mine in b.withUnsafeBufferPointer { $0.baseAddress == mine.baseAddress } }
    }

    private func fields(_ pairs: [(String, String)]) -> HTTPFields {
        HTTPFields(pairs.map { HTTPField(name: $0.0, value: $0.1) })
    }

    private let responseFields: [(String, String)] = [
        ("server", "nginx"), ("date", "Fri, 04 Dec 2026 21:09:40 GMT"), ("set-cookie", "sid=secret; Path=/"),
    ]

    /// A two-leg record whose response heads carry `downstream` and `upstream`.
    private func record(downstream: HTTPFields, upstream: HTTPFields) -> ExchangeRecord {
        let settings = RecordingSettings(tap: "t", redaction: redaction, clock: { Timestamp(millisecondsSince1970: 1) })
        let leg = LegRecorder(role: .downstream, connectionID: nil, tls: nil, bodyStoreLimit: 0,
                              digests: settings.contentDigests)
        var recorder = ExchangeRecorder(id: ExchangeID(connection: ConnectionID(.downstream, 1), sequence: 1),
                                        settings: settings, downstream: leg)
        recorder.beginUpstream(connection: ConnectionID(.upstream, 1), tls: nil)
        let request = HTTPRequestHead(method: .get, scheme: "https", authority: "localhost", path: "/",
                                      fields: fields([("accept", "*/*")]))
        recorder.downstream.request.recordRequest(request, wire: .http2Request(request), connectionScheme: "https", at: time)
        recorder.downstream.request.recordEnd(trailers: nil, at: time)
        recorder.upstream!.request.recordRequest(request, wire: .http2Request(request), connectionScheme: "https", at: time)
        recorder.upstream!.request.recordEnd(trailers: nil, at: time)
        let upstreamHead = HTTPResponseHead(status: 200, version: .http2, fields: upstream)
        recorder.upstream!.response.recordResponse(upstreamHead, wire: .http2Response(upstreamHead), at: time)
        recorder.upstream!.response.recordEnd(trailers: nil, at: time)
        let downstreamHead = HTTPResponseHead(status: 200, version: .http2, fields: downstream)
        recorder.downstream.response.recordResponse(downstreamHead, wire: .http2Response(downstreamHead), at: time)
        recorder.downstream.response.recordEnd(trailers: nil, at: time)
        return recorder.finish(error: nil)
    }

    func testAForwardedFieldListIsRecordedOnceForBothLegs() throws {
        let list = fields(responseFields)
        let record = record(downstream: list, upstream: list)
        let first = try XCTUnwrap(record.legs[0].response?.fields), second = try XCTUnwrap(record.legs[1].response?.fields)
        XCTAssertTrue(sameStorage(first, second), "one array for both legs")
        XCTAssertEqual(first, redaction.record(list))
        XCTAssertTrue(first[2].isRedacted, "the shared list is the redacted one")
        // The requests carry one head too: its fields are shared as well.
        XCTAssertTrue(sameStorage(try XCTUnwrap(record.legs[0].request?.fields),
                                             try XCTUnwrap(record.legs[1].request?.fields)))
    }

    func testEqualFieldsInListsOfTheirOwnAreRecordedOnEachLeg() throws {
        let record = record(downstream: fields(responseFields), upstream: fields(responseFields))
        let first = try XCTUnwrap(record.legs[0].response?.fields), second = try XCTUnwrap(record.legs[1].response?.fields)
        XCTAssertFalse(sameStorage(first, second))
        XCTAssertEqual(first, second)
        XCTAssertEqual(first, redaction.record(fields(responseFields)))
    }

    func testAFieldListChangedOnTheWayIsRecordedAsItWent() throws {
        let changed = fields(responseFields + [("via", "1.1 intact")])
        let record = record(downstream: changed, upstream: fields(responseFields))
        XCTAssertEqual(record.legs[0].response?.fields, redaction.record(changed))
        XCTAssertEqual(record.legs[1].response?.fields, redaction.record(fields(responseFields)))
    }
}
