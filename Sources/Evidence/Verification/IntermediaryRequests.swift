/// Requests an intermediary made itself: seen by a tap behind it, never by a
/// tap in front of it (a load balancer's health checks). They are not
/// exchanges of the app, so the document's rule says nothing about them; the
/// report lists them, grouped by tap, method and target, and the policy
/// decides whether they are allowed (`VerificationPolicy.intermediaryRequests`).
public struct IntermediaryRequests: Codable, Hashable, Sendable {
    /// Every such request.
    public var total: Int
    /// Grouped by the tap that saw them, method and target, in order of first appearance.
    public var groups: [IntermediaryRequestGroup]

    public init(groups: [IntermediaryRequestGroup]) {
        self.total = groups.reduce(0) { $0 + $1.count }
        self.groups = groups
    }

    /// The requests the policy does not allow.
    public var forbidden: Int { groups.filter { !$0.allowed }.reduce(0) { $0 + $1.count } }

    /// One line per group, for the text and HTML reports:
    /// `12 × GET /health at tap-b, 14:02:01.120–14:02:03.840, answered 200, allowed`.
    public var lines: [String] {
        groups.map { group in
            var line = "\(group.count) × \(RequestLabel.line(group.method, group.target)) at \(group.tap)"
            if let first = group.first {
                line += ", " + first.clockText + (group.last.map { $0 == first ? "" : "–" + $0.clockText } ?? "")
            }
            if !group.statuses.isEmpty { line += ", answered " + group.statuses.map(String.init).joined(separator: "/") }
            return line + (group.allowed ? ", allowed" : ", NOT ALLOWED by the policy")
        }
    }
}

/// Intermediary requests of one method and target seen by one tap.
public struct IntermediaryRequestGroup: Codable, Hashable, Sendable {
    /// The tap behind the intermediary that saw them.
    public var tap: String
    public var method: String
    /// The request's path and query.
    public var target: String
    public var count: Int
    public var first: Timestamp?
    public var last: Timestamp?
    /// The distinct statuses they were answered with, ascending.
    public var statuses: [Int]
    /// Whether the policy allows them.
    public var allowed: Bool

    public init(tap: String, method: String, target: String, count: Int, first: Timestamp?, last: Timestamp?,
                statuses: [Int], allowed: Bool) {
        self.tap = tap
        self.method = method
        self.target = target
        self.count = count
        self.first = first
        self.last = last
        self.statuses = statuses
        self.allowed = allowed
    }
}

extension Timestamp {
    /// `14:02:01.120` (UTC), for report lines.
    var clockText: String {
        let total = Int((millisecondsSince1970 / 1000).rounded(.down))
        let millis = Int(millisecondsSince1970.truncatingRemainder(dividingBy: 1000))
        let (h, m, s) = ((total / 3600) % 24, (total / 60) % 60, total % 60)
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        let ms = millis < 10 ? "00\(millis)" : millis < 100 ? "0\(millis)" : "\(millis)"
        return "\(two(h)):\(two(m)):\(two(s)).\(ms)"
    }
}
