/// The connection events one tap recorded (`RequestlessConnection`): connections
/// that carried no request. Summarised, never listed one by one, so a tap
/// probed thousands of times keeps a readable report; only connection
/// failures (`Verifier.lists`: a handshake that failed after the client spoke,
/// any failure but a probe's silent close or reset) are listed, up
/// to `listedFailureLimit`, each paired with the exchange a neighbouring tap
/// saw fail at the same time when there is one. Never fails a policy.
public struct TapConnections: Codable, Hashable, Sendable {
    /// How many failures a summary lists; the rest are counted.
    public static let listedFailureLimit = 20
    /// How many distinct peers a summary names; the rest are counted.
    public static let listedPeerLimit = 5

    public var tap: String
    public var total: Int
    /// Per outcome, how many.
    public var outcomes: [RequestlessConnection.Outcome: Int]
    /// Up to `listedPeerLimit` distinct peer addresses, in order of first appearance.
    public var peers: [String]
    /// How many distinct peers in all.
    public var distinctPeers: Int
    public var first: Timestamp?
    public var last: Timestamp?
    /// Failures the tap recorded (handshakes that failed after the client
    /// spoke, and any failure but a probe's silent close or reset), the first `listedFailureLimit`.
    public var failures: [ConnectionFailure]
    /// Failures beyond those listed.
    public var unlistedFailures: Int

    /// Summarises `events` of `tap`, in recording order.
    init(tap: String, events: [(event: RequestlessConnection, failure: ExchangeRecord.Failure?, paired: Int?)]) {
        self.tap = tap
        total = events.count
        var outcomes: [RequestlessConnection.Outcome: Int] = [:]
        var seen: Set<String> = []
        var peers: [String] = []
        var failures: [ConnectionFailure] = []
        var unlisted = 0
        for (event, failure, paired) in events {
            outcomes[event.outcome, default: 0] += 1
            if let peer = event.peer, seen.insert(peer).inserted, peers.count < TapConnections.listedPeerLimit {
                peers.append(peer)
            }
            guard Verifier.lists(event, failure: failure) else { continue }
            if failures.count < TapConnections.listedFailureLimit {
                failures.append(ConnectionFailure(at: event.at, peer: event.peer,
                                                  failure: failure.map { RecordedFailure(tap: tap, failure: $0, at: event.at) },
                                                  pairedExchange: paired))
            } else {
                unlisted += 1
            }
        }
        self.outcomes = outcomes
        self.peers = peers
        distinctPeers = seen.count
        let times = events.compactMap(\.event.at)
        first = times.min()
        last = times.max()
        self.failures = failures
        unlistedFailures = unlisted
    }

    /// `tap-b: 1520 connections without a request (1519 connected and closed, 1 TLS handshake failed) from 1 peer (127.0.0.1:…), 14:02:01.120–14:02:09.800`,
    /// then one line per listed failure.
    public var lines: [String] {
        let counts = RequestlessConnection.Outcome.allCases.compactMap { outcome in
            outcomes[outcome].map { "\($0) \(outcome)" }
        }
        var line = "\(tap): \(total) connection\(total == 1 ? "" : "s") without a request (" + counts.joined(separator: ", ") + ")"
        if distinctPeers > 0 {
            line += " from \(distinctPeers) peer\(distinctPeers == 1 ? "" : "s") (" + peers.joined(separator: ", ")
                + (distinctPeers > peers.count ? ", …" : "") + ")"
        }
        if let first { line += ", " + first.clockText + (last.map { $0 == first ? "" : "–" + $0.clockText } ?? "") }
        var lines = [line]
        for failure in failures {
            var text = "  " + (failure.failure?.stage == .tls || failure.failure == nil ? "handshake failed" : "failed")
            if let at = failure.at { text += " at " + at.clockText }
            if let peer = failure.peer { text += " from \(peer)" }
            if let recorded = failure.failure {
                text += ": " + recorded.description
                if let clause = FailureExplanation.clause(forMessage: recorded.message), recorded.side != .upstream {
                    text += " — \(tap) \(clause.what): \(clause.cause)"
                }
            }
            if let number = failure.pairedExchange { text += " (the same attempt as exchange \(number))" }
            lines.append(text)
        }
        if unlistedFailures > 0 { lines.append("  … and \(unlistedFailures) more handshake failures") }
        return lines
    }
}

/// A connection failure: a TLS handshake that failed after the client spoke
/// (a ClientHello, or bytes that are not TLS), or another failure the tap recorded.
public struct ConnectionFailure: Codable, Hashable, Sendable {
    public var at: Timestamp?
    public var peer: String?
    /// What the tap recorded, with its side and stage.
    public var failure: RecordedFailure?
    /// The exchange whose failure on the neighbouring hop is the same attempt, when one is.
    public var pairedExchange: Int?

    public init(at: Timestamp?, peer: String?, failure: RecordedFailure?, pairedExchange: Int?) {
        self.at = at
        self.peer = peer
        self.failure = failure
        self.pairedExchange = pairedExchange
    }
}

extension RequestlessConnection.Outcome: CodingKeyRepresentable {}
