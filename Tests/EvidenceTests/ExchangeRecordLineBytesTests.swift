import Foundation
import XCTest
@testable import Evidence
import HTTP
import Hashing

/// The recording format, byte for byte: the line of every kind of record
/// (`ExchangeRecordLineTests.everyKind`, the awkward strings, the extreme
/// numbers, and a proxy's record of a keep-alive GET relayed from HTTP/1.1
/// to HTTP/2), under a fixed digest key, hashes to what the encoder wrote
/// when these were taken. A faster encoder must not change one byte; a
/// change of the format on purpose changes `Docs/recording-format.md` and
/// these values together (`INTACT_PRINT_LINE_DIGESTS=1` prints the new ones).
final class ExchangeRecordLineBytesTests: XCTestCase {
    private static let digester = SecretDigester(key: [UInt8](repeating: 0x42, count: SecretDigester.keyByteCount))

    /// The records, by name.
    private static var records: [(String, ExchangeRecord)] {
        var all = ExchangeRecordLineTests.everyKind(digester: digester).map { ($0.exchangeID, $0) }
        all.append(("awkward", ExchangeRecordLineTests.awkward(digester: digester)))
        all.append(("numbers", ExchangeRecordLineTests.numbers(digester: digester)))
        all.append(("proxied GET", proxiedGet()))
        return all
    }

    /// A reverse proxy's record of `GET /1k` from an HTTP/1.1 client relayed
    /// to an HTTP/2 origin (nginx), as the benchmark's exchanges are.
    private static func proxiedGet() -> ExchangeRecord {
        let redaction = RedactionPolicy(digester: digester)
        let at = Timestamp(millisecondsSince1970: 1_796_158_184_705.65)
        let clientHead = HTTPRequestHead(method: "GET", path: "/1k", fields: ["Host": "127.0.0.1:18470"])
        let originHead = HTTPRequestHead(method: "GET", scheme: "https", authority: "127.0.0.1:18470", path: "/1k",
                                         version: .http2, fields: [:])
        let fields: HTTPFields = ["server": "nginx/1.22.1", "date": "Tue, 01 Dec 2026 20:49:45 GMT",
                                  "content-type": "application/octet-stream", "content-length": "1024",
                                  "last-modified": "Tue, 01 Dec 2026 20:48:58 GMT", "etag": "\"6b0f32ba-400\"",
                                  "accept-ranges": "bytes"]
        var body = BodyDigester(using: redaction.digests)
        body.update([UInt8](repeating: 0x61, count: 1024))
        let bodyDigest = body.finish()
        func leg(_ role: ExchangeRecord.Leg.Role, _ connection: String, _ request: HTTPRequestHead,
                 _ version: HTTPVersion, _ reason: String, wire: (HTTPRequestHead, HTTPResponseHead) -> (HeadDigest.WireForm, HeadDigest.WireForm),
                 streamID: Int?, tls: TLSDetails) -> ExchangeRecord.Leg {
            let response = HTTPResponseHead(status: 200, reason: reason, version: version, fields: fields)
            let (requestWire, responseWire) = wire(request, response)
            let timings = MessageTimings(start: at, headersDone: at, end: Timestamp(millisecondsSince1970: 1_796_158_184_747.994))
            return ExchangeRecord.Leg(
                role: role, connectionID: connection, streamID: streamID, tls: tls,
                request: RecordedMessage(request: request, connectionScheme: "https",
                                         digest: MessageDigest(head: HeadDigest(request: request, wire: requestWire,
                                                                                connectionScheme: "https", using: redaction.digests)),
                                         timings: timings, redaction: redaction),
                response: RecordedMessage(response: response,
                                          digest: MessageDigest(head: HeadDigest(response: response, wire: responseWire,
                                                                                 using: redaction.digests),
                                                                body: bodyDigest),
                                          timings: timings, redaction: redaction))
        }
        let downstream = leg(.downstream, "d3", clientHead, .http1_1, "OK", wire: { request, response in
            (.http1(head: Array("GET /1k HTTP/1.1\r\nHost: 127.0.0.1:18470\r\n".utf8)),
             .http1(head: Array(("HTTP/1.1 200 OK\r\n" + response.fields.map { "\($0.name): \($0.value)\r\n" }.joined()).utf8)))
        }, streamID: nil, tls: TLSDetails(version: "TLSv1.3", cipher: "TLS_AES_256_GCM_SHA384", sni: "127.0.0.1",
                                          sniIssue: "SNI carries the IP address 127.0.0.1, which RFC 6066 forbids"))
        let upstream = leg(.upstream, "u13", originHead, .http2, "", wire: { request, response in
            (.http2Request(request), .http2Response(response))
        }, streamID: 1, tls: TLSDetails(version: "TLSv1.3", cipher: "TLS_AES_256_GCM_SHA384", alpn: "h2",
                                        peerCertificateSHA256: String(repeating: "a0", count: 32)))
        return ExchangeRecord(exchangeID: "d3.1", tap: "proxy", legs: [downstream, upstream])
    }

