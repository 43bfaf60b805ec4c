/// A response that is the server's answer to another exchange, served again
/// by an intermediary: a cache (Varnish, Traffic Server, a CDN). The mock
/// server echoes each request's `Intact-Trace`, so a foreign response whose
/// echo names another exchange's trace is that exchange's answer, copied.
/// Named so, never as a contradiction; and loudly when the copy carried a
/// session: another user's cookies handed out.
public struct CachedCopy: Codable, Hashable, Sendable {
    /// The number of the exchange whose answer this is.
    public var exchange: Int
    /// The trace the copy echoes (that exchange's).
    public var traceID: String
    /// How much earlier (milliseconds) that exchange started, when both have a time.
    public var earlierBy: Double?
    /// True when the copy answered a request of another method or target.
    public var otherResource: Bool
    /// True when the copy carries `Set-Cookie`, or answered a request that had cookies.
    public var carriesSession: Bool
    /// `a copy of the server's answer to exchange 2 (another request, 31 s earlier), served by the intermediary: a cached response`,
    /// with the session warning when there is one.
    public var text: String

    public init(exchange: Int, traceID: String, earlierBy: Double?, otherResource: Bool, carriesSession: Bool,
                otherRequest: String? = nil) {
        self.exchange = exchange
        self.traceID = traceID
        self.earlierBy = earlierBy
        self.otherResource = otherResource
        self.carriesSession = carriesSession
        var what = otherRequest.map { "another request, \($0)" } ?? "another request"
        if let earlierBy { what += ", " + CachedCopy.seconds(earlierBy) + (earlierBy >= 0 ? " earlier" : " later") }
        var text = "a copy of the server's answer to exchange \(exchange) (\(what)), served by the intermediary: a cached response"
        if carriesSession {
            text += "; WARNING: the copy carries a session (Set-Cookie, or the answer to a request with cookies): "
                + "one user's session handed to another"
        }
        self.text = text
    }

    /// `31 s`, `0.4 s`.
    private static func seconds(_ milliseconds: Double) -> String {
        let value = abs(milliseconds) / 1000
        return value >= 10 ? "\(Int(value.rounded())) s" : "\((value * 10).rounded() / 10) s"
    }
}

extension Verifier {
    /// Names each foreign response whose trace echo is another exchange's
    /// (`CachedCopy`): on every hop where the response is foreign, the echo
    /// the nearer-the-client side recorded is looked up among the exchanges.
    static func nameCachedCopies(_ exchanges: inout [VerifiedExchange], path: TapPath) {
        var byTrace: [String: Int] = [:]
        for (index, exchange) in exchanges.enumerated() {
            if let trace = exchange.traceID, byTrace[trace] == nil { byTrace[trace] = index }
        }
        guard byTrace.count > 1 else { return }
        for index in exchanges.indices {
            for hop in exchanges[index].hops.indices where exchanges[index].hops[hop].response.outcome == .foreign {
                let info = path.hops[hop]
                guard let record = Verifier.record(of: exchanges[index], tap: path.hopTaps[hop].from, path: path),
                      let response = record.leg(info.from.leg)?.response,
                      let echo = response.firstValue(ExchangeRecord.traceFieldName), echo != exchanges[index].traceID,
                      let original = byTrace[echo], original != index else { continue }
                let source = exchanges[original]
                let earlier = both(source.started, exchanges[index].started).map { $0.milliseconds(until: $1) }
                let otherResource = source.method != exchanges[index].method || source.target != exchanges[index].target
                let firstRequest = source.records.lazy.compactMap { reference -> RecordedMessage? in
                    guard let tap = path.taps.firstIndex(where: { $0.name == reference.tap }) else { return nil }
                    return path.taps[tap].records.first { $0.exchangeID == reference.exchangeID }?.legs.lazy
                        .compactMap(\.request).first
                }.first
                let session = response.firstValue("Set-Cookie") != nil || firstRequest?.firstValue("Cookie") != nil
                exchanges[index].hops[hop].response.cachedCopy = CachedCopy(
                    exchange: source.number, traceID: echo, earlierBy: earlier, otherResource: otherResource,
                    carriesSession: session, otherRequest: otherResource ? "\(source.method) \(source.target)" : nil)
            }
        }
    }

    /// The record `tap` holds of `exchange`, when it holds one.
    private static func record(of exchange: VerifiedExchange, tap: Int, path: TapPath) -> ExchangeRecord? {
        let name = path.taps[tap].name
        guard let reference = exchange.records.first(where: { $0.tap == name }) else { return nil }
        return path.taps[tap].records.first { $0.exchangeID == reference.exchangeID }
    }
}

/// Both values, or nil.
private func both<A, B>(_ a: A?, _ b: B?) -> (A, B)? {
    guard let a, let b else { return nil }
    return (a, b)
}
