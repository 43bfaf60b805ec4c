import HTTP

/// The result of verifying recordings: which observation points were compared
/// in which order, and for every exchange a verdict per hop with each
/// difference named. It is also the `intact verify --json` document (schema
/// `intact-verify/2`, described in `Docs/verify-json.md`): every type here
/// encodes with stable key names and lowercase, hyphenated enumeration values.
///
/// A report is a plain value built once by `Verifier.verify(_:)`; the text,
/// JSON and HTML renderers only read it.
public struct VerificationReport: Codable, Hashable, Sendable {
    /// The schema name and version of the JSON form; a consumer checks it
    /// before reading further. The version changes when a key is removed or
    /// its meaning changes (added keys do not change it).
    public static let schemaName = "intact-verify/2"

    public var schema: String
    /// The policy applied.
    public var policy: PolicySummary
    /// The recordings read, in the order given.
    public var recordings: [RecordingSummary]
    /// The taps in path order, client first, and the hops between their points.
    public var path: VerifiedPath
    /// Every exchange of the app, ordered by when it was first seen.
    public var exchanges: [VerifiedExchange]
    /// Requests an intermediary made itself (health checks), not exchanges of the app.
    public var intermediaryRequests: IntermediaryRequests
    /// Per tap that recorded any, its connections that carried no request.
    public var connections: [TapConnections]
    /// Exchanges to origins other than the path's, counted and never judged; nil when none.
    public var otherOrigins: OtherOrigins?
    /// Counts over every exchange and hop.
    public var summary: VerificationSummary
    /// Why the recordings as a whole could not prove anything, when they could not.
    public var problems: [VerificationProblem]
    /// What the readers skipped (a torn last line…), as `path:line: message`.
    public var warnings: [String]
    /// True exactly when there is no problem, at least one exchange was
    /// verified, and every exchange passes the policy on every hop.
    public var policyHolds: Bool
    /// Set when the run was too large to list every exchange here (a
    /// streamed verification, `StreamingVerifier`): which exchanges
    /// `exchanges` holds. Nil when it holds every one.
    public var listing: ExchangeListing? = nil

    public init(policy: PolicySummary, recordings: [RecordingSummary], path: VerifiedPath,
                exchanges: [VerifiedExchange], intermediaryRequests: IntermediaryRequests = IntermediaryRequests(groups: []),
                connections: [TapConnections] = [], problems: [VerificationProblem], warnings: [String]) {
        self.schema = VerificationReport.schemaName
        self.policy = policy
        self.recordings = recordings
        self.path = path
        self.exchanges = exchanges
        self.intermediaryRequests = intermediaryRequests
        self.connections = connections
        self.summary = VerificationSummary(exchanges: exchanges, hopCount: path.hops.count,
                                           intermediaryRequests: intermediaryRequests, connections: connections)
        self.problems = problems
        self.warnings = warnings
        self.policyHolds = problems.isEmpty && !exchanges.isEmpty && exchanges.allSatisfy(\.passes)
            && intermediaryRequests.forbidden == 0
    }

    /// The exchanges grouped by auth-flow step, groups in order of first
    /// appearance; one group with a nil step when no exchange is labelled.
    public var stepGroups: [(step: StepLabel?, exchanges: [VerifiedExchange])] {
        var order: [StepLabel?] = []
        var groups: [StepLabel?: [VerifiedExchange]] = [:]
        for exchange in exchanges {
            if groups[exchange.step] == nil { order.append(exchange.step) }
            groups[exchange.step, default: []].append(exchange)
        }
        return order.map { ($0, groups[$0] ?? []) }
    }
}

// MARK: - Verdicts

/// The verdict of one exchange on one hop, in increasing severity.
public enum HopVerdict: String, Codable, CodingKeyRepresentable, Hashable, Sendable, CaseIterable, Comparable,
                        CustomStringConvertible {
    /// Neither side of the hop saw the exchange: it stopped at an earlier hop
    /// (which carries the verdict) or never needed this one.
    case notReached = "not-reached"
    /// Exact digests equal.
    case identical
    /// Semantic digests equal; the wire form differs (the reasons say how).
    case equivalent
    /// Modified, but only in ways the policy tolerates (each shown).
    case tolerated
    /// A semantic difference the policy does not tolerate.
    case modified
    /// Seen before the hop, never after it.
    case missing
    /// Seen after the hop with no counterpart before it: an intermediary
    /// answered (or asked) in the server's (or client's) place.
    case foreign
    /// A tap on either side recorded a failure and a message did not cross whole.
    case broken

    /// Whether the policy holds for a hop with this verdict (`strict` and any
    /// policy file alike: tolerations only turn `modified` into `tolerated`).
    public var passes: Bool {
        switch self {
        case .notReached, .identical, .equivalent, .tolerated: return true
        case .modified, .missing, .foreign, .broken: return false
        }
    }

    public var description: String { rawValue }

    public static func < (a: HopVerdict, b: HopVerdict) -> Bool {
        allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)!
    }
}

