/// Counts RST_STREAM frames the peer sends on streams it opened, over a
/// sliding window of the last `window` such streams, to detect the HTTP/2
/// "rapid reset" attack (open a stream, reset it at once, repeat) without a clock.
///
/// Invariants: `opened` holds the ids of the last `window` peer-opened streams in
/// increasing order (peers must open streams with increasing ids); `reset` ⊆ `opened`.
struct HTTP2ResetRateLimiter {
    let limit: Int
    let window: Int
    private var opened: [HTTP2StreamID] = []
    private var oldest = 0
    private var reset: Set<HTTP2StreamID> = []

    init(limit: Int, window: Int) {
        self.limit = limit
        self.window = window
        opened.reserveCapacity(min(window, 1024))
    }

    /// Records a stream the peer opened; the oldest one leaves the window.
    mutating func streamOpened(_ id: HTTP2StreamID) {
        if opened.count < window {
            opened.append(id)
        } else {
            reset.remove(opened[oldest])
            opened[oldest] = id
            oldest = (oldest + 1) % window
        }
    }

    /// Records a RST_STREAM from the peer; true when the limit is now exceeded.
    mutating func resetReceived(_ id: HTTP2StreamID) -> Bool {
        guard !opened.isEmpty, id >= opened[oldest] else { return false }
        reset.insert(id)
        return reset.count > limit
    }
}
