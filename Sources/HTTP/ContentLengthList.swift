/// `Content-Length` as RFC 9110 §8.6 lets a recipient read it: one decimal,
/// or a list of identical decimals, in one field line (`5, 5`) or several.
/// HTTP/1.1 accepts such a list (every recipient agrees on the length);
/// HTTP/2 does not (RFC 9113 §8.1.1 wants one value), so a translation to
/// HTTP/2 sends the one length instead, which verification shows as an
/// equivalent framing change. Differing elements are refused by the parser.
public enum ContentLengthList {
    /// What a list of `Content-Length` values says.
    public enum Reading: Hashable, Sendable {
        /// Every element is this length.
        case length(Int)
        /// This value is empty, or an element is not a decimal number.
        case invalid(String)
        /// Elements name different lengths.
        case conflicting
    }

    /// Reads every element of every value; `invalid("")` for no values.
    public static func read(_ values: [String]) -> Reading {
        var reader = Reader()
        for value in values { reader.read(value) }
        return reader.reading ?? .invalid(values.joined(separator: ", "))
    }

    /// `read(_:)` one value at a time, for a caller that meets the values
    /// one by one (`HTTP1HeadAnalysis`) and so needs no array of them.
    struct Reader {
        private var agreed: Int?
        private var failure: Reading?

        /// What the values read so far say; nil before the first value.
        var reading: Reading? { failure ?? agreed.map(Reading.length) }

        /// Reads the elements of the next value, as views into its bytes;
        /// nothing more once the values read are invalid or conflicting.
        mutating func read(_ value: String) {
            guard failure == nil else { return }
            _ = FieldNameIndex.withUTF8(value) { bytes in
                HTTP1Grammar.forEachListElement(bytes) { element in
                    guard let n = HTTP1Grammar.decimal(element) else {
                        failure = .invalid(value)
                        return true
                    }
                    if let prior = agreed, prior != n {
                        failure = .conflicting
                        return true
                    }
                    agreed = n
                    return false
                }
            }
        }
    }

    /// The length the values agree on; nil when they are invalid, conflict, or there are none.
    public static func agreedLength(_ values: [String]) -> Int? {
        if case .length(let n) = read(values) { return n }
        return nil
    }
}

extension HTTPFields {
    /// These fields with a `Content-Length` list whose elements all agree
    /// (`5, 5`, or two `Content-Length: 5` lines) replaced by one field with
    /// the one length, where the first stood; unchanged otherwise. What an
    /// HTTP/2 sender puts on the wire.
    public var collapsingContentLengthList: HTTPFields { collapsedContentLengthList ?? self }

    /// `collapsingContentLengthList` when it differs from these fields; nil
    /// when they are unchanged (so a head that shares them is not copied).
    public var collapsedContentLengthList: HTTPFields? {
        // The usual head has one value and no list: found without building the array of values.
        var count = 0
        var listed = false
        for field in fields where field.hasName(.contentLength) {
            count += 1
            if count == 1 { listed = field.value.utf8.contains(UInt8(ascii: ",")) }
        }
        guard count > 1 || listed, let length = ContentLengthList.agreedLength(values(.contentLength)) else { return nil }
        var collapsed = HTTPFields()
        var written = false
        for field in self {
            guard field.hasName(.contentLength) else {
                collapsed.append(field)
                continue
            }
            if !written { collapsed.append(HTTPField(name: field.name, value: String(length))) }
            written = true
        }
        return collapsed
    }
}