/// How the records on the two sides of a hop were found to be the same exchange.
public enum Pairing: String, Codable, Hashable, Sendable {
    /// Both sides are legs of one record (the hop inside a proxy).
    case sameRecord = "same-record"
    /// Both records carry the same `Intact-Trace` value.
    case trace
    /// Sequence alignment on method, target and body digest (no shared trace).
    case inferred
}

// MARK: - Path

/// The observation points in order and the hops between consecutive ones.
public struct VerifiedPath: Codable, Hashable, Sendable {
    /// How the tap order was decided.
    public enum Source: String, Codable, Hashable, Sendable {
        /// From the recordings: client first, server last, intermediaries by
        /// the time their downstream leg first received a request.
        case recordings
        /// As given by `--path` (`Verifier.Configuration.path`).
        case option
    }

    public var source: Source
    public var taps: [TapSummary]
    public var hops: [HopInfo]

    public init(source: Source, taps: [TapSummary], hops: [HopInfo]) {
        self.source = source
        self.taps = taps
        self.hops = hops
    }
}

/// One tap on the path.
public struct TapSummary: Codable, Hashable, Sendable {
    /// Where a tap sits, from the legs its records have.
    public enum Kind: String, Codable, Hashable, Sendable {
        /// The client end: `client` legs (request sent, response received).
        case client
        /// An intermediary: `downstream` and `upstream` legs.
        case intermediary
        /// The server end: `server` legs (request received, response sent).
        case server
    }

    public var name: String
    public var kind: Kind
    /// The recording header's mode (`client`, `forward`, `reverse`, `server`…).
    public var mode: TapMode
    /// The file the tap's records came from.
    public var recording: String

    public init(name: String, kind: Kind, mode: TapMode, recording: String) {
        self.name = name
        self.kind = kind
        self.mode = mode
        self.recording = recording
    }
}

/// An observation point: one leg of one tap.
public struct ObservationPoint: Codable, Hashable, Sendable, CustomStringConvertible {
    public var tap: String
    public var leg: ExchangeRecord.Leg.Role

    public init(tap: String, leg: ExchangeRecord.Leg.Role) {
        self.tap = tap
        self.leg = leg
    }

    public var description: String { "\(tap).\(leg.rawValue)" }
}

/// A hop between two consecutive observation points. Requests cross it from
/// `from` to `to`; responses from `to` to `from`.
public struct HopInfo: Codable, Hashable, Sendable {
    public enum Kind: String, Codable, Hashable, Sendable {
        /// Between two taps: the network and whatever sits on it (a load balancer).
        case network
        /// Inside one intermediary tap, from its downstream to its upstream leg:
        /// what the tap itself changed.
        case inside
    }

    /// 1-based position on the path.
    public var number: Int
    public var kind: Kind
    public var from: ObservationPoint
    public var to: ObservationPoint
    /// `client → proxy-a` for a network hop, `inside proxy-a` for an inside hop.
    public var label: String

    public init(number: Int, kind: Kind, from: ObservationPoint, to: ObservationPoint) {
        self.number = number
        self.kind = kind
        self.from = from
        self.to = to
        self.label = kind == .inside ? "inside \(from.tap)" : "\(from.tap) → \(to.tap)"
    }
}

// MARK: - Exchanges

/// One exchange followed across the path.
public struct VerifiedExchange: Codable, Hashable, Sendable {
    /// 1-based position in the report.
    public var number: Int
    public var traceID: String?
    /// The auth-flow step, as the tap nearest the client labelled it.
    public var step: StepLabel?
    /// The request method and path as the tap nearest the client saw them.
    public var method: String
    public var target: String
    public var authority: String?
    /// When the first tap saw the request start.
    public var started: Timestamp?
    /// The records that make up the exchange, in path order.
    public var records: [RecordReference]
    /// The worst verdict over the hops.
    public var verdict: HopVerdict
    /// One result per hop of the path, in path order.
    public var hops: [HopResult]
    /// The client that sent it, when several clients' recordings were verified together.
    public var client: String?

