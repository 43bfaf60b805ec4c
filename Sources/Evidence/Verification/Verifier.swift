/// Proves, exchange by exchange and hop by hop, that requests and responses
/// crossed every intermediary unmodified — or names what changed — from the
/// recordings of the taps on the path (`VERIFY.md`).
///
/// 1. Orders the taps (`TapPath`): client first, server last, intermediaries
///    by when they first saw a request, or as `Configuration.path` says. Each
///    tap gives observation points (an intermediary two: downstream and
///    upstream); consecutive points make the hops.
/// 2. Pairs the records of neighbouring taps (`ExchangeChain`): by the
///    `Intact-Trace` id, else by sequence alignment on method, target and body
///    digest (marked `inferred`).
/// 3. Judges each exchange on each hop (`MessageJudge`): the request as the
///    nearer-the-client point saw it against the request at the farther point,
///    the response the other way round, through `DigestComparison`; the
///    policy's tolerations apply on top of its changes. A message on one side
///    only is `missing` (seen before the hop, not after) or `foreign` (seen
///    after the hop, not before); a failure a tap recorded makes the hop
///    `broken` where a message did not cross whole.
///
/// Pure: no I/O; read the recordings with `RecordingReader` first.
public struct Verifier: Sendable {
    public struct Configuration: Sendable {
        public var policy: VerificationPolicy
        /// Tap names in path order, client side first; nil to order them from the recordings.
        public var path: [String]?
        /// The largest table sequence alignment may fill between two taps,
        /// in cells of 4 bytes ((records + 1) × (records + 1) of the unpaired ones).
        public var maximumAlignmentCells: Int
        /// The origin the path verifies (`intact verify --origin URL`); nil:
        /// the last recording header's `origin`. Exchanges to other origins
        /// are counted apart, never judged (`OtherOrigins`).
        public var origin: String?

        public init(policy: VerificationPolicy = .strict, path: [String]? = nil,
                    maximumAlignmentCells: Int = 25_000_000, origin: String? = nil) {
            self.policy = policy
            self.path = path
            self.maximumAlignmentCells = maximumAlignmentCells
            self.origin = origin
        }
    }

    public var configuration: Configuration

    public init(_ configuration: Configuration = Configuration()) {
        self.configuration = configuration
    }

    /// Verifies recordings of one run, one recording per tap, in any order.
    ///
    /// Throws `VerificationInputError` when they cannot be verified together;
    /// a verification that runs and fails the policy returns a report whose
    /// `policyHolds` is false.
    public func verify(_ recordings: [Recording]) throws -> VerificationReport {
        try Verifier.checkDigests(recordings)
        let path = try TapPath(ClientRecordings.merged(recordings),
                               order: ClientRecordings.order(configuration.path, for: recordings))
        let (chains, unpairedBoundaries) = try ExchangeChain.link(path, maximumAlignmentCells: configuration.maximumAlignmentCells)
        let judged = judge(chains, in: path, firstNumber: 1)
        let connections = judged.events.map { TapConnections(tap: path.taps[$0.tap].name, events: $0.entries) }
        let problems = Verifier.problems(path: path, exchanges: judged.exchanges.count,
                                         intermediaryRequests: judged.intermediary.total, appChains: judged.appChains,
                                         crossingChains: judged.crossingChains, unpairedBoundaries: unpairedBoundaries)
        var report = VerificationReport(policy: PolicySummary(configuration.policy), recordings: recordings.map(RecordingSummary.init),
                                        path: path.verifiedPath, exchanges: judged.exchanges, intermediaryRequests: judged.intermediary,
                                        connections: connections, problems: problems,
                                        warnings: Verifier.digestKeyWarnings(recordings) + Verifier.http3Warnings(judged.exchanges, path: path)
                                            + recordings.flatMap { $0.warnings.map(\.description) })
        report.otherOrigins = judged.otherOrigins
        return report
    }

    /// A connection event of a tap as judged: the event, its failure, and
    /// the number of the exchange its failed handshake was paired with.
    typealias JudgedEvent = (event: RequestlessConnection, failure: ExchangeRecord.Failure?, paired: Int?)

    /// What judging a set of chains gives: the app's exchanges (numbered
    /// from the first number given, ordered by start), the requests
    /// intermediaries made, each tap's connection events, and how many
    /// chains were the app's and crossed taps (for `problems`).
    struct Judged {
        var exchanges: [VerifiedExchange]
        var intermediary: IntermediaryRequests
        var events: [(tap: Int, entries: [JudgedEvent])]
        var appChains: Int
        var crossingChains: Int
        /// Exchanges to origins other than the path's, counted apart (`OtherOrigins`).
        var otherOrigins: OtherOrigins?
    }

