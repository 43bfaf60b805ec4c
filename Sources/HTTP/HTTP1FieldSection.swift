/// Field lines being collected for a header or trailer section, line by
/// line, with the size and count limits applied as lines arrive.
struct HTTP1FieldSection: Sendable {
    private(set) var fields: [HTTPField] = []
    /// Bytes of the section so far, CRLFs included.
    private(set) var length = 0

    /// Fields room is made for at the first line (a request from a browser
    /// carries about a dozen; a response from an origin fewer).
    static let usualFieldCount = 12

    /// How many more bytes a partial line may hold before the section is too large.
    func remainingLength(_ limits: HTTP1ParserLimits) -> Int { limits.maxHeaderSectionLength - length }

    /// Adds one complete line (CRLF excluded). Returns true when the line was
    /// the empty line that ends the section.
    mutating func add(line: ArraySlice<UInt8>, limits: HTTP1ParserLimits) throws(HTTP1ParseError) -> Bool {
        length += line.count + 2
        guard length <= limits.maxHeaderSectionLength else {
            throw .headerSectionTooLarge(limit: limits.maxHeaderSectionLength)
        }
        if line.isEmpty { return true }
        guard fields.count < limits.maxFieldCount else { throw .tooManyFields(limit: limits.maxFieldCount) }
        // Room for a usual head at the first line: one allocation, not one per doubling.
        if fields.isEmpty { fields.reserveCapacity(min(Self.usualFieldCount, limits.maxFieldCount)) }
        fields.append(try Self.parseField(line))
        return false
    }

    /// `field-name ":" OWS field-value OWS` (RFC 9112 §5), strictly: no
    /// leading whitespace (obs-fold), no whitespace before the colon, a token
    /// name, and a value of HTAB, SP, VCHAR and obs-text only.
    static func parseField(_ line: ArraySlice<UInt8>) throws(HTTP1ParseError) -> HTTPField {
        guard let first = line.first, !HTTP1Grammar.isWhitespace(first) else { throw .obsoleteLineFolding }
        guard let colon = line.firstIndex(of: HTTP1Grammar.colon) else { throw .missingColon }
        let name = line[..<colon]
        if let last = name.last, HTTP1Grammar.isWhitespace(last) {
            throw .whitespaceBeforeColon(name: HTTP1Grammar.text(HTTP1Grammar.trimmingWhitespace(name)))
        }
        guard let nameText = HTTP1Grammar.tokenText(name) else { throw .invalidFieldName(HTTP1Grammar.text(name)) }
        let value = HTTP1Grammar.trimmingWhitespace(line[(colon + 1)...])
        guard let valueText = HTTP1Grammar.fieldValueText(value) else {
            let bad = value.first(where: { !HTTP1Grammar.isFieldValueByte($0) })
            throw .invalidFieldValue(name: nameText, byte: bad ?? 0)
        }
        return HTTPField(name: nameText, value: valueText)
    }
}
