import HTTP

/// One tap on the path with its records, and the legs where requests enter
/// and leave it.
struct PathTap {
    let name: String
    let kind: TapSummary.Kind
    let recording: Recording

    var records: [ExchangeRecord] { recording.records }

    /// The leg where requests reach the tap: `client` (it starts them there),
    /// `downstream`, or `server`.
    var entry: ExchangeRecord.Leg.Role {
        switch kind {
        case .client: return .client
        case .intermediary: return .downstream
        case .server: return .server
        }
    }

    /// The leg where requests leave the tap: `client`, `upstream`, or `server` (they end there).
    var exit: ExchangeRecord.Leg.Role {
        switch kind {
        case .client: return .client
        case .intermediary: return .upstream
        case .server: return .server
        }
    }

    /// The scheme a reverse-proxy tap speaks to its upstream by its own
    /// choice (`--mode reverse:http://…` → `http`): what its upstream leg's
    /// requests carry whatever scheme the app used. Nil for other taps.
    var chosenUpstreamScheme: TapSchemeChoice? {
        guard kind == .intermediary, TapMode(rawValue: recording.header.mode) == .reverse, let mode = recording.header.options["mode"],
              mode.hasPrefix("reverse:"), let end = mode.range(of: "://") else { return nil }
        let scheme = HTTPField.lowercaseASCII(String(mode[mode.index(mode.startIndex, offsetBy: 8)..<end.lowerBound]))
        return scheme.isEmpty ? nil : TapSchemeChoice(tap: name, scheme: scheme, mode: mode)
    }

    /// The tap's observation points, client side first.
    var points: [ExchangeRecord.Leg.Role] { entry == exit ? [entry] : [entry, exit] }

    var summary: TapSummary {
        TapSummary(name: name, kind: kind, mode: TapMode(rawValue: recording.header.mode), recording: recording.path)
    }

    /// When the tap first saw a request arrive: the earliest request start on
    /// its entry leg; nil when no record says.
    var firstRequest: Timestamp? {
        records.compactMap { $0.leg(entry)?.request.flatMap(\.timings.earliest) }.min()
    }
}

extension MessageTimings {
    /// The first instant recorded.
    var earliest: Timestamp? { start ?? headersDone ?? end }
}

/// The taps in path order and the hops between their points.
///
/// Order, unless given: the client tap first, the server tap last, and the
/// intermediaries between them by `firstRequest` (the tap nearest the client
/// receives the first request first), ties and unknown times in the order the
/// recordings were given. Clocks of taps on different hosts may disagree:
/// give the order explicitly then.
struct TapPath {
    let taps: [PathTap]
    let source: VerifiedPath.Source
    let hops: [HopInfo]
    /// For each hop, the indices into `taps` of its two sides.
    let hopTaps: [(from: Int, to: Int)]

    /// Builds the path from recordings, one per tap.
    ///
    /// - Parameter order: tap names in path order, or nil to order them from the recordings.
    init(_ recordings: [Recording], order: [String]?) throws {
        guard !recordings.isEmpty else { throw VerificationInputError.noRecordings }
        var byName: [String: Recording] = [:]
        var unordered: [PathTap] = []
        for recording in recordings {
            let name = recording.header.tap
            if let earlier = byName[name] {
                throw VerificationInputError.duplicateTap(tap: name, paths: [earlier.path, recording.path])
            }
            byName[name] = recording
            unordered.append(PathTap(name: name, kind: try TapPath.kind(of: recording), recording: recording))
        }
        for kind in [TapSummary.Kind.client, .server] {
            let ends = unordered.filter { $0.kind == kind }
            if ends.count > 1 { throw VerificationInputError.severalEnds(kind: kind, taps: ends.map(\.name)) }
        }
        if let order {
            taps = try TapPath.arrange(unordered, as: order)
            source = .option
        } else {
            taps = TapPath.arrangeByTime(unordered)
            source = .recordings
        }
        var points: [(tap: Int, role: ExchangeRecord.Leg.Role)] = []
        for (index, tap) in taps.enumerated() {
            for role in tap.points { points.append((index, role)) }
        }
        var hops: [HopInfo] = []
        var hopTaps: [(from: Int, to: Int)] = []
        for (from, to) in zip(points, points.dropFirst()) {
            hops.append(HopInfo(number: hops.count + 1, kind: from.tap == to.tap ? .inside : .network,
                                from: ObservationPoint(tap: taps[from.tap].name, leg: from.role),
                                to: ObservationPoint(tap: taps[to.tap].name, leg: to.role)))
            hopTaps.append((from.tap, to.tap))
        }
        self.hops = hops
        self.hopTaps = hopTaps
    }

