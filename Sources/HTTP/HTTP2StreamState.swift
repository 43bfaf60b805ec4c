/// What an `HTTP2Session` knows about one open stream.
///
/// Invariant: an entry exists from the stream's first HEADERS (sent by a client,
/// received by a server) until nghttp2 reports it closed; then it is removed.
struct HTTP2StreamState {
    /// Where the peer's side of the stream is.
    enum Inbound {
        /// No final head yet (a client may still see interim 1xx heads).
        case awaitingHead
        /// The final head arrived; DATA and then trailers may follow.
        case body
        /// The peer sent END_STREAM.
        case ended
    }

    /// Where this side's sending is.
    enum Outbound {
        /// Nothing sent yet (a server before its response head).
        case idle
        /// The head went out with a data provider: DATA may be queued.
        case open
        /// The application asked to end: the provider ends the stream once the
        /// queue drains, sending these trailers (if any) in a HEADERS frame.
        case ending(trailers: HTTPFields?)
        /// END_STREAM was handed to nghttp2 (on a HEADERS or DATA frame).
        case ended
    }

    var inbound: Inbound = .awaitingHead
    var outbound: Outbound = .idle
    /// Set once a header block of this stream went over `maxHeaderListSize`:
    /// its further fields (and any later block's) are decoded (HPACK state
    /// must stay in step) but dropped, and the stream is reset with
    /// ENHANCE_YOUR_CALM when the block ends. The block itself is the
    /// session's `headerBlock`.
    var headerListTooLarge = false
    /// Bytes reported in `.data` events that the application has not yet
    /// reported consumed; they are held against the peer's window.
    var unconsumed = 0
    /// Bytes queued by `sendData` that nghttp2 has not yet taken.
    var queue = HTTP2OutboundQueue()
    /// Set when the peer's RST_STREAM arrived, so the close is reported as theirs.
    var peerReset = false
    /// Why this side reset the stream, when nghttp2 said.
    var localResetReason: String?
}

/// A FIFO of byte chunks for one stream's DATA, read in frame-sized pieces.
///
/// Invariant: `count` is the number of unread bytes; `chunks[head...]` are
/// unread, of which the first `offset` bytes of `chunks[head]` were read.
struct HTTP2OutboundQueue {
    private var chunks: [[UInt8]] = []
    private var head = 0
    private var offset = 0
    private(set) var count = 0

    var isEmpty: Bool { count == 0 }

    mutating func append(_ bytes: [UInt8]) {
        guard !bytes.isEmpty else { return }
        chunks.append(bytes)
        count += bytes.count
    }

    /// Appends up to `limit` bytes to `output` (a DATA frame being built in
    /// place, `NGHTTP2_DATA_FLAG_NO_COPY`) and counts them read; returns how many.
    mutating func take(upTo limit: Int, appendingTo output: inout [UInt8]) -> Int {
        var taken = 0
        while taken < limit && head < chunks.count {
            let n = min(chunks[head].count - offset, limit - taken)
            output.append(contentsOf: chunks[head][offset..<(offset + n)])
            taken += n
            offset += n
            if offset == chunks[head].count {
                head += 1
                offset = 0
            }
        }
        count -= taken
        if head == chunks.count {
            chunks.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 64 && head * 2 >= chunks.count {
            chunks.removeFirst(head)
            head = 0
        }
        return taken
    }

    mutating func removeAll() {
        chunks.removeAll()
        head = 0
        offset = 0
        count = 0
    }
}
