/// Why compressing or decompressing stopped. Every case says where, so a
/// recording or a report can name the exact problem.
public enum CompressionError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The decompressed output would exceed `limit` bytes (a bomb, or just too big).
    case outputLimitExceeded(limit: Int)
    /// The input is not a valid stream of `format`: zlib's reason ("incorrect
    /// header check", "invalid distance too far back", "incorrect data check")
    /// and the input offset at which it was found.
    case corrupt(format: CompressionFormat, reason: String, inputOffset: Int)
    /// The input ended before the end of the compressed stream.
    case truncated(format: CompressionFormat, inputBytes: Int)
    /// Bytes follow the end of the compressed stream (zlib and raw DEFLATE carry one stream only).
    case trailingData(format: CompressionFormat, inputOffset: Int, count: Int)
    /// zlib could not allocate its state.
    case outOfMemory
    /// Used after `finish()`, or zlib reported a state error (a bug here, not bad input).
    case misuse(String)

    public var description: String {
        switch self {
        case let .outputLimitExceeded(limit):
            return "decompressed output exceeds the limit of \(limit) bytes"
        case let .corrupt(format, reason, offset):
            return "not a valid \(format) stream at input byte \(offset): \(reason)"
        case let .truncated(format, count):
            return "the \(format) stream is truncated: it ends after \(count) input bytes without its end"
        case let .trailingData(format, offset, count):
            return "\(count) bytes follow the end of the \(format) stream at input byte \(offset)"
        case .outOfMemory:
            return "zlib could not allocate memory"
        case let .misuse(detail):
            return "compression misuse: \(detail)"
        }
    }
}
