import Codecs
import Foundation
import XCTest
@testable import Evidence
import HTTP
import Hashing

/// The hand-written line encoder (`ExchangeRecord.jsonLine`) against
/// `JSONEncoder`: every kind of record decodes to the same value from both,
/// and both lines parse to the same JSON object.
final class ExchangeRecordLineTests: XCTestCase {
    /// Every shape a tap writes: two legs; one leg of each role; a failure
    /// with a leg missing its response; stored and truncated bodies;
    /// trailers; HTTP/2 with stream ids; no TLS; a client certificate;
    /// secrets in clear; absent optionals everywhere.
    ///
    /// - Parameter digester: the digest key (a fixed one makes every line
    ///   the same bytes from run to run, for `ExchangeRecordLineBytesTests`).
    static func everyKind(digester: SecretDigester = .ephemeral) -> [ExchangeRecord] {
        let redaction = RedactionPolicy(digester: digester)
        var kinds: [ExchangeRecord] = []
        kinds.append(SampleRecords.record(1, redaction: redaction))
        kinds.append(SampleRecords.record(2, redaction: RedactionPolicy(recordSecrets: true, digester: digester), storeLimit: 8))
        kinds.append(SampleRecords.record(3, redaction: redaction, storeLimit: 4096))

        var failed = SampleRecords.record(4, redaction: redaction)
        failed.legs[1].response = nil
        failed.legs[1].tls = nil
        failed.error = ExchangeRecord.Failure(kind: .tls, location: "upstream TLS handshake", message: "alert 42 bad certificate")
        failed.traceID = nil
        failed.authFlowStep = nil
        failed.faults = []
        failed.retries = [ExchangeRecord.Failure(kind: .reset, location: "upstream stream 1", message: "REFUSED_STREAM"),
                          ExchangeRecord.Failure(kind: .closedEarly, location: "somewhere", message: "m", side: .client,
                                                 stage: .response)]
        kinds.append(failed)

        var event = SampleRecords.record(7, redaction: redaction)
        event.legs = [ExchangeRecord.Leg(role: .downstream, connectionID: "c-7",
                                         tls: TLSDetails(version: "TLSv1.3", sni: "1.2.3.4", alpn: "h2", sniIssue: "an IP address"))]
        event.connection = RequestlessConnection(outcome: .handshakeOnly, peer: "127.0.0.1:5555",
                                           at: Timestamp(millisecondsSince1970: 1_700_000_000_001.25), tlsVersion: "TLSv1.3")
        kinds.append(event)
        kinds.append(ExchangeRecord(exchangeID: "ex-reset", tap: "t", legs: [],
                                    connection: RequestlessConnection(outcome: .reset)))

        var interim = SampleRecords.record(8, redaction: redaction)
        let continueHead = HTTPResponseHead(status: 100, reason: "Continue", fields: [:])
        interim.legs[0].interimResponses = [
            RecordedMessage(response: continueHead,
                            digest: MessageDigest(head: HeadDigest(response: continueHead,
                                                                   wire: .http1(head: Array("HTTP/1.1 100 Continue\r\n".utf8)),
                                                                   using: .sha256)),
                            timings: MessageTimings(start: Timestamp(millisecondsSince1970: 5)), redaction: redaction)]
        interim.legs[0].interimWithheld = [100, 103]
        kinds.append(interim)

        var upgraded = SampleRecords.record(10, redaction: redaction)
        upgraded.legs[0].relayed = RelayedStreams(
            clientToServer: RelayedStreams.Stream(bytes: 4, sha256: .of(Array("ping".utf8))),
            serverToClient: RelayedStreams.Stream(bytes: 0, sha256: .ofNothing))
        kinds.append(upgraded)

        var refused = SampleRecords.record(5, redaction: redaction)
        refused.legs[1].request = nil
        refused.legs[1].response = nil
        refused.error = ExchangeRecord.Failure(kind: .connectionRefused, location: "upstream connect", message: "ECONNREFUSED")
        kinds.append(refused)

        for role in [ExchangeRecord.Leg.Role.client, .server] {
            var single = SampleRecords.record(6, redaction: redaction)
            single.legs = [single.legs[0]]
            single.legs[0].role = role
            single.legs[0].streamID = 7
            single.legs[0].tls = TLSDetails(version: "TLSv1.3", alpn: "h2", clientCertificateSubject: "CN=app,O=Ä Ltd")
            single.faults = [ExchangeRecord.RecordedFault(name: "reset-stream")]
            kinds.append(single)
        }

        // HTTP/2 with trailers, a pseudo-less field list and an open (incomplete) response.
        let head = HTTPRequestHead(method: "GET", scheme: "https", authority: "app.test", path: "/suite/x", version: .http2,
                                   fields: ["accept": "*/*", "te": "trailers"])
        let response = HTTPResponseHead(status: 200, reason: "", version: .http2, fields: ["grpc-status": "0"])
        let trailers: HTTPFields = ["grpc-message": "ok", "Set-Cookie": "a=b"]
        var body = BodyDigester(using: .sha256)
        body.update(Array("partial".utf8))
        let h2 = ExchangeRecord.Leg(
            role: .downstream, connectionID: "c-9", streamID: 3, tls: nil,
            request: RecordedMessage(request: head, connectionScheme: "https",
                                     digest: MessageDigest(head: HeadDigest(request: head, wire: .http2Request(head),
                                                                            connectionScheme: "https", using: .sha256)),
                                     timings: MessageTimings(start: Timestamp(millisecondsSince1970: 1)),
                                     redaction: redaction),
            response: RecordedMessage(response: response,
                                      digest: MessageDigest(head: HeadDigest(response: response, wire: .http2Response(response),
                                                                             using: .sha256),
                                                            body: body.finish(trailers: trailers)),
                                      trailers: trailers, complete: false, timings: MessageTimings(),
                                      redaction: redaction))
        kinds.append(ExchangeRecord(exchangeID: "ex-h2", tap: "t", legs: [h2]))
        kinds.append(ExchangeRecord(exchangeID: "ex-empty", tap: "t", legs: []))
        return kinds
    }

