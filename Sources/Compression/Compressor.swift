import CZlib

/// Compresses a stream of bytes into gzip, zlib or raw DEFLATE, chunk by
/// chunk: `compress` as input arrives, `flush` to make everything so far
/// decodable by the peer, `finish` once for the end of the stream.
/// Not thread-safe: one owner at a time.
public final class Compressor {
    public let format: CompressionFormat
    private let stream: ZStream
    private var isFinished = false

    /// `level` is zlib's, 0 (store) to 9 (smallest); -1 is zlib's default (6).
    public init(format: CompressionFormat, level: Int32 = -1) throws(CompressionError) {
        guard (-1...9).contains(level) else { throw .misuse("compression level \(level) is not -1...9") }
        self.format = format
        stream = try ZStream(side: .deflate) { intact_deflateInit2($0, level, format.windowBits) }
    }

    /// Compresses `input`; returns what zlib has ready (often nothing until it has a block).
    public func compress(_ input: [UInt8]) throws(CompressionError) -> [UInt8] {
        try run(input, flush: Z_NO_FLUSH)
    }

    /// Everything given so far, decodable now (a sync flush; costs a few bytes).
    public func flush() throws(CompressionError) -> [UInt8] {
        try run([], flush: Z_SYNC_FLUSH)
    }

    /// The rest of the stream and its trailer. Called once; the compressor is then spent.
    public func finish() throws(CompressionError) -> [UInt8] {
        let out = try run([], flush: Z_FINISH)
        isFinished = true
        return out
    }

    /// `input` compressed as one whole stream. Traps only when zlib cannot
    /// allocate its state (as an Array allocation would).
    public static func compress(_ input: [UInt8], format: CompressionFormat, level: Int32 = -1) -> [UInt8] {
        do {
            let compressor = try Compressor(format: format, level: level)
            return try compressor.compress(input) + compressor.finish()
        } catch {
            preconditionFailure("zlib: \(error)")
        }
    }

    private func run(_ input: [UInt8], flush: Int32) throws(CompressionError) -> [UInt8] {
        guard !isFinished else { throw .misuse("the \(format) compressor was used after finish()") }
        return try stream.pump(input, capacity: { _ in Int.max }) { (pointer) throws(CompressionError) -> Bool in
            switch deflate(pointer, flush) {
            case Z_STREAM_END: return false
            case Z_OK: return true
            case Z_BUF_ERROR: return false  // no progress possible: all input taken, all output given
            case let status: throw .misuse("deflate returned \(status)")
            }
        }.output
    }
}
