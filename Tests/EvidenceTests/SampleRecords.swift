import Foundation
import IntactTestSupport
import XCTest
import Evidence
import HTTP

/// Records built the way a proxy tap builds them, for the Evidence tests.
enum SampleRecords {
    static let header = RecordingHeader(toolVersion: "0.1.0-test", tap: "proxy-a", mode: "reverse",
                                        options: ["upstream": "127.0.0.1:8443"],
                                        started: Timestamp(millisecondsSince1970: 1_700_000_000_000))

    static let requestHead = HTTPRequestHead(
        method: "POST", authority: "app.test", path: "/suite/auth?next=%2Fhome&x=1", version: .http1_1,
        fields: ["Host": "app.test", "Content-Type": "application/json", "Cookie": "JSESSIONID=abc; lb=1",
                 "Authorization": "Bearer secret", "Intact-Trace": "trace-7"])

    static let responseHead = HTTPResponseHead(
        status: 302, version: .http1_1,
        fields: ["Content-Type": "text/plain; charset=utf-8", "Set-Cookie": "JSESSIONID=def; Path=/suite; HttpOnly; Secure",
                 "Location": "https://app.test/suite/home", "Content-Length": "5"])

    static func rawHead(_ lines: [String]) -> [UInt8] {
        Array(lines.map { $0 + "\r\n" }.joined().utf8)
    }

    /// One exchange as a proxy records it: the same messages on both legs.
    static func record(_ index: Int, redaction: RedactionPolicy = RedactionPolicy(), storeLimit: Int = 0) -> ExchangeRecord {
        let base = 1_700_000_000_000.0 + Double(index) * 100
        let requestRaw = rawHead(["POST /suite/auth?next=%2Fhome&x=1 HTTP/1.1"] + requestHead.fields.map(\.description))
        let responseRaw = rawHead(["HTTP/1.1 302 Found"] + responseHead.fields.map(\.description))
        var requestBody = BodyRecorder(storeLimit: storeLimit, using: redaction.digests)
        requestBody.update(Array("{\"user\":\"u\(index)\"}".utf8))
        let (requestBodyDigest, requestStored) = requestBody.finish()
        var responseBody = BodyRecorder(storeLimit: storeLimit, using: redaction.digests)
        responseBody.update(Array("moved".utf8))
        let (responseBodyDigest, responseStored) = responseBody.finish()

        func leg(_ role: ExchangeRecord.Leg.Role, _ connection: String) -> ExchangeRecord.Leg {
            let request = RecordedMessage(
                request: requestHead, connectionScheme: "https",
                digest: MessageDigest(head: HeadDigest(request: requestHead, wire: .http1(head: requestRaw), connectionScheme: "https",
                                                       using: redaction.digests),
                                      body: requestBodyDigest),
                body: requestStored,
                timings: MessageTimings(start: Timestamp(millisecondsSince1970: base), headersDone: Timestamp(millisecondsSince1970: base + 1),
                                        end: Timestamp(millisecondsSince1970: base + 2)),
                redaction: redaction)
            let response = RecordedMessage(
                response: responseHead,
                digest: MessageDigest(head: HeadDigest(response: responseHead, wire: .http1(head: responseRaw),
                                                       using: redaction.digests), body: responseBodyDigest),
                body: responseStored,
                timings: MessageTimings(start: Timestamp(millisecondsSince1970: base + 12), headersDone: Timestamp(millisecondsSince1970: base + 12.5),
                                        end: Timestamp(millisecondsSince1970: base + 15)),
                redaction: redaction)
            return ExchangeRecord.Leg(role: role, connectionID: connection,
                                      tls: TLSDetails(version: "TLSv1.3", cipher: "TLS_AES_128_GCM_SHA256", sni: "app.test", alpn: "http/1.1",
                                                      peerCertificateSHA256: String(repeating: "ab", count: 32)),
                                      request: request, response: response)
        }
        return ExchangeRecord(exchangeID: "ex-\(index)", traceID: ExchangeRecord.traceID(in: requestHead.fields), tap: "proxy-a",
                              legs: [leg(.downstream, "c-\(index)"), leg(.upstream, "u-\(index)")],
                              authFlowStep: "login-submit", faults: [ExchangeRecord.RecordedFault(name: "add-header", detail: "Via: 1.1 lb")])
    }

}

extension XCTestCase {
    /// A path in a fresh temporary directory, removed when the test ends.
    func temporaryPath(_ name: String = "recording.jsonl") -> String {
        makeTemporaryDirectory(prefix: "intact-evidence") + "/" + name
    }
}
