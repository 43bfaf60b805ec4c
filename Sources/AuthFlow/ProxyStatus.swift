import HTTP

/// The `Proxy-Status` field of a response (RFC 9209): one member per
/// intermediary that handled the response, the one nearest the origin
/// first, each naming the intermediary and — when it could not get a
/// response from its next hop and answered itself — the error type
/// (`connection_refused`, `tls_protocol_error`, …) with optional details.
///
/// The field is an RFC 8941 list of items whose bare item is a token or a
/// string. Parsing is all or nothing, as RFC 8941 requires: a field that is
/// not a valid list of such items is ignored (`init?` gives nil).
public struct ProxyStatus: Hashable, Sendable {
    /// The field's name.
    public static let fieldName = "Proxy-Status"

    /// One intermediary's report.
    public struct Entry: Hashable, Sendable {
        /// The intermediary's name (`intact`, `nginx`, a host name).
        public var intermediary: String
        /// The proxy error type (`connection_refused`), when it could not get a response.
        public var error: String?
        /// Free-form details the intermediary gave.
        public var details: String?
        /// The next hop it tried (`next-hop`), when it said.
        public var nextHop: String?
        /// The TLS alert it received (`alert-id`, with `tls_alert_received`).
        public var alertID: Int?

        public init(intermediary: String, error: String? = nil, details: String? = nil, nextHop: String? = nil,
                    alertID: Int? = nil) {
            self.intermediary = intermediary
            self.error = error
            self.details = details
            self.nextHop = nextHop
            self.alertID = alertID
        }
    }

    /// The members in field order: origin-most first, client-most last.
    public var entries: [Entry]

    /// The intermediary nearest the client that reports an error: the one
    /// that made the answer the client got.
    public var error: Entry? {
        entries.last { $0.error != nil }
    }

    /// Parses the field lines of `fields` named `Proxy-Status`, combined as
    /// one list; nil when there is none or they are not a valid list.
    public init?(_ fields: HTTPFields) {
        let lines = fields.values(Self.fieldName)
        guard !lines.isEmpty else { return nil }
        self.init(parsing: lines.joined(separator: ", "))
    }

    /// Parses one field value; nil when it is not a valid list of token or string items.
    public init?(parsing value: String) {
        var parser = StructuredFieldParser(Array(value.utf8))
        guard let members = parser.parseList(), !members.isEmpty else { return nil }
        var entries: [Entry] = []
        for (item, parameters) in members {
            guard case let .text(name) = item else { return nil }
            var entry = Entry(intermediary: name)
            for (key, value) in parameters {
                switch (key, value) {
                case ("error", .text(let text)): entry.error = text
                case ("details", .text(let text)): entry.details = text
                case ("next-hop", .text(let text)): entry.nextHop = text
                case ("alert-id", .integer(let number)): entry.alertID = number
                default: continue
                }
            }
            entries.append(entry)
        }
        self.entries = entries
    }
}

/// A strict parser of RFC 8941 lists (§4.2.1), enough for `Proxy-Status`:
/// items with parameters; inner lists are rejected. Works on the field's
/// bytes; every method returns nil at the first byte that breaks the grammar.
struct StructuredFieldParser {
    /// A bare item's value, as far as the caller needs it.
    enum Value: Hashable {
        /// A token or a string.
        case text(String)
        case integer(Int)
        /// A decimal, boolean or byte sequence: valid, not used.
        case other
    }

    private let bytes: [UInt8]
    private var index = 0

    init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    private var current: UInt8? { index < bytes.count ? bytes[index] : nil }

    private mutating func skip(_ set: (UInt8) -> Bool) {
        while let byte = current, set(byte) { index += 1 }
    }

    private static func isOWS(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 }
    private static func isDigit(_ byte: UInt8) -> Bool { (0x30...0x39).contains(byte) }
    private static func isAlpha(_ byte: UInt8) -> Bool { (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) }
    private static func isLowercaseAlpha(_ byte: UInt8) -> Bool { (0x61...0x7A).contains(byte) }
    /// RFC 9110 tchar, plus `:` and `/`, as sf-token allows.
    private static func isTokenCharacter(_ byte: UInt8) -> Bool {
        isAlpha(byte) || isDigit(byte) || Array("!#$%&'*+-.^_`|~:/".utf8).contains(byte)
    }

