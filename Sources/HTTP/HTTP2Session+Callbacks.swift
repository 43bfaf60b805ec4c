internal import CNGHTTP2

// nghttp2 callbacks. Each is a private free function that recovers the session
// from `user_data` (unretained: the session owns the nghttp2 session, so no
// callback outlives it) and forwards to a method below. The methods only
// record events and state (see `HTTP2Session`'s re-entrancy invariant); once
// the connection has failed, receive-side callbacks return
// NGHTTP2_ERR_CALLBACK_FAILURE so nghttp2 stops reading the rest of the input.

private func session(_ userData: UnsafeMutableRawPointer?) -> HTTP2Session? {
    guard let userData else { return nil }
    let session = Unmanaged<HTTP2Session>.fromOpaque(userData).takeUnretainedValue()
    assert(session.isInsideLibrary, "nghttp2 callback outside a library call")
    return session
}

private let callbackFailure = NGHTTP2_ERR_CALLBACK_FAILURE.rawValue

private func onBeginFrame(_: OpaquePointer?, _ header: UnsafePointer<nghttp2_frame_hd>?,
                          _ userData: UnsafeMutableRawPointer?) -> Int32 {
    guard let me = session(userData), header != nil else { return callbackFailure }
    return me.beginFrame()
}

private func onBeginHeaders(_: OpaquePointer?, _ frame: UnsafePointer<nghttp2_frame>?,
                            _ userData: UnsafeMutableRawPointer?) -> Int32 {
    guard let me = session(userData), let frame else { return callbackFailure }
    return me.beginHeaders(frame.pointee)
}

private func onHeader(_: OpaquePointer?, _ frame: UnsafePointer<nghttp2_frame>?,
                      _ name: UnsafePointer<UInt8>?, _ nameLength: Int,
                      _ value: UnsafePointer<UInt8>?, _ valueLength: Int,
                      _ flags: UInt8, _ userData: UnsafeMutableRawPointer?) -> Int32 {
    guard let me = session(userData), let frame else { return callbackFailure }
    return me.header(stream: frame.pointee.hd.stream_id,
                     name: UnsafeBufferPointer(start: name, count: nameLength),
                     value: UnsafeBufferPointer(start: value, count: valueLength))
}

private func onFrameReceive(_: OpaquePointer?, _ frame: UnsafePointer<nghttp2_frame>?,
                            _ userData: UnsafeMutableRawPointer?) -> Int32 {
    guard let me = session(userData), let frame else { return callbackFailure }
    return me.frameReceived(frame.pointee)
}

private func onDataChunk(_: OpaquePointer?, _ flags: UInt8, _ stream: Int32,
                         _ data: UnsafePointer<UInt8>?, _ length: Int,
                         _ userData: UnsafeMutableRawPointer?) -> Int32 {
    guard let me = session(userData) else { return callbackFailure }
    return me.dataChunk(stream: stream, UnsafeBufferPointer(start: data, count: length))
}

private func onStreamClose(_: OpaquePointer?, _ stream: Int32, _ code: UInt32,
                           _ userData: UnsafeMutableRawPointer?) -> Int32 {
    guard let me = session(userData) else { return callbackFailure }
    me.streamClosed(stream, code: HTTP2ErrorCode(rawValue: code))
    return 0
}

private func onInvalidFrame(_: OpaquePointer?, _ frame: UnsafePointer<nghttp2_frame>?, _ libraryError: Int32,
                            _ userData: UnsafeMutableRawPointer?) -> Int32 {
    guard let me = session(userData), let frame else { return callbackFailure }
    me.invalidFrame(frame.pointee, libraryError: libraryError)
    return 0
}

private func onFrameSent(_: OpaquePointer?, _ frame: UnsafePointer<nghttp2_frame>?,
                         _ userData: UnsafeMutableRawPointer?) -> Int32 {
    guard let me = session(userData), let frame else { return callbackFailure }
    me.frameSent(frame.pointee)
    return 0
}

private func onFrameNotSent(_: OpaquePointer?, _ frame: UnsafePointer<nghttp2_frame>?, _ libraryError: Int32,
                            _ userData: UnsafeMutableRawPointer?) -> Int32 {
    guard let me = session(userData), let frame else { return callbackFailure }
    me.frameNotSent(frame.pointee, libraryError: libraryError)
    return 0
}

