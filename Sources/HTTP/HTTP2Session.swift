internal import CNGHTTP2

/// A sans-io HTTP/2 connection endpoint (client or server) over nghttp2.
///
/// Bytes from the peer go in through `receive(_:)`, which returns what
/// happened as `HTTP2Event`s; bytes for the peer come out of
/// `takeOutbound(maxBytes:)`. The session does no I/O and has no clock.
///
/// Invariants:
/// - Not thread-safe: every call happens on the owner's serial queue (the
///   connection's event loop).
/// - The `nghttp2_session` is owned by this object and freed in `deinit`.
/// - nghttp2 is never re-entered: its callbacks only record events and state;
///   anything they need done through nghttp2 (trailers, window release,
///   terminating the session) is queued as a `DeferredAction` and performed when
///   the outer call returns. Calling any public method from inside a callback
///   traps (`precondition`).
/// - Flow control follows consumption: nghttp2's automatic WINDOW_UPDATE is
///   off, so received DATA stays counted against the peer's windows until the
///   application calls `consumed(stream:bytes:)`. Unconsumed bytes of a stream
///   that closes are released to the connection window at close.
/// - Events also arise while sending (a stream closed by our RST_STREAM, a
///   connection error found when nghttp2 sends its GOAWAY): `receive(_:)`
///   returns them with its own, and `takeEvents()` collects them after
///   `takeOutbound(maxBytes:)`.
public final class HTTP2Session {
    /// Which end of the connection this session is.
    public enum Role: Hashable, Sendable {
        case client
        case server
    }

    /// The connection's life.
    enum ConnectionState {
        /// Streams may open.
        case open
        /// The application sent GOAWAY; existing streams finish.
        case goingAway
        /// A connection error; a terminating GOAWAY is queued or sent.
        case failed(HTTP2ConnectionError)
    }

    /// Work a callback asked for, done once nghttp2 has returned.
    enum DeferredAction {
        /// The data provider ended DATA without END_STREAM; trailers close the stream.
        case submitTrailers(HTTP2StreamID, HTTPFields)
        /// Give back connection window for bytes no one will consume.
        case releaseConnectionWindow(Int)
        /// Queue a terminating GOAWAY.
        case terminate(HTTP2ErrorCode)
        /// Reset a stream this side refuses (its header list was over the limit).
        case resetStream(HTTP2StreamID, HTTP2ErrorCode)
    }

    public let role: Role
    public let configuration: HTTP2Configuration

    /// The nghttp2 session; set once in `init` (it needs `self` as user data), freed in `deinit`.
    var session: OpaquePointer!
    var streams = HTTP2StreamMap<HTTP2StreamState>()
    /// Runs `body` on the state at `index` (of `streams`) in place. A read
    /// such as `streams[id]?.unconsumed` goes through the map's getter,
    /// which copies the whole state (its queue and reason) to read one
    /// field; through here nothing is copied, even to read.
    @inline(__always)
    func withStream<Result>(at index: Int,
                            _ body: (inout HTTP2StreamState) -> Result) -> Result {
        body(&streams.values[index])
    }

    /// Runs `body` on the state of stream `id` in place when the session
    /// knows the stream; nil otherwise. The way to change one stream's state:
    /// `streams[id]?.field = value` would copy the state out and back; this
    /// does one lookup and no allocation
    /// (Docs/performance.md#http2-stream-state-changed-in-place).
    @inline(__always)
    @discardableResult
    func withStream<Result>(_ id: HTTP2StreamID, _ body: (inout HTTP2StreamState) -> Result) -> Result? {
        guard let index = streams.index(forKey: id) else { return nil }
        return body(&streams.values[index])
    }