    public init(number: Int, traceID: String?, step: StepLabel?, method: String, target: String, authority: String?,
                started: Timestamp?, records: [RecordReference], hops: [HopResult]) {
        self.number = number
        self.traceID = traceID
        self.step = step
        self.method = method
        self.target = target
        self.authority = authority
        self.started = started
        self.records = records
        self.verdict = hops.map(\.verdict).max() ?? .notReached
        self.hops = hops
    }

    /// True when every hop passes.
    public var passes: Bool { hops.allSatisfy { $0.verdict.passes } }
}

/// Names one record of one recording.
public struct RecordReference: Codable, Hashable, Sendable {
    public var tap: String
    public var exchangeID: String

    public init(tap: String, exchangeID: String) {
        self.tap = tap
        self.exchangeID = exchangeID
    }
}

/// One exchange on one hop.
public struct HopResult: Codable, Hashable, Sendable {
    /// The hop's `HopInfo.number`.
    public var hop: Int
    public var verdict: HopVerdict
    /// How the two sides were paired; nil when a side has no record.
    public var pairing: Pairing?
    public var request: MessageResult
    public var response: MessageResult
    /// Faults a tap on this hop applied on purpose (an intermediary's faults
    /// show on its inside hop; a client's or server's on the hop next to it).
    public var injected: [ExchangeRecord.RecordedFault]
    /// Failures recorded by the taps on either side of the hop.
    public var failures: [RecordedFailure]

    public init(hop: Int, verdict: HopVerdict, pairing: Pairing?, request: MessageResult, response: MessageResult,
                injected: [ExchangeRecord.RecordedFault], failures: [RecordedFailure]) {
        self.hop = hop
        self.verdict = verdict
        self.pairing = pairing
        self.request = request
        self.response = response
        self.injected = injected
        self.failures = failures
    }
}

/// A failure a tap recorded, and which tap.
public struct RecordedFailure: Codable, Hashable, Sendable, CustomStringConvertible {
    public var tap: String
    public var kind: ExchangeRecord.Failure.Kind
    /// The leg and stage, as the tap recorded it.
    public var location: String
    public var message: String
    /// The side of the tap that failed (its client leg or its upstream leg), when known.
    public var side: ExchangeRecord.Failure.Side?
    /// The stage it failed at, when known.
    public var stage: ExchangeRecord.Failure.Stage?
    /// When the tap saw it, for a connection failure (its event's time).
    public var at: Timestamp?
    /// What it means for the path, when `FailureExplanation` knows
    /// (`tap-b refused plain HTTP on its TLS port at …: the intermediary in front of it speaks http:// to it`).
    public var explanation: String?

    public init(tap: String, failure: ExchangeRecord.Failure, at: Timestamp? = nil) {
        self.tap = tap
        self.kind = failure.kind
        self.location = failure.location
        self.message = failure.message
        self.side = failure.side
        self.stage = failure.stage
        self.at = at
        explanation = FailureExplanation.sentence(self)
    }

    public var description: String { "\(tap), \(location): \(kind.rawValue): \(message)" }

    private enum CodingKeys: String, CodingKey {
        case tap, kind, location = "where", message, side, stage, at, explanation
    }
}

// MARK: - Messages

/// One message (request or response) on one hop: before is the side it left,
/// after the side it reached.
public struct MessageResult: Codable, Hashable, Sendable {
    /// The message's verdict on the hop, in the same vocabulary as the hop's:
    /// `not-reached` when neither side saw it; never `broken` (a hop is broken,
    /// by a recorded failure, not a message).
    public var outcome: HopVerdict
    /// The message as the side it left saw it, when it did.
    public var before: MessageSummary?
    /// The message as the side it reached saw it, when it did.
    public var after: MessageSummary?
    /// Wire differences that do not change meaning.
    public var reasons: [Equivalence]
    /// Semantic differences, each marked when tolerated.
    public var differences: [MessageDifference]
    /// For a foreign response: the server's answer to another exchange,
    /// served again by an intermediary (a cache), when its trace echo says so.
    public var cachedCopy: CachedCopy?

