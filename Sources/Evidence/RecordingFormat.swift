/// The JSON Lines recording format: one JSON object per line, each line
/// ending in `\n`. The first line is a `RecordingHeader` with
/// `"type":"header"`; every further line is an `ExchangeRecord` with
/// `"type":"exchange"`.
///
/// `version` changes whenever a reader of the previous version could
/// misread a line; readers read every version in `readable` and reject
/// others with a clear error.
///
/// Version 2 adds the connection outcome `unreadable-request` with
/// `received`, and the header's `origin`; a version 1 file is read as it is
/// (it has neither).
public enum RecordingFormat {
    public static let version = 2
    /// The versions this build reads: every one up to `version`.
    public static let readable = 1...version

    /// The `type` value of each kind of line.
    enum LineType: String, Codable {
        case header, exchange
    }
}
