/// CRC-32 as gzip uses it (ISO 3309 / ITU-T V.42, reflected polynomial 0xEDB88320).
struct CRC32 {
    private static let table: [UInt32] = (0..<256).map { n -> UInt32 in
        var c = UInt32(n)
        for _ in 0..<8 { c = c & 1 == 1 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        return c
    }

    private(set) var value: UInt32 = 0

    mutating func update(_ bytes: [UInt8]) {
        var c = ~value
        for b in bytes { c = CRC32.table[Int((c ^ UInt32(b)) & 0xFF)] ^ (c >> 8) }
        value = ~c
    }
}
