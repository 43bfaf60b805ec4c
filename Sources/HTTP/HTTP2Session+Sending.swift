internal import CNGHTTP2

/// Sending: heads, streamed DATA, trailers, resets, GOAWAY, PING, and the
/// consumption reports that reopen the peer's windows.
///
/// The heads are mapped by `HTTP2FieldMapping` (lowercase names,
/// pseudo-fields first, connection-specific fields and `Host` dropped,
/// `Host` → `:authority` when the head has no authority).
extension HTTP2Session {
    /// Client role: opens a stream with this request and returns its id. With
    /// `endStream` false the body follows through `sendData`/`sendTrailers`.
    /// Sent as `:method`, `:scheme` (`https` when nil), `:authority` (the head's,
    /// else its `Host`), `:path`, then the regular fields lowercased, without
    /// `Host` and connection-specific fields. After the peer's GOAWAY the
    /// stream is refused locally: a `.streamReset` with `REFUSED_STREAM` follows.
    public func sendRequest(_ head: HTTPRequestHead, endStream: Bool) throws(HTTP2SessionError) -> HTTP2StreamID {
        try sendRequest(fields: HTTP2FieldMapping.requestList(head), endStream: endStream)
    }

    /// `sendRequest(_:endStream:)` with the field list already mapped
    /// (`HTTP2FieldMapping.requestList`), for a sender that records that
    /// very list as what went on the wire.
    public func sendRequest(fields list: [HTTPField], endStream: Bool) throws(HTTP2SessionError) -> HTTP2StreamID {
        guard role == .client else { throw .wrongRole }
        guard case .open = connection else { throw .sessionClosing }
        var provider = dataProvider
        let id = withNameValues(list) { nva, count in
            library {
                endStream
                    ? nghttp2_submit_request(session, nil, nva, count, nil, nil)
                    : nghttp2_submit_request(session, nil, nva, count, &provider, nil)
            }
        }
        guard id > 0 else { throw .library(code: id, message: HTTP2Session.message(id)) }
        streams[id] = HTTP2StreamState(outbound: endStream ? .ended : .open)
        return id
    }

    /// Server role: sends a response head on a stream the peer opened. An
    /// interim head (1xx) goes out on its own and the final one must follow;
    /// it cannot end the stream.
    public func sendResponse(stream: HTTP2StreamID, head: HTTPResponseHead, endStream: Bool) throws(HTTP2SessionError) {
        try sendResponse(stream: stream, fields: HTTP2FieldMapping.responseList(head),
                         informational: head.isInformational, endStream: endStream)
    }

