/// The order an HTTP/2 request's pseudo-fields took on the wire.
///
/// RFC 9113 §8.3.1 lists them but fixes no order, and clients differ
/// (Chromium sends `:method :authority :scheme :path`, curl and nghttp
/// `:method :path :scheme :authority`). The exact head digest covers the
/// order, so a proxy that re-emits them in its own order changes the head's
/// wire form without changing its meaning; recording the order lets `verify`
/// name that difference, and a head carrying it lets a proxy keep it.
///
/// Invariant: one to five distinct request pseudo-fields (nghttp2 refuses a
/// repeated or unknown one on receipt). A value of four bits per name, so
/// keeping and comparing it allocates nothing.
public struct HTTP2PseudoFieldOrder: Hashable, Sendable, CustomStringConvertible {
    /// A request pseudo-field. The raw values ascend in the order
    /// `HTTP2FieldMapping.requestList` sends them (`standard`).
    public enum Name: UInt8, CaseIterable, Sendable {
        case method = 1, `protocol`, scheme, authority, path

        /// `:method`, `:protocol`, …
        public var fieldName: StaticString {
            switch self {
            case .method: ":method"
            case .protocol: ":protocol"
            case .scheme: ":scheme"
            case .authority: ":authority"
            case .path: ":path"
            }
        }

        /// The name of the pseudo-field `name` (with its colon); nil for any other name.
        public init?(fieldName name: String) {
            // The length picks the candidates, so a name is compared with one or two (a
            // `switch` over the strings compared it with each case before its own).
            let candidate: Name
            switch name.utf8.count {
            case 5: candidate = .path
            case 7: candidate = name == ":method" ? .method : .scheme
            case 9: candidate = .protocol
            case 10: candidate = .authority
            default: return nil
            }
            guard name == candidate.name else { return nil }
            self = candidate
        }

        /// `fieldName` as a `String`, made once per name (`names`).
        private var name: String { Name.names[Int(rawValue) - 1] }

        /// Every `fieldName` as a `String`, in raw-value order (1 first).
        private static let names = allCases.map { $0.fieldName.description }
    }

    /// Name `n` in bits `4n..<4n+4`; 0 after the last.
    @usableFromInline let packed: UInt32

    /// The order of `names`; nil when there is none, or a name repeats.
    public init?(_ names: [Name]) {
        var builder = Builder()
        for name in names where !builder.add(name) { return nil }
        guard let order = builder.order else { return nil }
        self = order
    }

    /// The order of the leading pseudo-fields of a request's header list;
    /// nil when it starts with none, or with one that is no request
    /// pseudo-field or is repeated (a list nghttp2 would not have passed).
    /// Allocates nothing.
    public init?(requestList list: [HTTPField]) {
        var builder = Builder()
        // Read in place through the buffer: iterating the array copies each field.
        let known = list.withUnsafeBufferPointer { fields -> Bool in
            for index in fields.indices {
                // A pseudo-field's name is matched first (one comparison), the colon looked at only otherwise.
                guard let name = Name(fieldName: fields[index].name) else {
                    return fields[index].name.utf8.first != UInt8(ascii: ":")
                }
                guard builder.add(name) else { return false }
            }
            return true
        }
        guard known, let order = builder.order else { return nil }
        self = order
    }

    private init(packed: UInt32) {
        self.packed = packed
    }

    /// Packs names one at a time, refusing a repeated one.
    private struct Builder {
        var packed: UInt32 = 0
        var count: UInt32 = 0
        var seen: UInt8 = 0

        mutating func add(_ name: Name) -> Bool {
            guard seen & 1 << name.rawValue == 0 else { return false }
            seen |= 1 << name.rawValue
            packed |= UInt32(name.rawValue) << (4 * count)
            count += 1
            return true
        }

        var order: HTTP2PseudoFieldOrder? { count == 0 ? nil : HTTP2PseudoFieldOrder(packed: packed) }
    }

