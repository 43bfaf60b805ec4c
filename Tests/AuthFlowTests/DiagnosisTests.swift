import Foundation
import XCTest
@testable import AuthFlow

final class DiagnosisTests: XCTestCase {
    /// Every quotation must appear verbatim in the source document.
    func testSentencesAreVerbatimFromTheSourceDocument() throws {
        // The repository keeps a copy of the source document (Docs/source-document.txt).
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Docs/source-document.txt").path
        let data = try XCTUnwrap(FileManager.default.contents(atPath: path), "source document not found at \(path)")
        let document = String(decoding: data, as: UTF8.self).split(whereSeparator: \.isWhitespace).joined(separator: " ")
        for sentence in DocumentSentence.allCases {
            XCTAssertTrue(document.contains(sentence.text), "not in the document: \(sentence.text)")
        }
    }

    func testPresetNamesMatchFaultsTable() {
        XCTAssertEqual(FailureMode.allCases.filter(\.isPreset).map(\.rawValue), [
            "auth-redirect", "html-401", "foreign-response", "gateway-cookie", "strip-set-cookie", "rewrite-set-cookie",
            "strip-cookie", "rewrite-urls", "drop-challenge", "alter-token-post", "compress", "client-cert-required",
            "reset-token-post",
        ])
    }

    func testDiagnosisQuotesTheModeSentenceUnlessGivenOne() {
        let own = Diagnosis(mode: .stripSetCookie, step: .tokenExchange, evidence: "none")
        XCTAssertEqual(own.sentence, .step11Bootstrap)
        XCTAssertEqual(own.quote, DocumentSentence.step11Bootstrap.text)
        XCTAssertEqual(own.advice, FailureMode.stripSetCookie.advice)
        let closer = Diagnosis(mode: .rewriteURLs, step: .credentials, evidence: "x", sentence: .step7Callback)
        XCTAssertEqual(closer.quote, DocumentSentence.step7Callback.text)
        XCTAssertTrue(FailureMode.allCases.allSatisfy { !$0.advice.isEmpty && !$0.advice.contains("\n") })
    }
}
