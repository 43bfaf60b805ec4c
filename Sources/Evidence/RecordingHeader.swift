import Hashing

/// The first line of a recording: what wrote it and how it was configured.
public struct RecordingHeader: Codable, Hashable, Sendable {
    /// The recording format version (`RecordingFormat.version` when written by this build).
    public var format: Int
    /// The program that wrote the recording, `intact`.
    public var tool: String
    public var toolVersion: String
    /// The tap's name, as its exchange records name it.
    public var tap: String
    /// How the tap ran: `forward`, `reverse`, `client`, `server`, …
    public var mode: String
    /// The options that shape what was recorded (listen address, upstream,
    /// faults preset, body limit…), as given.
    public var options: [String: String]
    /// What the recording keeps in clear.
    public var redaction: RedactionPolicy
    /// How every digest of message content in the records was taken.
    public var digests: Digests
    public var started: Timestamp
    /// The origin a server-side recording stands for (`https://appian.example:443`):
    /// a reverse tap's upstream, the mock server's external URL. Nil for a
    /// forward tap (it carries any origin) and in format 1 files.
    public var origin: String?

    /// - Parameter digests: by default what `redaction` digests message content with.
    public init(format: Int = RecordingFormat.version, tool: String = "intact", toolVersion: String, tap: String,
                mode: String, options: [String: String] = [:], redaction: RedactionPolicy = RedactionPolicy(),
                digests: Digests? = nil, started: Timestamp = .now(), origin: String? = nil) {
        self.format = format
        self.tool = tool
        self.toolVersion = toolVersion
        self.tap = tap
        self.mode = mode
        self.options = options
        self.redaction = redaction
        self.digests = digests ?? Digests(redaction.digests)
        self.started = started
        self.origin = origin
    }

    /// The algorithm of a recording's head, body, trailer and relayed-stream
    /// digests, and the fingerprint of the key of an HMAC (never the key):
    /// `"digests":{"algorithm":"hmac-sha256","key":"e35c08e65a542e9d"}`.
    /// Digests of two recordings compare only when these are equal.
    public struct Digests: Codable, Hashable, Sendable, CustomStringConvertible {
        public var algorithm: DigestFunction.Algorithm
        /// For `hmac-sha256`, the key's fingerprint (`SecretDigester.fingerprint`).
        public var key: String?

        public init(algorithm: DigestFunction.Algorithm, key: String?) {
            self.algorithm = algorithm
            self.key = key
        }

        /// What `function` takes.
        public init(_ function: DigestFunction) {
            self.init(algorithm: function.algorithm, key: function.keyFingerprint)
        }

        /// A header without `digests` (written before digests were keyed): plain SHA-256.
        public static let unkeyed = Digests(algorithm: .sha256, key: nil)

        public var description: String {
            switch algorithm {
            case .sha256: return "plain SHA-256 digests"
            case .hmacSHA256: return "HMAC-SHA-256 digests under key \(key ?? "?")"
            }
        }
    }

    private enum CodingKeys: String, CodingKey {
        case format, tool, toolVersion, tap, mode, options, redaction, digests, started, origin
    }

    public init(from decoder: Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        format = try container.decode(Int.self, forKey: .format)
        tool = try container.decode(String.self, forKey: .tool)
        toolVersion = try container.decode(String.self, forKey: .toolVersion)
        tap = try container.decode(String.self, forKey: .tap)
        mode = try container.decode(String.self, forKey: .mode)
        options = try container.decode([String: String].self, forKey: .options)
        redaction = try container.decode(RedactionPolicy.self, forKey: .redaction)
        digests = try container.decodeIfPresent(Digests.self, forKey: .digests) ?? .unkeyed
        started = try container.decode(Timestamp.self, forKey: .started)
        origin = try container.decodeIfPresent(String.self, forKey: .origin)
    }
}
