/// The version of the JSON Lines recording format this build writes and reads.
public enum RecordingFormat {
    public static let version = 1
}