    /// Judges linked chains: sorts them into the app's exchanges, the
    /// intermediaries' own requests and connection events (setting apart
    /// exchanges to other origins first), orders the
    /// exchanges by start and judges each on every hop.
    func judge(_ chains: [ExchangeChain], in path: TapPath, firstNumber: Int) -> Judged {
        let judge = MessageJudge(policy: configuration.policy)
        let (onPath, otherOrigins) = splitOtherOrigins(chains, in: path)
        let sorted = sort(onPath, in: path)
        let ordered = sorted.app.map { ($0, start(of: $0, in: path)) }.enumerated().sorted { a, b in
            switch (a.element.1, b.element.1) {
            case let (ta?, tb?) where ta != tb: return ta < tb
            case (.some, nil): return true
            case (nil, .some): return false
            default: return a.offset < b.offset
            }
        }.map(\.element)
        var exchanges = ordered.enumerated().map { number, entry in
            exchange(entry.0, number: firstNumber + number, started: entry.1, path: path, judge: judge)
        }
        let events = pairConnectionFailures(sorted.events, with: &exchanges, path: path)
        Verifier.nameCachedCopies(&exchanges, path: path)
        return Judged(exchanges: exchanges, intermediary: intermediaryRequests(sorted.intermediary, path: path),
                      events: events, appChains: sorted.app.count, crossingChains: sorted.app.count(where: \.crossesTaps),
                      otherOrigins: otherOrigins)
    }

    /// Why the recordings as a whole prove nothing, when they do not.
    static func problems(path: TapPath, exchanges: Int, intermediaryRequests: Int, appChains: Int, crossingChains: Int,
                         unpairedBoundaries: [Int]) -> [VerificationProblem] {
        var problems: [VerificationProblem] = []
        if exchanges == 0 && intermediaryRequests > 0 {
            problems.append(VerificationProblem(kind: .onlyIntermediaryRequests, message:
                "the recordings hold \(intermediaryRequests) request\(intermediaryRequests == 1 ? "" : "s") an intermediary made "
                + "itself and no exchange of the app: nothing to verify for the app"))
        } else if exchanges == 0 {
            problems.append(VerificationProblem(kind: .noExchange, message: "the recordings hold no exchange: nothing was verified"))
        }
        if path.hops.isEmpty, let tap = path.taps.first {
            problems.append(VerificationProblem(kind: .noHop, message:
                "only one observation point (\(tap.name), \(tap.entry.rawValue) leg): add the recording of another tap on the path"))
        }
        if !unpairedBoundaries.isEmpty && appChains > 0 && crossingChains == 0 {
            let names = path.taps.map(\.name).joined(separator: ", ")
            problems.append(VerificationProblem(kind: .nothingPairs, message:
                "nothing pairs across the taps \(names): no exchange shares a trace id or aligns on method, target "
                + "and body (recordings of different runs?)"))
        } else if appChains > 0 {
            for boundary in unpairedBoundaries {
                let (a, b) = (path.taps[boundary].name, path.taps[boundary + 1].name)
                problems.append(VerificationProblem(kind: .nothingPairs, message:
                    "nothing pairs between \(a) and \(b): no exchange \(a) sent was seen by \(b) (recordings of different runs?)"))
            }
        }
        return problems
    }

    /// Refuses recordings whose digests were not taken with one algorithm
    /// and key (`RecordingHeader.digests`): compared, they would differ
    /// everywhere and every message would look modified.
    static func checkDigests(_ recordings: [Recording]) throws(VerificationInputError) {
        guard Set(recordings.map(\.header.digests)).count > 1 else { return }
        throw .differentDigests(recordings.map {
            VerificationInputError.DigestsOfRecording(path: $0.path, tap: $0.header.tap, digests: $0.header.digests)
        })
    }

    /// Says when the recordings did not digest secrets under one key (or
    /// some kept them in clear): their recorded secret values then differ
    /// even where the secret crossed unchanged, so they are not evidence of a
    /// change. The verdicts do not rest on them (head digests do).
    static func digestKeyWarnings(_ recordings: [Recording]) -> [String] {
        let keys = recordings.map { recording in
            (recording, recording.header.redaction.recordSecrets ? "secrets in clear"
                : recording.header.redaction.digestKey.map { "key \($0)" } ?? "unkeyed digests")
        }
        guard Set(keys.map(\.1)).count > 1 else { return [] }
        let list = keys.map { "\($0.0.path) (\($0.0.header.tap)): \($0.1)" }.joined(separator: ", ")
        return ["the recordings did not digest secrets under the same digest key: \(list). Recorded secret values "
                + "(cookies, Authorization, token and password parameters) cannot be compared across them and are not "
                + "reported as changed for that; give every tap of a setup the same --digest-key FILE"]
    }

