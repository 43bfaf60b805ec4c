/// Recordings (or a `--path`) that cannot be verified together, named
/// precisely. Distinct from a verification that ran and failed the policy.
public enum VerificationInputError: Error, Hashable, Sendable, CustomStringConvertible {
    case noRecordings
    /// Two recordings name the same tap (two runs of one tap, or a file given twice).
    case duplicateTap(tap: String, paths: [String])
    /// A tap's records mix a client's or server's legs with a proxy's.
    case mixedLegs(tap: String, path: String, legs: [String])
    /// More than one client tap, or more than one server tap.
    case severalEnds(kind: TapSummary.Kind, taps: [String])
    /// `--path` names a tap that no recording has.
    case unknownTapInPath(tap: String, known: [String])
    case tapRepeatedInPath(tap: String)
    /// A recorded tap that `--path` leaves out.
    case tapMissingFromPath(tap: String)
    /// `--path` puts the client anywhere but first, or the server anywhere but last.
    case endMisplacedInPath(tap: String, kind: TapSummary.Kind)
    /// Sequence alignment between two taps would need more memory than allowed.
    case tooManyToAlign(from: String, to: String, exchanges: Int, limit: Int)
    /// The recordings' digests were not all taken with one algorithm and key
    /// (`RecordingHeader.digests`): no digest of one compares with the other's.
    case differentDigests([DigestsOfRecording])

    /// How one recording's digests were taken, for `differentDigests`.
    public struct DigestsOfRecording: Hashable, Sendable {
        public var path: String
        public var tap: String
        public var digests: RecordingHeader.Digests

        public init(path: String, tap: String, digests: RecordingHeader.Digests) {
            self.path = path
            self.tap = tap
            self.digests = digests
        }
    }

    public var description: String {
        switch self {
        case .noRecordings:
            return "no recording to verify"
        case .duplicateTap(let tap, let paths):
            return "tap \"\(tap)\" is recorded in more than one file (\(paths.joined(separator: ", "))): give one recording per tap"
        case .mixedLegs(let tap, let path, let legs):
            return "\(path): tap \"\(tap)\" has \(legs.joined(separator: ", ")) legs: a tap is a client, a server or an intermediary, not several"
        case .severalEnds(let kind, let taps):
            return "more than one \(kind.rawValue) tap (\(taps.joined(separator: ", "))): a path has one \(kind.rawValue) end"
        case .unknownTapInPath(let tap, let known):
            return "--path names tap \"\(tap)\", which no recording has (taps: \(known.joined(separator: ", ")))"
        case .tapRepeatedInPath(let tap):
            return "--path names tap \"\(tap)\" twice"
        case .tapMissingFromPath(let tap):
            return "--path leaves out tap \"\(tap)\": name every recorded tap once"
        case .endMisplacedInPath(let tap, let kind):
            return "--path puts the \(kind.rawValue) tap \"\(tap)\" "
                + (kind == .client ? "after another tap: the client comes first" : "before another tap: the server comes last")
        case .tooManyToAlign(let from, let to, let exchanges, let limit):
            return "pairing \(from) with \(to) without trace ids would align \(exchanges) exchange pairs "
                + "(limit \(limit)): record with the Intact-Trace field, or split the recordings"
        case .differentDigests(let recordings):
            let list = recordings.map { "\($0.path) (\($0.tap)): \($0.digests)" }.joined(separator: "; ")
            let algorithms = Set(recordings.map(\.digests.algorithm))
            let advice = algorithms.count > 1
                ? "the digest algorithms differ (plain SHA-256 comes from a recording of an older build): "
                    + "record every tap again with this build and one --digest-key FILE"
                : "the digest keys differ: give every tap of a setup the same --digest-key FILE "
                    + "(by default \(DigestKeyFile.fileName) beside the CA) and record again"
            return "cannot compare the recordings: their digests were not taken with one key (\(list)); "
                + "digests under different keys never match, so every message would look changed. " + advice
        }
    }
}
