import Codecs
@testable import Evidence
import Foundation
import HTTP
import Hashing
import XCTest

/// The second leg's copies of what the first leg wrote (`JSONRepeat`): a
/// value is copied exactly when both legs write it as the same bytes, and a
/// line with copies is the same bytes as one written value by value.
final class ExchangeRecordLineRepeatsTests: XCTestCase {
    private let redaction = RedactionPolicy(digester: SecretDigester(key: [UInt8](repeating: 3, count: 32)))

    private func line(_ record: ExchangeRecord, repeating: Bool) -> String {
        var json = JSONWriter(capacity: 64)
        record.writeLine(to: &json, repeatingValues: repeating)
        return String(decoding: json.bytes, as: UTF8.self)
    }

    /// The line with copies is the line without; returns what was copied.
    @discardableResult
    private func assertSameLine(_ record: ExchangeRecord, file: StaticString = #filePath, line: UInt = #line) -> LegRepeats {
        XCTAssertEqual(self.line(record, repeating: true), self.line(record, repeating: false), file: file, line: line)
        XCTAssertEqual(record.jsonLine(), Array(self.line(record, repeating: false).utf8), file: file, line: line)
        return record.legs.count >= 2 ? record.legs[0].repeats(in: record.legs[1]) : LegRepeats()
    }

    private func isWanted(_ value: JSONRepeat) -> Bool {
        if case .wanted = value { return true }
        return false
    }

    /// A response leg with these fields, its head digest computed from them.
    private func leg(_ role: ExchangeRecord.Leg.Role, _ fields: [(String, String)],
                     version: HTTPVersion = .http1_1) -> ExchangeRecord.Leg {
        let head = HTTPResponseHead(status: 200, reason: "OK", version: version,
                                    fields: HTTPFields(fields.map { HTTPField(name: $0.0, value: $0.1) }))
        let wire = SampleRecords.rawHead(["HTTP/1.1 200 OK"] + head.fields.map(\.description))
        let digest = MessageDigest(head: HeadDigest(response: head, wire: .http1(head: wire), using: redaction.digests))
        return ExchangeRecord.Leg(role: role, connectionID: role == .downstream ? "d1" : "u1",
                                  response: RecordedMessage(response: head, digest: digest,
                                                            timings: MessageTimings(), redaction: redaction))
    }

    private func record(_ first: ExchangeRecord.Leg, _ second: ExchangeRecord.Leg) -> ExchangeRecord {
        ExchangeRecord(exchangeID: "d1.1", tap: "proxy", legs: [first, second])
    }

    func testEveryKindOfRecordIsTheSameLineWithCopies() {
        let digester = SecretDigester(key: [UInt8](repeating: 9, count: 32))
        for record in ExchangeRecordLineTests.everyKind(digester: digester)
            + [ExchangeRecordLineTests.awkward(digester: digester), ExchangeRecordLineTests.numbers(digester: digester)] {
            assertSameLine(record)
        }
    }

    func testFieldsForwardedUnchangedAreWrittenOnceAndCopied() {
        let fields = [("server", "nginx"), ("date", "Wed, 02 Dec 2026 05:19:23 GMT"), ("content-length", "1024"),
                      ("etag", "\"6b0faa5a-400\""), ("x-long-field-name-over-fifteen-bytes", String(repeating: "v", count: 40))]
        let downstream = leg(.downstream, fields)
        let repeats = assertSameLine(record(downstream, leg(.upstream, fields, version: .http2)))
        XCTAssertTrue(isWanted(repeats.response.fields))
        XCTAssertTrue(isWanted(repeats.response.head.fields))
        XCTAssertTrue(isWanted(repeats.response.head.fieldNames))
        XCTAssertFalse(isWanted(repeats.request.fields), "no request on either leg")

        // The same bytes in strings of their own (not one storage): still copied.
        let rebuilt = fields.map { (String(decoding: Array($0.0.utf8), as: UTF8.self), String(decoding: Array($0.1.utf8), as: UTF8.self)) }
        let separate = assertSameLine(record(downstream, leg(.upstream, rebuilt)))
        XCTAssertTrue(isWanted(separate.response.fields))
        XCTAssertTrue(isWanted(separate.response.head.fields))
        XCTAssertTrue(isWanted(separate.response.head.fieldNames))

        // A third leg writes everything itself.
        var three = record(downstream, leg(.upstream, fields))
        three.legs.append(leg(.server, fields))
        assertSameLine(three)
    }