    public init(outcome: HopVerdict, before: MessageSummary?, after: MessageSummary?, reasons: [Equivalence] = [],
                differences: [MessageDifference] = []) {
        self.outcome = outcome
        self.before = before
        self.after = after
        self.reasons = reasons
        self.differences = differences
    }
}

/// What a message looked like at one point, enough to say which it was.
public struct MessageSummary: Codable, Hashable, Sendable {
    /// Requests: the method and path; responses: nil.
    public var method: String?
    public var target: String?
    /// Responses: the status code.
    public var status: Int?
    public var version: HTTPVersion
    /// Content bytes after transfer-decoding.
    public var bodyLength: Int
    /// False when the message ended early.
    public var complete: Bool

    public init(_ message: RecordedMessage) {
        method = message.method
        target = message.path
        status = message.status
        version = message.version
        bodyLength = message.digest.body.length
        complete = message.complete
    }
}

/// A wire difference HTTP lets an intermediary make, as a kind and a sentence.
public struct Equivalence: Codable, Hashable, Sendable {
    public enum Kind: String, Codable, Hashable, Sendable {
        case fieldNameCase = "field-name-case", version, framing, hopByHop = "hop-by-hop", host
        case cookieCrumbs = "cookie-crumbs", fieldOrder = "field-order", targetForm = "target-form"
        case reasonPhrase = "reason-phrase", trailerFormatting = "trailer-formatting"
        case wireFormatting = "wire-formatting"
        /// HTTP/2 pseudo-fields in another order (`HTTP2PseudoFieldOrder`).
        case pseudoHeaderOrder = "pseudo-header-order"
        /// The scheme alone changed because a tap chose its upstream scheme (`TapSchemeChoice`).
        case tapScheme = "tap-scheme"
        /// A reverse tap sent its upstream's authority for a request that
        /// named none (an HTTP/1.0 health check without `Host`; `TapSuppliedAuthority.swift`).
        case tapAuthority = "tap-authority"
        /// A request whose body was cut on a hop because the response on the
        /// receiving leg had already completed (`MessageJudge.answeredEarly`).
        case answeredEarly = "answered-early"
        /// An HTTP/2 extended CONNECT and the HTTP/1.1 `Upgrade` sent for it, or
        /// their `200` and `101` (RFC 8441 §5; `MessageJudge.extendedConnect`).
        case extendedConnect = "extended-connect"
    }

    public var kind: Kind
    /// `version HTTP/1.1 → HTTP/2`, `cookie crumbs (1 → 2 fields)`…
    public var text: String

    public init(kind: Kind, text: String) {
        self.kind = kind
        self.text = text
    }
}

/// One semantic difference, named, with the values when the recordings hold
/// them in clear, and the policy rule that tolerates it, if any.
public struct MessageDifference: Codable, Hashable, Sendable {
    public enum Kind: String, Codable, Hashable, Sendable, CaseIterable {
        case statusChanged = "status-changed", methodChanged = "method-changed", targetChanged = "target-changed"
        case fieldAdded = "field-added", fieldRemoved = "field-removed", fieldChanged = "field-changed"
        /// A cookie added to, removed from, or changed in a `Cookie` or
        /// `Set-Cookie` field present on both sides (`cookie` names it; a
        /// whole field added or removed is `field-added`/`field-removed`, one per cookie).
        case cookieAdded = "cookie-added", cookieRemoved = "cookie-removed", cookieChanged = "cookie-changed"
        case bodyChanged = "body-changed", trailersChanged = "trailers-changed", unexplained
        /// After a 101: a relayed byte stream's count or digest differs
        /// (`text` names the direction, client→server or server→client).
        case relayedChanged = "relayed-changed"
    }

    public var kind: Kind
    /// The lowercased field name, for the field and cookie kinds.
    public var field: String?
    /// The cookie's name, for a difference of one cookie of `Cookie` or `Set-Cookie`.
    public var cookie: String?
    /// The value before and after: status codes, methods, `scheme://authority/path`
    /// targets, field values (joined with `, `; secrets stay `sha256:` digests),
    /// body lengths in bytes; for a cookie, the attribute or the value in clear
    /// (never a secret's digest). Nil where that side has none.
    public var before: String?
    public var after: String?
    /// `Via added (1.1 lb)`, `body changed (120 → 98 bytes)`…
    public var text: String
    /// The policy rule that tolerates this difference, as the policy states it; nil when not tolerated.
    public var toleratedBy: String?

