/// The JSON Lines recording format: one JSON object per line, each line
/// ending in `\n`. The first line is a `RecordingHeader` with
/// `"type":"header"`; every further line is an `ExchangeRecord` with
/// `"type":"exchange"`.
///
/// `version` changes whenever a reader of the previous version could
/// misread a line; readers reject other versions with a clear error.
public enum RecordingFormat {
    public static let version = 1

    /// The `type` value of each kind of line.
    enum LineType: String, Codable {
        case header, exchange
    }
}