    /// `sendResponse(stream:head:endStream:)` with the field list already
    /// mapped (`HTTP2FieldMapping.responseList`); `informational` says the
    /// head is a 1xx.
    public func sendResponse(stream: HTTP2StreamID, fields list: [HTTPField], informational: Bool,
                             endStream: Bool) throws(HTTP2SessionError) {
        guard role == .server else { throw .wrongRole }
        guard let index = streams.index(forKey: stream) else { throw .unknownStream(stream) }
        guard withStream(at: index, { if case .idle = $0.outbound { true } else { false } }) else {
            throw .streamNotWritable(stream)
        }
        if informational {
            guard !endStream else { throw .streamNotWritable(stream) }
            let rv = withNameValues(list) { nva, count in
                library { nghttp2_submit_headers(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), stream, nil, nva, count, nil) }
            }
            guard rv >= 0 else { throw .library(code: rv, message: HTTP2Session.message(rv)) }
            return
        }
        var provider = dataProvider
        let rv = withNameValues(list) { nva, count in
            library {
                endStream
                    ? nghttp2_submit_response(session, stream, nva, count, nil)
                    : nghttp2_submit_response(session, stream, nva, count, &provider)
            }
        }
        guard rv == 0 else { throw .library(code: rv, message: HTTP2Session.message(rv)) }
        withStream(stream) { $0.outbound = endStream ? .ended : .open }
    }

    /// Queues body bytes; nghttp2 takes them in DATA frames as the peer's
    /// windows allow (`queuedBytes(stream:)` says how much still waits).
    /// `endStream` ends the stream once the queue drains.
    public func sendData(stream: HTTP2StreamID, bytes: [UInt8], endStream: Bool) throws(HTTP2SessionError) {
        try enqueue(stream: stream) { state in
            state.queue.append(bytes)
            if endStream { state.outbound = .ending(trailers: nil) }
        }
    }

    /// Ends the stream with trailers once the queued body has gone out (a HEADERS
    /// frame with END_STREAM after the last DATA). Empty trailers just end the stream.
    public func sendTrailers(stream: HTTP2StreamID, trailers: HTTPFields) throws(HTTP2SessionError) {
        try enqueue(stream: stream) { state in
            state.outbound = .ending(trailers: trailers.isEmpty ? nil : trailers)
        }
    }

    /// Resets a stream (RST_STREAM) and drops its queued data. The close is
    /// reported as a local `streamReset` once the frame goes out.
    public func resetStream(_ stream: HTTP2StreamID, code: HTTP2ErrorCode) throws(HTTP2SessionError) {
        guard streams.index(forKey: stream) != nil else { throw .unknownStream(stream) }
        let rv = library { nghttp2_submit_rst_stream(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), stream, code.rawValue) }
        guard rv == 0 else { throw .library(code: rv, message: HTTP2Session.message(rv)) }
        withStream(stream) { state in
            state.queue.removeAll()
            state.outbound = .ended
        }
    }

    /// Sends GOAWAY naming the last peer-initiated stream processed; no new
    /// streams are accepted or opened afterwards, open ones finish.
    public func goAway(code: HTTP2ErrorCode = .noError, debugData: [UInt8] = []) throws(HTTP2SessionError) {
        if case .failed = connection { throw .sessionClosing }
        connection = .goingAway
        let rv = debugData.withUnsafeBufferPointer { debug in
            library {
                nghttp2_submit_goaway(session, UInt8(NGHTTP2_FLAG_NONE.rawValue),
                                      nghttp2_session_get_last_proc_stream_id(session),
                                      code.rawValue, debug.baseAddress, debug.count)
            }
        }
        guard rv == 0 else { throw .library(code: rv, message: HTTP2Session.message(rv)) }
    }

    /// Sends a PING carrying `value`; the answer arrives as `.pingAcknowledged(value)`.
    public func ping(_ value: UInt64 = 0) throws(HTTP2SessionError) {
        if case .failed = connection { throw .sessionClosing }
        let opaque = withUnsafeBytes(of: value.bigEndian) { Array($0) }
        let rv = library { nghttp2_submit_ping(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), opaque) }
        guard rv == 0 else { throw .library(code: rv, message: HTTP2Session.message(rv)) }
    }

    /// Reports that the application has passed on `bytes` of this stream's
    /// received DATA, reopening the stream and connection windows by that much
    /// (nghttp2 sends WINDOW_UPDATE once half a window is consumed). Bytes of a
    /// stream that has since closed were already released; they are ignored.
    public func consumed(stream: HTTP2StreamID, bytes: Int) {
        guard bytes > 0, let index = streams.index(forKey: stream) else { return }
        let n = withStream(at: index) { state in
            let n = min(bytes, state.unconsumed)
            state.unconsumed -= n
            return n
        }
        guard n > 0 else { return }
        library { _ = nghttp2_session_consume(session, stream, n) }
    }

    // MARK: Helpers

    /// Changes a stream whose body is still open, then wakes its data provider.
    private func enqueue(stream: HTTP2StreamID, _ change: (inout HTTP2StreamState) -> Void) throws(HTTP2SessionError) {
        guard let index = streams.index(forKey: stream) else { throw .unknownStream(stream) }
        let changed = withStream(at: index) { state in
            guard case .open = state.outbound else { return false }
            change(&state)
            return true
        }
        guard changed else { throw .streamNotWritable(stream) }
        // Fails harmlessly when the provider is not deferred (it is mid-body).
        library { _ = nghttp2_session_resume_data(session, stream) }
    }

    /// Calls `body` with an `nghttp2_nv` array for `fields` (nghttp2 copies
    /// the names and values it points to before the submit call returns).
    ///
    /// The array and the bytes it points to are laid out in one temporary
    /// allocation (on the stack when it fits): the `nghttp2_nv` entries,
    /// then each field's name and value as ISO-8859-1 bytes, back to back.
    /// An ASCII string (nearly every one) is copied from its UTF-8 storage
    /// in one go; its UTF-8 count bounds the ISO-8859-1 bytes of any string,
    /// so the room is sized before anything is written.
    func withNameValues<T>(_ fields: [HTTPField], _ body: (UnsafePointer<nghttp2_nv>, Int) -> T) -> T {
        let entries = MemoryLayout<nghttp2_nv>.stride * max(fields.count, 1)
        var textBytes = 0
        for index in fields.indices { textBytes += fields[index].name.utf8.count + fields[index].value.utf8.count }
        return withUnsafeTemporaryAllocation(byteCount: entries + textBytes, alignment: MemoryLayout<nghttp2_nv>.alignment) { room in
            let nva = room.baseAddress!.bindMemory(to: nghttp2_nv.self, capacity: max(fields.count, 1))
            let text = (room.baseAddress! + entries).assumingMemoryBound(to: UInt8.self)
            var written = 0
            for index in fields.indices {
                let name = text + written
                let nameCount = HTTP2Session.writeLatin1(fields[index].name, to: name)
                written += nameCount
                let value = text + written
                let valueCount = HTTP2Session.writeLatin1(fields[index].value, to: value)
                written += valueCount
                (nva + index).initialize(to: nghttp2_nv(name: name, value: value, namelen: nameCount, valuelen: valueCount,
                                                        flags: UInt8(NGHTTP2_NV_FLAG_NONE.rawValue)))
            }
            guard !fields.isEmpty else {
                nva.initialize(to: nghttp2_nv())
                return body(nva, 0)
            }
            return body(nva, fields.count)
        }
    }

    /// Writes the ISO-8859-1 bytes of `text` at `target` (room for its UTF-8
    /// count) and returns how many: ASCII text in one copy, other text
    /// scalar by scalar (`?` above U+00FF, as `String.latin1Bytes`).
    /// The UTF-8 is borrowed as a span (no retain of the string's storage).
    private static func writeLatin1(_ text: String, to target: UnsafeMutablePointer<UInt8>) -> Int {
        let utf8 = text.utf8Span
        let copied: Int? = utf8.span.withUnsafeBufferPointer { utf8Bytes in
            guard utf8.isKnownASCII || utf8Bytes.isASCII else { return nil }
            if let source = utf8Bytes.baseAddress { target.initialize(from: source, count: utf8Bytes.count) }
            return utf8Bytes.count
        }
        if let copied { return copied }
        var count = 0
        for scalar in text.unicodeScalars {
            target[count] = scalar.value <= 0xFF ? UInt8(truncatingIfNeeded: scalar.value) : UInt8(ascii: "?")
            count += 1
        }
        return count
    }
}