    func testFieldsThatDifferInAnyByteAreWrittenAgain() {
        let fields = [("Server", "nginx"), ("Content-Type", "text/plain; charset=utf-8"), ("Set-Cookie", "a=b; Path=/")]
        let downstream = leg(.downstream, fields)
        var variants: [[(String, String)]] = [
            [("Server", "nginx")] + fields.dropFirst().dropLast(),                   // one fewer
            fields + [("Via", "1.1 lb")],                                            // one more
            [fields[1], fields[0], fields[2]],                                       // reordered
            [("server", "nginx"), fields[1], fields[2]],                             // a name's case
            [("Server", "nginX"), fields[1], fields[2]],                             // a value's last byte
            [fields[0], ("Content-Type", "text/plain; charset=utf-8 "), fields[2]],  // a longer value
            [fields[0], fields[1], ("Set-Cookie", "a=b; Path=/x")],                  // a cookie's attribute
            [],
        ]
        // Equal strings (canonically equivalent) with other bytes.
        variants.append([("Server", "caf\u{E9}"), fields[1], fields[2]])
        let accented = leg(.downstream, [("Server", "cafe\u{301}"), fields[1], fields[2]])
        for variant in variants {
            let repeats = assertSameLine(record(downstream, leg(.upstream, variant)))
            XCTAssertFalse(isWanted(repeats.response.fields), "\(variant)")
        }
        let equivalent = record(accented, leg(.upstream, variants.last!))
        let repeats = assertSameLine(equivalent)
        XCTAssertFalse(isWanted(repeats.response.fields))
        XCTAssertFalse(isWanted(repeats.response.head.fieldNames) && isWanted(repeats.response.head.fields),
                       "the digests of other bytes differ")
        let written = line(equivalent, repeating: true)
        XCTAssertTrue(written.contains("\"value\":\"cafe\u{301}\"") && written.contains("\"value\":\"caf\u{E9}\""))
    }

    func testARedactedFieldOrItsCookiePartsMustMatchToo() {
        let fields = [("Cookie", "JSESSIONID=abc; lb=1"), ("Accept", "*/*")]
        let downstream = leg(.downstream, fields)
        XCTAssertTrue(isWanted(assertSameLine(record(downstream, leg(.upstream, fields))).response.fields))

        var otherCookie = leg(.upstream, fields)
        otherCookie.response?.fields[0].cookies?[1].name = "lc"
        XCTAssertFalse(isWanted(assertSameLine(record(downstream, otherCookie)).response.fields))

        var noParts = leg(.upstream, fields)
        noParts.response?.fields[0].cookies = nil
        XCTAssertFalse(isWanted(assertSameLine(record(downstream, noParts)).response.fields))

        var inClear = leg(.upstream, fields)
        inClear.response?.fields[0].redacted = nil
        XCTAssertFalse(isWanted(assertSameLine(record(downstream, inClear)).response.fields))
    }

    func testFieldDigestsAndNamesAreComparedApartFromTheFields() {
        let fields = [("Server", "nginx"), ("Accept-Ranges", "bytes")]
        let downstream = leg(.downstream, fields)
        var otherDigest = leg(.upstream, fields)
        otherDigest.response?.digest.head.fields["server"] = .of(Array("other".utf8))
        var repeats = assertSameLine(record(downstream, otherDigest))
        XCTAssertTrue(isWanted(repeats.response.fields))
        XCTAssertFalse(isWanted(repeats.response.head.fields))
        XCTAssertTrue(isWanted(repeats.response.head.fieldNames))

        var otherNames = leg(.upstream, fields)
        otherNames.response?.digest.head.fieldNames = ["server", "Accept-Ranges"]
        repeats = assertSameLine(record(downstream, otherNames))
        XCTAssertTrue(isWanted(repeats.response.head.fields))
        XCTAssertFalse(isWanted(repeats.response.head.fieldNames))

        // A leg without the message, or without a counterpart: nothing copied.
        var noResponse = leg(.upstream, fields)
        noResponse.response = nil
        repeats = assertSameLine(record(downstream, noResponse))
        XCTAssertFalse(isWanted(repeats.response.fields) || isWanted(repeats.response.head.fields))
        repeats = assertSameLine(record(noResponse, downstream))
        XCTAssertFalse(isWanted(repeats.response.fields) || isWanted(repeats.response.head.fields))
    }

    func testTheLiteralsOfRolesAndLineTypesAreTheirRawValues() {
        for role in ExchangeRecord.Leg.Role.allCases {
            XCTAssertEqual(role.literal.description, role.rawValue)
        }
        for type in [RecordingFormat.LineType.header, .exchange] {
            XCTAssertEqual(type.literal.description, type.rawValue)
        }
    }
}
