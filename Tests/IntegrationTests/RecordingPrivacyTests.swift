import Demo
import Evidence
import Foundation
import Hashing
import HTTP
import IntactTestSupport
import SignIn
import XCTest

/// Nothing in a recording of the sign-in flow can be brute-forced without
/// the digest key: every digest of message content is HMAC-SHA-256 under the
/// key the taps share, so none equals the plain SHA-256 of a message part
/// (the credentials form `un=…&pw=…`, a head with `Cookie`, a target with a
/// token) — and the taps still agree with one another.
///
/// The run records secrets in clear and stores bodies, which changes what
/// the records keep in clear but not how anything is digested: that lets the
/// test rebuild every digested part, check that the key's digest of it is
/// the one recorded (so the rebuilt part is the real one), and look for its
/// plain SHA-256 among every digest of all three recordings.
final class RecordingPrivacyTests: XCTestCase {
    private let key = SecretDigester(key: [UInt8](repeating: 0x42, count: SecretDigester.keyByteCount))

    private func run(_ protocols: ClientRunner.Protocols) throws -> [Recording] {
        let directory = makeTemporaryDirectory(prefix: "intact-privacy") + "/out"
        var configuration = DemoConfiguration(directory: directory, protocols: protocols, toolVersion: "test")
        configuration.redaction = RedactionPolicy(recordSecrets: true, digester: key)
        configuration.bodyStoreLimit = 1 << 20
        let rig = DemoRig(configuration: configuration)
        defer { rig.stopServers() }
        _ = try rig.start()
        XCTAssertTrue(try rig.runClient().succeeded)
        let report = try rig.finish()
        XCTAssertTrue(report.policyHolds, TextReport.render(report))
        return try [rig.files.clientRecording, rig.files.proxyRecording, rig.files.serverRecording]
            .map(RecordingReader.read(path:))
    }

    private func assertNoPlainDigest(_ protocols: ClientRunner.Protocols) throws {
        let recordings = try run(protocols)
        for recording in recordings {
            XCTAssertEqual(recording.header.digests, RecordingHeader.Digests(algorithm: .hmacSHA256, key: key.fingerprint),
                           recording.path)
        }
        let messages = recordings.flatMap { $0.records.flatMap { $0.legs.flatMap(Self.messages) } }
        let held = Set(messages.flatMap(Self.digests))
        var plain: [SHA256Digest: String] = [:]
        var secretBearing = Set<String>()
        for message in messages {
            for (part, bytes) in try rebuiltParts(of: message) {
                plain[SHA256Digest.of(bytes)] = part
                if Self.bearsSecret(bytes) { secretBearing.insert(part) }
            }
        }
        XCTAssertTrue(secretBearing.contains { $0.hasPrefix("body of POST") }, "the credentials form: \(secretBearing)")
        XCTAssertTrue(secretBearing.contains { $0.contains("field cookie") }, "a head with a cookie: \(secretBearing)")
        for digest in held {
            XCTAssertNil(plain[digest], "a recorded digest is the plain SHA-256 of \(plain[digest] ?? "")")
        }
    }

    func testNoDigestOfTheSignInFlowOverHTTP1IsAPlainSHA256() throws {
        try assertNoPlainDigest(.http1Only)
    }

    func testNoDigestOfTheSignInFlowOverHTTP2IsAPlainSHA256() throws {
        try assertNoPlainDigest(.http2Only)
    }

    // MARK: What the recordings hold and what it was taken over

    private static func messages(_ leg: ExchangeRecord.Leg) -> [RecordedMessage] {
        [leg.request, leg.response].compactMap { $0 } + (leg.interimResponses ?? [])
    }

    /// Every digest of message content a recorded message holds.
    private static func digests(_ message: RecordedMessage) -> [SHA256Digest] {
        let head = message.digest.head, body = message.digest.body
        return [head.exact, head.semantic, body.sha256] + Array(head.fields.values) + [head.target].compactMap { $0 }
            + [body.trailers?.exact, body.trailers?.semantic].compactMap { $0 }
    }

    /// True when the bytes carry a value the recording treats as secret.
    private static func bearsSecret(_ bytes: [UInt8]) -> Bool {
        let text = String(decoding: bytes, as: UTF8.self).lowercased()
        return ["pw=", "password", "token=", "cookie", "authorization", "codeverifier"].contains { text.contains($0) }
    }

