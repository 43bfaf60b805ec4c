/// The three framings of a DEFLATE stream that HTTP meets.
public enum CompressionFormat: String, Hashable, Sendable, CustomStringConvertible {
    /// RFC 1952: header, DEFLATE, CRC-32 and size. `Content-Encoding: gzip` (and `x-gzip`).
    case gzip
    /// RFC 1950: two-byte header, DEFLATE, Adler-32. What `Content-Encoding: deflate` means.
    case zlib
    /// RFC 1951 alone, no header or checksum; some servers send it as `deflate`.
    case rawDeflate

    /// The format of a `Content-Encoding` coding (case-insensitive), or nil
    /// for one that is not DEFLATE-based (`br`, `zstd`, `identity`…).
    /// `deflate` is `.zlib`; `Decompressor(contentCoding:)` also accepts a raw stream for it.
    public init?(contentCoding: String) {
        switch contentCoding.lowercased() {
        case "gzip", "x-gzip": self = .gzip
        case "deflate": self = .zlib
        default: return nil
        }
    }

    /// zlib's `windowBits` for this framing with a 32 KiB window.
    var windowBits: Int32 {
        switch self {
        case .gzip: return 15 + 16
        case .zlib: return 15
        case .rawDeflate: return -15
        }
    }

    public var description: String { rawValue }
}
