import HTTP
import Hashing

/// One exchange followed across the taps of a path: at most one record per
/// tap, and how each consecutive pair of records was matched.
///
/// Records are linked only between neighbouring taps, from the request the
/// earlier tap sent (its exit leg) to the request the later one received
/// (its entry leg). A record with no partner in the next tap ends its chain;
/// a record with no partner in the previous tap starts one.
struct ExchangeChain {
    /// Per tap, the index of the record in that tap's records, or nil.
    var members: [Int?]
    /// Per boundary between tap `i` and `i + 1`, how the two records were paired.
    var pairings: [Pairing?]

    /// Links the records of every tap into chains, in tap order then record order.
    static func link(_ path: TapPath, maximumAlignmentCells: Int) throws -> (chains: [ExchangeChain], unpairedBoundaries: [Int]) {
        let taps = path.taps
        var successors: [[Int: (Int, Pairing)]] = []
        var predecessors: [Set<Int>] = Array(repeating: [], count: taps.count)
        var unpaired: [Int] = []
        for boundary in 0..<max(0, taps.count - 1) {
            let matcher = BoundaryMatcher(left: taps[boundary], right: taps[boundary + 1])
            let pairs = try matcher.pairs(maximumAlignmentCells: maximumAlignmentCells)
            if pairs.isEmpty && matcher.hasCandidates { unpaired.append(boundary) }
            var next: [Int: (Int, Pairing)] = [:]
            for pair in pairs {
                next[pair.left] = (pair.right, pair.how)
                predecessors[boundary + 1].insert(pair.right)
            }
            successors.append(next)
        }
        var chains: [ExchangeChain] = []
        for (tapIndex, tap) in taps.enumerated() {
            for record in tap.records.indices where !predecessors[tapIndex].contains(record) {
                var chain = ExchangeChain(members: Array(repeating: nil, count: taps.count),
                                          pairings: Array(repeating: nil, count: max(0, taps.count - 1)))
                chain.members[tapIndex] = record
                var (current, index) = (record, tapIndex)
                while index < successors.count, let (next, how) = successors[index][current] {
                    chain.members[index + 1] = next
                    chain.pairings[index] = how
                    (current, index) = (next, index + 1)
                }
                chains.append(chain)
            }
        }
        return (chains, unpaired)
    }

    /// True when at least two taps' records are linked.
    var crossesTaps: Bool { pairings.contains { $0 != nil } }
}

/// Pairs the records of two neighbouring taps: first by equal trace ids, then
/// the rest by sequence alignment, then any leftovers that match on method,
/// target and body exactly (requests reordered under concurrency).
struct BoundaryMatcher {
    /// A record that can take part: it has a request on the leg that faces the boundary.
    struct Candidate {
        let index: Int
        let traceID: String?
        let request: RecordedMessage
    }

    /// What alignment compares, each value interned as a small integer so
    /// that scoring a pair is a few integer comparisons (alignment scores
    /// every left × right pair).
    struct Key {
        let trace: Int?
        let method: Int
        let target: Int?
        let path: Int
        let body: Int
    }

    let left: [Candidate]
    let right: [Candidate]
    let leftName: String
    let rightName: String
    private let leftKeys: [Key]
    private let rightKeys: [Key]

    init(left: PathTap, right: PathTap) {
        self.left = BoundaryMatcher.candidates(left, role: left.exit)
        self.right = BoundaryMatcher.candidates(right, role: right.entry)
        leftName = left.name
        rightName = right.name
        var interned: [AnyHashable: Int] = [:]
        func intern(_ value: AnyHashable) -> Int {
            if let known = interned[value] { return known }
            interned[value] = interned.count
            return interned.count - 1
        }
        func key(_ candidate: Candidate) -> Key {
            let request = candidate.request
            return Key(trace: candidate.traceID.map { intern("trace " + $0) }, method: intern("method " + (request.method ?? "")),
                       target: request.digest.head.target.map { intern($0) }, path: intern("path " + (request.path ?? "")),
                       body: intern(BodyIdentity(length: request.digest.body.length, sha256: request.digest.body.sha256)))
        }
        leftKeys = self.left.map(key)
        rightKeys = self.right.map(key)
    }

    /// A body's length and digest, as one hashable value.
    private struct BodyIdentity: Hashable {
        let length: Int
        let sha256: SHA256Digest
    }

    /// Whether both sides have requests to pair at all.
    var hasCandidates: Bool { !left.isEmpty && !right.isEmpty }

