/// Connection failures beside the exchanges they explain: a tap's refused
/// handshake (plain HTTP on its TLS port, no client certificate) is the
/// reason a request that left the tap in front of it never arrived, and the
/// reason the intermediary between them answered itself.
extension Verifier {
    /// How far apart (milliseconds) a tap's connection failure and an
    /// exchange's start may be and still be paired as one attempt.
    static let connectionPairingWindow = 10_000.0

    /// Whether a connection event's failure is listed (and paired): a
    /// handshake that failed after the client spoke, and any other failure
    /// but the silent close or reset of a port probe — every recorded
    /// failure surfaces, the probes stay counted.
    static func lists(_ event: RequestlessConnection, failure: ExchangeRecord.Failure?) -> Bool {
        if event.outcome == .handshakeFailed { return true }
        guard let failure else { return false }
        return ![.closedEarly, .reset].contains(failure.kind)
    }

    /// Summarises each tap's connection events, pairing each listed failure
    /// with the exchange whose request left the tap in front of it and never
    /// arrived (its request `missing` on the hop into the tap, whatever the
    /// hop's verdict: an intermediary that answered itself makes it
    /// `foreign`), or whose tap in front failed to connect or shake hands
    /// onward (so recorded no request on that leg), nearest in time — or, for an exchange with no time (the
    /// client could not send its request), one whose hop already shows a
    /// TLS or connect failure: the other side's view of the same handshake.
    /// That hop then lists the failure and is broken, unless it is foreign
    /// (the app got an intermediary's answer: that stays the verdict, and the
    /// failure says why).
    func pairConnectionFailures(_ events: [[RecordedEvent]], with exchanges: inout [VerifiedExchange],
                                path: TapPath) -> [TapConnections] {
        var summaries: [TapConnections] = []
        var taken: Set<Int> = []
        for (tap, list) in events.enumerated() where !list.isEmpty {
            let hop = path.hopTaps.firstIndex { $0.to == tap && $0.from != tap }
            let entries = list.map { item -> (event: RequestlessConnection, failure: ExchangeRecord.Failure?, paired: Int?) in
                guard Verifier.lists(item.event, failure: item.failure), let hop, let at = item.event.at else {
                    return (item.event, item.failure, nil)
                }
                // How far from the event an exchange started; untimed ones rank last.
                func distance(_ index: Int) -> Double {
                    exchanges[index].started.map { abs($0.milliseconds(until: at)) } ?? .infinity
                }
                let front = path.taps[path.hopTaps[hop].from].name
                let candidates = exchanges.indices.filter { index in
                    let result = exchanges[index].hops[hop]
                    // The request left the tap in front and never arrived; or that tap could not
                    // connect onward at all (it records no request on that leg, only its failure).
                    let connectFailed = exchanges[index].hops.contains { hop in
                        hop.failures.contains { $0.tap == front && $0.side == .upstream && [.tls, .connect].contains($0.stage) }
                    }
                    guard !taken.contains(index),
                          result.request.outcome == .missing || [.missing, .broken].contains(result.verdict) || connectFailed
                    else { return false }
                    if exchanges[index].started == nil {
                        return result.failures.contains { $0.stage == .tls || $0.stage == .connect }
                    }
                    return distance(index) <= Verifier.connectionPairingWindow
                }
                guard let best = candidates.min(by: { distance($0) < distance($1) }) else { return (item.event, item.failure, nil) }
                taken.insert(best)
                exchanges[best] = Verifier.attach(item, at: at, tap: tap, hop: hop, to: exchanges[best], path: path)
                return (item.event, item.failure, exchanges[best].number)
            }
            summaries.append(TapConnections(tap: path.taps[tap].name, events: entries))
        }
        return summaries
    }

    /// `exchange` with the event's failure on `hop` (the hop into `tap`) and
    /// the faults the tap applied to the connection on the tap's own hop.
    private static func attach(_ item: RecordedEvent, at: Timestamp, tap: Int, hop: Int, to exchange: VerifiedExchange,
                               path: TapPath) -> VerifiedExchange {
        var exchange = exchange
        var hops = exchange.hops
        let recorded = item.failure.map { RecordedFailure(tap: path.taps[tap].name, failure: $0, at: at) }
        if let recorded {
            hops[hop].failures.append(recorded)
            if hops[hop].verdict != .foreign { hops[hop].verdict = .broken }
        }
        // Faults the tap applied to the connection (a client certificate it demanded)
        // show on its own hop, broken by the same failure, as for any exchange of the tap.
        if !item.record.faults.isEmpty, let own = path.ownHop(ofTap: tap) {
            hops[own].injected += item.record.faults
            if let recorded, !hops[own].failures.contains(recorded) {
                hops[own].failures.append(recorded)
                hops[own].verdict = .broken
            }
        }
        exchange.hops = hops
        exchange.verdict = hops.map(\.verdict).max() ?? .notReached
        return exchange
    }
}
