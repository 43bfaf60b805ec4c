import Foundation

extension VerificationReport {
    /// The report as the `intact verify --json` document: UTF-8 JSON,
    /// pretty-printed, keys sorted, slashes unescaped, timestamps as
    /// milliseconds since the Unix epoch. Schema: `Docs/verify-json.md`.
    public func jsonBytes() throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.nonConformingFloatEncodingStrategy = .convertToString(
            positiveInfinity: "Infinity", negativeInfinity: "-Infinity", nan: "NaN")
        var bytes = [UInt8](try encoder.encode(self))
        bytes.append(UInt8(ascii: "\n"))
        return bytes
    }

    /// Reads a report back from its JSON form (the scenario runner and tests do).
    public static func decode(json: [UInt8]) throws -> VerificationReport {
        let decoder = JSONDecoder()
        decoder.nonConformingFloatDecodingStrategy = .convertFromString(
            positiveInfinity: "Infinity", negativeInfinity: "-Infinity", nan: "NaN")
        return try decoder.decode(VerificationReport.self, from: Data(json))
    }
}
