import Foundation

extension VerificationReport {
    /// The report as the `intact verify --json` document: UTF-8 JSON,
    /// pretty-printed, keys sorted, slashes unescaped, timestamps as
    /// milliseconds since the Unix epoch. Schema: `Docs/verify-json.md`.
    public func jsonBytes() throws -> [UInt8] {
        var bytes = [UInt8](try VerificationReport.makeJSONEncoder().encode(self))
        bytes.append(UInt8(ascii: "\n"))
        return bytes
    }

    /// The encoder of the document (and of each exchange a streamed report writes).
    static func makeJSONEncoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.nonConformingFloatEncodingStrategy = .convertToString(
            positiveInfinity: "Infinity", negativeInfinity: "-Infinity", nan: "NaN")
        return encoder
    }

    /// Reads a report back from its JSON form (the scenario runner and tests do).
    public static func decode(json: [UInt8]) throws -> VerificationReport {
        let decoder = JSONDecoder()
        decoder.nonConformingFloatDecodingStrategy = .convertFromString(
            positiveInfinity: "Infinity", negativeInfinity: "-Infinity", nan: "NaN")
        return try decoder.decode(VerificationReport.self, from: Data(json))
    }
}
