/// Heads: the start line, the field lines, and what the completed head
/// decides (framing, keep-alive, tunnels).
extension HTTP1Parser {
    /// Reads head lines until the head completes (returns its event) or the
    /// bytes run out (stores the progress back in `state`, returns nil).
    /// Called with `state == .modifying`, so `section` is uniquely referenced.
    /// The start line is bound once for all the field lines: rebinding it per
    /// line (an optional read in the loop) copied it, a retain of each of
    /// its strings per field line.
    mutating func readHead(_ startLine: StartLine?, _ section: HTTP1FieldSection) throws(HTTP1ParseError) -> HTTP1Event? {
        var section = section
        let start: StartLine
        if let startLine {
            start = startLine
        } else if let parsed = try readStartLine() {
            start = parsed
        } else {
            state = .head(nil, section)
            return nil
        }
        let tooLarge = HTTP1ParseError.headerSectionTooLarge(limit: limits.maxHeaderSectionLength)
        while true {
            guard let line = try nextLine(maxPending: section.remainingLength(limits), tooLong: tooLarge, section: .head) else {
                state = .head(start, section)
                return nil
            }
            if try section.add(line: buffer.bytes[line], limits: limits) {
                return try completeHead(start, fields: HTTPFields(section.fields))
            }
        }
    }

    /// The start line, once its line is complete; nil when the bytes run out first.
    private mutating func readStartLine() throws(HTTP1ParseError) -> StartLine? {
        while true {
            if inputEnded && buffer.readableCount == 0 { return nil }
            let tooLong = HTTP1ParseError.startLineTooLong(limit: limits.maxStartLineLength)
            guard let line = try nextLine(maxPending: limits.maxStartLineLength + 1, tooLong: tooLong, section: .head) else {
                return nil
            }
            if line.isEmpty && kind == .request {
                // RFC 9112 §2.2: ignore empty lines before a request line.
                buffer.consumeToCursor()
                continue
            }
            guard line.count <= limits.maxStartLineLength else { throw tooLong }
            return try parseStartLine(buffer.bytes[line])
        }
    }

    private func parseStartLine(_ line: ArraySlice<UInt8>) throws(HTTP1ParseError) -> StartLine {
        switch kind {
        case .request: return try Self.parseRequestLine(line)
        case .response: return try Self.parseStatusLine(line)
        }
    }

    /// `method SP request-target SP HTTP-version`, single spaces only. The
    /// version is checked first, so `PRI * HTTP/2.0` is a 505, not a 400.
    static func parseRequestLine(_ line: ArraySlice<UInt8>) throws(HTTP1ParseError) -> StartLine {
        // The three parts between the first two spaces, cut in place (no array of parts).
        guard let firstSpace = line.firstIndex(of: HTTP1Grammar.space),
              let secondSpace = line[(firstSpace + 1)...].firstIndex(of: HTTP1Grammar.space) else {
            throw .invalidRequestLine(HTTP1ParseError.quoted(line))
        }
        let methodBytes = line[..<firstSpace], targetBytes = line[(firstSpace + 1)..<secondSpace]
        let versionBytes = line[(secondSpace + 1)...]
        guard !methodBytes.isEmpty, !targetBytes.isEmpty,
              !versionBytes.contains(HTTP1Grammar.space) else { throw .invalidRequestLine(HTTP1ParseError.quoted(line)) }
        let version = try parseVersion(versionBytes)
        guard let text = HTTP1Grammar.tokenText(methodBytes) else { throw .invalidMethod(HTTP1Grammar.text(methodBytes)) }
        let method = HTTPMethod(text)
        let target = try HTTP1RequestTarget(parsing: targetBytes, method: method)
        return .request(method: method, target: target, version: version)
    }