    // MARK: What is not an exchange of the app

    /// A connection event, with the failure its record holds.
    typealias RecordedEvent = (event: RequestlessConnection, failure: ExchangeRecord.Failure?, record: ExchangeRecord)

    /// The chains sorted into the app's exchanges, requests intermediaries
    /// made themselves (tap index and record), and connection events per tap.
    private func sort(_ chains: [ExchangeChain], in path: TapPath)
        -> (app: [ExchangeChain], intermediary: [(tap: Int, record: ExchangeRecord)], events: [[RecordedEvent]]) {
        var app: [ExchangeChain] = []
        var intermediary: [(tap: Int, record: ExchangeRecord)] = []
        var events: [[RecordedEvent]] = Array(repeating: [], count: path.taps.count)
        // An intermediary never sends the client's `Intact-Trace`; nor does its own
        // request match one a tap in front of it saw (method, target, body):
        // such a request is the app's, sent again (a retry), and stays an exchange.
        // Only taps in front of another are looked up, so the last tap's requests
        // (all of them, for a single recording) are never gathered.
        let sent = path.taps.dropLast().map { tap in
            Set(tap.records.flatMap { $0.legs.compactMap { $0.request.map(Verifier.requestKey) } })
        }
        for chain in chains {
            let members = records(chain, in: path)
            guard let first = members.first else { continue }
            if members.count == 1, let event = RequestlessConnection.of(first.record) {
                events[first.tap].append((event, first.record.error, first.record))
                continue
            }
            if first.tap > 0, first.record.traceID == nil, let request = first.record.leg(path.taps[first.tap].entry)?.request,
               !sent[..<first.tap].contains(where: { $0.contains(Verifier.requestKey(request)) }) {
                intermediary.append(first)
                continue
            }
            app.append(chain)
        }
        return (app, intermediary, events)
    }

    /// A request's method, target and body digest, as one string.
    private static func requestKey(_ request: RecordedMessage) -> String {
        "\(request.method ?? "") \(request.path ?? "") \(request.digest.body.length) \(request.digest.body.sha256.hex)"
    }

    /// Groups intermediary requests by tap, method and target, in order of first appearance.
    private func intermediaryRequests(_ list: [(tap: Int, record: ExchangeRecord)], path: TapPath) -> IntermediaryRequests {
        var order: [String] = []
        var groups: [String: IntermediaryRequestGroup] = [:]
        for (tap, record) in list {
            let leg = record.leg(path.taps[tap].entry)
            guard let request = leg?.request else { continue }
            let (method, target) = (request.method ?? "", RequestLabel.recordedTarget(request))
            let key = "\(tap) \(method) \(target)"
            let time = request.timings.earliest
            var group = groups[key] ?? IntermediaryRequestGroup(
                tap: path.taps[tap].name, method: method, target: target, count: 0, first: time, last: time, statuses: [],
                allowed: configuration.policy.intermediaryRequests.allows(target: target))
            if groups[key] == nil { order.append(key) }
            group.count += 1
            if let time {
                group.first = min(group.first ?? time, time)
                group.last = max(group.last ?? time, time)
            }
            if let status = leg?.response?.status, !group.statuses.contains(status) {
                group.statuses = (group.statuses + [status]).sorted()
            }
            groups[key] = group
        }
        return IntermediaryRequests(groups: order.compactMap { groups[$0] })
    }

    // MARK: One exchange

    private func record(_ chain: ExchangeChain, tap: Int, in path: TapPath) -> ExchangeRecord? {
        chain.members[tap].map { path.taps[tap].records[$0] }
    }

    /// The records of a chain in path order, with their tap indices.
    func records(_ chain: ExchangeChain, in path: TapPath) -> [(tap: Int, record: ExchangeRecord)] {
        path.taps.indices.compactMap { index in record(chain, tap: index, in: path).map { (index, $0) } }
    }

    /// The earliest request start any tap recorded for the chain.
    private func start(of chain: ExchangeChain, in path: TapPath) -> Timestamp? {
        records(chain, in: path).flatMap { $0.record.legs.compactMap { $0.request?.timings.earliest } }.min()
    }