    var verifiedPath: VerifiedPath {
        VerifiedPath(source: source, taps: taps.map(\.summary), hops: hops)
    }

    /// The hop that shows what the tap at `index` did itself: an
    /// intermediary's inside hop, the client's first hop, the server's last.
    /// Nil when the path has no hop.
    func ownHop(ofTap index: Int) -> Int? {
        guard !hops.isEmpty else { return nil }
        switch taps[index].kind {
        case .intermediary: return hopTaps.firstIndex { $0 == (index, index) }
        case .client: return hopTaps.firstIndex { $0.from == index }
        case .server: return hopTaps.lastIndex { $0.to == index }
        }
    }

    /// The kind of a tap from the legs its records carry; a tap with no
    /// record is judged by its recording's mode (`client`, `server`, else an
    /// intermediary).
    private static func kind(of recording: Recording) throws -> TapSummary.Kind {
        let roles = Set(recording.records.flatMap { $0.legs.map(\.role) })
        switch roles {
        case []:
            switch TapMode(rawValue: recording.header.mode) {
            case .client: return .client
            case .server: return .server
            default: return .intermediary
            }
        case [.client]: return .client
        case [.server]: return .server
        case _ where roles.isSubset(of: [.downstream, .upstream]): return .intermediary
        default:
            let legs = ExchangeRecord.Leg.Role.allCases.filter(roles.contains).map(\.rawValue)
            throw VerificationInputError.mixedLegs(tap: recording.header.tap, path: recording.path, legs: legs)
        }
    }

    private static func arrange(_ taps: [PathTap], as order: [String]) throws -> [PathTap] {
        let byName = Dictionary(uniqueKeysWithValues: taps.map { ($0.name, $0) })
        var seen: Set<String> = []
        var arranged: [PathTap] = []
        for name in order {
            guard let tap = byName[name] else {
                throw VerificationInputError.unknownTapInPath(tap: name, known: taps.map(\.name))
            }
            guard seen.insert(name).inserted else { throw VerificationInputError.tapRepeatedInPath(tap: name) }
            arranged.append(tap)
        }
        if let left = taps.first(where: { !seen.contains($0.name) }) {
            throw VerificationInputError.tapMissingFromPath(tap: left.name)
        }
        for (index, tap) in arranged.enumerated() {
            if tap.kind == .client && index != 0 || tap.kind == .server && index != arranged.count - 1 {
                throw VerificationInputError.endMisplacedInPath(tap: tap.name, kind: tap.kind)
            }
        }
        return arranged
    }

    private static func arrangeByTime(_ taps: [PathTap]) -> [PathTap] {
        func rank(_ kind: TapSummary.Kind) -> Int {
            switch kind {
            case .client: return 0
            case .intermediary: return 1
            case .server: return 2
            }
        }
        return taps.enumerated().sorted { a, b in
            let (ra, rb) = (rank(a.element.kind), rank(b.element.kind))
            if ra != rb { return ra < rb }
            switch (a.element.firstRequest, b.element.firstRequest) {
            case let (ta?, tb?) where ta != tb: return ta < tb
            case (.some, nil): return true
            case (nil, .some): return false
            default: return a.offset < b.offset
            }
        }.map(\.element)
    }
}