    /// The records of a tap with a request on `role`, by request start time
    /// (records with no time keep file order, after the timed ones).
    private static func candidates(_ tap: PathTap, role: ExchangeRecord.Leg.Role) -> [Candidate] {
        let list = tap.records.enumerated().compactMap { index, record in
            record.leg(role)?.request.map { Candidate(index: index, traceID: record.traceID, request: $0) }
        }
        return list.enumerated().sorted { a, b in
            switch (a.element.request.timings.earliest, b.element.request.timings.earliest) {
            case let (ta?, tb?) where ta != tb: return ta < tb
            case (.some, nil): return true
            case (nil, .some): return false
            default: return a.offset < b.offset
            }
        }.map(\.element)
    }

    func pairs(maximumAlignmentCells: Int) throws -> [(left: Int, right: Int, how: Pairing)] {
        var result: [(left: Int, right: Int, how: Pairing)] = []
        var leftTaken = Array(repeating: false, count: left.count)
        var rightTaken = Array(repeating: false, count: right.count)

        var queues: [String: [Int]] = [:]
        for (position, candidate) in right.enumerated() {
            if let trace = candidate.traceID { queues[trace, default: []].append(position) }
        }
        for (position, candidate) in left.enumerated() {
            guard let trace = candidate.traceID, var queue = queues[trace], !queue.isEmpty else { continue }
            let match = queue.removeFirst()
            queues[trace] = queue
            leftTaken[position] = true
            rightTaken[match] = true
            result.append((candidate.index, right[match].index, .trace))
        }

        let restLeft = left.indices.filter { !leftTaken[$0] }
        let restRight = right.indices.filter { !rightTaken[$0] }
        let cells = (restLeft.count + 1) * (restRight.count + 1)
        guard cells <= maximumAlignmentCells else {
            throw VerificationInputError.tooManyToAlign(from: leftName, to: rightName,
                                                        exchanges: restLeft.count * restRight.count, limit: maximumAlignmentCells)
        }
        for (l, r) in align(restLeft, restRight) {
            leftTaken[l] = true
            rightTaken[r] = true
            result.append((left[l].index, right[r].index, .inferred))
        }
        for l in left.indices where !leftTaken[l] {
            guard let r = right.indices.first(where: { !rightTaken[$0] && score(l, $0) == BoundaryMatcher.fullScore }) else { continue }
            leftTaken[l] = true
            rightTaken[r] = true
            result.append((left[l].index, right[r].index, .inferred))
        }
        return result
    }

    /// The score of a candidate pair matching on method, target and body.
    static let fullScore = 6

    /// How alike two requests are; 0 when they cannot be the same exchange.
    /// The method must match, and the target (scheme, authority and path; 3)
    /// or at least the path (2); an equal body digest adds 2. Two requests
    /// that carry different trace ids never pair.
    func score(_ l: Int, _ r: Int) -> Int {
        let a = leftKeys[l], b = rightKeys[r]
        if let ta = a.trace, let tb = b.trace, ta != tb { return 0 }
        guard a.method == b.method else { return 0 }
        let target: Int
        if let x = a.target, x == b.target {
            target = 3
        } else if a.path == b.path {
            target = 2
        } else {
            return 0
        }
        return 1 + target + (a.body == b.body ? 2 : 0)
    }

    /// The order-keeping pairing of greatest total score (a weighted longest
    /// common subsequence), by dynamic programming over positions in `ls` and `rs`.
    private func align(_ ls: [Int], _ rs: [Int]) -> [(Int, Int)] {
        guard !ls.isEmpty && !rs.isEmpty else { return [] }
        let width = rs.count + 1
        var table = [Int32](repeating: 0, count: (ls.count + 1) * width)
        for i in 1...ls.count {
            for j in 1...rs.count {
                var best = max(table[(i - 1) * width + j], table[i * width + j - 1])
                let s = score(ls[i - 1], rs[j - 1])
                if s > 0 { best = max(best, table[(i - 1) * width + j - 1] + Int32(s)) }
                table[i * width + j] = best
            }
        }
        var pairs: [(Int, Int)] = []
        var (i, j) = (ls.count, rs.count)
        while i > 0 && j > 0 {
            let here = table[i * width + j]
            if here == table[(i - 1) * width + j] {
                i -= 1
            } else if here == table[i * width + j - 1] {
                j -= 1
            } else {
                pairs.append((ls[i - 1], rs[j - 1]))
                (i, j) = (i - 1, j - 1)
            }
        }
        return pairs.reversed()
    }
}
