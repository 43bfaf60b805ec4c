/// Splits the byte stream of Chromium's `--remote-debugging-pipe` into
/// messages. On that pipe each DevTools message is one JSON text followed by
/// a NUL byte, in both directions; no other framing exists. Sans-io: bytes
/// in, whole messages out, tested without a process.
///
/// Invariants: `buffer[start...]` holds the bytes not yet returned;
/// `buffer[start..<scanned]` holds no NUL (so each byte is scanned once);
/// a message longer than `limit` bytes is refused, never buffered without
/// bound.
public struct CDPFramer: Sendable {
    /// Why the stream cannot be split.
    public enum Failure: Error, Hashable, Sendable, CustomStringConvertible {
        /// `length` bytes arrived without a NUL, more than the limit.
        case messageTooLarge(length: Int, limit: Int)

        public var description: String {
            switch self {
            case .messageTooLarge(let length, let limit):
                return "a DevTools message exceeded \(limit) bytes (\(length) bytes without its NUL terminator)"
            }
        }
    }

    /// The largest message accepted by default: a login page's body comes
    /// back base64-encoded inside one message, so this is generous.
    public static let defaultLimit = 16 << 20

    public let limit: Int
    private var buffer: [UInt8] = []
    private var start = 0
    private var scanned = 0

    public init(limit: Int = CDPFramer.defaultLimit) {
        self.limit = limit
    }

    /// Bytes received and not yet returned as a message.
    public var pendingByteCount: Int { buffer.count - start }

    /// Takes bytes read from the pipe.
    public mutating func append(_ bytes: some Sequence<UInt8>) {
        buffer.append(contentsOf: bytes)
    }

    /// The next whole message (without its NUL), nil until one is complete.
    /// Throws once the bytes pending without a NUL exceed `limit`.
    public mutating func next() throws(Failure) -> [UInt8]? {
        while scanned < buffer.count {
            if buffer[scanned] == 0 {
                let message = Array(buffer[start..<scanned])
                scanned += 1
                start = scanned
                compactIfWorthIt()
                return message
            }
            scanned += 1
        }
        if buffer.count - start > limit {
            throw .messageTooLarge(length: buffer.count - start, limit: limit)
        }
        return nil
    }

    /// Drops returned bytes once they are at least half the buffer.
    private mutating func compactIfWorthIt() {
        guard start > 0, start * 2 >= buffer.count else { return }
        buffer.removeSubrange(0..<start)
        scanned -= start
        start = 0
    }

    /// `message` as it goes on the pipe: its bytes, then NUL. A NUL inside
    /// the message cannot be sent (JSON text escapes it as `\u0000`).
    public static func frame(_ message: [UInt8]) -> [UInt8] {
        precondition(!message.contains(0), "a DevTools message holds no NUL byte")
        return message + [0]
    }
}
