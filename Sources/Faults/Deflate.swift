/// A DEFLATE compressor (RFC 1951) producing one final block with the fixed
/// Huffman codes, after greedy LZ77 matching over a 32 KiB window.
///
/// Why this and not zlib: only the TLS, HTTP and Hashing modules import C,
/// and a faulty intermediary's gzip only has to be valid and smaller, not
/// optimal. Fixed codes need no code tables in the stream, and the output is
/// checked against `gzip -d` in the tests.
enum Deflate {
    private static let windowSize = 32 * 1024
    private static let minMatch = 3
    private static let maxMatch = 258
    private static let maxChain = 64
    private static let hashBits = 15

    private static let lengthBase: [Int] = [3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31,
                                            35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258]
    private static let lengthExtra: [Int] = [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2,
                                             3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0]
    private static let distanceBase: [Int] = [1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193,
                                              257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145,
                                              8193, 12289, 16385, 24577]
    private static let distanceExtra: [Int] = [0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6,
                                               7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13]

    /// The raw DEFLATE stream for `input`.
    static func compress(_ input: [UInt8]) -> [UInt8] {
        var out = BitWriter()
        out.write(1, bits: 1) // BFINAL
        out.write(1, bits: 2) // BTYPE 01: fixed Huffman codes
        var head = [Int](repeating: -1, count: 1 << hashBits)
        var previous = [Int](repeating: -1, count: windowSize)
        func hash(_ i: Int) -> Int {
            (Int(input[i]) << 10 ^ Int(input[i + 1]) << 5 ^ Int(input[i + 2])) & ((1 << hashBits) - 1)
        }
        func insert(_ i: Int) {
            guard i + minMatch <= input.count else { return }
            let h = hash(i)
            previous[i % windowSize] = head[h]
            head[h] = i
        }
        var i = 0
        while i < input.count {
            var bestLength = 0, bestDistance = 0
            if i + minMatch <= input.count {
                var candidate = head[hash(i)]
                var chain = 0
                let limit = min(maxMatch, input.count - i)
                while candidate >= 0, i - candidate <= windowSize, chain < maxChain {
                    var length = 0
                    while length < limit, input[candidate + length] == input[i + length] { length += 1 }
                    if length > bestLength {
                        bestLength = length
                        bestDistance = i - candidate
                        if length == limit { break }
                    }
                    let next = previous[candidate % windowSize]
                    if next >= candidate { break } // the slot was reused by a newer position
                    candidate = next
                    chain += 1
                }
            }
            if bestLength >= minMatch {
                writeLength(bestLength, to: &out)
                writeDistance(bestDistance, to: &out)
                for j in i..<(i + bestLength) { insert(j) }
                i += bestLength
            } else {
                writeLiteral(Int(input[i]), to: &out)
                insert(i)
                i += 1
            }
        }
        writeLiteral(256, to: &out) // end of block
        return out.finish()
    }

    /// Writes a literal/length symbol with its fixed code (RFC 1951 §3.2.6).
    private static func writeLiteral(_ symbol: Int, to out: inout BitWriter) {
        switch symbol {
        case 0...143: out.writeHuffman(0x30 + symbol, bits: 8)
        case 144...255: out.writeHuffman(0x190 + symbol - 144, bits: 9)
        case 256...279: out.writeHuffman(symbol - 256, bits: 7)
        default: out.writeHuffman(0xC0 + symbol - 280, bits: 8)
        }
    }

    private static func writeLength(_ length: Int, to out: inout BitWriter) {
        var code = lengthBase.count - 1
        while lengthBase[code] > length { code -= 1 }
        writeLiteral(257 + code, to: &out)
        out.write(UInt64(length - lengthBase[code]), bits: lengthExtra[code])
    }

    private static func writeDistance(_ distance: Int, to out: inout BitWriter) {
        var code = distanceBase.count - 1
        while distanceBase[code] > distance { code -= 1 }
        out.writeHuffman(code, bits: 5)
        out.write(UInt64(distance - distanceBase[code]), bits: distanceExtra[code])
    }
}

/// Packs bits least significant first, as DEFLATE orders them.
private struct BitWriter {
    private var bytes: [UInt8] = []
    private var buffer: UInt64 = 0
    private var count = 0

    mutating func write(_ value: UInt64, bits: Int) {
        guard bits > 0 else { return }
        buffer |= value << UInt64(count)
        count += bits
        while count >= 8 {
            bytes.append(UInt8(truncatingIfNeeded: buffer))
            buffer >>= 8
            count -= 8
        }
    }

    /// Huffman codes are defined most significant bit first: reverse them.
    mutating func writeHuffman(_ code: Int, bits: Int) {
        var reversed: UInt64 = 0
        for b in 0..<bits where code >> b & 1 == 1 { reversed |= 1 << UInt64(bits - 1 - b) }
        write(reversed, bits: bits)
    }

    mutating func finish() -> [UInt8] {
        if count > 0 { bytes.append(UInt8(truncatingIfNeeded: buffer)) }
        return bytes
    }
}