    /// Calls `body` with each name in order (allocates nothing, unlike `names`).
    @inlinable
    public func forEach(_ body: (Name) -> Void) {
        var rest = packed
        while rest != 0, let name = Name(rawValue: UInt8(rest & 0xF)) {
            body(name)
            rest >>= 4
        }
    }

    /// The names in order.
    public var names: [Name] {
        var names: [Name] = []
        var rest = packed
        while rest != 0, let name = Name(rawValue: UInt8(rest & 0xF)) {
            names.append(name)
            rest >>= 4
        }
        return names
    }

    /// The order `HTTP2FieldMapping.requestList` sends when a head carries
    /// none: `:method`, `:protocol`, `:scheme`, `:authority`, `:path`, each
    /// that is present.
    public var isStandard: Bool {
        var rest = packed, previous: UInt32 = 0
        while rest != 0 {
            guard rest & 0xF > previous else { return false }
            previous = rest & 0xF
            rest >>= 4
        }
        return true
    }

    /// The names this order and `other` share, in this order's: what two
    /// orders are compared by when one head carries a pseudo-field the
    /// other lacks (an `:authority` a tap supplied).
    public func shared(with other: HTTP2PseudoFieldOrder) -> [Name] {
        let theirs = Set(other.names)
        return names.filter(theirs.contains)
    }

    /// `:method :authority :scheme :path`.
    public var description: String {
        names.map { $0.fieldName.description }.joined(separator: " ")
    }

    /// Puts the first `count` fields of `list` — the pseudo-fields the
    /// mapping made, in the standard order — in this order, when they are
    /// exactly this order's names; otherwise leaves them as they are (the
    /// head was changed to another kind of request: the standard order).
    func arrange(_ list: inout [HTTPField], pseudoFieldCount count: Int) {
        guard count <= list.count else { return }
        var present = Builder()
        for index in 0..<count {
            guard let name = Name(fieldName: list[index].name), present.add(name) else { return }
        }
        var mine = Builder()
        var rest = packed
        while rest != 0, let name = Name(rawValue: UInt8(rest & 0xF)) {
            _ = mine.add(name)
            rest >>= 4
        }
        guard present.seen == mine.seen else { return }
        rest = packed
        for position in 0..<count {
            let wanted = UInt8(rest & 0xF)
            rest >>= 4
            guard let from = (position..<count).first(where: { Name(fieldName: list[$0].name)?.rawValue == wanted }) else { return }
            list.swapAt(position, from)
        }
    }
}

extension HTTP2PseudoFieldOrder: Codable {
    /// An array of field names, `[":method", ":authority", ":scheme", ":path"]`.
    public func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(names.map { $0.fieldName.description })
    }

    /// Refuses, naming it, a name that is no request pseudo-field, a repeated
    /// one, and an empty list.
    public init(from decoder: Decoder) throws {
        var container = try decoder.unkeyedContainer()
        var names: [Name] = []
        while !container.isAtEnd {
            let at = decoder.codingPath + [Index(intValue: container.currentIndex)]
            let text = try container.decode(String.self)
            guard let name = Name(fieldName: text) else {
                throw DecodingError.dataCorrupted(DecodingError.Context(codingPath: at, debugDescription:
                    "unknown pseudo-header \"\(text)\" (an HTTP/2 request has :method, :protocol, :scheme, :authority, :path)"))
            }
            guard !names.contains(name) else {
                throw DecodingError.dataCorrupted(DecodingError.Context(codingPath: at,
                                                                        debugDescription: "pseudo-header \(text) given twice"))
            }
            names.append(name)
        }
        guard let order = HTTP2PseudoFieldOrder(names) else {
            throw DecodingError.dataCorrupted(DecodingError.Context(codingPath: decoder.codingPath,
                                                                    debugDescription: "an empty pseudo-header order"))
        }
        self = order
    }
}

/// An array position in a coding path.
private struct Index: CodingKey {
    let intValue: Int?
    var stringValue: String { "\(intValue ?? 0)" }
    init(intValue: Int) { self.intValue = intValue }
    init?(stringValue: String) { nil }
}
