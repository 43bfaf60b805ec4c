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
    public var started: Timestamp

    public init(format: Int = RecordingFormat.version, tool: String = "intact", toolVersion: String, tap: String,
                mode: String, options: [String: String] = [:], redaction: RedactionPolicy = RedactionPolicy(),
                started: Timestamp = .now()) {
        self.format = format
        self.tool = tool
        self.toolVersion = toolVersion
        self.tap = tap
        self.mode = mode
        self.options = options
        self.redaction = redaction
        self.started = started
    }
}