    /// The header block being decoded (one at a time per connection).
    var headerBlock = HTTP2HeaderBlock()
    var events: [HTTP2Event] = []
    /// Received DATA not yet turned into an event (see `appendData`).
    var pendingData: (stream: HTTP2StreamID, bytes: [UInt8])?
    /// The bytes `takeOutbound` is gathering, while it runs (empty otherwise):
    /// frames nghttp2 serialised, and DATA frames `writeData` builds in place.
    var outbound: [UInt8] = []
    /// `takeOutbound`'s `maxBytes` while it runs; nil otherwise.
    var outboundLimit: Int?
    /// The input `receive(_:)` is feeding, while it does: DATA of one stream
    /// can run at most to its end (see `appendData`).
    var receiveInput: UnsafeBufferPointer<UInt8>?
    var connection: ConnectionState = .open
    var deferred: [DeferredAction] = []
    /// True only while a call into nghttp2 is on the stack.
    var isInsideLibrary = false
    /// nghttp2's last diagnostic (error callback) within the current frame.
    var libraryMessage: String?
    /// The last connection-level problem nghttp2 reported, for the GOAWAY it sends.
    var connectionProblem: String?
    var resetLimiter: HTTP2ResetRateLimiter

    /// Creates a session and queues its preface: SETTINGS (initial window, max
    /// concurrent streams, max header list size, push disabled) and a
    /// WINDOW_UPDATE raising the connection window to `configuration.connectionWindow`.
    /// A client's output also starts with the connection preface magic.
    public init(role: Role, configuration: HTTP2Configuration = HTTP2Configuration()) {
        self.role = role
        self.configuration = configuration
        resetLimiter = HTTP2ResetRateLimiter(limit: configuration.rapidResetLimit, window: configuration.rapidResetWindow)

        var option: OpaquePointer?
        guard nghttp2_option_new(&option) == 0 else { fatalError("nghttp2_option_new: out of memory") }
        defer { nghttp2_option_del(option) }
        nghttp2_option_set_no_auto_window_update(option, 1)
        nghttp2_option_set_max_outbound_ack(option, configuration.maxOutboundAcks)
        nghttp2_option_set_max_continuations(option, configuration.maxContinuations)

        let callbacks = HTTP2Session.makeCallbacks()
        defer { nghttp2_session_callbacks_del(callbacks) }
        let userData = Unmanaged.passUnretained(self).toOpaque()
        var created: OpaquePointer?
        // `_new3` with a nil allocator is the v1 constructor that takes options.
        let rv = role == .client
            ? nghttp2_session_client_new3(&created, callbacks, userData, option, nil)
            : nghttp2_session_server_new3(&created, callbacks, userData, option, nil)
        guard rv == 0, let created else { fatalError("nghttp2 could not create a session: \(HTTP2Session.message(rv))") }
        session = created

        var settings = [
            nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE.rawValue),
                                   value: UInt32(configuration.initialStreamWindow)),
            nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS.rawValue),
                                   value: UInt32(configuration.maxConcurrentStreams)),
            nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE.rawValue),
                                   value: UInt32(configuration.maxHeaderListSize)),
        ]
        if role == .client {
            settings.append(nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_ENABLE_PUSH.rawValue), value: 0))
        } else if configuration.enableConnectProtocol {
            settings.append(nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_ENABLE_CONNECT_PROTOCOL.rawValue),
                                                   value: 1))
        }
        library {
            _ = nghttp2_submit_settings(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), settings, settings.count)
            _ = nghttp2_session_set_local_window_size(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), 0,
                                                      Int32(configuration.connectionWindow))
        }
    }

    deinit {
        nghttp2_session_del(session)
    }

    // MARK: Bytes in, bytes out, events

    /// Feeds bytes read from the peer; returns every event pending since the
    /// last call (those of these bytes included). After a connection error the
    /// bytes are ignored.
    public func receive(_ bytes: [UInt8]) -> [HTTP2Event] {
        feed(bytes)
        return takeEvents()
    }

    /// Feeds bytes read from the peer; the events they cause wait for
    /// `takeEvents` or `moveEvents(into:)`. After a connection error the
    /// bytes are ignored.
    public func feed(_ bytes: [UInt8]) {
        if case .failed = connection { return }
        guard !bytes.isEmpty else { return }
        let rv = bytes.withUnsafeBufferPointer { buffer in
            receiveInput = buffer
            defer { receiveInput = nil }
            return library { nghttp2_session_mem_recv(session, buffer.baseAddress, buffer.count) }
        }
        if rv < 0 { failFromLibrary(Int32(rv)) }
    }

    /// Serialises pending frames (DATA taken from the per-stream queues) and
    /// returns them, stopping after the frame that reaches `maxBytes`. Empty
    /// when there is nothing to send. A driver whose socket is blocked should
    /// stop calling this: acknowledgements then pile up and a flooding peer is
    /// detected (`HTTP2Configuration.maxOutboundAcks`).
    public func takeOutbound(maxBytes: Int = .max) -> [UInt8] {
        outboundLimit = maxBytes
        defer { outboundLimit = nil }
        while outbound.count < maxBytes {
            var frame: UnsafePointer<UInt8>?
            // DATA frames are appended to `outbound` by `writeData` during this call.
            let n = library { nghttp2_session_mem_send(session, &frame) }
            if n < 0 {
                failFromLibrary(Int32(n))
                break
            }
            guard n > 0, let frame else { break }
            let bytes = UnsafeBufferPointer(start: frame, count: n)
            if outbound.isEmpty {
                outbound = Array(bytes)
            } else {
                if outbound.capacity - outbound.count < n {
                    outbound.reserveCapacity(outboundRoom(after: outbound.count + n, maxBytes: maxBytes))
                }
                outbound.append(contentsOf: bytes)
            }
        }
        let out = outbound
        outbound = []
        return out
    }

    /// Room for the rest of a `takeOutbound` run once a second frame comes:
    /// what is taken so far, the DATA still queued with a frame header per
    /// 16 KiB, and a little for other frames; no more than `maxBytes` and the
    /// frame that crosses it. Sized once, the run is not copied again at each
    /// doubling; a one-frame run (most control frames) stays at its size.
    func outboundRoom(after taken: Int, maxBytes: Int) -> Int {
        let queued = totalQueuedBytes
        let wanted = taken + queued + (queued / (16 * 1024) + 1) * 9 + 1024
        guard maxBytes < Int.max / 2 else { return wanted }
        return min(wanted, maxBytes + 16 * 1024 + 64)
    }

    /// Returns and clears the pending events.
    public func takeEvents() -> [HTTP2Event] {
        flushPendingData()
        defer { events.removeAll(keepingCapacity: true) }
        return events
    }

    /// Appends the pending events to `batch` and clears them. An empty
    /// `batch` trades storage with the session instead, so once both arrays
    /// have grown neither is allocated or copied again: `takeEvents` hands
    /// out the session's array, and clearing it while the caller still holds
    /// it allocates a new one, several times per request
    /// (Docs/performance.md).
    public func moveEvents(into batch: inout [HTTP2Event]) {
        flushPendingData()
        guard !events.isEmpty else { return }
        if batch.isEmpty {
            swap(&batch, &events)
        } else {
            batch.append(contentsOf: events)
            events.removeAll(keepingCapacity: true)
        }
    }

    /// True when nghttp2 has frames to send (call `takeOutbound`).
    public var wantsWrite: Bool { library { nghttp2_session_want_write(session) != 0 } }

    /// True when the session neither reads nor writes any more: after a
    /// terminating GOAWAY went out, or after GOAWAY with no open streams. The
    /// driver may then close the connection.
    public var isFinished: Bool {
        library { nghttp2_session_want_read(session) == 0 && nghttp2_session_want_write(session) == 0 }
    }

    /// The connection error, once there is one.
    public var connectionError: HTTP2ConnectionError? {
        if case .failed(let error) = connection { return error }
        return nil
    }

    /// The peer's first SETTINGS frame arrived (until then its settings are the defaults).
    public internal(set) var peerSettingsReceived = false

    /// Client role: the server allows RFC 8441 extended CONNECT (it sent
    /// SETTINGS_ENABLE_CONNECT_PROTOCOL = 1). False until its SETTINGS arrived
    /// (`peerSettingsReceived`).
    public var peerAllowsExtendedConnect: Bool {
        library {
            nghttp2_session_get_remote_settings(session, NGHTTP2_SETTINGS_ENABLE_CONNECT_PROTOCOL) == 1
        }
    }

    /// Streams currently open (known to this session).
    public var openStreams: [HTTP2StreamID] { streams.keys }

    /// Bytes queued by `sendData` on this stream that nghttp2 has not taken yet
    /// (0 for an unknown stream). Apply backpressure upstream when it grows.
    public func queuedBytes(stream: HTTP2StreamID) -> Int {
        guard let index = streams.index(forKey: stream) else { return 0 }
        return withStream(at: index) { $0.queue.count }
    }

    /// Bytes queued on all streams.
    public var totalQueuedBytes: Int { streams.values.reduce(0) { $0 + $1.queue.count } }

    /// How many more DATA bytes the peer currently lets us send on this stream
    /// (the smaller of the stream and connection windows); nil for an unknown stream.
    public func sendWindow(stream: HTTP2StreamID) -> Int? {
        guard streams.index(forKey: stream) != nil else { return nil }
        let stream = library { nghttp2_session_get_stream_remote_window_size(session, stream) }
        let connection = library { nghttp2_session_get_remote_window_size(session) }
        return Int(max(0, min(stream, connection)))
    }

    /// Records an event, after any pending data so the order stays true.
    func emit(_ event: HTTP2Event) {
        flushPendingData()
        events.append(event)
    }

    func flushPendingData() {
        guard let pending = pendingData else { return }
        pendingData = nil
        events.append(.data(stream: pending.stream, bytes: pending.bytes))
    }

    // MARK: Re-entrancy guard and deferred work

    /// Runs one call into nghttp2, then whatever its callbacks deferred.
    /// Traps when called from inside a callback.
    @discardableResult
    func library<T>(_ body: () -> T) -> T {
        precondition(!isInsideLibrary, "HTTP2Session re-entered nghttp2 from inside one of its callbacks")
        isInsideLibrary = true
        let result = body()
        isInsideLibrary = false
        while !deferred.isEmpty {
            let actions = deferred
            deferred.removeAll()
            actions.forEach(perform)
        }
        return result
    }

    private func perform(_ action: DeferredAction) {
        switch action {
        case .submitTrailers(let id, let trailers):
            let rv = withNameValues(HTTP2FieldMapping.regularList(trailers)) { nva, count in
                library { nghttp2_submit_trailer(session, id, nva, count) }
            }
            if rv != 0 {
                library { _ = nghttp2_submit_rst_stream(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), id,
                                                        HTTP2ErrorCode.internalError.rawValue) }
            }
        case .releaseConnectionWindow(let bytes):
            library { _ = nghttp2_session_consume_connection(session, bytes) }
        case .terminate(let code):
            library { _ = nghttp2_session_terminate_session(session, code.rawValue) }
        case .resetStream(let id, let code):
            library { _ = nghttp2_submit_rst_stream(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), id, code.rawValue) }
        }
    }

    // MARK: Failure

    /// Records a connection error once, reports it, and (unless nghttp2 already
    /// sent its own GOAWAY) queues a terminating GOAWAY with the error's code.
    func fail(_ error: HTTP2ConnectionError, sendGoAway: Bool = true) {
        if case .failed = connection { return }
        connection = .failed(error)
        emit(.connectionError(error))
        guard sendGoAway else { return }
        if isInsideLibrary {
            deferred.append(.terminate(error.goAwayCode))
        } else {
            library { _ = nghttp2_session_terminate_session(session, error.goAwayCode.rawValue) }
        }
    }

    /// Maps a fatal return of `mem_recv`/`mem_send` to a connection error.
    private func failFromLibrary(_ code: Int32) {
        switch code {
        case NGHTTP2_ERR_BAD_CLIENT_MAGIC.rawValue: fail(.badClientPreface)
        case NGHTTP2_ERR_FLOODED.rawValue: fail(.flood(limit: configuration.maxOutboundAcks))
        case NGHTTP2_ERR_TOO_MANY_CONTINUATIONS.rawValue: fail(.continuationFlood(limit: configuration.maxContinuations))
        default: fail(.library(code: code, message: libraryMessage ?? HTTP2Session.message(code)))
        }
    }

    /// nghttp2's text for a library error code.
    static func message(_ code: Int32) -> String { String(cString: nghttp2_strerror(code)) }
}
