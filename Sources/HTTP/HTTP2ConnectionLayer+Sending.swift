/// What the owners of streams ask of an `HTTP2ConnectionLayer`: open a
/// stream (client), send heads, DATA, ends with trailers, resets; report
/// consumed DATA. Each call queues frames in the session and marks output
/// due; the driver's next `next(channelWritable:)` takes them (a driver may
/// gather many calls of one loop turn into one flush).
extension HTTP2ConnectionLayer {
    /// Client: no stream may open once GOAWAY came or went, the connection
    /// failed, or the layer is not open.
    public var canOpenStream: Bool { goAway == nil && failure == nil && !stopping && phase == .open }

    /// Client: opens a stream with this request head. `framing` nil: a body
    /// follows when the fields declare one. Returns the stream, the head as
    /// given to the session (version 2, one value for an agreeing
    /// Content-Length list), whether the head ended the request, and the
    /// field list that went out (mapped once, for the session and the record).
    /// An extended CONNECT is refused here only once the server's SETTINGS
    /// said no; before they arrive (a fresh connection) it goes out, and a
    /// server without RFC 8441 resets the stream.
    public func openStream(_ head: HTTPRequestHead, framing: HTTP1Framing?)
        throws(HTTP2LayerError) -> (id: HTTP2StreamID, head: HTTPRequestHead, endStream: Bool, sent: [HTTPField]) {
        if let failure { throw .connectionFailed(failure) }
        guard canOpenStream else { throw .goingAway }
        if let name = head.connectProtocol, head.method == .connect, session.peerSettingsReceived,
           !session.peerAllowsExtendedConnect {
            throw .extendedConnectNotAllowed(protocol: name)
        }
        // A head changed only where it differs, so one from HTTP/2 with one length shares its storage.
        var head = head
        if head.version != .http2 { head.version = .http2 }
        if let collapsed = head.fields.collapsedContentLengthList { head.fields = collapsed }
        let endStream: Bool
        switch framing {
        case .none?, .contentLength(0)?: endStream = true
        case nil: endStream = !head.fields.declareRequestBody
        case .contentLength?, .chunked?, .closeDelimited?, .tunnel?: endStream = false
        }
        let list = HTTP2FieldMapping.requestList(head)
        let id: HTTP2StreamID
        do {
            id = try session.sendRequest(fields: list, endStream: endStream)
        } catch {
            throw .session(error)
        }
        streams.updateValue(StreamProgress(outboundEnded: endStream), forKey: id)
        flushDue = true
        return (id, head, endStream, list)
    }

    /// Server: the response head on an open stream; returns it as given to
    /// the session (version 2, no reason phrase: HTTP/2 carries none) and the
    /// field list that went out (mapped once, for the session and the record).
    public func sendResponseHead(_ head: HTTPResponseHead, on id: HTTP2StreamID)
        throws(HTTP2LayerError) -> (head: HTTPResponseHead, sent: [HTTPField]) {
        try requireOpen(id)
        var head = head
        head.version = .http2
        head.reason = ""
        let list = HTTP2FieldMapping.responseList(head)
        do {
            try session.sendResponse(stream: id, fields: list, informational: head.isInformational, endStream: false)
        } catch {
            throw .session(error)
        }
        flushDue = true
        return (head, list)
    }

    /// Queues DATA on an open stream (see `streamAcceptsData` for when to stop).
    public func sendBody(_ bytes: [UInt8], on id: HTTP2StreamID) throws(HTTP2LayerError) {
        try requireOpen(id)
        do {
            try session.sendData(stream: id, bytes: bytes, endStream: false)
        } catch {
            throw .session(error)
        }
        flushDue = true
    }

    /// Ends this side's message, with trailers in a HEADERS frame when given
    /// (after the queued DATA). Returns true when the peer's message had
    /// ended too: the stream left `streams`.
    public func sendEnd(trailers: HTTPFields?, on id: HTTP2StreamID) throws(HTTP2LayerError) -> Bool {
        try requireOpen(id)
        do {
            try session.sendTrailers(stream: id, trailers: trailers ?? HTTPFields())
        } catch {
            throw .session(error)
        }
        flushDue = true
        guard var progress = streams[id] else { return false }
        if progress.inboundEnded {
            streams.removeValue(forKey: id)
            return true
        }
        progress.outboundEnded = true
        streams.updateValue(progress, forKey: id)
        return false
    }

    /// Resets an open stream with `code`; returns false (and sends nothing)
    /// when it was not open. The stream leaves `streams`.
    @discardableResult
    public func reset(_ id: HTTP2StreamID, code: HTTP2ErrorCode) -> Bool {
        guard streams.removeValue(forKey: id) != nil else { return false }
        try? session.resetStream(id, code: code)
        flushDue = true
        return true
    }

    /// The consumer took `bytes` of the stream's DATA: the peer's windows
    /// open by as much (WINDOW_UPDATE at the next flush). Until this call
    /// the bytes hold the peer back.
    public func consumed(_ id: HTTP2StreamID, bytes: Int) {
        guard bytes > 0 else { return }
        session.consumed(stream: id, bytes: bytes)
        flushDue = true
    }

    /// Server: DATA for this stream nobody reads is consumed and dropped
    /// (the response is complete; the client may still be sending the request body).
    public func dropsUnreadBody(_ id: HTTP2StreamID) -> Bool {
        role == .server && streams[id]?.outboundEnded == true
    }

    /// The stream takes more DATA: its queue in the session is below the
    /// high-water mark. (The driver adds the channel's own writability.)
    public func streamAcceptsData(_ id: HTTP2StreamID) -> Bool {
        session.queuedBytes(stream: id) < streamWriteHighWater
    }

    /// DATA queued on the stream that the session has not framed yet.
    public func queuedBytes(_ id: HTTP2StreamID) -> Int { session.queuedBytes(stream: id) }

    private func requireOpen(_ id: HTTP2StreamID) throws(HTTP2LayerError) {
        if let failure { throw .connectionFailed(failure) }
        guard streams[id] != nil else { throw .streamOver(id) }
    }
}