    /// `HTTP-version SP 3DIGIT SP [reason-phrase]`. A missing space after the
    /// code when there is no reason (`HTTP/1.1 200`) is accepted, as many
    /// servers send it; re-serializing then writes the space.
    static func parseStatusLine(_ line: ArraySlice<UInt8>) throws(HTTP1ParseError) -> StartLine {
        guard let space = line.firstIndex(of: HTTP1Grammar.space) else { throw .invalidStatusLine }
        let version = try parseVersion(line[..<space])
        let afterVersion = line[(space + 1)...]
        let code = afterVersion.prefix(3)
        guard code.count == 3, code.first != UInt8(ascii: "0"), let status = HTTP1Grammar.decimal(code) else {
            throw .invalidStatusLine
        }
        var reason = afterVersion.dropFirst(3)
        if let separator = reason.first {
            guard separator == HTTP1Grammar.space else { throw .invalidStatusLine }
            reason = reason.dropFirst()
        }
        guard let reasonText = HTTP1Grammar.fieldValueText(reason) else { throw .invalidStatusLine }
        return .response(version: version, status: HTTPStatus(status), reason: reasonText)
    }

    /// `HTTP/1.1` and `HTTP/1.0` as the eight bytes in memory load (`parseVersion`).
    private static let http1_1Word = Array("HTTP/1.1".utf8).withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
    private static let http1_0Word = Array("HTTP/1.0".utf8).withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }

    /// `HTTP/1.0` or `HTTP/1.1`. A well-formed other version (`HTTP/2.0`,
    /// `HTTP/1.2`, `HTTP/3`) is `unsupportedVersion` (505); anything else,
    /// lowercase `http/1.1` included, is `invalidVersion` (400).
    static func parseVersion(_ bytes: ArraySlice<UInt8>) throws(HTTP1ParseError) -> HTTPVersion {
        // Nearly every head: one eight-byte word compared, not a generic byte walk.
        if bytes.count == 8 {
            let word = bytes.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
            if word == HTTP1Parser.http1_1Word { return .http1_1 }
            if word == HTTP1Parser.http1_0Word { return .http1_0 }
        }
        let text = HTTP1Grammar.text(bytes)
        guard bytes.starts(with: "HTTP/".utf8) else { throw .invalidVersion(text) }
        let number = Array(bytes.dropFirst(5))
        switch number.count {
        case 1 where HTTP1Grammar.isDigit(number[0]) && number[0] != UInt8(ascii: "1"):
            throw .unsupportedVersion(text)
        case 3 where HTTP1Grammar.isDigit(number[0]) && number[1] == UInt8(ascii: ".") && HTTP1Grammar.isDigit(number[2]):
            throw .unsupportedVersion(text)
        default:
            throw .invalidVersion(text)
        }
    }

    /// Turns a complete head into its event, consumes it, and moves `state`
    /// to the body (or the next head).
    private mutating func completeHead(_ start: StartLine, fields: HTTPFields) throws(HTTP1ParseError) -> HTTP1Event {
        // The cursor is past the blank line; the raw head stops before its CRLF.
        let rawHead = buffer.peek(buffer.lineOffset - 2)
        buffer.consumeToCursor()
        switch start {
        case let .request(method, target, version):
            return .requestHead(try completeRequest(method, target, version, fields, rawHead))
        case let .response(version, status, reason):
            return .responseHead(try completeResponse(version, status, reason, fields, rawHead))
        }
    }

    private mutating func completeRequest(_ method: HTTPMethod, _ target: HTTP1RequestTarget, _ version: HTTPVersion,
                                          _ fields: HTTPFields, _ rawHead: [UInt8]) throws(HTTP1ParseError) -> HTTP1ParsedRequestHead {
        let analysis = try HTTP1HeadAnalysis(fields: fields, version: version)
        let host = try Self.host(analysis.host, count: analysis.hostCount, version: version)
        let framing = Self.declaredFraming(analysis) ?? .none
        if method == .connect && framing.allowsBody { throw .contentInConnectRequest }
        let head = HTTPRequestHead(method: method, scheme: target.scheme, authority: target.authority ?? host,
                                   path: target.path, targetForm: target.form, version: version, fields: fields)
        let keepAlive = analysis.keepAlive(version: version)
        let upgrade = analysis.upgradeRequested(version: version)
        if method == .connect || upgrade {
            afterMessage = .awaitTunnelDecision
        } else {
            afterMessage = keepAlive ? .nextMessage : .close
        }
        state = Self.bodyState(framing)
        return HTTP1ParsedRequestHead(head: head, rawHead: rawHead, framing: framing, keepAlive: keepAlive,
                                      expectsContinue: version == .http1_1 && analysis.expectsContinue,
                                      upgradeRequested: upgrade)
    }

    private mutating func completeResponse(_ version: HTTPVersion, _ status: HTTPStatus, _ reason: String,
                                           _ fields: HTTPFields, _ rawHead: [UInt8]) throws(HTTP1ParseError) -> HTTP1ParsedResponseHead {
        guard let method = pendingMethods.first else { throw .unsolicitedResponse }
        let analysis = try HTTP1HeadAnalysis(fields: fields, version: version)
        let framing = Self.responseFraming(status: status, requestMethod: method, analysis: analysis)
        let keepAlive = framing != .closeDelimited && framing != .tunnel && analysis.keepAlive(version: version)
        let parsed = HTTP1ParsedResponseHead(head: HTTPResponseHead(status: status, reason: reason, version: version, fields: fields),
                                             rawHead: rawHead, framing: framing, keepAlive: keepAlive, requestMethod: method)
        if parsed.isInterim {
            state = .head(nil, HTTP1FieldSection())
        } else {
            pendingMethods.removeFirst()
            afterMessage = keepAlive ? .nextMessage : .close
            state = Self.bodyState(framing)
        }
        return parsed
    }

    /// The framing the fields declare, or nil when they declare none.
    static func declaredFraming(_ analysis: HTTP1HeadAnalysis) -> HTTP1Framing? {
        if analysis.isChunked { return .chunked }
        if let length = analysis.contentLength { return .contentLength(length) }
        return nil
    }

    /// RFC 9112 §6.3 for responses: 101 and 2xx to CONNECT switch to a tunnel;
    /// 1xx, 204, 304 and answers to HEAD have no body whatever the fields say;
    /// otherwise the fields decide, and without them the body runs to close.
    static func responseFraming(status: HTTPStatus, requestMethod: HTTPMethod, analysis: HTTP1HeadAnalysis) -> HTTP1Framing {
        if status == .switchingProtocols || (requestMethod == .connect && status.isSuccessful) { return .tunnel }
        if status.forbidsBody || requestMethod == .head { return .none }
        return declaredFraming(analysis) ?? .closeDelimited
    }

    static func bodyState(_ framing: HTTP1Framing) -> State {
        switch framing {
        case .none, .contentLength(0): return .messageEnd(trailers: nil)
        case .contentLength(let length): return .fixedBody(remaining: length)
        case .chunked: return .chunkSizeLine
        case .closeDelimited: return .closeDelimitedBody
        case .tunnel: return .tunnelStart
        }
    }

    /// RFC 9112 §3.2: an HTTP/1.1 request has exactly one Host, HTTP/1.0 at
    /// most one; its value is empty or an authority. Returns the authority
    /// (nil when absent or empty). `value` is the first of `count` `Host` lines.
    static func host(_ value: String?, count: Int, version: HTTPVersion) throws(HTTP1ParseError) -> String? {
        guard count <= 1 else { throw .multipleHosts }
        guard let value else {
            if version == .http1_1 { throw .missingHost }
            return nil
        }
        if value.isEmpty { return nil }
        let isAuthority = FieldNameIndex.withUTF8(value) { HTTP1RequestTarget.isAuthority($0[...], requirePort: false) }
        guard isAuthority else { throw .invalidHost(value) }
        return value
    }
}
