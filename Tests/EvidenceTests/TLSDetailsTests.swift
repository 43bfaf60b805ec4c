@testable import Evidence
import Foundation
import XCTest

/// `TLSDetails` keeps its seven values in one shared object: copies share
/// it, a change is made on a copy of its own, and it encodes, decodes,
/// compares and hashes as the seven values.
final class TLSDetailsTests: XCTestCase {
    private let full = TLSDetails(version: "TLSv1.3", cipher: "TLS_AES_128_GCM_SHA256", sni: "localhost", alpn: "h2",
                                  peerCertificateSHA256: String(repeating: "ab", count: 32),
                                  clientCertificateSubject: "CN=app", sniIssue: "none really")

    func testAChangedCopyLeavesTheOriginalAsItWas() {
        var copy = full
        copy.sni = "other.example"
        copy.alpn = nil
        XCTAssertEqual(full.sni, "localhost")
        XCTAssertEqual(full.alpn, "h2")
        XCTAssertEqual(copy.sni, "other.example")
        XCTAssertNil(copy.alpn)
        XCTAssertEqual(copy.cipher, full.cipher)
        XCTAssertNotEqual(copy, full)
    }

    func testEqualValuesCompareAndHashEqualWhateverTheirObject() {
        let twin = TLSDetails(version: full.version, cipher: full.cipher, sni: full.sni, alpn: full.alpn,
                              peerCertificateSHA256: full.peerCertificateSHA256,
                              clientCertificateSubject: full.clientCertificateSubject, sniIssue: full.sniIssue)
        XCTAssertEqual(twin, full)
        XCTAssertEqual(twin.hashValue, full.hashValue)
        XCTAssertEqual(Set([twin, full]).count, 1)
        var changed = twin
        changed.clientCertificateSubject = nil
        XCTAssertNotEqual(changed, full)
        XCTAssertEqual(TLSDetails(), TLSDetails())
    }

    /// The keys of the synthesised coding it replaced, absent values left out.
    func testCodableUsesTheSevenKeysAndLeavesAbsentOnesOut() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let json = String(decoding: try encoder.encode(full), as: UTF8.self)
        XCTAssertEqual(json, #"{"alpn":"h2","cipher":"TLS_AES_128_GCM_SHA256","clientCertificateSubject":"CN=app","#
                             + #""peerCertificateSHA256":""# + String(repeating: "ab", count: 32)
                             + #"","sni":"localhost","sniIssue":"none really","version":"TLSv1.3"}"#)
        XCTAssertEqual(try JSONDecoder().decode(TLSDetails.self, from: Data(json.utf8)), full)
        let partial = TLSDetails(version: "TLSv1.2")
        XCTAssertEqual(String(decoding: try encoder.encode(partial), as: UTF8.self), #"{"version":"TLSv1.2"}"#)
        XCTAssertEqual(try JSONDecoder().decode(TLSDetails.self, from: Data(#"{"version":"TLSv1.2"}"#.utf8)), partial)
        XCTAssertThrowsError(try JSONDecoder().decode(TLSDetails.self, from: Data(#"{"version":3}"#.utf8)))
    }
}