    private func exchange(_ chain: ExchangeChain, number: Int, started: Timestamp?, path: TapPath,
                          judge: MessageJudge) -> VerifiedExchange {
        let members = records(chain, in: path)
        // The request as the tap nearest the client saw it: its entry leg, else any leg with one.
        let request = members.lazy.compactMap { member in
            member.record.leg(path.taps[member.tap].entry)?.request ?? member.record.legs.lazy.compactMap(\.request).first
        }.first
        var hops = path.hops.indices.map { hopResult(chain, hop: $0, path: path, judge: judge) }
        placeUnplacedFailures(members, in: &hops, path: path)
        var exchange = VerifiedExchange(
            number: number, traceID: members.lazy.compactMap(\.record.traceID).first,
            step: members.lazy.compactMap(\.record.authFlowStep).first.map(StepLabel.init(rawValue:)),
            method: request?.method ?? "", target: RequestLabel.recordedTarget(request), authority: request?.authority,
            started: started, records: members.map { RecordReference(tap: path.taps[$0.tap].name, exchangeID: $0.record.exchangeID) },
            hops: hops)
        exchange.client = members.first.flatMap { ClientRecordings.client(of: $0.record, tap: path.taps[$0.tap].name) }
        return exchange
    }

    private func hopResult(_ chain: ExchangeChain, hop index: Int, path: TapPath, judge: MessageJudge) -> HopResult {
        let info = path.hops[index]
        let (fromTap, toTap) = path.hopTaps[index]
        let near = record(chain, tap: fromTap, in: path), far = record(chain, tap: toTap, in: path)
        let nearLeg = near?.leg(info.from.leg), farLeg = far?.leg(info.to.leg)
        let pairing: Pairing?
        if fromTap == toTap {
            pairing = near == nil ? nil : .sameRecord
        } else {
            pairing = chain.pairings[fromTap]
        }
        // A tap that chose its upstream scheme (reverse:http) changes the scheme of every request on its upstream leg.
        let schemeChoice = info.to.leg == .upstream ? path.taps[toTap].chosenUpstreamScheme.map { ($0, true) }
            : info.from.leg == .upstream ? path.taps[fromTap].chosenUpstreamScheme.map { ($0, false) } : nil
        let request = judge.judgeRelayed(
            judge.judge(before: nearLeg?.request, after: farLeg?.request, as: .request,
                        schemeChoice: schemeChoice.map { TapSchemeChoice.OnHop(choice: $0.0, isAfter: $0.1) },
                        answer: farLeg?.response),
            before: nearLeg?.relayed?.clientToServer, after: farLeg?.relayed?.clientToServer, direction: "client→server")
        let response = judge.judgeRelayed(judge.judge(before: farLeg?.response, after: nearLeg?.response, as: .response),
                                          before: farLeg?.relayed?.serverToClient,
                                          after: nearLeg?.relayed?.serverToClient, direction: "server→client")

        let sides = fromTap == toTap ? [(fromTap, near)] : [(fromTap, near), (toTap, far)]
        let failures = sides.compactMap { tap, record in
            record?.error.map { RecordedFailure(tap: path.taps[tap].name, failure: $0) }
        }
        let injected = sides.flatMap { tap, record in
            path.ownHop(ofTap: tap) == index ? record?.faults ?? [] : []
        }
        let crossedWhole = [request, response].allSatisfy { $0.outcome > .notReached && $0.outcome < .missing }
            && [nearLeg?.request, farLeg?.request, nearLeg?.response, farLeg?.response].allSatisfy { $0?.complete ?? true }
        let verdict: HopVerdict
        if !failures.isEmpty && !crossedWhole {
            verdict = .broken
        } else {
            verdict = max(request.outcome, response.outcome)
        }
        return HopResult(hop: info.number, verdict: verdict, pairing: pairing, request: request, response: response,
                         injected: injected, failures: failures)
    }

    /// A failure that broke no hop (every message crossed whole, yet the tap
    /// says the exchange failed) still breaks the exchange: at the failing
    /// tap's own hop, so it is never lost.
    private func placeUnplacedFailures(_ members: [(tap: Int, record: ExchangeRecord)], in hops: inout [HopResult],
                                       path: TapPath) {
        for member in members {
            guard let error = member.record.error, let own = path.ownHop(ofTap: member.tap) else { continue }
            let failure = RecordedFailure(tap: path.taps[member.tap].name, failure: error)
            if hops.contains(where: { $0.verdict == .broken && $0.failures.contains(failure) }) { continue }
            hops[own].verdict = .broken
            if !hops[own].failures.contains(failure) { hops[own].failures.append(failure) }
        }
    }
}
