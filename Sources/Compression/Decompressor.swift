import CZlib

/// Decompresses a gzip, zlib or raw DEFLATE stream chunk by chunk, never
/// producing more than `outputLimit` bytes in all (a decompression bomb is
/// an error, not an allocation). Call `decompress` as input arrives and
/// `finish` at the end of the input to learn whether the stream was whole.
///
/// gzip input may hold several members one after another (RFC 1952 §2.2);
/// zlib and raw streams hold one, and bytes after it are an error.
/// Not thread-safe: one owner at a time.
public final class Decompressor {
    /// The framing being decoded (for `deflate`, known once two bytes arrived).
    public private(set) var format: CompressionFormat
    /// The most output bytes in all.
    public let outputLimit: Int
    /// Output produced so far.
    public private(set) var outputCount = 0
    /// Input consumed so far.
    public private(set) var inputCount = 0
    /// Whether the (last) stream ended; more input is then an error, or a next gzip member.
    public private(set) var isAtEnd = false

    private let stream: ZStream
    /// For `Content-Encoding: deflate`: the first bytes, held until two tell zlib framing from raw.
    private var undetected: [UInt8]?

    public init(format: CompressionFormat, outputLimit: Int) throws(CompressionError) {
        precondition(outputLimit >= 0, "the output limit is a byte count")
        self.format = format
        self.outputLimit = outputLimit
        stream = try ZStream(side: .inflate) { intact_inflateInit2($0, format.windowBits) }
    }

    /// For a `Content-Encoding` value (`gzip`, `x-gzip`, `deflate`), or nil
    /// for a coding that is not DEFLATE-based. For `deflate`, a stream
    /// without the zlib header (as some servers send) is read as raw DEFLATE.
    public convenience init?(contentCoding: String, outputLimit: Int) throws(CompressionError) {
        guard let format = CompressionFormat(contentCoding: contentCoding) else { return nil }
        try self.init(format: format, outputLimit: outputLimit)
        if format == .zlib { undetected = [] }
    }

    /// Decompresses `input`; returns the output it yields.
    public func decompress(_ input: [UInt8]) throws(CompressionError) -> [UInt8] {
        var input = input
        if let held = undetected {
            input = held + input
            guard input.count >= 2 else {
                undetected = input
                return []
            }
            undetected = nil
            if !Self.hasZlibHeader(input[0], input[1]) {
                format = .rawDeflate
                inflateReset2(stream.pointer, CompressionFormat.rawDeflate.windowBits)
            }
        }
        var output: [UInt8] = []
        while !input.isEmpty {
            if isAtEnd {
                guard format == .gzip else {
                    throw .trailingData(format: format, inputOffset: inputCount, count: input.count)
                }
                inflateReset(stream.pointer)
                isAtEnd = false
            }
            let (chunk, consumed) = try stream.pump(input, capacity: { self.outputLimit - self.outputCount - $0 + 1 }) {
                (pointer) throws(CompressionError) -> Bool in
                switch inflate(pointer, Z_NO_FLUSH) {
                case Z_STREAM_END:
                    isAtEnd = true
                    return false
                case Z_OK: return true
                case Z_BUF_ERROR: return false  // needs more input
                case Z_NEED_DICT:
                    throw .corrupt(format: format, reason: "the stream needs a preset dictionary",
                                   inputOffset: inputCount + Int(pointer.pointee.total_in))
                case Z_DATA_ERROR:
                    throw .corrupt(format: format, reason: stream.message ?? "invalid data",
                                   inputOffset: inputCount + Int(pointer.pointee.total_in))
                case Z_MEM_ERROR: throw .outOfMemory
                case let status: throw .misuse("inflate returned \(status)")
                }
            }
            outputCount += chunk.count
            guard outputCount <= outputLimit else { throw .outputLimitExceeded(limit: outputLimit) }
            output += chunk
            inputCount += consumed
            input.removeFirst(consumed)
            if !isAtEnd { break }  // all input was taken; more is needed
        }
        return output
    }

    /// Declares the end of the input: throws `.truncated` unless the stream ended.
    public func finish() throws(CompressionError) {
        if let held = undetected { throw .truncated(format: format, inputBytes: held.count) }
        guard isAtEnd else { throw .truncated(format: format, inputBytes: inputCount) }
    }

    /// `input`, a whole stream, decompressed; at most `outputLimit` bytes.
    public static func decompress(_ input: [UInt8], format: CompressionFormat,
                                  outputLimit: Int) throws(CompressionError) -> [UInt8] {
        let decompressor = try Decompressor(format: format, outputLimit: outputLimit)
        let output = try decompressor.decompress(input)
        try decompressor.finish()
        return output
    }

    /// RFC 1950 §2.2: method 8 with a window of at most 32 KiB, and a header checksum that is a multiple of 31.
    private static func hasZlibHeader(_ first: UInt8, _ second: UInt8) -> Bool {
        first & 0x0F == 8 && first >> 4 <= 7 && (UInt16(first) << 8 | UInt16(second)) % 31 == 0
    }
}
