/// The chunked transfer coding (RFC 9112 §7.1): size lines with extensions,
/// the CRLF after each chunk's data, and the trailer section.
extension HTTP1Parser {
    /// Reads one chunk-size line and moves to its data or, for the last chunk,
    /// to the trailers. Returns false when more bytes are needed.
    mutating func readChunkSizeLine() throws(HTTP1ParseError) -> Bool {
        let limit = limits.maxChunkLineLength
        guard let line = try nextLine(maxPending: limit + 1, tooLong: .chunkLineTooLong(limit: limit), section: .chunkedBody) else {
            return false
        }
        guard line.count <= limit else { throw .chunkLineTooLong(limit: limit) }
        let size = try Self.chunkSize(buffer.bytes[line])
        buffer.consumeToCursor()
        state = size == 0 ? .trailers(HTTP1FieldSection()) : .chunkData(remaining: size)
        return true
    }

    /// Consumes the CRLF that must follow chunk data. Returns false when more
    /// bytes are needed.
    mutating func readChunkDataEnd() throws(HTTP1ParseError) -> Bool {
        let available = min(buffer.readableCount, 2)
        guard buffer.peek(available).elementsEqual(HTTP1Grammar.crlf.prefix(available)) else {
            throw .missingChunkDataTerminator
        }
        guard available == 2 else {
            if inputEnded { throw .truncated(.chunkedBody) }
            return false
        }
        buffer.skip(2)
        state = .chunkSizeLine
        return true
    }

    /// Reads trailer lines until the section ends (moves to `.messageEnd`,
    /// returns true) or bytes run out (stores progress, returns false).
    /// Called with `state == .modifying`. Framing and routing fields are
    /// refused in trailers: a recipient that merged them into the head would
    /// be open to request smuggling (RFC 9110 §6.5.1).
    mutating func readTrailers(_ section: HTTP1FieldSection) throws(HTTP1ParseError) -> Bool {
        var section = section
        let tooLarge = HTTP1ParseError.headerSectionTooLarge(limit: limits.maxHeaderSectionLength)
        while true {
            guard let line = try nextLine(maxPending: section.remainingLength(limits), tooLong: tooLarge, section: .trailers) else {
                state = .trailers(section)
                return false
            }
            guard try section.add(line: buffer.bytes[line], limits: limits) else { continue }
            buffer.consumeToCursor()
            if let field = section.fields.first(where: { field in
                switch HTTP1HeadFieldName(field.name) {
                case .contentLength?, .transferEncoding?, .host?: true
                case .connection?, .upgrade?, .expect?, nil: false
                }
            }) {
                throw .forbiddenTrailerField(field.name)
            }
            state = .messageEnd(trailers: section.fields.isEmpty ? nil : HTTPFields(section.fields))
            return true
        }
    }

    /// `chunk-size [ chunk-ext ]`: hex digits (leading zeros allowed, value at
    /// most `Int.max`), then extensions, which are validated and dropped.
    static func chunkSize(_ line: ArraySlice<UInt8>) throws(HTTP1ParseError) -> Int {
        var size = 0
        var index = line.startIndex
        while index < line.endIndex, let digit = HTTP1Grammar.hexValue(line[index]) {
            let (times16, o1) = size.multipliedReportingOverflow(by: 16)
            let (sum, o2) = times16.addingReportingOverflow(digit)
            guard !o1, !o2 else { throw .chunkSizeTooLarge(HTTP1Grammar.text(line)) }
            size = sum
            index += 1
        }
        guard index > line.startIndex else { throw .invalidChunkSize(HTTP1Grammar.text(line)) }
        let rest = line[index...]
        if let first = rest.first, first != HTTP1Grammar.semicolon && !HTTP1Grammar.isWhitespace(first) {
            throw .invalidChunkSize(HTTP1Grammar.text(line))
        }
        guard isChunkExtensions(rest) else { throw .invalidChunkExtension(HTTP1Grammar.text(rest)) }
        return size
    }

    /// `*( BWS ";" BWS ext-name [ BWS "=" BWS ext-value ] )` where ext-value
    /// is a token or a quoted-string.
    static func isChunkExtensions(_ bytes: ArraySlice<UInt8>) -> Bool {
        var i = bytes.startIndex
        func skipWhitespace() { while i < bytes.endIndex, HTTP1Grammar.isWhitespace(bytes[i]) { i += 1 } }
        func skipToken() -> Bool {
            let start = i
            while i < bytes.endIndex, HTTP1Grammar.isTokenByte(bytes[i]) { i += 1 }
            return i > start
        }
        while i < bytes.endIndex {
            skipWhitespace()
            guard i < bytes.endIndex, bytes[i] == HTTP1Grammar.semicolon else { return false }
            i += 1
            skipWhitespace()
            guard skipToken() else { return false }
            let afterName = i
            skipWhitespace()
            guard i < bytes.endIndex, bytes[i] == HTTP1Grammar.equals else {
                i = afterName
                continue
            }
            i += 1
            skipWhitespace()
            if i < bytes.endIndex, bytes[i] == HTTP1Grammar.quote {
                guard let end = quotedStringEnd(bytes, from: i) else { return false }
                i = end
            } else if !skipToken() {
                return false
            }
        }
        return true
    }

    /// The index after the quoted-string starting at `start` (a DQUOTE), or nil
    /// when it is unterminated or holds a control byte.
    private static func quotedStringEnd(_ bytes: ArraySlice<UInt8>, from start: Int) -> Int? {
        var i = start + 1
        while i < bytes.endIndex {
            switch bytes[i] {
            case HTTP1Grammar.quote:
                return i + 1
            case HTTP1Grammar.backslash:
                guard i + 1 < bytes.endIndex, HTTP1Grammar.isFieldValueByte(bytes[i + 1]) else { return nil }
                i += 2
            case let b where HTTP1Grammar.isFieldValueByte(b):
                i += 1
            default:
                return nil
            }
        }
        return nil
    }
}
