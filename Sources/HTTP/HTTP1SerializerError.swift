/// Why an `HTTP1Serializer` refused to write: the caller asked for something
/// that would put an invalid or ambiguous message on the wire.
public enum HTTP1SerializerError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A head was written while the previous message's body was still open.
    case messageInProgress
    /// Body or end written with no head before it.
    case noMessageInProgress
    /// The connection ended (close-delimited body or tunnel): nothing more can be written.
    case connectionEnded
    case unsupportedVersion(HTTPVersion)
    case invalidMethod(String)
    case invalidTarget(String)
    case invalidStatus(Int)
    case invalidReason(String)
    /// A field name that is not a token or a value with a control byte
    /// (which would inject lines into the head).
    case invalidField(HTTPField)
    /// The head's own framing fields are invalid (same rules as the parser).
    case invalidFramingFields(HTTP1ParseError)
    /// The requested framing disagrees with the framing fields the head carries.
    case framingConflict(requested: HTTP1Framing, declared: HTTP1Framing)
    /// This framing cannot be used here (chunked in HTTP/1.0, close-delimited request…).
    case framingNotAllowed(HTTP1Framing)
    case bodyNotAllowed
    case bodyExceedsContentLength(Int)
    case bodyShorterThanContentLength(missing: Int)
    case trailersRequireChunked

    public var description: String {
        switch self {
        case .messageInProgress: return "a message is still being written"
        case .noMessageInProgress: return "no message head was written"
        case .connectionEnded: return "the connection ended with the previous message"
        case .unsupportedVersion(let v): return "\(v) cannot be written as HTTP/1.x"
        case .invalidMethod(let m): return "method \"\(m)\" is not a token"
        case .invalidTarget(let t): return "request target \"\(t)\" is empty or not visible ASCII"
        case .invalidStatus(let s): return "status \(s) is not three digits"
        case .invalidReason(let r): return "reason \"\(r)\" contains a control byte"
        case .invalidField(let f): return "field \"\(f.name)\" has an invalid name or value"
        case .invalidFramingFields(let e): return "framing fields: \(e.reason)"
        case let .framingConflict(requested, declared): return "framing \(requested) requested, fields declare \(declared)"
        case .framingNotAllowed(let f): return "framing \(f) is not allowed for this message"
        case .bodyNotAllowed: return "this message has no body"
        case .bodyExceedsContentLength(let n): return "body longer than Content-Length \(n)"
        case .bodyShorterThanContentLength(let missing): return "body ended \(missing) bytes short of Content-Length"
        case .trailersRequireChunked: return "trailers need chunked framing"
        }
    }
}