    /// Rebuilds, from a message recorded with its secrets in clear, each byte
    /// string its digests were taken over (as `HeadDigest+Canonical.swift`
    /// specifies them), by name; asserts that the key's digest of each is the
    /// one recorded, so the rebuilt bytes are the real ones.
    private func rebuiltParts(of message: RecordedMessage, file: StaticString = #filePath,
                              line: UInt = #line) throws -> [(String, [UInt8])] {
        XCTAssertFalse(message.fields.contains(where: \.isRedacted), "recorded with secrets in clear", file: file, line: line)
        let fields = HTTPFields(message.fields.map { HTTPField(name: $0.name, value: $0.value) })
        let recorded = message.digest.head
        var parts: [(String, [UInt8])] = []
        func part(_ label: String, _ bytes: [UInt8], recorded digest: SHA256Digest?) {
            XCTAssertEqual(SHA256Digest.of(bytes, using: key.digests), digest, label, file: file, line: line)
            parts.append((label, bytes))
        }
        let name: String
        let startLine: [UInt8]
        let exactCandidates: [[UInt8]]
        if let method = message.method, let path = message.path {
            name = "\(method) \(path)"
            let scheme = (message.scheme ?? "https").lowercased()
            let authority = (message.authority ?? fields["host"] ?? "").lowercased()
            let target = item(scheme) + item(authority) + item(path)
            part("target of \(name)", target, recorded: recorded.target)
            startLine = item("request") + item(method) + target
            let head = HTTPRequestHead(method: HTTPMethod(method), scheme: message.scheme, authority: message.authority, path: path,
                                       targetForm: message.targetForm ?? .origin, version: message.version, fields: fields)
            exactCandidates = message.version == .http2
                ? [Self.exactInput(.http2Request(head)), Self.exactInput(.http2Sent(request: head))]
                : [Self.http1Head("\(method) \(path) HTTP/1.1", fields)]
        } else {
            let status = try XCTUnwrap(message.status, file: file, line: line)
            name = "response \(status)"
            startLine = item("response") + item(String(status))
            let head = HTTPResponseHead(status: HTTPStatus(status), reason: message.reason, version: message.version, fields: fields)
            exactCandidates = message.version == .http2
                ? [Self.exactInput(.http2Response(head)), Self.exactInput(.http2Sent(response: head))]
                : [Self.http1Head("HTTP/1.1 \(status) \(message.reason ?? "")", fields)]
        }
        // The exact digest: one of the wire forms the head can have crossed in.
        XCTAssertTrue(exactCandidates.contains { SHA256Digest.of($0, using: key.digests) == recorded.exact },
                      "no rebuilt wire form of \(name) has the recorded exact digest", file: file, line: line)
        parts += exactCandidates.map { ("head of \(name)", $0) }
        // One group per field name; the semantic form is the start line and the groups it keeps.
        var groups: [String: [String]] = [:]
        for field in fields { groups[field.name.lowercased(), default: []].append(field.value) }
        var kept: [[UInt8]] = []
        for fieldName in groups.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) {
            var values = groups[fieldName] ?? []
            if fieldName == "cookie", values.count > 1 { values = [values.joined(separator: "; ")] }
            let group = item(fieldName) + count(values.count) + values.flatMap(item)
            part("field \(fieldName) of \(name)", group, recorded: recorded.fields[fieldName])
            if !recorded.hopByHop.contains(fieldName), !["host", "content-length"].contains(fieldName) { kept.append(group) }
        }
        part("semantic form of \(name)", startLine + count(kept.count) + kept.flatMap { $0 }, recorded: recorded.semantic)
        if let stored = message.body, !stored.truncated, let bytes = stored.bytes {
            part("body of \(name)", bytes, recorded: message.digest.body.sha256)
        }
        return parts
    }

    private static func http1Head(_ startLine: String, _ fields: HTTPFields) -> [UInt8] {
        Array(([startLine] + fields.map { "\($0.name): \($0.value)" }).map { $0 + "\r\n" }.joined().utf8)
    }

    /// The input of an exact digest (`HeadDigest.WireForm`).
    private static func exactInput(_ wire: HeadDigest.WireForm) -> [UInt8] {
        switch wire {
        case .http1(let head): return Array(head)
        case .http2(let list): return list.flatMap { item($0.name) + item($0.value) }
        }
    }

}

/// `count(n)`: 4 bytes big-endian (`DigestInput`).
private func count(_ n: Int) -> [UInt8] {
    withUnsafeBytes(of: UInt32(n).bigEndian, Array.init)
}

/// `item(s)`: `count(length)` then the ISO-8859-1 bytes (`DigestInput`).
private func item(_ text: String) -> [UInt8] {
    let bytes = text.unicodeScalars.map { UInt8(truncatingIfNeeded: $0.value) }
    return count(bytes.count) + bytes
}
