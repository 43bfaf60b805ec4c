/// Where a connection reset happens within a message.
public enum ResetPoint: Sendable, Hashable, CustomStringConvertible {
    /// Before anything of the message is forwarded.
    case beforeHeaders
    /// Right after the head is forwarded.
    case afterHeaders
    /// After this many body bytes are forwarded (before the end if the body is shorter).
    case afterBodyBytes(Int)

    public var description: String {
        switch self {
        case .beforeHeaders: return "before the headers"
        case .afterHeaders: return "after the headers"
        case .afterBodyBytes(let n): return "after \(n) body bytes"
        }
    }
}

extension ResetPoint {
    /// How rule files and presets spell where a reset happens.
    enum Name: String, CaseIterable {
        case beforeHeaders = "before-headers"
        case afterHeaders = "after-headers"
        case afterBodyBytes = "after-body-bytes"
    }
}
