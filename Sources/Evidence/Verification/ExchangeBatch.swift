/// The exchanges that left the window, gathered to be judged together:
/// per tap the batch's records, and the chains linking them.
struct ExchangeBatch {
    var records: [[ExchangeRecord]]
    var chains: [ExchangeChain] = []

    init(taps: Int) {
        records = Array(repeating: [], count: taps)
    }

    /// Adds an exchange's records as chains: runs of consecutive taps whose
    /// records link (the earlier sent the request on, the later received it), as `ExchangeChain.link` makes them.
    mutating func add(_ members: [ExchangeRecord?], path: TapPath, boundaries: inout BoundaryPairs) {
        var chain: ExchangeChain?
        for (tap, record) in members.enumerated() {
            guard let record else {
                if let done = chain { chains.append(done) }
                chain = nil
                continue
            }
            if tap + 1 < members.count, record.leg(path.taps[tap].exit)?.request != nil { boundaries.left[tap] = true }
            if tap > 0, record.leg(path.taps[tap].entry)?.request != nil { boundaries.right[tap - 1] = true }
            records[tap].append(record)
            let index = records[tap].count - 1
            if var current = chain, let previous = members[tap - 1],
               previous.leg(path.taps[tap - 1].exit)?.request != nil, record.leg(path.taps[tap].entry)?.request != nil {
                current.members[tap] = index
                current.pairings[tap - 1] = previous.traceID != nil && previous.traceID == record.traceID ? .trace : .inferred
                boundaries.paired[tap - 1] = true
                chain = current
            } else {
                if let done = chain { chains.append(done) }
                var fresh = ExchangeChain(members: Array(repeating: nil, count: members.count),
                                          pairings: Array(repeating: nil, count: max(0, members.count - 1)))
                fresh.members[tap] = index
                chain = fresh
            }
        }
        if let done = chain { chains.append(done) }
    }
}

/// Per boundary between neighbouring taps, over the whole run: whether a
/// record on each side could pair across it, and whether any pair did
/// (a boundary with candidates and no pair is the problem `nothing-pairs`).
struct BoundaryPairs {
    var left: [Bool], right: [Bool], paired: [Bool]

    init(taps: Int) {
        left = Array(repeating: false, count: max(0, taps - 1))
        right = left
        paired = left
    }

    var unpaired: [Int] { left.indices.filter { left[$0] && right[$0] && !paired[$0] } }
}
