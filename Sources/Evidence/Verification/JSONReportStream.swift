import Foundation

/// The JSON report of a streamed verification (`intact-verify/2`), written
/// as it goes: `exchanges` first, each exchange as soon as it is judged,
/// then the other keys, sorted, from the final report (which carries
/// `listing`). The only difference from a whole report's document is that
/// order (JSON objects are unordered; `VerificationReport.decode(json:)`
/// reads both). Each exchange is encoded as the whole report encodes it:
/// pretty-printed, keys sorted, slashes unescaped.
public final class JSONReportStream: VerificationSink {
    private let write: ([UInt8]) -> Void
    private let encoder: JSONEncoder
    private var count = 0

    /// - Parameter write: takes the document's bytes piece by piece.
    public init(write: @escaping ([UInt8]) -> Void) {
        self.write = write
        encoder = VerificationReport.makeJSONEncoder()
    }

    public func begin(policy: PolicySummary, recordings: Int, path: VerifiedPath) {
        write(Array("{\n  \"exchanges\" : [\n".utf8))
    }

    public func judged(_ exchanges: [VerifiedExchange], path: VerifiedPath) {
        var text = ""
        for exchange in exchanges {
            guard let json = try? encoder.encode(exchange) else { continue }
            text += (count == 0 ? "" : ",\n") + String(decoding: json, as: UTF8.self)
                .split(separator: "\n", omittingEmptySubsequences: false).map { "    " + $0 }.joined(separator: "\n")
            count += 1
        }
        write(Array(text.utf8))
    }

    /// The rest of the document, from the final report.
    public func end(_ report: VerificationReport) throws {
        let tail = String(decoding: try encoder.encode(WithoutExchanges(report: report)), as: UTF8.self)
        write(Array(("\n  ],\n" + tail.dropFirst(2) + "\n").utf8))
    }

    /// Every key of a report but `exchanges`.
    private struct WithoutExchanges: Encodable {
        let report: VerificationReport

        enum Key: String, CodingKey {
            case schema, policy, recordings, path, intermediaryRequests, connections, summary, problems, warnings
            case policyHolds, listing
        }

        func encode(to encoder: Encoder) throws {
            var container = encoder.container(keyedBy: Key.self)
            try container.encode(report.schema, forKey: .schema)
            try container.encode(report.policy, forKey: .policy)
            try container.encode(report.recordings, forKey: .recordings)
            try container.encode(report.path, forKey: .path)
            try container.encode(report.intermediaryRequests, forKey: .intermediaryRequests)
            try container.encode(report.connections, forKey: .connections)
            try container.encode(report.summary, forKey: .summary)
            try container.encode(report.problems, forKey: .problems)
            try container.encode(report.warnings, forKey: .warnings)
            try container.encode(report.policyHolds, forKey: .policyHolds)
            try container.encodeIfPresent(report.listing, forKey: .listing)
        }
    }
}