    /// `sf-list`: members separated by commas with optional whitespace; the whole input.
    mutating func parseList() -> [(Value, [(String, Value)])]? {
        var members: [(Value, [(String, Value)])] = []
        skip { $0 == 0x20 }
        while current != nil {
            guard current != UInt8(ascii: "("), let item = parseBareItem(), let parameters = parseParameters() else {
                return nil
            }
            members.append((item, parameters))
            skip(Self.isOWS)
            guard current != nil else { return members }
            guard current == UInt8(ascii: ",") else { return nil }
            index += 1
            skip(Self.isOWS)
            guard current != nil else { return nil }
        }
        return members
    }

    /// `parameters`: `;key[=value]`, a missing value meaning true.
    private mutating func parseParameters() -> [(String, Value)]? {
        var parameters: [(String, Value)] = []
        while current == UInt8(ascii: ";") {
            index += 1
            skip { $0 == 0x20 }
            guard let key = parseKey() else { return nil }
            var value = Value.other
            if current == UInt8(ascii: "=") {
                index += 1
                guard let parsed = parseBareItem() else { return nil }
                value = parsed
            }
            parameters.removeAll { $0.0 == key }
            parameters.append((key, value))
        }
        return parameters
    }

    private mutating func parseKey() -> String? {
        guard let first = current, Self.isLowercaseAlpha(first) || first == UInt8(ascii: "*") else { return nil }
        let start = index
        skip { Self.isLowercaseAlpha($0) || Self.isDigit($0) || Array("_-.*".utf8).contains($0) }
        return String(decoding: bytes[start..<index], as: UTF8.self)
    }

    private mutating func parseBareItem() -> Value? {
        guard let first = current else { return nil }
        switch first {
        case UInt8(ascii: "\""):
            return parseString()
        case UInt8(ascii: "-"), 0x30...0x39:
            return parseNumber()
        case UInt8(ascii: ":"):
            index += 1
            skip { Self.isAlpha($0) || Self.isDigit($0) || Array("+/=".utf8).contains($0) }
            guard current == UInt8(ascii: ":") else { return nil }
            index += 1
            return .other
        case UInt8(ascii: "?"):
            index += 1
            guard current == UInt8(ascii: "0") || current == UInt8(ascii: "1") else { return nil }
            index += 1
            return .other
        default:
            guard Self.isAlpha(first) || first == UInt8(ascii: "*") else { return nil }
            let start = index
            skip(Self.isTokenCharacter)
            return .text(String(decoding: bytes[start..<index], as: UTF8.self))
        }
    }

    /// `sf-string`: printable ASCII between quotes; only `\"` and `\\` escapes.
    private mutating func parseString() -> Value? {
        index += 1
        var text: [UInt8] = []
        while let byte = current {
            index += 1
            switch byte {
            case UInt8(ascii: "\\"):
                guard let escaped = current, escaped == UInt8(ascii: "\"") || escaped == UInt8(ascii: "\\") else {
                    return nil
                }
                text.append(escaped)
                index += 1
            case UInt8(ascii: "\""):
                return .text(String(decoding: text, as: UTF8.self))
            case 0x20...0x7E:
                text.append(byte)
            default:
                return nil
            }
        }
        return nil
    }

    /// `sf-integer` (at most 15 digits) or `sf-decimal` (at most 12 integer and 3 fraction digits).
    private mutating func parseNumber() -> Value? {
        let negative = current == UInt8(ascii: "-")
        if negative { index += 1 }
        let start = index
        skip(Self.isDigit)
        let integerDigits = index - start
        guard integerDigits > 0 else { return nil }
        if current == UInt8(ascii: ".") {
            index += 1
            let fractionStart = index
            skip(Self.isDigit)
            let fractionDigits = index - fractionStart
            guard integerDigits <= 12, (1...3).contains(fractionDigits) else { return nil }
            return .other
        }
        guard integerDigits <= 15, let magnitude = Int(String(decoding: bytes[start..<index], as: UTF8.self)) else {
            return nil
        }
        return .integer(negative ? -magnitude : magnitude)
    }
}
