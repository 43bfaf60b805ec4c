/// Intact's version, printed by `intact --version` and written into recordings.
public enum IntactVersion {
    public static let string = "0.1.0"
}