    public init(kind: Kind, field: String? = nil, cookie: String? = nil, before: String? = nil, after: String? = nil,
                text: String, toleratedBy: String? = nil) {
        self.kind = kind
        self.field = field
        self.cookie = cookie
        self.before = before
        self.after = after
        self.text = text
        self.toleratedBy = toleratedBy
    }
}

// MARK: - Whole report

/// A recording as read.
public struct RecordingSummary: Codable, Hashable, Sendable {
    public var path: String
    public var tap: String
    public var mode: TapMode
    public var format: Int
    public var toolVersion: String
    public var exchanges: Int

    public init(_ recording: Recording) {
        path = recording.path
        tap = recording.header.tap
        mode = TapMode(rawValue: recording.header.mode)
        format = recording.header.format
        toolVersion = recording.header.toolVersion
        exchanges = recording.records.count
    }
}

/// The policy, as the report shows it.
public struct PolicySummary: Codable, Hashable, Sendable {
    public var name: String
    public var description: String?
    /// One sentence per toleration rule.
    public var tolerations: [String]
    /// What the policy says about requests intermediaries make themselves:
    /// `allowed`, `forbidden`, or `allowed to /health only`.
    public var intermediaryRequests: String

    public init(_ policy: VerificationPolicy) {
        name = policy.name
        description = policy.description
        tolerations = policy.tolerations.map(\.description)
        intermediaryRequests = policy.intermediaryRequests.description
    }
}

/// A reason the recordings as a whole prove nothing.
public struct VerificationProblem: Codable, Hashable, Sendable, CustomStringConvertible {
    public enum Kind: String, Codable, Hashable, Sendable {
        /// Two or more taps, and not one exchange pairs across any of them.
        case nothingPairs = "nothing-pairs"
        /// One observation point only (a client or server recording alone).
        case noHop = "no-hop"
        /// The recordings hold no exchange.
        case noExchange = "no-exchange"
        /// The recordings hold requests an intermediary made itself and no exchange of the app.
        case onlyIntermediaryRequests = "only-intermediary-requests"
        /// Complete lines of a recording that are no valid record (skipped, each named in the warnings).
        case unreadableLines = "unreadable-lines"
    }

    public var kind: Kind
    public var message: String

    public init(kind: Kind, message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { message }
}

/// Counts over every exchange and hop.
public struct VerificationSummary: Codable, Hashable, Sendable {
    public var exchanges: Int
    public var hops: Int
    /// Per verdict, the number of (exchange, hop) cells with it; `not-reached` cells are not counted.
    public var verdicts: [HopVerdict: Int]
    /// Exchanges whose worst verdict fails the policy.
    public var failingExchanges: Int
    /// Pairings across taps made by sequence alignment.
    public var inferredPairings: Int
    /// Hops where a fault was injected on purpose.
    public var injectedHops: Int
    /// Requests intermediaries made themselves (not counted in `exchanges`).
    public var intermediaryRequests: Int
    /// Connections that carried no request, over every tap (not counted in `exchanges`).
    public var connectionEvents: Int

    public init(exchanges list: [VerifiedExchange], hopCount: Int,
                intermediaryRequests: IntermediaryRequests = IntermediaryRequests(groups: []),
                connections: [TapConnections] = []) {
        exchanges = list.count
        hops = hopCount
        self.intermediaryRequests = intermediaryRequests.total
        connectionEvents = connections.reduce(0) { $0 + $1.total }
        var verdicts: [HopVerdict: Int] = [:]
        for verdict in HopVerdict.allCases where verdict != .notReached { verdicts[verdict] = 0 }
        var inferred = 0
        var injected = 0
        for exchange in list {
            for hop in exchange.hops {
                if hop.verdict != .notReached { verdicts[hop.verdict, default: 0] += 1 }
                if hop.pairing == .inferred { inferred += 1 }
                if !hop.injected.isEmpty { injected += 1 }
            }
        }
        self.verdicts = verdicts
        failingExchanges = list.count { !$0.passes }
        inferredPairings = inferred
        injectedHops = injected
    }

    /// The count for one verdict.
    public func count(_ verdict: HopVerdict) -> Int { verdicts[verdict] ?? 0 }
}
