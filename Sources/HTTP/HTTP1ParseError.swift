/// Why an HTTP/1.1 message was rejected. Each case names one problem so a
/// recording, a log line or a 4xx body can say exactly what was wrong.
///
/// `status` is the status a server answers when a *request* has this problem
/// (400, 408, 414, 431, 501 or 505). A proxy that receives a broken *response*
/// answers 502 instead; the case still says why.
public enum HTTP1ParseError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Which part of a message the input ended in.
    public enum Section: String, Hashable, Sendable {
        case head, body, chunkedBody = "chunked body", trailers
    }

    // Start line.
    case startLineTooLong(limit: Int)
    /// The line as received (`quoted`): not three parts split by single spaces.
    case invalidRequestLine(String)
    case invalidMethod(String)
    case invalidRequestTarget(String)
    case invalidVersion(String)
    case unsupportedVersion(String)
    case invalidStatusLine
    // Field lines.
    case headerSectionTooLarge(limit: Int)
    case tooManyFields(limit: Int)
    case bareLineFeed
    case obsoleteLineFolding
    case missingColon
    case whitespaceBeforeColon(name: String)
    case invalidFieldName(String)
    case invalidFieldValue(name: String, byte: UInt8)
    case missingHost
    case multipleHosts
    case invalidHost(String)
    // Framing.
    case contentLengthWithTransferEncoding
    case invalidContentLength(String)
    case conflictingContentLengths([String])
    case transferEncodingInHTTP10
    case duplicateChunked
    case chunkedNotLast
    case obfuscatedTransferEncoding(String)
    case unsupportedTransferCoding(String)
    case contentInConnectRequest
    // Chunked body.
    case invalidChunkSize(String)
    case chunkSizeTooLarge(String)
    case chunkLineTooLong(limit: Int)
    case invalidChunkExtension(String)
    case missingChunkDataTerminator
    case forbiddenTrailerField(String)
    // Connection.
    case unsolicitedResponse
    case truncated(Section)
    /// The request head did not complete within `seconds` of its first byte
    /// (a slow client, Slowloris): answered 408.
    case headTimeout(seconds: Int)

    /// The most characters of a received line an error quotes.
    public static let quotedLimit = 200

    /// `bytes` as text for an error: printable ASCII as it is, anything else
    /// (control bytes, non-ASCII, a quote or backslash) as `\xNN`, at most
    /// `quotedLimit` characters (then `…`).
    public static func quoted<Bytes: Collection>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        var text = ""
        for byte in bytes {
            if text.count >= quotedLimit { return text + "…" }
            if byte >= 0x20 && byte < 0x7F && byte != UInt8(ascii: "\"") && byte != UInt8(ascii: "\\") {
                text.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                let hex = String(byte, radix: 16, uppercase: true)
                text += "\\x" + (hex.count == 1 ? "0" + hex : hex)
            }
        }
        return text
    }

    /// The status a server answers a request that has this problem.
    public var status: HTTPStatus {
        switch self {
        case .startLineTooLong: return .uriTooLong
        case .headTimeout: return .requestTimeout
        case .headerSectionTooLarge, .tooManyFields: return .requestHeaderFieldsTooLarge
        case .unsupportedTransferCoding: return .notImplemented
        case .unsupportedVersion: return .httpVersionNotSupported
        default: return .badRequest
        }
    }

    /// A human reason, suitable for a log line or the body of the error response.
    public var reason: String {
        switch self {
        case .startLineTooLong(let limit): return "start line longer than \(limit) bytes"
        case .invalidRequestLine(let line):
            // `GET /`: an HTTP/0.9 request (some appliances' default monitors send one).
            let parts = line.split(separator: " ", omittingEmptySubsequences: false)
            let hint = parts.count == 2 && !parts[0].isEmpty && parts[1].hasPrefix("/")
                ? " (an HTTP/0.9 request: HTTP/1.0 or later is needed)" : ""
            return "request line \"\(line)\" is not `method SP target SP version`\(hint)"
        case .invalidMethod(let m): return "method \"\(m)\" is not a token"
        case .invalidRequestTarget(let t): return "request target \"\(t)\" is invalid for its method"
        case .invalidVersion(let v): return "\"\(v)\" is not an HTTP version"
        case .unsupportedVersion(let v): return "version \(v) is not spoken over HTTP/1.x"
        case .invalidStatusLine: return "status line is not `version SP 3DIGIT SP reason`"
        case .headerSectionTooLarge(let limit): return "header section larger than \(limit) bytes"
        case .tooManyFields(let limit): return "more than \(limit) field lines"
        case .bareLineFeed: return "line ended by LF without CR"
        case .obsoleteLineFolding: return "field line folded onto the previous one (obs-fold)"
        case .missingColon: return "field line without a colon"
        case .whitespaceBeforeColon(let name): return "whitespace between field name \"\(name)\" and its colon"
        case .invalidFieldName(let name): return "field name \"\(name)\" is not a token"
        case .invalidFieldValue(let name, let byte):
            return "value of field \"\(name)\" contains byte 0x\(String(byte, radix: 16, uppercase: true))"
        case .missingHost: return "HTTP/1.1 request without Host"
        case .multipleHosts: return "more than one Host field"
        case .invalidHost(let h): return "Host \"\(h)\" is not an authority"
        case .contentLengthWithTransferEncoding: return "both Content-Length and Transfer-Encoding"
        case .invalidContentLength(let v): return "Content-Length \"\(v)\" is not a decimal length"
        case .conflictingContentLengths(let vs): return "Content-Length values differ: \(vs.joined(separator: " | "))"
        case .transferEncodingInHTTP10: return "Transfer-Encoding in an HTTP/1.0 message"
        case .duplicateChunked: return "chunked applied more than once"
        case .chunkedNotLast: return "chunked is not the last transfer coding"
        case .obfuscatedTransferEncoding(let v): return "Transfer-Encoding \"\(v)\" is malformed"
        case .unsupportedTransferCoding(let c): return "transfer coding \"\(c)\" is not implemented"
        case .contentInConnectRequest: return "CONNECT request with Content-Length or Transfer-Encoding"
        case .invalidChunkSize(let s): return "chunk size line \"\(s)\" does not start with a hex size"
        case .chunkSizeTooLarge(let s): return "chunk size \"\(s)\" overflows"
        case .chunkLineTooLong(let limit): return "chunk size line longer than \(limit) bytes"
        case .invalidChunkExtension(let s): return "chunk extension \"\(s)\" is malformed"
        case .missingChunkDataTerminator: return "chunk data not followed by CRLF"
        case .forbiddenTrailerField(let name): return "field \"\(name)\" is not allowed in trailers"
        case .unsolicitedResponse: return "response with no request awaiting it"
        case .truncated(let section): return "connection closed in the \(section.rawValue) of a message"
        case .headTimeout(let seconds): return "the request head did not complete within \(seconds) s"
        }
    }

    public var description: String { "\(status) \(reason)" }
}
