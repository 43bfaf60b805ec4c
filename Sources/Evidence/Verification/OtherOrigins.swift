import HTTP

/// Exchanges to origins other than the one the path verifies: a forward tap
/// (tap A in front of a real device) carries whatever the device sends, the
/// Appian server and other origins; only the server's exchanges cross the
/// path its server-side recording ends. The others are listed as "other
/// origins, not on this path", counted, never judged and never failing.
///
/// The path's origin is `Verifier.Configuration.origin` (`intact verify
/// --origin URL`), else, when a forward tap is on the path, the `origin` of
/// the last tap's recording header (a reverse tap's upstream, the mock
/// server's external URL). An exchange is
/// on another origin when the request its first tap saw names another
/// scheme, host or port, and the tap whose recording names the origin never
/// saw it (with `--origin` alone: when it names another).
public struct OtherOrigins: Codable, Hashable, Sendable {
    /// The origin the path verifies (`https://appian.example`).
    public var origin: String
    /// Every origin seen besides it, in order of first appearance, with how many exchanges went there.
    public var origins: [Count]
    public var total: Int { origins.reduce(0) { $0 + $1.exchanges } }

    public struct Count: Codable, Hashable, Sendable {
        public var origin: String
        public var exchanges: Int

        public init(origin: String, exchanges: Int) {
            self.origin = origin
            self.exchanges = exchanges
        }
    }

    /// `Other origins, not on this path (https://appian.example): 3 exchanges (2 to https://cdn.example, 1 to …)`.
    public var line: String {
        "Other origins, not on this path (\(origin)): \(total) exchange\(total == 1 ? "" : "s") ("
            + origins.map { "\($0.exchanges) to \($0.origin)" }.joined(separator: ", ") + "), not judged"
    }

    /// `scheme://host[:port]`, lowercased, without the scheme's default port; nil when `text` names no host.
    static func normalized(scheme: String?, authority: String?) -> String? {
        guard let authority, !authority.isEmpty else { return nil }
        let scheme = HTTPField.lowercaseASCII(scheme ?? "https")
        return "\(scheme)://" + TapSchemeChoice.withoutDefaultPort(HTTPField.lowercaseASCII(authority), scheme: scheme)
    }

    /// `normalized` for a URL or origin text (`https://Appian.example:443/suite` → `https://appian.example`).
    static func normalized(_ url: String) -> String? {
        guard let separator = url.range(of: "://") else { return normalized(scheme: "https", authority: url) }
        let rest = url[separator.upperBound...]
        let authority = rest.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init)
        return normalized(scheme: String(url[..<separator.lowerBound]), authority: authority)
    }
}

extension Verifier {
    /// The origin the path verifies and the index of the tap whose recording
    /// names it (nil for `--origin`). From a header only when a forward tap is
    /// on the path (the one kind that carries other origins): behind reverse
    /// taps every request is for the path's origin, and a request an
    /// intermediary blocked must stay an exchange, whatever authority it names.
    func pathOrigin(_ path: TapPath) -> (origin: String, tap: Int?)? {
        if let given = configuration.origin.flatMap(OtherOrigins.normalized) { return (given, nil) }
        guard path.taps.contains(where: { TapMode(rawValue: $0.recording.header.mode) == .forward }),
              let last = path.taps.indices.last, let named = path.taps[last].recording.header.origin,
              let origin = OtherOrigins.normalized(named) else { return nil }
        return (origin, last)
    }

    /// The chains of the path's origin, and the rest counted per origin (nil when none, or no origin is known).
    func splitOtherOrigins(_ chains: [ExchangeChain], in path: TapPath) -> (onPath: [ExchangeChain], other: OtherOrigins?) {
        guard let (origin, originTap) = pathOrigin(path) else { return (chains, nil) }
        var onPath: [ExchangeChain] = []
        var order: [String] = []
        var counts: [String: Int] = [:]
        for chain in chains {
            let members = records(chain, in: path)
            let request = members.lazy.compactMap { member in
                member.record.leg(path.taps[member.tap].entry)?.request
            }.first
            let seen = request.flatMap { OtherOrigins.normalized(scheme: $0.scheme, authority: $0.authority ?? $0.firstValue("host")) }
            let reachedOriginTap = originTap.map { tap in members.contains { $0.tap == tap } } ?? false
            guard let seen, seen != origin, !reachedOriginTap else {
                onPath.append(chain)
                continue
            }
            if counts[seen] == nil { order.append(seen) }
            counts[seen, default: 0] += 1
        }
        guard !order.isEmpty else { return (onPath, nil) }
        return (onPath, OtherOrigins(origin: origin, origins: order.map { OtherOrigins.Count(origin: $0, exchanges: counts[$0] ?? 0) }))
    }
}
