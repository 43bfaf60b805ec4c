/// Splits a fuzz input into a few control bytes and the payload, so one
/// input also chooses how the payload is cut into reads (the parsers keep
/// state across reads, and the cuts are where bugs hide).
struct FuzzInput {
    /// Control bytes taken from the front of the input (zero when it is short).
    let control: [UInt8]
    /// The rest: what the code under test receives.
    let payload: [UInt8]

    init(_ bytes: [UInt8], controlBytes: Int) {
        let taken = min(controlBytes, bytes.count)
        control = Array(bytes.prefix(taken)) + [UInt8](repeating: 0, count: controlBytes - taken)
        payload = Array(bytes.dropFirst(taken))
    }

    /// The payload cut into reads of 1…256 bytes; `seed` picks the sizes.
    func pieces(seed: UInt8) -> [[UInt8]] {
        guard seed != 0 else { return payload.isEmpty ? [] : [payload] }
        var pieces: [[UInt8]] = []
        var start = 0
        var state = UInt32(seed) &* 2_654_435_761
        while start < payload.count {
            state = state &* 1_103_515_245 &+ 12345
            let length = Int((state >> 16) % 256) + 1
            let end = min(payload.count, start + length)
            pieces.append(Array(payload[start..<end]))
            start = end
        }
        return pieces
    }
}