    /// SHA-256 of each record's line, in the order of `records`.
    private static let expected: [String] = [
        "3d5b74e1a616617d16be5b5aa6ae73b5dc0b00fd530b5ea3617ec899e1bff597", // "ex-1", 7049 bytes
        "726fbac4edd4c573ab7d3b5040c1cfb120c995506e9c8cfafc46f373b7c11da1", // "ex-2", 5999 bytes
        "e32fdb4c4bf4f712893fa9890409b8232e132b741f1d10a8dedef32e190d9d1d", // "ex-3", 7261 bytes
        "2971bb2f1f701103fb51d6bf8299ed42c40e2e74b3576e8b9b934a8ec5e87a72", // "ex-4", 5693 bytes
        "1eb3831608ebfd1c538672eea84d9eed37bc8279a4b99e98e4dffb367c70da96", // "ex-7", 408 bytes
        "284fbb2bd63fa0279eddd82db1a4f6329d49610e9d742361365f65da0e72b7cf", // "ex-reset", 109 bytes
        "17075fc69732d7b2949b128ddba56c02fcc15289ad68a75c4c8aea9ab9064bb9", // "ex-8", 7593 bytes
        "9f289b791d5d83124c1963917303ff2dc6252a1d1d3da3b18b9cf986a0760470", // "ex-10", 7274 bytes
        "d24605016ff309706a9bd55ba89b1ec860b7f15149aa6ce5c761fdc2dc80e3c5", // "ex-5", 3965 bytes
        "0f2b36bd3b6d0b40a87f99ee52e1a515632692a8638117071326e121d61bdd57", // "ex-6", 3496 bytes
        "111356e4c848bcf8d5222a5afe9c241b672ee1a09004397b829714a622465206", // "ex-6", 3496 bytes
        "1e07b982c3f53ea46e953b9529f6b62af0cf6d3b801d8b9dd3aecea8c6ea197e", // "ex-h2", 2170 bytes (pseudoFieldOrder added)
        "17b960c37bf054ceeb8829f836cd7d0b38f950b68968ae33134867dd4ec97c4d", // "ex-empty", 76 bytes
        "90d76273cbd4a6c33149f09ae8f19b22daeb15e7267cd609730319a18fc22e74", // "awkward", 6158 bytes
        "1b7476031b51a437dfb61f7d94e200768af7b1bebb8c2ce02a6242d2a6fa8c71", // "numbers", 7024 bytes
        "61598f2852c95e9791b423c7c247e4ec8ec0238302fc99e541a0847aeab6765e", // "proxied GET", 5156 bytes (pseudoFieldOrder added)
    ]

    func testEveryLineIsTheSameBytesAsTheFormatSays() throws {
        let lines = Self.records.map { ($0.0, $0.1.jsonLine()) }
        let digests = lines.map { Encoding.hex(SHA256Digest.of($0.1).bytes) }
        if ProcessInfo.processInfo.environment["INTACT_PRINT_LINE_DIGESTS"] != nil {
            for (index, (name, line)) in lines.enumerated() {
                print("        \"\(digests[index])\", // \(name.debugDescription), \(line.count) bytes")
            }
        }
        XCTAssertEqual(digests.count, Self.expected.count, "one digest per record")
        for (index, (name, line)) in lines.enumerated() where index < Self.expected.count {
            XCTAssertEqual(digests[index], Self.expected[index],
                           "the line of \(name.debugDescription) changed:\n" + String(decoding: line, as: UTF8.self))
        }
    }
}
