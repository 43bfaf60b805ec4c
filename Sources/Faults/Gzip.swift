/// The gzip file format (RFC 1952) around a DEFLATE stream.
enum Gzip {
    /// A gzip member: fixed 10-byte header (no name, no time — the engine reads
    /// no clock — OS unknown), the DEFLATE stream, CRC-32 and size modulo 2³².
    static func compress(_ input: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [0x1F, 0x8B, 8, 0, 0, 0, 0, 0, 0, 255]
        out += Deflate.compress(input)
        var crc = CRC32()
        crc.update(input)
        out += littleEndian(crc.value)
        out += littleEndian(UInt32(truncatingIfNeeded: input.count))
        return out
    }

    private static func littleEndian(_ v: UInt32) -> [UInt8] {
        [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 24)]
    }
}
