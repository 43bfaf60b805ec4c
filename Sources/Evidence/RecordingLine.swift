import Foundation

/// One line of a recording, tagged by its `type` key, and the coding of a
/// line: the value's JSON object with `"type"` added, then `\n`.
enum RecordingLine: Decodable {
    case header(RecordingHeader)
    case exchange(ExchangeRecord)

    /// A header line whose `format` this build does not read; thrown from
    /// decoding before the rest of the header is looked at.
    struct UnsupportedFormat: Error {
        let found: Int
    }

    private enum TypeKey: String, CodingKey {
        case type, format
    }

    init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: TypeKey.self)
        switch try container.decode(RecordingFormat.LineType.self, forKey: .type) {
        case .header:
            let format = try container.decode(Int.self, forKey: .format)
            guard RecordingFormat.readable.contains(format) else { throw UnsupportedFormat(found: format) }
            self = .header(try RecordingHeader(from: decoder))
        case .exchange:
            self = .exchange(try ExchangeRecord(from: decoder))
        }
    }

    /// The encoder every writer uses: compact (so a line has no newline),
    /// slashes unescaped, non-finite numbers as strings rather than failing.
    static func makeEncoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        encoder.nonConformingFloatEncodingStrategy = .convertToString(
            positiveInfinity: "Infinity", negativeInfinity: "-Infinity", nan: "NaN")
        return encoder
    }

    /// Encodes one line, newline included.
    static func encode<Value: Encodable>(_ value: Value, as type: RecordingFormat.LineType,
                                         with encoder: JSONEncoder) throws -> [UInt8] {
        var bytes = [UInt8](try encoder.encode(Typed(type: type, value: value)))
        bytes.append(UInt8(ascii: "\n"))
        return bytes
    }

    /// Adds the `type` key to the value's own keyed container.
    private struct Typed<Value: Encodable>: Encodable {
        let type: RecordingFormat.LineType
        let value: Value

        func encode(to encoder: Encoder) throws {
            var container = encoder.container(keyedBy: TypeKey.self)
            try container.encode(type, forKey: .type)
            try value.encode(to: encoder)
        }
    }
}