private func onError(_: OpaquePointer?, _ message: UnsafePointer<CChar>?, _ length: Int,
                     _ userData: UnsafeMutableRawPointer?) -> Int32 {
    guard let me = session(userData), let message else { return callbackFailure }
    me.libraryMessage = String(decoding: UnsafeRawBufferPointer(start: message, count: length), as: UTF8.self)
    return 0
}

private func readOutbound(_: OpaquePointer?, _ stream: Int32, _ buffer: UnsafeMutablePointer<UInt8>?, _ length: Int,
                          _ flags: UnsafeMutablePointer<UInt32>?, _: UnsafeMutablePointer<nghttp2_data_source>?,
                          _ userData: UnsafeMutableRawPointer?) -> Int {
    guard let me = session(userData), let buffer, let flags else { return Int(callbackFailure) }
    return me.provideData(stream: stream, into: UnsafeMutableRawBufferPointer(start: buffer, count: length), flags: flags)
}

private func onSendData(_: OpaquePointer?, _ frame: UnsafeMutablePointer<nghttp2_frame>?,
                        _ header: UnsafePointer<UInt8>?, _ length: Int,
                        _: UnsafeMutablePointer<nghttp2_data_source>?, _ userData: UnsafeMutableRawPointer?) -> Int32 {
    guard let me = session(userData), let frame, let header else { return callbackFailure }
    return me.writeData(stream: frame.pointee.hd.stream_id, header: UnsafeBufferPointer(start: header, count: 9),
                        length: length, padding: Int(frame.pointee.data.padlen))
}