    func testEveryKindRoundTripsThroughBothEncoders() throws {
        for record in Self.everyKind() {
            try assertSameMeaning(record)
        }
    }

    /// Control characters, quotes, backslashes and non-ASCII in every kind of string member.
    static func awkward(digester: SecretDigester = .ephemeral) -> ExchangeRecord {
        var record = SampleRecords.record(1, redaction: RedactionPolicy(recordSecrets: true, digester: digester))
        let awkward = "quote\" back\\slash /slash\n\r\t\u{08}\u{0C}\u{00}\u{01}\u{1F}\u{7F} é ü ÿ 日本 😀 \u{2028}"
        record.exchangeID = awkward
        record.tap = "tap\u{1B}[31m"
        record.legs[0].request?.fields.append(RecordedField(name: "X-Odd", value: awkward))
        record.legs[0].response?.reason = "Gef\u{00E4}llt\u{0000}"
        record.error = ExchangeRecord.Failure(kind: .protocolError, location: "downstream\tparse", message: awkward)
        return record
    }

    /// Extreme integers, a negative status and timings that are not exact thousandths or not finite.
    static func numbers(digester: SecretDigester = .ephemeral) -> ExchangeRecord {
        var record = SampleRecords.record(1, redaction: RedactionPolicy(digester: digester))
        record.legs[0].streamID = Int.max
        record.legs[0].request?.timings = MessageTimings(start: Timestamp(millisecondsSince1970: 1_700_000_000_123.456),
                                                         headersDone: Timestamp(millisecondsSince1970: -0.000001),
                                                         end: Timestamp(millisecondsSince1970: .infinity))
        record.legs[0].response?.timings = MessageTimings(start: Timestamp(millisecondsSince1970: 1e300),
                                                          end: Timestamp(millisecondsSince1970: -.infinity))
        record.legs[0].response?.status = -1
        return record
    }

