/// Settings and abuse limits for an `HTTP2Session`.
///
/// Windows are large by default so bulk transfers are not window-bound
/// (PERFORMANCE.md), yet every received byte is held against the peer's window
/// until the application reports it consumed, so a slow reader still stops a
/// fast writer.
public struct HTTP2Configuration: Hashable, Sendable {
    /// The largest window HTTP/2 lets a stream start with that we accept here.
    public static let maxInitialStreamWindow = 16 * 1024 * 1024

    /// SETTINGS_INITIAL_WINDOW_SIZE we advertise: how many unconsumed bytes a
    /// peer may have in flight per stream. Clamped to 65,535 … 16 MiB.
    public var initialStreamWindow: Int
    /// The connection-level receive window (sent as a WINDOW_UPDATE on stream 0
    /// right after the preface). Clamped to 65,535 … 2³¹−1.
    public var connectionWindow: Int
    /// SETTINGS_MAX_CONCURRENT_STREAMS we advertise.
    public var maxConcurrentStreams: Int
    /// SETTINGS_MAX_HEADER_LIST_SIZE we advertise and enforce: a header block
    /// whose decoded fields (name + value + 32 each, RFC 9113 §6.5.2) exceed it
    /// resets the stream with ENHANCE_YOUR_CALM, the limit named in the reset's reason.
    public var maxHeaderListSize: Int
    /// How many SETTINGS/PING acknowledgements may wait unsent before the peer
    /// counts as flooding (nghttp2's `max_outbound_ack`). A driver that stops
    /// calling `takeOutbound()` while its socket is blocked lets them pile up.
    public var maxOutboundAcks: Int
    /// Rapid-reset guard: more than `rapidResetLimit` RST_STREAM frames from the
    /// peer on the last `rapidResetWindow` streams it opened fails the connection
    /// with GOAWAY ENHANCE_YOUR_CALM. Counted per stream, not per second, so the
    /// sans-io session needs no clock. (Debian's nghttp2 1.52 also carries its
    /// own time-based limiter — 1000 resets burst, 33/s — which this one always
    /// trips before, since it allows at most `rapidResetLimit` within any window.)
    public var rapidResetLimit: Int
    public var rapidResetWindow: Int
    /// How many CONTINUATION frames may follow one HEADERS; one more fails the
    /// connection with GOAWAY ENHANCE_YOUR_CALM (nghttp2's limit, set from here).
    public var maxContinuations: Int
    /// Server role: advertise SETTINGS_ENABLE_CONNECT_PROTOCOL = 1 (RFC 8441),
    /// so clients may open tunnels with an extended CONNECT (`:protocol`).
    /// nghttp2 accepts `:protocol` only once this setting was sent.
    public var enableConnectProtocol = false

    public init(initialStreamWindow: Int = 1024 * 1024,
                connectionWindow: Int = 16 * 1024 * 1024,
                maxConcurrentStreams: Int = 128,
                maxHeaderListSize: Int = 64 * 1024,
                maxOutboundAcks: Int = 1000,
                rapidResetLimit: Int = 100,
                rapidResetWindow: Int = 1000,
                maxContinuations: Int = 8) {
        self.initialStreamWindow = min(max(initialStreamWindow, 65_535), HTTP2Configuration.maxInitialStreamWindow)
        self.connectionWindow = min(max(connectionWindow, 65_535), Int(Int32.max))
        self.maxConcurrentStreams = max(maxConcurrentStreams, 1)
        self.maxHeaderListSize = max(maxHeaderListSize, 1024)
        self.maxOutboundAcks = max(maxOutboundAcks, 1)
        self.rapidResetLimit = max(rapidResetLimit, 0)
        self.rapidResetWindow = max(rapidResetWindow, 1)
        self.maxContinuations = max(maxContinuations, 0)
    }
}