extension HTTP2Session {
    /// A fresh callback table (the caller deletes it after creating the session).
    static func makeCallbacks() -> OpaquePointer {
        var callbacks: OpaquePointer?
        guard nghttp2_session_callbacks_new(&callbacks) == 0, let callbacks else {
            fatalError("nghttp2_session_callbacks_new: out of memory")
        }
        nghttp2_session_callbacks_set_on_begin_frame_callback(callbacks, onBeginFrame)
        nghttp2_session_callbacks_set_on_begin_headers_callback(callbacks, onBeginHeaders)
        nghttp2_session_callbacks_set_on_header_callback(callbacks, onHeader)
        nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks, onFrameReceive)
        nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks, onDataChunk)
        nghttp2_session_callbacks_set_on_stream_close_callback(callbacks, onStreamClose)
        nghttp2_session_callbacks_set_on_invalid_frame_recv_callback(callbacks, onInvalidFrame)
        nghttp2_session_callbacks_set_on_frame_send_callback(callbacks, onFrameSent)
        nghttp2_session_callbacks_set_on_frame_not_send_callback(callbacks, onFrameNotSent)
        nghttp2_session_callbacks_set_error_callback(callbacks, onError)
        nghttp2_session_callbacks_set_send_data_callback(callbacks, onSendData)
        return callbacks
    }

    /// The data provider every body-carrying stream uses; it reads the stream's queue.
    var dataProvider: nghttp2_data_provider {
        nghttp2_data_provider(source: nghttp2_data_source(ptr: nil), read_callback: readOutbound)
    }

    private var hasFailed: Bool {
        if case .failed = connection { return true }
        return false
    }

    /// Adds data to the pending chunk when it is the same stream's; otherwise
    /// the pending chunk becomes an event first. Coalescing keeps one `.data`
    /// event per stream run instead of one per DATA frame.
    ///
    /// A run's first chunk is copied at its size (one frame: no spare room);
    /// its second reserves room for the rest of the input, the most the run
    /// can still grow, so a run of many frames is copied once instead of once
    /// per doubling. The spare room (frame headers, other frames) lives as
    /// long as the event's bytes.
    private func appendData(stream: HTTP2StreamID, _ bytes: UnsafeBufferPointer<UInt8>) {
        if pendingData?.stream == stream {
            if pendingData!.bytes.capacity - pendingData!.bytes.count < bytes.count,
               let rest = HTTP2Session.rest(of: receiveInput, from: bytes.baseAddress) {
                pendingData!.bytes.reserveCapacity(pendingData!.bytes.count + rest)
            }
            pendingData!.bytes.append(contentsOf: bytes)
        } else {
            flushPendingData()
            pendingData = (stream, Array(bytes))
        }
    }

    /// The bytes of `input` from `start` to its end; nil when `start` is not
    /// inside `input` (nghttp2 hands DATA out in place, but need not).
    static func rest(of input: UnsafeBufferPointer<UInt8>?, from start: UnsafePointer<UInt8>?) -> Int? {
        guard let input, let base = input.baseAddress, let start,
              start >= base, start < base + input.count else { return nil }
        return base + input.count - start
    }

    fileprivate func beginFrame() -> Int32 {
        guard !hasFailed else { return callbackFailure }
        libraryMessage = nil
        return 0
    }

    fileprivate func beginHeaders(_ frame: nghttp2_frame) -> Int32 {
        guard !hasFailed else { return callbackFailure }
        let id = frame.hd.stream_id
        if role == .server && frame.headers.cat == NGHTTP2_HCAT_REQUEST {
            streams[id] = HTTP2StreamState()
            resetLimiter.streamOpened(id)
            headerBlock.begin(stream: id, tooLarge: false)
        } else if let tooLarge = withStream(id, { $0.headerListTooLarge }) {
            headerBlock.begin(stream: id, tooLarge: tooLarge)
        } else {
            headerBlock.begin(stream: 0, tooLarge: false)
        }
        return 0
    }

    fileprivate func header(stream: HTTP2StreamID, name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>) -> Int32 {
        guard !hasFailed else { return callbackFailure }
        // nghttp2 decodes one block at a time: the open block is this stream's, or it is not tracked.
        let limit = configuration.maxHeaderListSize
        if !headerBlock.append(stream: stream, name: name, value: value, limit: limit) {
            withStream(stream) { state in
                state.localResetReason = "header list larger than \(limit) bytes"
                state.headerListTooLarge = true
            }
        }
        return 0
    }

    fileprivate func frameReceived(_ frame: nghttp2_frame) -> Int32 {
        guard !hasFailed else { return callbackFailure }
        let id = frame.hd.stream_id
        let endStream = frame.hd.flags & UInt8(NGHTTP2_FLAG_END_STREAM.rawValue) != 0
        let ack = frame.hd.flags & UInt8(NGHTTP2_FLAG_ACK.rawValue) != 0
        switch UInt32(frame.hd.type) {
        case NGHTTP2_HEADERS.rawValue:
            headersReceived(stream: id, endStream: endStream)
        case NGHTTP2_DATA.rawValue:
            if endStream { endInbound(stream: id, trailers: nil) }
        case NGHTTP2_RST_STREAM.rawValue:
            withStream(id) { $0.peerReset = true }
            if role == .server && resetLimiter.resetReceived(id) {
                fail(.rapidReset(limit: resetLimiter.limit, window: resetLimiter.window))
            }
        case NGHTTP2_SETTINGS.rawValue where ack:
            emit(.settingsAcknowledged)
        case NGHTTP2_SETTINGS.rawValue:
            peerSettingsReceived = true
        case NGHTTP2_PING.rawValue where ack:
            let value = withUnsafeBytes(of: frame.ping.opaque_data) { $0.loadUnaligned(as: UInt64.self) }
            emit(.pingAcknowledged(UInt64(bigEndian: value)))
        case NGHTTP2_GOAWAY.rawValue:
            let goaway = frame.goaway
            let debug = goaway.opaque_data.map { Array(UnsafeBufferPointer(start: $0, count: goaway.opaque_data_len)) } ?? []
            emit(.goAwayReceived(lastStreamID: goaway.last_stream_id,
                                          code: HTTP2ErrorCode(rawValue: goaway.error_code), debugData: debug))
        default:
            break
        }
        return 0
    }

    /// A complete header block: a head (interim or final) or trailers.
    private func headersReceived(stream id: HTTP2StreamID, endStream: Bool) {
        guard headerBlock.stream == id, let index = streams.index(forKey: id) else { return }
        guard !headerBlock.tooLarge else {
            let size = headerBlock.size
            let kept = headerBlock.take()
            headerBlock.begin(stream: 0, tooLarge: false)
            let awaitingHead = withStream(at: index) { state in
                if case .awaitingHead = state.inbound { true } else { false }
            }
            if role == .server && awaitingHead {
                let pseudo = kept.filter { $0.name.hasPrefix(":") }
                let head = pseudo.contains { $0.name == ":method" } ? HTTP2FieldMapping.requestHead(from: kept) : nil
                emit(.requestRefused(stream: id, head: head, reason: "header list of \(size) bytes, larger than "
                                     + "\(configuration.maxHeaderListSize): refused with RST_STREAM ENHANCE_YOUR_CALM"))
            }
            deferred.append(.resetStream(id, .enhanceYourCalm))
            return
        }
        let block = headerBlock.take()
        let awaitingHead = withStream(at: index) { state in
            if case .awaitingHead = state.inbound { true } else { false }
        }
        guard awaitingHead else {
            endInbound(stream: id, trailers: HTTPFields(block))
            return
        }
        switch role {
        case .server:
            emit(.requestHead(stream: id, head: HTTP2FieldMapping.requestHead(from: block), decodedFields: block))
            withStream(at: index) { $0.inbound = .body }
        case .client:
            guard let head = HTTP2FieldMapping.responseHead(from: block) else { return }
            if head.isInformational {
                emit(.interimResponse(stream: id, head: head, decodedFields: block))
                return
            }
            emit(.responseHead(stream: id, head: head, decodedFields: block))
            withStream(at: index) { $0.inbound = .body }
        }
        if endStream { endInbound(stream: id, trailers: nil) }
    }

    private func endInbound(stream id: HTTP2StreamID, trailers: HTTPFields?) {
        withStream(id) { $0.inbound = .ended }
        emit(.streamEnded(stream: id, trailers: trailers))
    }

    fileprivate func dataChunk(stream: HTTP2StreamID, _ bytes: UnsafeBufferPointer<UInt8>) -> Int32 {
        guard !hasFailed else { return callbackFailure }
        guard let index = streams.index(forKey: stream) else {
            deferred.append(.releaseConnectionWindow(bytes.count))
            return 0
        }
        streams.values[index].unconsumed += bytes.count
        appendData(stream: stream, bytes)
        return 0
    }

    /// nghttp2 closed the stream: report an abnormal end, release the window
    /// its unconsumed bytes still hold, forget it.
    fileprivate func streamClosed(_ id: HTTP2StreamID, code: HTTP2ErrorCode) {
        guard let state = streams.removeValue(forKey: id) else { return }
        if state.unconsumed > 0 { deferred.append(.releaseConnectionWindow(state.unconsumed)) }
        let incomplete: Bool
        if case .ended = state.inbound { incomplete = false } else { incomplete = true }
        guard code != .noError || state.peerReset || incomplete, !hasFailed else { return }
        emit(.streamReset(HTTP2StreamReset(stream: id, code: code, initiator: state.peerReset ? .peer : .local,
                                                    reason: state.peerReset ? nil : state.localResetReason)))
    }

    /// nghttp2 rejected a received frame: a stream error (RST_STREAM follows)
    /// or a connection error (GOAWAY follows). Keep its reason for whichever comes.
    fileprivate func invalidFrame(_ frame: nghttp2_frame, libraryError: Int32) {
        let id = frame.hd.stream_id
        var reason = libraryMessage ?? HTTP2Session.message(libraryError)
        if libraryError == NGHTTP2_ERR_HTTP_MESSAGING.rawValue {
            reason += ": " + messagingProblem(frameType: frame.hd.type, block: headerBlock.stream == id ? headerBlock.fields : [])
        }
        connectionProblem = reason
        if id != 0 {
            withStream(id) { state in
                if state.localResetReason == nil { state.localResetReason = reason }
            }
        }
    }

    /// Names what broke an HTTP messaging rule nghttp2 only reports generically:
    /// a missing mandatory pseudo-field in a head, or a body that does not fit
    /// the head (length differs from content-length, or no body allowed).
    private func messagingProblem(frameType: UInt8, block: [HTTPField]) -> String {
        guard UInt32(frameType) == NGHTTP2_HEADERS.rawValue else {
            return "body length differs from content-length, or the message cannot have a body"
        }
        let names = Set(block.map(\.name))
        let required: [String]
        switch role {
        case .server:
            let isConnect = block.first { $0.name == ":method" }?.value == "CONNECT"
            if isConnect && names.contains(":protocol") {
                // RFC 8441 §4: an extended CONNECT needs :scheme and :path too. (Without the
                // setting nghttp2 rejects :protocol itself, naming the field.)
                required = [":method", ":scheme", ":authority", ":path"]
            } else {
                required = isConnect ? [":method", ":authority"] : [":method", ":scheme", ":path"]
            }
        case .client:
            required = [":status"]
        }
        let missing = required.filter { !names.contains($0) }
        if missing.isEmpty { return "the header block does not form a valid head (or trailers lack END_STREAM)" }
        return "missing " + missing.joined(separator: ", ")
    }

    fileprivate func frameSent(_ frame: nghttp2_frame) {
        guard UInt32(frame.hd.type) == NGHTTP2_GOAWAY.rawValue, frame.goaway.error_code != 0,
              case .open = connection else { return }
        // nghttp2 found a connection error while reading and now sends GOAWAY.
        let goaway = frame.goaway
        var reason = goaway.opaque_data.map {
            String(decoding: UnsafeBufferPointer(start: $0, count: goaway.opaque_data_len), as: UTF8.self)
        } ?? ""
        if reason.isEmpty { reason = connectionProblem ?? "no reason given" }
        fail(.protocolViolation(code: HTTP2ErrorCode(rawValue: goaway.error_code), reason: reason), sendGoAway: false)
    }

    fileprivate func frameNotSent(_ frame: nghttp2_frame, libraryError: Int32) {
        // A request HEADERS that could not go out (GOAWAY received, session
        // closing): the stream never opened, so no close will be reported.
        guard UInt32(frame.hd.type) == NGHTTP2_HEADERS.rawValue, role == .client,
              streams.removeValue(forKey: frame.hd.stream_id) != nil else { return }
        emit(.streamReset(HTTP2StreamReset(stream: frame.hd.stream_id, code: .refusedStream, initiator: .local,
                                                    reason: HTTP2Session.message(libraryError))))
    }

    /// The data provider: says how many queued bytes the next DATA frame
    /// carries (`NGHTTP2_DATA_FLAG_NO_COPY`: `writeData` appends them to the
    /// output itself, with no copy through nghttp2's buffer); defers when the
    /// queue is empty and the body is still open; ends the stream (or hands
    /// over to trailers) when the application asked to end and the frame
    /// drains the queue.
    fileprivate func provideData(stream: HTTP2StreamID, into buffer: UnsafeMutableRawBufferPointer,
                                 flags: UnsafeMutablePointer<UInt32>) -> Int {
        guard let index = streams.index(forKey: stream) else {
            return Int(NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE.rawValue)
        }
        let (n, drained, ended, trailers) = withStream(at: index) { state -> (Int, Bool, Bool, HTTPFields?) in
            let n = min(state.queue.count, buffer.count)
            guard state.queue.count == n else { return (n, false, false, nil) }
            guard case .ending(let trailers) = state.outbound else { return (n, true, false, nil) }
            state.outbound = .ended
            return (n, true, true, trailers)
        }
        if ended || n > 0 { flags.pointee |= NGHTTP2_DATA_FLAG_NO_COPY.rawValue }
        guard drained else { return n }
        guard ended else { return n > 0 ? n : Int(NGHTTP2_ERR_DEFERRED.rawValue) }
        flags.pointee |= NGHTTP2_DATA_FLAG_EOF.rawValue
        if let trailers {
            flags.pointee |= NGHTTP2_DATA_FLAG_NO_END_STREAM.rawValue
            deferred.append(.submitTrailers(stream, trailers))
        }
        return n
    }

    /// Sends a DATA frame `provideData` sized: its header, then `length`
    /// bytes taken from the stream's queue straight into `takeOutbound`'s
    /// output. Pauses `nghttp2_session_mem_send` once the output reached
    /// `takeOutbound`'s `maxBytes`, as a frame it returned would.
    fileprivate func writeData(stream: HTTP2StreamID, header: UnsafeBufferPointer<UInt8>, length: Int, padding: Int) -> Int32 {
        // No padding is ever chosen (no padding callback), and DATA is sent only from `takeOutbound`.
        guard padding == 0, let limit = outboundLimit else { return callbackFailure }
        guard let index = streams.index(forKey: stream) else { return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE.rawValue }
        if outbound.capacity - outbound.count < header.count + length {
            outbound.reserveCapacity(outboundRoom(after: outbound.count + header.count, maxBytes: limit))
        }
        let frameStart = outbound.count
        outbound.append(contentsOf: header)
        let taken = withStream(at: index) { $0.queue.take(upTo: length, appendingTo: &outbound) }
        // The queue holds what `provideData` counted: nothing takes from it in between.
        // Should it not, the session fails, and no part of this frame goes out.
        guard taken == length else {
            outbound.removeSubrange(frameStart...)
            return callbackFailure
        }
        return outbound.count >= limit ? NGHTTP2_ERR_PAUSE.rawValue : 0
    }
}