    func testControlCharactersAndNonASCIIAreEscapedAsJSONRequires() throws {
        let record = Self.awkward()
        try assertSameMeaning(record)

        let line = String(decoding: record.jsonLine(), as: UTF8.self)
        XCTAssertTrue(line.hasSuffix("}\n"))
        XCTAssertEqual(line.filter { $0 == "\n" }.count, 1, "a line holds no raw newline")
        XCTAssertTrue(line.contains(#"quote\" back\\slash /slash\n\r\t\b\f\u0000\u0001\u001f"#))
        XCTAssertTrue(line.contains("\u{7F} é ü ÿ 日本 😀 \u{2028}"), "non-ASCII is written as UTF-8, unescaped")
        XCTAssertTrue(line.contains(#""tap":"tap\u001b[31m""#))
    }

    func testNumbersIncludingNonFiniteTimings() throws {
        var record = Self.numbers()
        try assertSameMeaning(record)

        record.legs[0].request?.timings.end = Timestamp(millisecondsSince1970: .nan)
        let decoded = try decode(record.jsonLine())
        XCTAssertTrue(decoded.legs[0].request?.timings.end?.millisecondsSince1970.isNaN ?? false)
    }

    /// An instant equal to the one before it is copied from that one's
    /// bytes: every pattern of equal and different instants, absent ones
    /// between them, and equal values of other bits (-0 and 0, NaN), reads
    /// back as recorded and writes as each instant written on its own.
    func testEqualInstantsOfAMessageAreWrittenAsEachOnItsOwn() throws {
        let a = 1_700_000_000_000.5, b = 1_700_000_000_001.25
        let patterns: [[Double?]] = [
            [a, a, a], [a, a, b], [a, b, b], [a, b, a], [b, a, a], [nil, a, a], [a, nil, a], [a, a, nil],
            [-0.0, 0.0, -0.0], [.nan, .nan, a], [1e-7, 1e-7, 1e300],
        ]
        for pattern in patterns {
            var record = SampleRecords.record(1)
            let instant = { (value: Double?) in value.map { Timestamp(millisecondsSince1970: $0) } }
            let timings = MessageTimings(start: instant(pattern[0]), headersDone: instant(pattern[1]), end: instant(pattern[2]))
            record.legs[0].request?.timings = timings
            let decoded = try XCTUnwrap(try decode(record.jsonLine()).legs[0].request?.timings)
            let instants = [decoded.start, decoded.headersDone, decoded.end]
            for (index, value) in pattern.enumerated() {
                XCTAssertEqual(instants[index]?.millisecondsSince1970.isNaN, value?.isNaN, "\(pattern)")
                if let value, !value.isNaN { XCTAssertEqual(instants[index]?.millisecondsSince1970, value, "\(pattern)") }
            }
            // Each instant as written alone, in the same order.
            var expected = "\"timings\":{"
            for (index, name) in ["start", "headersDone", "end"].enumerated() {
                guard let value = pattern[index] else { continue }
                var alone = JSONWriter()
                alone.double(value)
                if !expected.hasSuffix("{") { expected += "," }
                expected += "\"\(name)\":" + String(decoding: alone.bytes, as: UTF8.self)
            }
            XCTAssertTrue(String(decoding: record.jsonLine(), as: UTF8.self).contains(expected + "}"), "\(pattern)")
        }
    }

    func testTheWriterWritesTheHandEncodedLine() throws {
        let path = temporaryPath()
        let writer = try RecordingWriter(path: path, header: SampleRecords.header)
        let record = SampleRecords.record(3)
        writer.append(record)
        XCTAssertNil(writer.closeAndWait())
        let lines = try Data(contentsOf: URL(fileURLWithPath: path)).split(separator: UInt8(ascii: "\n"))
        XCTAssertEqual([UInt8](lines[1]) + [UInt8(ascii: "\n")], record.jsonLine())
    }

    // MARK: Helpers

    private func decode(_ line: [UInt8]) throws -> ExchangeRecord {
        let recording = try RecordingReader.read(Data(headerLine() + line), path: "line")
        return try XCTUnwrap(recording.records.first)
    }

    private func headerLine() throws -> [UInt8] {
        try RecordingLine.encode(SampleRecords.header, as: .header, with: RecordingLine.makeEncoder())
    }

    /// Both encoders' lines decode to `record` and parse to equal JSON objects.
    private func assertSameMeaning(_ record: ExchangeRecord, file: StaticString = #filePath, line: UInt = #line) throws {
        let handWritten = record.jsonLine()
        let reference = try RecordingLine.encode(record, as: .exchange, with: RecordingLine.makeEncoder())
        XCTAssertEqual(try decode(handWritten), record, "hand-written line of \(record.exchangeID)", file: file, line: line)
        XCTAssertEqual(try decode(reference), record, file: file, line: line)
        let ours = try JSONSerialization.jsonObject(with: Data(handWritten)) as? NSDictionary
        let theirs = try JSONSerialization.jsonObject(with: Data(reference)) as? NSDictionary
        XCTAssertNotNil(ours, file: file, line: line)
        XCTAssertEqual(ours, theirs, "same JSON object as JSONEncoder's for \(record.exchangeID)", file: file, line: line)
    }
}
