/// What a `Connection` tells its handler. Delivered only on the connection's
/// loop, and never from inside a call the handler made on the connection
/// (`write`, `close`, … never call back synchronously).
public enum ConnectionEvent: Sendable {
    /// Bytes arrived, in order. Never empty.
    case received([UInt8])
    /// The peer finished sending (it shut down its write side or closed).
    /// Nothing more will be received; writing is still possible.
    case readEOF
    /// The pending write bytes fell to the low watermark after they had
    /// reached the high one: `isWritable` is true again, producers may resume.
    case writable
    /// The connection is closed and its descriptor released; the last event.
    /// `nil` after `close()`, `abort()`, or once both directions finished
    /// (read EOF and `shutdownWrite()` drained); otherwise the failure.
    case closed(WireError?)
}

/// When a producer should stop (`high`) and resume (`low`) writing.
///
/// `Connection.isWritable` turns false once the pending bytes reach `high`
/// and true again, with a `.writable` event, once they fall to `low`.
public struct WriteWatermarks: Hashable, Sendable {
    /// Resume at or below this many pending bytes.
    public let low: Int
    /// Stop at or above this many pending bytes.
    public let high: Int

    /// `0 <= low <= high` and `high > 0`, or the program stops.
    public init(low: Int, high: Int) {
        precondition(low >= 0 && low <= high && high > 0, "watermarks need 0 <= low <= high, high > 0")
        self.low = low
        self.high = high
    }

    /// 64 KiB / 256 KiB.
    public static let `default` = WriteWatermarks(low: 64 * 1024, high: 256 * 1024)
}
