/// Which exchanges a report of a streamed verification lists: all of them
/// were judged and counted in the summary, and the text and JSON reports
/// printed each as it was judged; the report value itself keeps only the
/// failing ones (up to a cap) and a sample of the first ones.
public struct ExchangeListing: Codable, Hashable, Sendable {
    /// Exchanges judged in all.
    public var exchanges: Int
    /// Failing exchanges in all, and how many of them the report lists.
    public var failingExchanges: Int
    public var failingListed: Int
    /// Failing exchanges with a failing hop where a fault was injected.
    public var failingOnInjectedHops: Int
    /// How many of the first exchanges are listed as a sample (passing or not).
    public var sampled: Int
    /// Records more than the pairing window out of time order.
    public var lateRecords: Int
    /// The pairing window, in seconds.
    public var windowSeconds: Double

    /// One sentence saying what is listed.
    public var text: String {
        var text = "\(exchanges) exchanges judged, too many to list each: listed are the first \(sampled) and "
        if failingExchanges == 0 {
            text += "no failing exchange (none failed)"
        } else if failingListed < failingExchanges {
            text += "the first \(failingListed) failing of \(failingExchanges) (and \(failingExchanges - failingListed) more)"
        } else {
            text += "all \(failingExchanges) failing"
        }
        return text + "; records paired within \(TimeText.seconds(windowSeconds)) of each other"
    }
}

/// Short texts for durations.
enum TimeText {
    /// `5 s`, `0.5 s`.
    static func seconds(_ value: Double) -> String {
        value == value.rounded() ? "\(Int(value)) s" : "\(value) s"
    }
}

/// What a streamed verification keeps of the exchanges it judged: counts,
/// the failing exchanges up to `failingCap`, the first `sampleCount`, and
/// the merged requests of intermediaries and connection events. Bounded:
/// it grows with the caps and the distinct intermediary requests, never with
/// the number of exchanges. One owner.
struct VerificationTally {
    let failingCap: Int
    let sampleCount: Int
    private(set) var summary: VerificationSummary
    private(set) var failing: [VerifiedExchange] = []
    private(set) var sample: [VerifiedExchange] = []
    private(set) var failingTotal = 0
    private(set) var failingOnInjected = 0
    private(set) var appChains = 0
    private(set) var crossingChains = 0
    private var groupOrder: [String] = []
    private var groups: [String: IntermediaryRequestGroup] = [:]
    private var connectionOrder: [Int] = []
    private var connections: [Int: ConnectionTally] = [:]
    /// Exchanges to other origins, summed over the batches (origins in order of first appearance).
    private(set) var otherOrigins: OtherOrigins?

    init(hops: Int, failingCap: Int = 1000, sampleCount: Int = 100) {
        self.failingCap = failingCap
        self.sampleCount = sampleCount
        summary = VerificationSummary(exchanges: [], hopCount: hops)
    }

    var exchanges: Int { summary.exchanges }

    /// Counts a judged batch.
    mutating func add(_ judged: Verifier.Judged, hops: Int) {
        let counts = VerificationSummary(exchanges: judged.exchanges, hopCount: hops)
        summary.exchanges += counts.exchanges
        for (verdict, count) in counts.verdicts { summary.verdicts[verdict, default: 0] += count }
        summary.failingExchanges += counts.failingExchanges
        summary.inferredPairings += counts.inferredPairings
        summary.injectedHops += counts.injectedHops
        appChains += judged.appChains
        crossingChains += judged.crossingChains
        for exchange in judged.exchanges {
            if sample.count < sampleCount { sample.append(exchange) }
            guard !exchange.passes else { continue }
            failingTotal += 1
            if exchange.hops.contains(where: { !$0.verdict.passes && !$0.injected.isEmpty }) { failingOnInjected += 1 }
            if failing.count < failingCap { failing.append(exchange) }
        }
        for group in judged.intermediary.groups {
            let key = "\(group.tap) \(group.method) \(group.target)"
            guard var merged = groups[key] else {
                groupOrder.append(key)
                groups[key] = group
                continue
            }
            merged.count += group.count
            merged.first = [merged.first, group.first].compactMap { $0 }.min()
            merged.last = [merged.last, group.last].compactMap { $0 }.max()
            merged.statuses = Array(Set(merged.statuses + group.statuses)).sorted()
            groups[key] = merged
        }
        for (tap, entries) in judged.events {
            if connections[tap] == nil {
                connectionOrder.append(tap)
                connections[tap] = ConnectionTally()
            }
            for entry in entries { connections[tap]!.add(entry) }
        }
        if let other = judged.otherOrigins { addOtherOrigins(other) }
    }

    private mutating func addOtherOrigins(_ other: OtherOrigins) {
        guard var merged = otherOrigins else {
            otherOrigins = other
            return
        }
        for count in other.origins {
            if let index = merged.origins.firstIndex(where: { $0.origin == count.origin }) {
                merged.origins[index].exchanges += count.exchanges
            } else {
                merged.origins.append(count)
            }
        }
        otherOrigins = merged
    }

    var intermediaryRequests: IntermediaryRequests {
        IntermediaryRequests(groups: groupOrder.compactMap { groups[$0] })
    }

    /// Per tap that recorded any, in the order first met (path order within a batch).
    func tapConnections(_ path: TapPath) -> [TapConnections] {
        connectionOrder.sorted().compactMap { tap in connections[tap].map { $0.summary(tap: path.taps[tap].name) } }
    }

    /// The exchanges a report lists: the sample and the failing ones, by number.
    var listed: [VerifiedExchange] {
        var seen: Set<Int> = []
        return (sample + failing).filter { seen.insert($0.number).inserted }.sorted { $0.number < $1.number }
    }
}

/// One tap's connection events, counted as they come; keeps only what
/// `TapConnections` lists (the first handshake failures and peers).
struct ConnectionTally {
    private var kept: [Verifier.JudgedEvent] = []
    private var total = 0
    private var outcomes: [RequestlessConnection.Outcome: Int] = [:]
    private var peers: Set<String> = []
    private var failed = 0
    private var first: Timestamp?
    private var last: Timestamp?
    /// Distinct peers counted up to this many (each costs its address).
    static let peerLimit = 100_000

    mutating func add(_ entry: Verifier.JudgedEvent) {
        total += 1
        outcomes[entry.event.outcome, default: 0] += 1
        var keep = false
        if let peer = entry.event.peer, peers.count < ConnectionTally.peerLimit, peers.insert(peer).inserted,
           peers.count <= TapConnections.listedPeerLimit {
            keep = true
        }
        if Verifier.lists(entry.event, failure: entry.failure) {
            failed += 1
            if failed <= TapConnections.listedFailureLimit { keep = true }
        }
        if let at = entry.event.at {
            first = min(first ?? at, at)
            last = max(last ?? at, at)
        }
        if keep { kept.append(entry) }
    }

    /// The summary `TapConnections` gives for all the events, from those kept and the counts
    /// (the failures it lists are those `Verifier.lists`).
    func summary(tap: String) -> TapConnections {
        var summary = TapConnections(tap: tap, events: kept)
        summary.total = total
        summary.outcomes = outcomes
        summary.distinctPeers = peers.count
        summary.first = first
        summary.last = last
        summary.unlistedFailures = max(0, failed - summary.failures.count)
        return summary
    }
}
