import TLS
import Wire

/// TLS: the ClientHello peek, the handshake, and application data through the engine.
extension ByteChannel {
    /// Server with `ClientHelloPolicy.ask`, after `.clientHello`: go on with the
    /// handshake, with `context` (for example one chosen by SNI) or the setup's.
    /// Ignored in any other phase. Called only on the loop.
    public func continueHandshake(with context: TLSContext? = nil) {
        loop.preconditionOnLoop()
        guard case .awaitingDecision(let setup, let seen) = phase else { return }
        let engine: TLSEngine
        do {
            engine = try TLSEngine(context: context ?? setup.context)
        } catch {
            fail(.tlsHandshake(error))
            return
        }
        engine.feed(seen)
        phase = .handshaking(engine)
        // Reading stays paused until the handshake step runs, so nothing overtakes `seen`.
        loop.execute { [self] in
            applyReadState()
            if case .handshaking(let engine) = phase { advanceHandshake(engine) }
        }
    }

    /// Server with `ClientHelloPolicy.ask`, after `.clientHello`: no TLS here.
    /// The channel turns plaintext; `.established(nil)` follows, then the
    /// ClientHello bytes as `.received`, then whatever the peer sends next,
    /// all raw (for passthrough to the real server). Called only on the loop.
    public func passThrough() {
        loop.preconditionOnLoop()
        guard case .awaitingDecision(_, let seen) = phase else { return }
        cancelHandshakeTimer()
        startPlaintext(replaying: seen)
    }

    /// Enters `security`'s first phase. `leftover` (bytes already read that
    /// belong to the TLS stream) is processed before anything read later.
    func begin(_ security: ChannelSecurity, leftover: [UInt8]) {
        switch security {
        case .plaintext:
            startPlaintext(replaying: leftover)
        case .tlsServer(let setup):
            phase = .peeking(setup, seen: leftover)
            armHandshakeTimer(setup.handshakeTimeout)
            if !leftover.isEmpty {
                loop.execute { [self] in
                    if case .peeking(let setup, let seen) = phase { peek(setup, seen: seen) }
                }
            }
        case .tlsClient(let setup):
            let engine: TLSEngine
            do {
                engine = try TLSEngine(context: setup.context, serverName: setup.serverName)
            } catch {
                fail(.tlsHandshake(error))
                return
            }
            engine.feed(leftover)
            phase = .handshaking(engine)
            armHandshakeTimer(setup.handshakeTimeout)
            loop.execute { [self] in
                if case .handshaking(let engine) = phase { advanceHandshake(engine) }
            }
        }
    }

    /// Inspects the bytes received so far as a ClientHello.
    func peek(_ setup: TLSServerSetup, seen: [UInt8]) {
        switch ClientHelloPeek.inspect(seen) {
        case .needMoreData:
            phase = .peeking(setup, seen: seen)
        case .notTLS(let reason):
            fail(.tlsHandshake(TLSError(kind: .notTLS, explanation: reason)))
        case .clientHello(let summary):
            clientHello = summary
            switch setup.clientHelloPolicy {
            case .proceed:
                let engine: TLSEngine
                do {
                    engine = try TLSEngine(context: setup.context)
                } catch {
                    fail(.tlsHandshake(error))
                    return
                }
                engine.feed(seen)
                phase = .handshaking(engine)
                advanceHandshake(engine)
            case .ask:
                phase = .awaitingDecision(setup, seen: seen)
                applyReadState()
                deliver(.clientHello(summary))
            }
        }
    }

    /// Runs the handshake as far as the bytes fed allow; on completion
    /// delivers `.established` and any application data that came with the
    /// peer's last flight.
    func advanceHandshake(_ engine: TLSEngine) {
        let result = engine.handshake()
        flushOutbound(engine)
        switch result {
        case .incomplete:
            return
        case .failed(let error):
            fail(.tlsHandshake(error))
        case .complete:
            cancelHandshakeTimer()
            phase = .secured(engine)
            tlsInfo = engine.negotiated
            // What was odd about the SNI the client sent, which the handshake accepted.
            if let issue = clientHello?.serverNameIssue { tlsInfo?.serverNameIssue = issue }
            flushEarlyWrites()
            deliver(.established(tlsInfo))
            if case .secured(let engine) = phase { readSecured(engine) }
        }
    }

    /// Decrypts what was fed and delivers it; reports close_notify as `.readEOF`.
    func readSecured(_ engine: TLSEngine) {
        let plaintext: [UInt8]
        do {
            plaintext = try engine.readPlaintext()
        } catch {
            fail(.tls(error))
            return
        }
        flushOutbound(engine)
        if !plaintext.isEmpty { deliver(.received(plaintext)) }
        guard case .secured(let engine) = phase else { return }
        switch engine.state {
        case .failed(let error):
            fail(.tls(error))
        case .closeNotifyReceived, .closed:
            deliverReadEnd(.closeNotify)
        case .handshaking, .established, .closeNotifySent:
            return
        }
    }

    /// Encrypts and sends; after our close_notify the bytes are dropped.
    func writeSecured(_ bytes: [UInt8], _ engine: TLSEngine) -> Bool {
        switch engine.state {
        case .established, .closeNotifyReceived:
            break
        case .handshaking, .closeNotifySent, .closed, .failed:
            return false
        }
        do {
            try engine.writePlaintext(bytes)
        } catch {
            fail(.tls(error))
            return false
        }
        return flushOutbound(engine)
    }

    /// Hands the engine's ciphertext to the connection; returns `isWritable`.
    @discardableResult
    func flushOutbound(_ engine: TLSEngine) -> Bool {
        guard engine.hasOutbound else { return connection.isWritable }
        return connection.write(engine.takeOutbound())
    }

    private func armHandshakeTimer(_ timeout: Duration) {
        handshakeTimer?.cancel()
        handshakeTimer = loop.schedule(after: timeout) { [self] in handshakeTimedOut() }
    }

    func cancelHandshakeTimer() {
        handshakeTimer?.cancel()
        handshakeTimer = nil
    }

    /// The deadline passed before `.established`: reset the connection.
    private func handshakeTimedOut() {
        switch phase {
        case .peeking, .awaitingDecision, .handshaking:
            if failure == nil { failure = .timeout(.tlsHandshake) }
            abort()
        case .unstarted, .startingPlaintext, .plaintext, .secured, .closing, .closed:
            return
        }
    }
}
