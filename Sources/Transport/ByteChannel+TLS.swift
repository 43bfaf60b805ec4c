import TLS
import Wire

/// The owner's ClientHello decision, and carrying out what the layer asks.
extension ByteChannel {
    /// Server with `ClientHelloPolicy.ask`, after `.clientHello`: go on with the
    /// handshake, with `context` (for example one chosen by SNI) or the setup's.
    /// Ignored in any other phase. Called only on the loop.
    public func continueHandshake(with context: TLSContext? = nil) {
        loop.preconditionOnLoop()
        var output = ChannelSecurityLayer.Output()
        layer.continueHandshake(with: context, into: &output)
        perform(output)
    }

    /// Server with `ClientHelloPolicy.ask`, after `.clientHello`: no TLS here.
    /// The channel turns plaintext; `.established(nil)` follows, then the
    /// ClientHello bytes as `.received`, then whatever the peer sends next,
    /// all raw (for passthrough to the real server). Called only on the loop.
    public func passThrough() {
        loop.preconditionOnLoop()
        var output = ChannelSecurityLayer.Output()
        layer.passThrough(into: &output)
        perform(output)
    }

    /// Carries out `output` in its fields' order, then the step it names in
    /// `then`, if any. Returns whether the connection is writable after the
    /// bytes to send were queued (the result of a write).
    @discardableResult
    func perform(_ output: ChannelSecurityLayer.Output) -> Bool {
        switch output.deadline {
        case .arm(let timeout)?:
            handshakeTimer?.cancel()
            handshakeTimer = loop.schedule(after: timeout) { [self] in handshakeDeadlinePassed() }
        case .cancel?:
            cancelHandshakeTimer()
        case nil:
            break
        }
        if output.updateReading { applyReadState() }
        // Under TLS a write may leave nothing to send yet (no record complete).
        let writable = output.send.map { connection.write($0) } ?? connection.isWritable
        if output.shutdownWrite { connection.shutdownWrite() }
        if let close = output.close {
            if failure == nil { failure = close.reason }
            cancelHandshakeTimer()
            switch close {
            case .close: connection.close()
            case .reset: connection.abort()
            }
        }
        if let event = output.event { deliver(event) }
        if let step = output.later {
            loop.execute { [self] in
                var output = ChannelSecurityLayer.Output()
                layer.step(step, into: &output)
                perform(output)
            }
        }
        if let step = output.then {
            var next = ChannelSecurityLayer.Output()
            layer.step(step, into: &next)
            perform(next)
        }
        return writable
    }

    /// Encrypts the plaintext held back this turn (see `heldPlaintext`) and
    /// queues it on the connection, in one record when it fits one.
    func sealHeldPlaintext() {
        guard !heldPlaintext.isEmpty else { return }
        var bytes: [UInt8] = []
        swap(&bytes, &heldPlaintext)
        var output = ChannelSecurityLayer.Output()
        _ = layer.write(bytes, into: &output)
        perform(output)
    }

    func cancelHandshakeTimer() {
        handshakeTimer?.cancel()
        handshakeTimer = nil
    }

    /// The deadline passed before `.established`: the layer resets the connection.
    private func handshakeDeadlinePassed() {
        var output = ChannelSecurityLayer.Output()
        layer.handshakeDeadlinePassed(into: &output)
        perform(output)
    }

    // MARK: Record buffers

    /// Application bytes read under TLS were delivered: may start keeping
    /// the engine's record buffers, with an idle check armed.
    func noteRecordRead() {
        guard recordBuffers.noteRead() else { return }
        layer.securedEngine?.keepRecordBuffers(true)
        armRecordBufferCheck()
    }

    private func armRecordBufferCheck() {
        recordBufferTimer = loop.schedule(after: RecordBufferPolicy.idleCheckInterval) { [weak self] in
            self?.recordBufferCheckDue()
        }
    }

    private func recordBufferCheckDue() {
        recordBufferTimer = nil
        guard countsRecordReads else { return }
        switch recordBuffers.idleCheck() {
        case .checkAgain: armRecordBufferCheck()
        case .release: layer.securedEngine?.keepRecordBuffers(false)
        }
    }

    /// The channel closed: nothing more is counted and no check stays armed.
    func stopCountingRecordReads() {
        countsRecordReads = false
        recordBufferTimer?.cancel()
        recordBufferTimer = nil
    }
}
